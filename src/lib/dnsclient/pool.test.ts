// How the client dials and pools for forward's CoreDNS 1.14 options: `max_idle_conns` (idle
// TCP connections kept per upstream) and `source_address` (the address sockets are bound to),
// against a real named on loopback; and the shape of a DNS-over-HTTPS request (RFC 8484).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nameToWire } from '../dns/name.js';
import { buildQuery, headerRcode, questionEnd } from '../dns/wire.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { exampleZone, missing, namedUpstream, type NamedUpstream } from '../../../test/util/upstream.js';
import { DnsClient } from './client.js';
import { dohAuthority, dohRequestHeaders } from './doh.js';
import { StreamTransport } from './stream.js';

const skip = missing('named', 'bind9');

describe('StreamTransport: max_idle_conns against named', { skip }, () => {
  let named: NamedUpstream;
  before(async () => {
    named = namedUpstream({ zones: { 'example.test': exampleZone() }, port: await freePort() });
    await named.start();
  });
  after(async () => {
    await named?.dispose();
  });

  // 200 queries at once: 64 ride one connection (pipelining), so four connections open.
  const cases: Array<{ maxIdleConns: number; open: number }> = [
    { maxIdleConns: 0, open: 4 },
    { maxIdleConns: 1, open: 1 },
    { maxIdleConns: 2, open: 2 },
    { maxIdleConns: 4, open: 4 },
  ];
  for (const c of cases) {
    it(`max_idle_conns ${c.maxIdleConns}: ${c.open} connections stay open once every query is answered`, async () => {
      const t = new StreamTransport('127.0.0.1', named.port, named.address, undefined, 60_000, undefined, undefined, { maxIdleConns: c.maxIdleConns });
      try {
        const replies = await Promise.all(
          Array.from({ length: 200 }, (_, i) => {
            const q = buildQuery(nameToWire(`q${i}.wild.example.test`), 1, 1, { id: i + 1 });
            return t.exchange(q, questionEnd(q), 5000);
          }),
        );
        assert.deepEqual(new Set(replies.map((r) => headerRcode(r))), new Set([0]));
        await waitFor(() => t.openConnections === c.open, 2000).catch(() => assert.fail(`${t.openConnections} connections open, want ${c.open}`));
        // Still open after a moment more: nothing else closes them before `expire`.
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(t.openConnections, c.open);
      } finally {
        t.close();
      }
    });
  }
});

describe('DnsClient: source_address against named', { skip }, () => {
  let named: NamedUpstream;
  before(async () => {
    named = namedUpstream({ zones: { 'example.test': exampleZone() }, port: await freePort() });
    await named.start();
  });
  after(async () => {
    await named?.dispose();
  });

  const cases: Array<{ localAddress: string | undefined; proto: 'udp' | 'tcp'; from: string }> = [
    { localAddress: undefined, proto: 'udp', from: '127.0.0.1' },
    { localAddress: '127.0.0.3', proto: 'udp', from: '127.0.0.3' },
    { localAddress: '127.0.0.4', proto: 'tcp', from: '127.0.0.4' },
  ];
  for (const c of cases) {
    it(`${c.proto} bound to ${c.localAddress ?? 'nothing'}: named sees the query from ${c.from}`, async () => {
      const client = new DnsClient({ host: '127.0.0.1', port: named.port, localAddress: c.localAddress });
      const name = `src-${c.proto}-${c.from}.wild.example.test`;
      try {
        const reply = await client.exchange(buildQuery(nameToWire(name), 1, 1, { id: 7 }), c.proto, 3000);
        assert.equal(headerRcode(reply), 0);
      } finally {
        client.close();
      }
      await waitFor(() => named.queriesFor(name).length > 0, 2000);
      assert.deepEqual(
        named.queriesFor(name).map((q) => q.client),
        [c.from],
      );
    });
  }

  it('an address this node does not have fails the exchange at once, naming it', async () => {
    const client = new DnsClient({ host: '127.0.0.1', port: named.port, localAddress: '192.0.2.77' });
    try {
      await assert.rejects(client.exchange(buildQuery(nameToWire('www.example.test'), 1, 1, { id: 8 }), 'tcp', 3000), (e: Error) => {
        assert.match(e.message, /EADDRNOTAVAIL/);
        return true;
      });
    } finally {
      client.close();
    }
  });
});

describe('dohRequestHeaders (RFC 8484 4.1)', () => {
  // A query for "a." with ID 0: header, name, type A, class IN.
  const wire = Buffer.from('000001000001000000000000016100000100 01'.replace(/ /g, ''), 'hex');
  const cases: Array<{ method: 'GET' | 'POST'; want: Record<string, string> }> = [
    {
      method: 'POST',
      want: { ':method': 'POST', ':scheme': 'https', ':authority': 'dns.test', ':path': '/dns-query', accept: 'application/dns-message', 'content-type': 'application/dns-message' },
    },
    {
      method: 'GET',
      want: { ':method': 'GET', ':scheme': 'https', ':authority': 'dns.test', ':path': '/dns-query?dns=AAABAAABAAAAAAAAAWEAAAEAAQ', accept: 'application/dns-message' },
    },
  ];
  for (const c of cases) {
    it(c.method, () => {
      assert.deepEqual(dohRequestHeaders(c.method, 'dns.test', wire), c.want);
    });
  }
});

describe('dohAuthority', () => {
  const cases: Array<{ servername: string | undefined; upstream: string; port: number; want: string }> = [
    { servername: undefined, upstream: '9.9.9.9:443', port: 443, want: '9.9.9.9' },
    { servername: undefined, upstream: '127.0.0.1:8443', port: 8443, want: '127.0.0.1:8443' },
    { servername: undefined, upstream: '[2620:fe::fe]:443', port: 443, want: '[2620:fe::fe]' },
    { servername: 'dns.quad9.net', upstream: '9.9.9.9:443', port: 443, want: 'dns.quad9.net' },
    { servername: 'localhost', upstream: '127.0.0.1:8443', port: 8443, want: 'localhost:8443' },
  ];
  for (const c of cases) {
    it(`${c.servername ?? 'no name'}, ${c.upstream}: ${c.want}`, () => {
      assert.equal(dohAuthority(c.servername, c.upstream, c.port), c.want);
    });
  }
});
