import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { RRType } from '../../lib/dns/types.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { dig } from '../../../test/util/dig.js';
import { freePort } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { serverLabel } from '../pkg/metrics.js';
import { familyOf, rcodeLabel, typeLabel } from './handler.js';
import { parsePrometheus } from './setup.js';
import { parseExposition, value, type Sample } from '../../../test/util/prom.js';
import { missing, startExampleUpstream, type NamedUpstream } from '../../../test/util/upstream.js';

describe('prometheus setup', () => {
  const valid: Array<{ corefile: string; want: { host: string | undefined; port: number } }> = [
    { corefile: 'prometheus', want: { host: '127.0.0.1', port: 9153 } },
    { corefile: 'prometheus :9253', want: { host: undefined, port: 9253 } },
    { corefile: 'prometheus [::1]:9153', want: { host: '::1', port: 9153 } },
  ];
  for (const c of valid) {
    test(`valid: ${JSON.stringify(c.corefile)}`, () => {
      const p = parsePrometheus(directiveIn(c.corefile));
      assert.deepEqual({ host: p.address.host, port: p.address.port }, c.want);
    });
  }
  const invalid: Array<{ corefile: string; error: string }> = [
    { corefile: 'prometheus localhost', error: 'Corefile:2: prometheus: address localhost: missing port in address' },
    { corefile: 'prometheus :9153 :9154', error: 'Corefile:2: prometheus takes at most one address, got 2 arguments' },
    { corefile: 'prometheus {\n metrics_path /m\n}', error: 'Corefile:3: unknown property "metrics_path" in prometheus block' },
  ];
  for (const c of invalid) test(`invalid: ${JSON.stringify(c.corefile)}`, () => assert.throws(() => parsePrometheus(directiveIn(c.corefile)), { message: c.error }));
});

describe('label values', () => {
  const types: Array<[number, string]> = [
    [RRType.A, 'A'],
    [RRType.AAAA, 'AAAA'],
    [RRType.SRV, 'SRV'],
    [65, 'HTTPS'],
    [48, 'DNSKEY'],
    [RRType.HINFO, 'other'],
    [65280, 'other'],
  ];
  for (const [qtype, want] of types) test(`type ${qtype} → ${want}`, () => assert.equal(typeLabel(qtype), want));

  const rcodes: Array<[number, string]> = [
    [0, 'NOERROR'],
    [3, 'NXDOMAIN'],
    [16, 'BADVERS'],
    [12, '12'],
  ];
  for (const [rcode, want] of rcodes) test(`rcode ${rcode} → ${want}`, () => assert.equal(rcodeLabel(rcode), want));

  // remoteFamily (native UDP) decides when present; otherwise the address text does.
  const families: Array<[string, 4 | 6 | undefined, number]> = [
    ['10.0.0.1', undefined, 1],
    ['fd00::1', undefined, 2],
    ['::1', undefined, 2],
    ['', 4, 1], // the address text is not needed, nor read
    ['', 6, 2],
  ];
  for (const [address, remoteFamily, want] of families) {
    test(`family of ${address} (remoteFamily ${remoteFamily ?? 'unknown'}) → ${want}`, () => assert.equal(familyOf({ remoteAddress: address, remoteFamily }), want));
  }

  const servers: Array<[string, number, string]> = [
    ['', 53, 'dns://:53'],
    ['127.0.0.1', 1053, 'dns://127.0.0.1:1053'],
    ['::1', 53, 'dns://[::1]:53'],
  ];
  for (const [address, port, want] of servers) test(`server label ${want}`, () => assert.equal(serverLabel(address, port), want));
});

describe('prometheus end to end: real dig, real scrape', () => {
  let s: TestServer;
  let metricsPort: number;
  let server: string;
  const scrape = async (): Promise<Sample[]> => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parseExposition(await res.text());
  };

  before(async () => {
    metricsPort = await freePort();
    s = await startTestServer(`
example.org:{PORT} {
    bind 127.0.0.1
    prometheus 127.0.0.1:${metricsPort}
    hosts {
        10.1.2.3 www.example.org
    }
}
example.net:{PORT} {
    bind 127.0.0.1
    prometheus 127.0.0.1:${metricsPort}
    whoami
}
`);
    server = `dns://127.0.0.1:${s.port}`;
  });
  after(() => s.stop());

  test('requests, responses, sizes and durations count every query', async () => {
    const before = await scrape();
    const base = { server, zone: 'example.org.', view: '' };
    const n = 3;
    let size = 0;
    for (let i = 0; i < n; i++) size += (await dig('www.example.org', 'A', { port: s.port })).size;
    await dig('www.example.org', 'AAAA', { port: s.port, args: ['+tcp'] });
    const nx = await dig('nope.example.org', 'A', { port: s.port });
    const after = await scrape();
    const delta = (name: string, match: Record<string, string>) => value(after, name, match) - value(before, name, match);
    assert.equal(delta('coredns_dns_requests_total', { ...base, proto: 'udp', family: '1', type: 'A' }), n + 1);
    assert.equal(delta('coredns_dns_requests_total', { ...base, proto: 'tcp', family: '1', type: 'AAAA' }), 1);
    assert.equal(delta('coredns_dns_responses_total', { ...base, rcode: 'NOERROR', plugin: 'hosts' }), n + 1, 'the plugin label names the plugin that answered');
    assert.equal(delta('coredns_dns_responses_total', { ...base, rcode: nx.status }), 1);
    assert.equal(delta('coredns_dns_request_duration_seconds_count', { ...base, type: 'A' }), n + 1);
    assert.equal(delta('coredns_dns_request_size_bytes_count', { ...base, proto: 'udp' }), n + 1);
    assert.equal(delta('coredns_dns_response_size_bytes_sum', { ...base, proto: 'udp' }) - nx.size, size, 'response sizes are what dig received');
  });

  test('each block counts under its own zone; one listener serves both', async () => {
    const before = await scrape();
    await dig('example.net', 'TXT', { port: s.port });
    const after = await scrape();
    const match = { server, zone: 'example.net.', type: 'TXT', proto: 'udp' };
    assert.equal(value(after, 'coredns_dns_requests_total', match) - value(before, 'coredns_dns_requests_total', match), 1);
  });

  test('a query outside every zone is refused and counted once under zone "dropped", as CoreDNS', async () => {
    const before = await scrape();
    const r = await dig('www.elsewhere.test', 'A', { port: s.port });
    const after = await scrape();
    const delta = (name: string, match: Record<string, string>): number => value(after, name, match) - value(before, name, match);
    assert.deepEqual(
      [r.status, delta('coredns_dns_requests_total', { server, zone: 'dropped', type: 'A' }), delta('coredns_dns_responses_total', { server, zone: 'dropped', rcode: 'REFUSED' }), delta('coredns_dns_requests_total', {})],
      ['REFUSED', 1, 1, 1],
    );
  });

  test('DNSSEC OK queries are counted', async () => {
    const before = await scrape();
    await dig('www.example.org', 'A', { port: s.port, args: ['+dnssec'] });
    const after = await scrape();
    const match = { server, zone: 'example.org.' };
    assert.equal(value(after, 'coredns_dns_do_requests_total', match) - value(before, 'coredns_dns_do_requests_total', match), 1);
  });

  test('build info, panics and process metrics are exported', async () => {
    const all = await scrape();
    const info = all.find((x) => x.name === 'coredns_build_info');
    assert.equal(info?.value, 1);
    assert.equal(info?.labels.goversion, process.version);
    assert.match(info?.labels.version ?? '', /^\d+\.\d+\.\d+/);
    assert.ok(all.some((x) => x.name === 'coredns_panics_total'));
    assert.ok(all.some((x) => x.name === 'process_resident_memory_bytes'));
    // Present: event loop lag. Left out: GC timing, whose observer allocates for every collection.
    assert.ok(all.some((x) => x.name === 'nodejs_eventloop_lag_seconds'));
    assert.ok(!all.some((x) => x.name.startsWith('nodejs_gc_duration_seconds')));
  });

  test('a reload keeps counting from where it was', async () => {
    await dig('www.example.org', 'A', { port: s.port });
    const match = { server, zone: 'example.org.', type: 'A', proto: 'udp' };
    const before = value(await scrape(), 'coredns_dns_requests_total', match);
    assert.equal(await s.server.reload(), true);
    await dig('www.example.org', 'A', { port: s.port });
    assert.equal(value(await scrape(), 'coredns_dns_requests_total', match), before + 1);
  });
});

test('prometheus twice in one server block is refused, naming the second line', async () => {
  await assert.rejects(startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:0\n    prometheus 127.0.0.1:0\n    whoami\n}\n`), {
    message: /Corefile:4: prometheus can only be used once per server block$/,
  });
});

// CoreDNS fills the plugin label with the plugin that wrote the response: a cache hit is
// "cache", a miss the plugin behind it that answered. Each case asks once or twice and counts
// what the last question added.
describe('the plugin label names the plugin that wrote the answer', { skip: missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils') }, () => {
  let s: TestServer;
  let upstream: NamedUpstream;
  let metricsPort: number;
  const cluster = fileURLToPath(new URL('../../../examples/cluster', import.meta.url));

  before(async () => {
    upstream = await startExampleUpstream();
    metricsPort = await freePort();
    s = await startTestServer(`
cluster.local:{PORT} {
    bind 127.0.0.1
    prometheus 127.0.0.1:${metricsPort}
    cache 30
    kubernetes cluster.local {
        manifests ${cluster}
    }
}
example.test:{PORT} {
    bind 127.0.0.1
    prometheus 127.0.0.1:${metricsPort}
    cache 30
    forward . ${upstream.address}
}
`);
  });
  after(async () => {
    await s.stop();
    await upstream.dispose();
  });

  const scrape = async (): Promise<Sample[]> => parseExposition(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());

  const cases: Array<{ what: string; name: string; zone: string; warm: boolean; plugin: string }> = [
    { what: 'a forwarded answer', name: 'www.example.test', zone: 'example.test.', warm: false, plugin: 'forward' },
    { what: 'the same question again, a cache hit', name: 'www.example.test', zone: 'example.test.', warm: true, plugin: 'cache' },
    { what: 'a kubernetes answer', name: 'web.demo.svc.cluster.local', zone: 'cluster.local.', warm: false, plugin: 'kubernetes' },
  ];
  for (const c of cases) {
    test(`${c.what}: plugin="${c.plugin}"`, async () => {
      if (c.warm) await dig(c.name, 'A', { port: s.port });
      const before = await scrape();
      const r = await dig(c.name, 'A', { port: s.port });
      assert.equal(r.status, 'NOERROR', r.raw);
      const after = await scrape();
      const match = { server: `dns://127.0.0.1:${s.port}`, zone: c.zone, rcode: 'NOERROR' };
      const added = after.filter((x) => x.name === 'coredns_dns_responses_total' && Object.entries(match).every(([k, v]) => x.labels[k] === v) && x.value > value(before, 'coredns_dns_responses_total', { ...match, plugin: x.labels.plugin ?? '' }));
      assert.deepEqual(
        added.map((x) => x.labels.plugin),
        [c.plugin],
      );
    });
  }
});
