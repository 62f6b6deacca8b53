// forward's metrics as CoreDNS >= 1.11 exports them (coredns_proxy_*, proxy_name="forward") next
// to the coredns_forward_* names older dashboards read: real named upstream, real dig, the
// registry's text as a scrape would get it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dig } from '../../../test/util/dig.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { familyTypes, matching, parseExposition, value, type Sample } from '../../../test/util/prom.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { exampleZone, missing, namedUpstream, rootZone, type NamedUpstream } from '../../../test/util/upstream.js';
import { rcodeLabel } from './metrics.js';

const skip = missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils');

/** CoreDNS's plugin.TimeBuckets (0.25 ms doubling, 16 of them) and +Inf, as the `le` label shows them. */
const TIME_BUCKETS = ['0.00025', '0.0005', '0.001', '0.002', '0.004', '0.008', '0.016', '0.032', '0.064', '0.128', '0.256', '0.512', '1.024', '2.048', '4.096', '8.192', '+Inf'];

describe('forward metrics, CoreDNS >= 1.11 names and the older ones', { skip }, () => {
  let upstream: NamedUpstream;
  let s: TestServer;
  let live: string;
  let dead: string;
  let text = '';
  let samples: Sample[] = [];

  before(async () => {
    upstream = namedUpstream({ zones: { 'example.test': exampleZone(), '': rootZone() }, port: await freePort() });
    await upstream.start();
    live = `127.0.0.1:${upstream.port}`;
    // Nothing listens there: every exchange and health check fails.
    dead = `127.0.0.1:${await freePort()}`;
    s = await startTestServer(`.:{PORT} {\n  bind 127.0.0.1\n  forward . ${dead} ${live} {\n    policy sequential\n    health_check 0.2s\n  }\n}\n`);
    const asked: Array<[string, string]> = [
      ['www.example.test', 'NOERROR'],
      ['multi.example.test', 'NOERROR'],
      ['nothing.example.test', 'NXDOMAIN'],
    ];
    for (const [name, status] of asked) assert.equal((await dig(name, 'A', { port: s.port, timeout: 8 })).status, status, name);
    await waitFor(async () => (await s.server.shared.metrics.getSingleMetric('coredns_proxy_healthcheck_failures_total')?.get())?.values.some((v) => v.value >= 2), 10_000, 100);
    text = await s.server.shared.metrics.metrics();
    samples = parseExposition(text);
  });
  after(async () => {
    await s?.stop();
    await upstream?.dispose();
  });

  it('exports every family with the type CoreDNS gives it', () => {
    const types = familyTypes(text);
    const want: Array<[string, string]> = [
      ['coredns_proxy_request_duration_seconds', 'histogram'],
      ['coredns_proxy_healthcheck_failures_total', 'counter'],
      ['coredns_proxy_conn_cache_hits_total', 'counter'],
      ['coredns_proxy_conn_cache_misses_total', 'counter'],
      ['coredns_forward_request_duration_seconds', 'histogram'],
      ['coredns_forward_requests_total', 'counter'],
      ['coredns_forward_responses_total', 'counter'],
      ['coredns_forward_healthcheck_failures_total', 'counter'],
      ['coredns_forward_healthcheck_broken_total', 'counter'],
      ['coredns_forward_max_concurrent_rejects_total', 'counter'],
      ['coredns_forward_conn_cache_hits_total', 'counter'],
      ['coredns_forward_conn_cache_misses_total', 'counter'],
    ];
    for (const [name, type] of want) assert.equal(types.get(name), type, name);
  });

  const durations: Array<{ family: string; labels: Record<string, string> }> = [
    { family: 'coredns_proxy_request_duration_seconds', labels: { proxy_name: 'forward' } },
    { family: 'coredns_forward_request_duration_seconds', labels: {} },
  ];
  for (const d of durations) {
    it(`${d.family}: per upstream and RCODE, CoreDNS's buckets`, () => {
      const at = (rcode: string): Record<string, string> => ({ ...d.labels, to: live, rcode });
      assert.equal(value(samples, `${d.family}_count`, at('NOERROR')), 2);
      assert.equal(value(samples, `${d.family}_count`, at('NXDOMAIN')), 1);
      // An exchange that got no reply has no RCODE and no duration.
      assert.deepEqual(matching(samples, `${d.family}_count`, { to: dead }), []);
      const buckets = matching(samples, `${d.family}_bucket`, at('NOERROR'));
      assert.deepEqual(buckets.map((b) => b.labels.le), TIME_BUCKETS);
      assert.equal(buckets.at(-1)?.value, 2);
      const labelNames = Object.keys(matching(samples, `${d.family}_count`, at('NOERROR'))[0]?.labels ?? {}).sort();
      assert.deepEqual(labelNames, Object.keys(at('')).sort());
    });
  }

  it('health check failures: the same count under coredns_proxy_ (proxy_name, to) and coredns_forward_ (to)', () => {
    const proxy = value(samples, 'coredns_proxy_healthcheck_failures_total', { proxy_name: 'forward', to: dead });
    assert.ok(proxy >= 2, `${proxy} failed checks`);
    assert.equal(value(samples, 'coredns_forward_healthcheck_failures_total', { to: dead }), proxy);
    assert.equal(value(samples, 'coredns_proxy_healthcheck_failures_total', { to: live }), 0);
  });

  it('connection cache hits and misses: the same counts under both names, per proto', () => {
    const proxyMisses = value(samples, 'coredns_proxy_conn_cache_misses_total', { proxy_name: 'forward', to: live, proto: 'udp' });
    const proxyHits = value(samples, 'coredns_proxy_conn_cache_hits_total', { proxy_name: 'forward', to: live, proto: 'udp' });
    assert.ok(proxyMisses >= 1, `${proxyMisses} misses`);
    // Three queries reached the live upstream over UDP; each was a hit or a miss.
    assert.equal(proxyHits + proxyMisses, 3);
    assert.equal(value(samples, 'coredns_forward_conn_cache_misses_total', { to: live, proto: 'udp' }), proxyMisses);
    assert.equal(value(samples, 'coredns_forward_conn_cache_hits_total', { to: live, proto: 'udp' }), proxyHits);
  });
});

describe('rcodeLabel', () => {
  const cases: Array<[number, string]> = [
    [0, 'NOERROR'],
    [2, 'SERVFAIL'],
    [3, 'NXDOMAIN'],
    [5, 'REFUSED'],
    [16, 'BADVERS'],
    // No mnemonic: CoreDNS writes the number.
    [12, '12'],
  ];
  for (const [code, want] of cases) it(`${code} → ${want}`, () => assert.equal(rcodeLabel(code), want));
});
