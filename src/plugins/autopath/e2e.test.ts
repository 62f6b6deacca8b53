// autopath inside a running kdns, asked with the real dig: the kubernetes plugin over a fixture
// cluster, forward to a real BIND upstream (example.test, corp.test), and a capture upstream
// that shows what would leave the server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startNamed, type NamedServer } from '../../../test/util/upstream.js';
import { dig, type DigResult } from '../../../test/util/dig.js';
import { freePort } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { startCapture, type CaptureServer } from '../../../test/util/capture.js';

const FIXTURE = fileURLToPath(new URL('./testdata/cluster', import.meta.url));
const IN_CI = process.env.CI === 'true';
const hasNamed = spawnSync('named', ['-v']).status === 0;
const skip = !hasNamed && !IN_CI ? 'needs BIND: apt-get install bind9' : false;

const EXAMPLE = ['www IN A 192.0.2.80', 'www IN AAAA 2001:db8::80', ...Array.from({ length: 40 }, (_, i) => `big IN A 192.0.2.${i + 1}`)].join('\n');
const CORP = 'printer IN A 192.0.2.99';

/** Hex of the search-path option for dig's +ednsopt. */
function optionHex(text: string): string {
  return Buffer.from(text).toString('hex');
}

function lines(r: DigResult, section: 'answer' | 'authority' | 'additional' = 'answer'): string[] {
  return r[section].map((x) => `${x.name} ${x.type} ${x.data}`);
}

describe('autopath end to end', { skip }, () => {
  let named: NamedServer;
  let capture: CaptureServer;
  let s: TestServer;
  before(async () => {
    named = await startNamed(await freePort(), { 'example.test': EXAMPLE, 'corp.test': CORP });
    capture = await startCapture();
    // One block does it all: classic autopath for pods (@kubernetes, pods verified), ap.k8s.io
    // names, cluster names from the fixture, capture.test to the capture upstream, the rest to BIND.
    s = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    autopath @kubernetes {
        resolv_conf host-resolv.conf
    }
    kubernetes cluster.local {
        manifests ${FIXTURE}
        pods verified
    }
    forward capture.test 127.0.0.1:${capture.port}
    forward . 127.0.0.1:${named.port}
}
`,
      { files: { 'host-resolv.conf': 'nameserver 192.0.2.53\nsearch corp.test capture.test\n' } },
    );
  });
  after(async () => {
    await s?.stop();
    await capture?.close();
    await named?.stop();
  });

  const AP = 'search.ns1.cluster.local.ap.k8s.io';
  const cases: Array<{ name: string; qname: string; type: string; args?: string[]; status: string; answer: string[]; authority?: string[] }> = [
    { name: 'service in the pod\'s namespace', qname: `api.${AP}`, type: 'A', status: 'NOERROR', answer: [`api.${AP}. CNAME api.ns1.svc.cluster.local.`, 'api.ns1.svc.cluster.local. A 10.96.1.10'] },
    {
      name: 'its AAAA: the name exists without one (NODATA behind a CNAME)',
      qname: `api.${AP}`,
      type: 'AAAA',
      status: 'NOERROR',
      answer: [`api.${AP}. CNAME api.ns1.svc.cluster.local.`],
      authority: ['cluster.local. SOA'],
    },
    { name: 'svc.otherns', qname: `db.otherns.${AP}`, type: 'A', status: 'NOERROR', answer: [`db.otherns.${AP}. CNAME db.otherns.svc.cluster.local.`, 'db.otherns.svc.cluster.local. A 10.96.2.20'] },
    { name: 'svc.otherns.svc', qname: `db.otherns.svc.${AP}`, type: 'A', status: 'NOERROR', answer: [`db.otherns.svc.${AP}. CNAME db.otherns.svc.cluster.local.`, 'db.otherns.svc.cluster.local. A 10.96.2.20'] },
    { name: 'an external name', qname: `www.example.test.${AP}`, type: 'AAAA', status: 'NOERROR', answer: [`www.example.test.${AP}. CNAME www.example.test.`, 'www.example.test. AAAA 2001:db8::80'] },
    { name: 'a name under a host search path', qname: `printer.${AP}`, type: 'A', status: 'NOERROR', answer: [`printer.${AP}. CNAME printer.corp.test.`, 'printer.corp.test. A 192.0.2.99'] },
    { name: 'a name that exists nowhere', qname: `nothing.example.test.${AP}`, type: 'A', status: 'NXDOMAIN', answer: [], authority: ['ap.k8s.io. SOA'] },
    { name: 'under ap.k8s.io but not a search name', qname: 'foo.ap.k8s.io', type: 'A', status: 'NXDOMAIN', answer: [], authority: ['ap.k8s.io. SOA'] },
    {
      name: 'the option\'s paths replace the ones from the name',
      qname: `db.${AP}`,
      type: 'A',
      args: [`+ednsopt=65534:${optionHex('otherns.svc.cluster.local,corp.test')}`],
      status: 'NOERROR',
      answer: [`db.${AP}. CNAME db.otherns.svc.cluster.local.`, 'db.otherns.svc.cluster.local. A 10.96.2.20'],
    },
    {
      name: 'classic: the pod at 127.0.0.11 (ns1) searching svc.otherns',
      qname: 'db.otherns.ns1.svc.cluster.local',
      type: 'A',
      args: ['-b', '127.0.0.11'],
      status: 'NOERROR',
      answer: ['db.otherns.ns1.svc.cluster.local. CNAME db.otherns.svc.cluster.local.', 'db.otherns.svc.cluster.local. A 10.96.2.20'],
    },
    { name: 'classic: the same query from a client that is no pod', qname: 'db.otherns.ns1.svc.cluster.local', type: 'A', status: 'NXDOMAIN', answer: [], authority: ['cluster.local. SOA'] },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await dig(c.qname, c.type, { port: s.port, args: c.args ?? [] });
      assert.equal(r.status, c.status, r.raw);
      assert.deepEqual(lines(r), c.answer, r.raw);
      if (c.authority) assert.deepEqual(r.authority.map((x) => `${x.name} ${x.type}`), c.authority, r.raw);
    });
  }

  test('without EDNS the answer fits 512 bytes: the CNAME first, as many records as fit, TC set', async () => {
    const r = await dig(`many.${AP}`, 'A', { port: s.port, args: ['+noedns', '+ignore'] });
    assert.ok(r.size <= 512, `size ${r.size}`);
    assert.ok(r.flags.includes('tc'), r.raw);
    assert.equal(r.answer[0]?.type, 'CNAME');
    assert.equal(r.answer.length, 26, r.raw); // the CNAME and 25 of the 40 addresses
    const full = await dig(`many.${AP}`, 'A', { port: s.port, args: ['+tcp'] });
    assert.equal(full.answer.length, 41);
  });

  test('without EDNS, glue goes before any answer record: SRV answers whole, no TC', async () => {
    const r = await dig(`_gossip._tcp.peers.${AP}`, 'SRV', { port: s.port, args: ['+noedns', '+ignore'] });
    assert.ok(r.size <= 512, `size ${r.size}`);
    assert.equal(r.flags.includes('tc'), false, r.raw);
    assert.equal(r.answer.filter((x) => x.type === 'SRV').length, 6, r.raw);
    const withEdns = await dig(`_gossip._tcp.peers.${AP}`, 'SRV', { port: s.port });
    assert.deepEqual([withEdns.additional.length, r.additional.length], [6, 2], "glue records with EDNS, without: the 4 that did not fit were dropped, the answer stayed whole");
  });

  test('nothing reaches an upstream with the ap.k8s.io suffix or the search-path option', async () => {
    capture.queries.length = 0;
    const opt = `+ednsopt=65534:${optionHex('capture.test')}`;
    await dig(`zzz.${AP}`, 'A', { port: s.port, args: [opt] });
    await dig(`yyy.${AP}`, 'A', { port: s.port });
    await dig('direct.capture.test', 'A', { port: s.port, args: [opt] });
    assert.deepEqual(
      capture.queries.map((q) => `${q.name} ${q.options.map(([c]) => c).join(',')}`),
      // dig's own cookie option is not sent: +nocookie. Only the names: no option 65534.
      ['zzz.capture.test. ', 'yyy.capture.test. ', 'direct.capture.test. '],
    );
  });
});
