// forward's options of CoreDNS 1.14 end to end (issue #26): kdns on loopback, real named
// upstreams (plain, DNS over TLS, refusing by ACL, dropping everything by blackhole), a kdns
// https:// block as the DNS-over-HTTPS peer, asked with dig. Slowness is the one thing no real
// server does on demand: read_timeout is tested against the scripted slowUpstream.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { makeServingCerts, makeTestCerts, type TestCerts } from '../../../test/util/certs.js';
import { dig } from '../../../test/util/dig.js';
import { startKresdDoh, type KresdDoh } from '../../../test/util/kresd.js';
import { freePort } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { exampleZone, missing, namedUpstream, slowUpstream, type NamedUpstream } from '../../../test/util/upstream.js';

const skip = missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils') ?? missing('openssl', 'openssl');

/** Sum of a metric's samples whose labels include `labels`. */
async function metric(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = registry.getSingleMetric(name);
  if (!m) return 0;
  const { values } = await m.get();
  return values.filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k as keyof typeof v.labels]) === want)).reduce((s, v) => s + v.value, 0);
}

function corefile(body: string): string {
  return `.:{PORT} {\n  bind 127.0.0.1\n${body}\n}\n`;
}

/** Runs `body` against a kdns started on `text`, stopping it however the test ends. */
async function withServer<T>(text: string, body: (s: TestServer) => Promise<T>, files?: Record<string, string>): Promise<T> {
  const s = await startTestServer(text, { files });
  try {
    return await body(s);
  } finally {
    await s.stop();
  }
}

describe('forward: CoreDNS 1.14 options against real upstreams', { skip }, () => {
  /**
   * A, B: example.test only; C: only.test, and example.test with a TXT record for www that A
   * lacks. None has the root zone, so each REFUSES names outside its zones (recursion no).
   */
  const named: NamedUpstream[] = [];
  /** Answers only queries from 127.0.0.2 (allow-query), also over DNS over TLS with a certificate for 127.0.0.1. */
  let picky: NamedUpstream;
  let pickyTlsPort = 0;
  let pickyCa = '';
  /** Drops every query (blackhole): no reply, ever. */
  const silent: NamedUpstream[] = [];
  /** DNS over TLS with a certificate for the name dns.test only (no IP address in it). */
  let dotByName: NamedUpstream;
  let dotByNamePort = 0;
  let dotByNameCa = '';

  before(async () => {
    const withTxt = `${exampleZone()}www IN TXT "from-c"\n`;
    const zones: Array<Record<string, string>> = [
      { 'example.test': exampleZone() },
      { 'example.test': exampleZone() },
      { 'example.test': withTxt, 'only.test': exampleZone('only.test') },
    ];
    for (const z of zones) named.push(namedUpstream({ zones: z, port: await freePort() }));

    const certs = makeTestCerts();
    pickyCa = readFileSync(certs.ca, 'utf8');
    pickyTlsPort = await freePort();
    picky = namedUpstream({
      zones: { 'example.test': exampleZone() },
      port: await freePort(),
      tls: { port: pickyTlsPort, certPem: readFileSync(certs.serverCert, 'utf8'), keyPem: readFileSync(certs.serverKey, 'utf8') },
      options: 'allow-query { 127.0.0.2; };',
    });

    for (let i = 0; i < 2; i++) silent.push(namedUpstream({ zones: { 'example.test': exampleZone() }, port: await freePort(), options: 'blackhole { any; };' }));

    const byName = makeServingCerts(['dns.test']);
    dotByNameCa = readFileSync(byName.ca, 'utf8');
    dotByNamePort = await freePort();
    dotByName = namedUpstream({
      zones: { 'example.test': exampleZone() },
      port: await freePort(),
      tls: { port: dotByNamePort, certPem: readFileSync(byName.cert, 'utf8'), keyPem: readFileSync(byName.key, 'utf8') },
    });
    await Promise.all([...named, picky, ...silent, dotByName].map((u) => u.start()));
  });
  after(async () => {
    await Promise.all([...named, picky, ...silent, dotByName].map((u) => u?.dispose()));
  });

  const at = (u: NamedUpstream): string => `127.0.0.1:${u.port}`;
  /** How many queries for `name` each of A, B, C logged. */
  const askedAt = (name: string): number[] => named.map((u) => u.queriesFor(name).length);

  describe('failover RCODE...', () => {
    const cases: Array<{ what: string; options: string; name: string; status: string; asked: number[] }> = [
      { what: 'without failover the first REFUSED is the answer', options: '', name: 'a.only.test', status: 'REFUSED', asked: [1, 0, 0] },
      { what: 'REFUSED from A and B: C is asked and answers', options: 'failover REFUSED', name: 'www.only.test', status: 'NOERROR', asked: [1, 1, 1] },
      { what: 'every upstream REFUSES: the last one\'s REFUSED is returned', options: 'failover REFUSED', name: 'c.nowhere.test', status: 'REFUSED', asked: [1, 1, 1] },
      { what: 'an RCODE not listed is the answer', options: 'failover SERVFAIL', name: 'd.only.test', status: 'REFUSED', asked: [1, 0, 0] },
      { what: 'a NOERROR answer ends it at once', options: 'failover REFUSED SERVFAIL', name: 'www.example.test', status: 'NOERROR', asked: [1, 0, 0] },
    ];
    for (const c of cases) {
      it(c.what, async () => {
        const [a, b, cc] = named as [NamedUpstream, NamedUpstream, NamedUpstream];
        const before = askedAt(c.name);
        await withServer(corefile(`  forward . ${at(a)} ${at(b)} ${at(cc)} {\n    policy sequential\n    ${c.options}\n  }`), async (s) => {
          const r = await dig(c.name, 'A', { port: s.port });
          assert.equal(r.status, c.status, r.raw);
        });
        assert.deepEqual(
          askedAt(c.name).map((n, i) => n - (before[i] as number)),
          c.asked,
        );
      });
    }
  });

  describe('next_on_nodata', () => {
    const cases: Array<{ what: string; options: string; name: string; type: string; status: string; answer: string[]; askedC: number }> = [
      { what: 'NODATA from the first forward: the next forward answers', options: 'next_on_nodata', name: 'www.example.test', type: 'TXT', status: 'NOERROR', answer: ['"from-c"'], askedC: 1 },
      { what: 'without it, NODATA is the answer', options: '', name: 'www.example.test', type: 'TXT', status: 'NOERROR', answer: [], askedC: 0 },
      { what: 'an answer is not handed on', options: 'next_on_nodata', name: 'www.example.test', type: 'A', status: 'NOERROR', answer: ['192.0.2.1'], askedC: 0 },
      { what: 'NXDOMAIN is not NODATA', options: 'next_on_nodata', name: 'none.example.test', type: 'A', status: 'NXDOMAIN', answer: [], askedC: 0 },
    ];
    for (const c of cases) {
      it(c.what, async () => {
        const [a, , cc] = named as [NamedUpstream, NamedUpstream, NamedUpstream];
        const before = cc.queriesFor(c.name).filter((q) => q.type === c.type).length;
        await withServer(corefile(`  forward . ${at(a)} {\n    ${c.options}\n  }\n  forward . ${at(cc)}`), async (s) => {
          const r = await dig(c.name, c.type, { port: s.port });
          assert.equal(r.status, c.status, r.raw);
          assert.deepEqual(
            r.answer.map((x) => x.data),
            c.answer,
          );
        });
        assert.equal(cc.queriesFor(c.name).filter((q) => q.type === c.type).length - before, c.askedC);
      });
    }
  });

  describe('max_connect_attempts', () => {
    // Two upstreams that never answer, checked by nobody (max_fails 0), asked in turn until the cap.
    const cases: Array<{ what: string; options: string; exchanges: (n: number) => boolean; want: string }> = [
      { what: 'default: twice the number of upstreams', options: '', exchanges: (n) => n === 4, want: '4' },
      { what: '1: one exchange', options: 'max_connect_attempts 1', exchanges: (n) => n === 1, want: '1' },
      { what: '3: three exchanges', options: 'max_connect_attempts 3', exchanges: (n) => n === 3, want: '3' },
      { what: '0: no cap, only the 5 s deadline', options: 'max_connect_attempts 0', exchanges: (n) => n > 4, want: 'more than 4' },
    ];
    for (const c of cases) {
      it(c.what, async () => {
        const [x, y] = silent as [NamedUpstream, NamedUpstream];
        await withServer(corefile(`  forward . ${at(x)} ${at(y)} {\n    policy sequential\n    max_fails 0\n    read_timeout 500ms\n    ${c.options}\n  }`), async (s) => {
          const r = await dig('www.example.test', 'A', { port: s.port, timeout: 8 });
          assert.equal(r.status, 'SERVFAIL', r.raw);
          const n = await metric(s.server.shared.metrics, 'coredns_forward_requests_total');
          assert.ok(c.exchanges(n), `${n} exchanges, want ${c.want}`);
        });
      });
    }
  });

  describe('source_address', () => {
    const cases: Array<{ what: string; upstream: () => string; options: string; status: string }> = [
      { what: 'from the default address the ACL refuses', upstream: () => at(picky), options: '', status: 'REFUSED' },
      { what: 'UDP from 127.0.0.2 is answered', upstream: () => at(picky), options: 'source_address 127.0.0.2', status: 'NOERROR' },
      // expire 0s: a socket per query, which is node:dgram's path rather than the batched socket.
      { what: 'UDP over node:dgram from 127.0.0.2 is answered', upstream: () => at(picky), options: 'source_address 127.0.0.2\n    expire 0s', status: 'NOERROR' },
      { what: 'TCP from 127.0.0.2 is answered', upstream: () => at(picky), options: 'source_address 127.0.0.2\n    force_tcp', status: 'NOERROR' },
      { what: 'DNS over TLS from 127.0.0.2 is answered', upstream: () => `tls://127.0.0.1:${pickyTlsPort}`, options: 'source_address 127.0.0.2\n    tls ca.pem', status: 'NOERROR' },
      { what: 'DNS over TLS from the default address is refused', upstream: () => `tls://127.0.0.1:${pickyTlsPort}`, options: 'tls ca.pem', status: 'REFUSED' },
    ];
    for (const c of cases) {
      it(c.what, async () => {
        await withServer(
          corefile(`  forward . ${c.upstream()} {\n    ${c.options}\n  }`),
          async (s) => {
            const r = await dig('www.example.test', 'A', { port: s.port });
            assert.equal(r.status, c.status, r.raw);
          },
          { 'ca.pem': pickyCa },
        );
      });
    }
  });

  describe('tls://IP%NAME: a TLS server name per upstream', () => {
    const cases: Array<{ what: string; upstream: () => string; status: string }> = [
      { what: 'the certificate names dns.test: checked against that name', upstream: () => `tls://127.0.0.1%dns.test:${dotByNamePort}`, status: 'NOERROR' },
      { what: 'without a name the IP address must be in the certificate, and is not', upstream: () => `tls://127.0.0.1:${dotByNamePort}`, status: 'SERVFAIL' },
      { what: 'another name does not match the certificate', upstream: () => `tls://127.0.0.1%other.test:${dotByNamePort}`, status: 'SERVFAIL' },
    ];
    for (const c of cases) {
      it(c.what, async () => {
        await withServer(
          corefile(`  forward . ${c.upstream()} {\n    tls ca.pem\n    max_connect_attempts 1\n  }`),
          async (s) => {
            const r = await dig('www.example.test', 'A', { port: s.port, timeout: 6 });
            assert.equal(r.status, c.status, r.raw);
            if (c.status === 'NOERROR') assert.deepEqual(r.answer.map((x) => x.data), ['192.0.2.1']);
          },
          { 'ca.pem': dotByNameCa },
        );
      });
    }
  });

  describe('https:// upstreams (DNS over HTTPS) with a kdns https:// block as the peer', () => {
    let certs: TestCerts;
    let peer: TestServer;
    before(async () => {
      certs = makeTestCerts();
      peer = await startTestServer(`https://.:{PORT} {\n  bind 127.0.0.1\n  tls ${certs.serverCert} ${certs.serverKey}\n  forward . ${at(named[0] as NamedUpstream)}\n}\n`);
    });
    after(async () => {
      await peer?.stop();
    });

    const cases: Array<{ what: string; upstream: () => string; options: string; status: string; answer: string[] }> = [
      { what: 'POST (the default)', upstream: () => `https://127.0.0.1:${peer.port}`, options: 'tls ca.pem', status: 'NOERROR', answer: ['192.0.2.1'] },
      { what: 'GET', upstream: () => `https://127.0.0.1:${peer.port}`, options: 'tls ca.pem\n    doh_method GET', status: 'NOERROR', answer: ['192.0.2.1'] },
      { what: 'checked against a name of its own (https://IP%NAME)', upstream: () => `https://127.0.0.1%localhost:${peer.port}`, options: 'tls ca.pem', status: 'NOERROR', answer: ['192.0.2.1'] },
      { what: 'checked against tls_servername', upstream: () => `https://127.0.0.1:${peer.port}`, options: 'tls ca.pem\n    tls_servername localhost', status: 'NOERROR', answer: ['192.0.2.1'] },
      { what: 'a certificate the CA did not sign is refused', upstream: () => `https://127.0.0.1:${peer.port}`, options: 'tls other-ca.pem\n    max_connect_attempts 1', status: 'SERVFAIL', answer: [] },
    ];
    for (const c of cases) {
      it(c.what, async () => {
        const files = { 'ca.pem': readFileSync(certs.ca, 'utf8'), 'other-ca.pem': readFileSync(`${certs.dir}/otherca.pem`, 'utf8') };
        await withServer(
          corefile(`  forward . ${c.upstream()} {\n    ${c.options}\n  }`),
          async (s) => {
            for (const name of ['www.example.test', 'www.example.test']) {
              const r = await dig(name, 'A', { port: s.port, timeout: 6 });
              assert.equal(r.status, c.status, r.raw);
              assert.deepEqual(
                r.answer.map((x) => x.data),
                c.answer,
              );
            }
            if (c.status === 'NOERROR') {
              // Two queries, one connection: the second reused it (CoreDNS's proto label for DoH).
              const to = `127.0.0.1:${peer.port}`;
              assert.equal(await metric(s.server.shared.metrics, 'coredns_proxy_conn_cache_misses_total', { to, proto: 'https' }), 1);
              assert.equal(await metric(s.server.shared.metrics, 'coredns_proxy_conn_cache_hits_total', { to, proto: 'https' }), 1);
            }
          },
          files,
        );
      });
    }
  });
});

describe('forward: https:// upstream with Knot Resolver\'s DoH (HTTP/2 only) as the peer', { skip: skip ?? missing('kresd', 'knot-resolver') }, () => {
  let upstream: NamedUpstream;
  let kresd: KresdDoh;
  let certs: TestCerts;
  before(async () => {
    upstream = namedUpstream({ zones: { 'example.test': exampleZone() }, port: await freePort() });
    await upstream.start();
    certs = makeTestCerts();
    kresd = await startKresdDoh({ port: await freePort(), upstreamPort: upstream.port, certPem: readFileSync(certs.serverCert, 'utf8'), keyPem: readFileSync(certs.serverKey, 'utf8') });
  });
  after(async () => {
    await kresd?.stop();
    await upstream?.dispose();
  });

  const cases: Array<{ method: string; name: string }> = [
    { method: 'POST', name: 'www.example.test' },
    { method: 'GET', name: 'mail1.example.test' },
  ];
  for (const c of cases) {
    it(`${c.method}: answered through kresd, the question reaching named`, async () => {
      await withServer(
        corefile(`  forward . https://127.0.0.1%localhost:${kresd.port} {\n    tls ca.pem\n    doh_method ${c.method}\n  }`),
        async (s) => {
          const r = await dig(c.name, 'A', { port: s.port, timeout: 6 });
          assert.equal(r.status, 'NOERROR', `${r.raw}\n${kresd.output()}`);
          assert.equal(r.answer.length, 1, r.raw);
        },
        { 'ca.pem': readFileSync(certs.ca, 'utf8') },
      );
      assert.ok(upstream.queriesFor(c.name).length > 0, 'named got the question from kresd');
    });
  }
});

describe('forward: read_timeout against a slow upstream', () => {
  // Scripted: no real server can be told to take a given time to answer.
  const cases: Array<{ what: string; slowMs: number; options: string; status: string }> = [
    { what: 'default 2 s: a 2.5 s upstream gets SERVFAIL', slowMs: 2500, options: '', status: 'SERVFAIL' },
    { what: 'read_timeout 3s: the 2.5 s upstream is waited for', slowMs: 2500, options: 'read_timeout 3s', status: 'NOERROR' },
    { what: 'read_timeout 300ms: a 600 ms upstream gets SERVFAIL', slowMs: 600, options: 'read_timeout 300ms', status: 'SERVFAIL' },
    { what: 'read_timeout 6s: longer than the 5 s budget, still waited for in full', slowMs: 5500, options: 'read_timeout 6s', status: 'NOERROR' },
  ];
  for (const c of cases) {
    it(c.what, async () => {
      const slow = await slowUpstream(c.slowMs);
      try {
        await withServer(corefile(`  forward . 127.0.0.1:${slow.port} {\n    max_fails 0\n    ${c.options}\n  }`), async (s) => {
          const r = await dig('www.example.test', 'A', { port: s.port, timeout: 9 });
          assert.equal(r.status, c.status, r.raw);
        });
      } finally {
        await slow.close();
      }
    });
  }
});
