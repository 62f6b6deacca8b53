// Property test over real sockets: whatever a client sends, every byte kdns sends back is a DNS
// message that parses. Mutated queries (dns/testkit.ts mutate, fixed seed) go to a server with
// the stock plugins — kubernetes, hosts, chaos, cache, loadbalance, forward to a real named —
// over UDP and TCP; each reply must decode, and the query it answered is printed when not.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { decodeMessage, encodeMessage } from '../dns/codec.js';
import { message, mutate, prng } from '../dns/testkit.js';
import { freePort, sleep } from '../testutil/net.js';
import { startTestServer, type TestServer } from '../testutil/server.js';
import { exampleZone, missing, namedUpstream, rootZone, type NamedUpstream } from '../testutil/upstream.js';

const UDP_PACKETS = 20_000;
const TCP_PACKETS = 3_000;
const CLUSTER = fileURLToPath(new URL('../../examples/cluster', import.meta.url));

/** Valid queries for every kind of answer the server makes. */
function seeds(): Uint8Array[] {
  const edns = { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [] };
  const q = (name: string, type: number, klass = 1, withEdns = true, opcode = 0) =>
    encodeMessage(message({ qr: false, opcode, rd: true, questions: [{ name, type, class: klass }], edns: withEdns ? edns : undefined }));
  return [
    q('web.demo.svc.cluster.local.', 1),
    q('web.demo.svc.cluster.local.', 28, 1, false),
    q('_http._tcp.web.demo.svc.cluster.local.', 33),
    q('nope.demo.svc.cluster.local.', 1, 1, false),
    q('10.0.96.10.in-addr.arpa.', 12),
    q('x.example.org.', 1),
    q('x.example.org.', 255, 1, false),
    q('version.bind.', 16, 3),
    q('web.demo.svc.cluster.local.', 1, 3, false),
    q('www.example.test.', 1),
    q('txt-big.example.test.', 16, 1, false),
    q('alias.example.test.', 1),
    q('x.example.org.', 6, 1, false, 4),
  ];
}

const isBad = (reply: Buffer): boolean => {
  try {
    decodeMessage(reply);
    return false;
  } catch {
    return true;
  }
};

describe('every reply kdns sends parses', { skip: missing('named', 'bind9') }, () => {
  let named: NamedUpstream;
  let s: TestServer;

  before(async () => {
    named = namedUpstream({ zones: { 'example.test': exampleZone(), '': rootZone() }, port: await freePort() });
    await named.start();
    s = await startTestServer(`.:{PORT} {
    bind 127.0.0.1
    chaos
    hosts {
        10.9.9.9 x.example.org
        fallthrough
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        manifests ${CLUSTER}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loadbalance
    forward . 127.0.0.1:${named.port}
}
`);
  });
  after(async () => {
    await s?.stop();
    await named?.dispose();
  });

  /**
   * Mutated packets from a fixed seed, each under its own ID (its index), so a reply names the
   * query it answers.
   */
  function packets(count: number, seed: number): Uint8Array[] {
    const rand = prng(seed);
    const corpus = seeds();
    const list: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const p = mutate(corpus[Math.floor(rand() * corpus.length)] as Uint8Array, rand);
      if (p.length >= 2) {
        p[0] = i >> 8;
        p[1] = i & 0xff;
      }
      list.push(p);
    }
    return list;
  }

  function describeBad(bad: Buffer[], sent: Uint8Array[]): string {
    const query = (r: Buffer): string => (r.length >= 2 ? Buffer.from(sent[r.readUInt16BE(0)] ?? []).toString('hex') : '?');
    return bad
      .slice(0, 5)
      .map((r) => `reply ${r.toString('hex')} to ${query(r)}`)
      .join('\n');
  }

  it(`${UDP_PACKETS} mutated queries over UDP: every reply parses`, async () => {
    const list = packets(UDP_PACKETS, 0x6b646e75);
    const sock = dgram.createSocket('udp4');
    const replies: Buffer[] = [];
    sock.on('message', (m) => replies.push(m));
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
    try {
      // In steps small enough for the socket buffers on a loaded machine.
      for (let i = 0; i < list.length; i += 50) {
        for (const p of list.slice(i, i + 50)) sock.send(p, s.port, '127.0.0.1');
        await sleep(2);
      }
      await sleep(1500);
    } finally {
      sock.close();
    }
    const bad = replies.filter(isBad);
    assert.deepEqual(bad.length, 0, `${bad.length} of ${replies.length} replies do not parse:\n${describeBad(bad, list)}`);
    // The property must be exercised: most mutated queries are still answered.
    assert.ok(replies.length > UDP_PACKETS / 2, `only ${replies.length} replies`);
  });

  it(`${TCP_PACKETS} mutated queries pipelined over TCP: every reply parses`, async () => {
    const list = packets(TCP_PACKETS, 0x6b646e74);
    const replies: Buffer[] = [];
    const conn = net.connect({ host: '127.0.0.1', port: s.port });
    let buf = Buffer.alloc(0);
    conn.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        replies.push(Buffer.from(buf.subarray(2, 2 + buf.readUInt16BE(0))));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
    });
    await new Promise<void>((r) => conn.once('connect', () => r()));
    try {
      for (let i = 0; i < list.length; i += 100) {
        for (const p of list.slice(i, i + 100)) {
          const frame = Buffer.alloc(2 + p.length);
          frame.writeUInt16BE(p.length, 0);
          frame.set(p, 2);
          conn.write(frame);
        }
        await sleep(5);
      }
      await sleep(1500);
    } finally {
      conn.destroy();
    }
    const bad = replies.filter(isBad);
    assert.deepEqual(bad.length, 0, `${bad.length} of ${replies.length} replies do not parse:\n${describeBad(bad, list)}`);
    assert.ok(replies.length > TCP_PACKETS / 2, `only ${replies.length} replies`);
  });
});
