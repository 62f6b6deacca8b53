// Both UDP paths — kdns's batched native socket and node:dgram — must behave the same on the
// wire. Every case runs against a real server on loopback over each transport; CI requires the
// native socket to be built (KDNS_NATIVE=required), so neither half is ever skipped there.
import { test, describe, after, before } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { dig, answers } from '../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { queryWire, edns } from '../../test/util/request.js';
import { decodeMessage } from '../lib/dns/codec.js';
import { RRType } from '../lib/dns/types.js';
import { nativeUdp } from '../lib/native/udp.js';
import type { UdpTransport } from './listeners.js';
import { udpNote } from './udpnote.js';

const transports: Exclude<UdpTransport, 'auto'>[] = nativeUdp() || process.env.CI === 'true' ? ['native', 'dgram'] : ['dgram'];
if (!nativeUdp() && process.env.CI !== 'true') console.log('# native UDP socket not built (npm run build:native): testing node:dgram only');

/** 300 addresses for one name: an answer of ~4.9 kB, more than a native slot (4096 bytes). */
const bigHosts = Array.from({ length: 300 }, (_, i) => `10.1.${i >> 8}.${i & 0xff} big.example.org`).join('\n');

const corefile = (upstreamPort: number): string => `
example.org:{PORT} {
    bind 127.0.0.1 ::1
    prometheus 127.0.0.1:0
    hosts ${'{DIR}'}/hosts {
        10.9.9.9 x.example.org
        fallthrough
    }
    whoami
}
fwd.test:{PORT} {
    bind 127.0.0.1
    forward . 127.0.0.1:${upstreamPort}
}
`;

/** Sends every packet from one socket at once; collects replies for `ms`. */
function burst(port: number, packets: Buffer[], ms: number, host = '127.0.0.1'): Promise<Buffer[]> {
  return new Promise((resolve) => {
    const s = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
    const got: Buffer[] = [];
    s.on('message', (m) => got.push(m));
    s.bind(0, host, () => {
      for (const p of packets) s.send(p, port, host);
      setTimeout(() => {
        s.close();
        resolve(got);
      }, ms);
    });
  });
}

for (const transport of transports) {
  describe(`UDP over ${transport}`, () => {
    let upstream: TestServer;
    let s: TestServer;
    before(async () => {
      // The upstream for forward: its answers arrive after the batch that carried the query.
      upstream = await startTestServer(`fwd.test:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        192.0.2.7 www.fwd.test\n    }\n}\n`, { udpTransport: 'dgram' });
      s = await startTestServer(corefile(upstream.port), { udpTransport: transport, files: { hosts: bigHosts } });
      // {DIR} is known only once the directory exists: rewrite and reload.
      const { readFileSync, writeFileSync } = await import('node:fs');
      writeFileSync(s.corefilePath, readFileSync(s.corefilePath, 'utf8').replaceAll('{DIR}', s.dir));
      assert.equal(await s.server.reload(), true);
    });
    after(async () => {
      await s.stop();
      await upstream.stop();
    });

    test('the listener reports the transport it uses', () => {
      const udp = s.server.listening().filter((l) => l.transport === 'udp');
      assert.deepEqual(
        udp.map((l) => l.via),
        udp.map(() => transport),
      );
    });

    const cases: { name: string; qname: string; type: string; server: string; args?: string[]; expect: (r: Awaited<ReturnType<typeof dig>>) => void }[] = [
      { name: 'an answer over IPv4', qname: 'x.example.org', type: 'A', server: '127.0.0.1', expect: (r) => assert.deepEqual(answers(r), ['A 10.9.9.9']) },
      { name: 'an answer over IPv6', qname: 'x.example.org', type: 'A', server: '::1', expect: (r) => assert.deepEqual(answers(r), ['A 10.9.9.9']) },
      {
        name: 'whoami sees the IPv4 client address',
        qname: 'who.example.org',
        type: 'A',
        server: '127.0.0.1',
        expect: (r) => assert.deepEqual(r.additional.filter((a) => a.type === 'A').map((a) => a.data), ['127.0.0.1']),
      },
      {
        name: 'whoami sees the IPv6 client address',
        qname: 'who.example.org',
        type: 'A',
        server: '::1',
        expect: (r) => assert.deepEqual(r.additional.filter((a) => a.type === 'AAAA').map((a) => a.data), ['::1']),
      },
      { name: 'a forwarded answer, sent after its batch', qname: 'www.fwd.test', type: 'A', server: '127.0.0.1', expect: (r) => assert.deepEqual(answers(r), ['A 192.0.2.7']) },
    ];
    for (const c of cases) {
      test(c.name, async () => {
        const r = await dig(c.qname, c.type, { server: c.server, port: s.port });
        assert.equal(r.status, 'NOERROR');
        c.expect(r);
      });
    }

    test('200 queries sent at once (several batches of 64) get 200 replies with their IDs', async () => {
      const packets = Array.from({ length: 200 }, (_, i) => queryWire('x.example.org', RRType.A, { id: i + 1 }));
      const replies = await burst(s.port, packets, 1500);
      assert.deepEqual(replies.map((m) => m.readUInt16BE(0)).sort((a, b) => a - b), packets.map((_, i) => i + 1));
      assert.deepEqual(
        decodeMessage(replies[0]).answers.map((a) => a.name),
        ['x.example.org.'],
      );
    });

    const dropped: { name: string; packet: Buffer }[] = [
      { name: 'a datagram larger than any query (5,000 bytes)', packet: Buffer.concat([queryWire('x.example.org', RRType.A, { id: 7 }), Buffer.alloc(5000 - queryWire('x.example.org', RRType.A).length)]) },
      { name: 'a datagram shorter than a header', packet: Buffer.from([1, 2, 3]) },
      { name: 'a response (QR set)', packet: (() => { const b = queryWire('x.example.org', RRType.A, { id: 9 }); b[2] |= 0x80; return b; })() },
    ];
    for (const d of dropped) {
      test(`dropped without a reply, and the next query answered: ${d.name}`, async () => {
        const ok = queryWire('x.example.org', RRType.A, { id: 4242 });
        const replies = await burst(s.port, [d.packet, ok], 400);
        assert.deepEqual(replies.map((m) => m.readUInt16BE(0)), [4242]);
      });
    }

    test('a reply larger than a native slot (4,096 bytes) is sent whole', async () => {
      // dig caps +bufsize, so the query is made here: EDNS with a 65,000-byte buffer.
      const [reply] = await burst(s.port, [queryWire('big.example.org', RRType.A, { id: 6, edns: edns(65000) })], 600);
      const m = decodeMessage(reply);
      assert.deepEqual([m.tc, m.answers.length, reply.length > 4096], [false, 300, true]);
    });

    test('prometheus counts IPv4 and IPv6 clients under their family (1 and 2)', async () => {
      const families = async (): Promise<Record<string, number>> => {
        const metric = s.server.shared.metrics.getSingleMetric('coredns_dns_requests_total');
        const out: Record<string, number> = {};
        for (const v of (await metric?.get())?.values ?? []) out[String(v.labels.family)] = (out[String(v.labels.family)] ?? 0) + v.value;
        return out;
      };
      const before = await families();
      await dig('x.example.org', 'A', { server: '127.0.0.1', port: s.port });
      await dig('x.example.org', 'A', { server: '::1', port: s.port });
      await dig('x.example.org', 'A', { server: '::1', port: s.port });
      const after = await families();
      assert.deepEqual([(after['1'] ?? 0) - (before['1'] ?? 0), (after['2'] ?? 0) - (before['2'] ?? 0)], [1, 2]);
    });

    test('an EDNS query gets an OPT record back', async () => {
      const [reply] = await burst(s.port, [queryWire('x.example.org', RRType.A, { id: 5, edns: edns(1232) })], 400);
      assert.equal(decodeMessage(reply).edns?.udpSize, 1232);
    });
  });

  test(`${transport}: a stopped server frees its port for the next one`, async () => {
    const first = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    whoami\n}\n`, { udpTransport: transport });
    const port = first.port;
    await first.stop();
    const second = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    whoami\n}\n`, { udpTransport: transport, port });
    try {
      const r = await dig('who.example.org', 'A', { server: '127.0.0.1', port });
      assert.equal(r.status, 'NOERROR');
    } finally {
      await second.stop();
    }
  });
}

describe('the startup note on the UDP path', () => {
  const cases: Array<{ via: 'native' | 'dgram' | undefined; env: string | undefined; note: string }> = [
    { via: 'native', env: undefined, note: '' },
    { via: undefined, env: undefined, note: '' },
    { via: 'dgram', env: 'dgram', note: '; udp via node:dgram, as KDNS_UDP=dgram asks' },
    { via: 'dgram', env: undefined, note: '; udp via node:dgram: the native socket is not built (npm run build:native)' },
  ];
  for (const c of cases) {
    test(`via ${c.via ?? 'unknown'}, KDNS_UDP=${c.env ?? '(unset)'}`, () => {
      const saved = process.env.KDNS_UDP;
      if (c.env === undefined) delete process.env.KDNS_UDP;
      else process.env.KDNS_UDP = c.env;
      try {
        assert.equal(udpNote(c.via), c.note);
      } finally {
        if (saved === undefined) delete process.env.KDNS_UDP;
        else process.env.KDNS_UDP = saved;
      }
    });
  }
});
