// Property test over real sockets: whatever a client sends, every byte kdns sends back is a DNS
// message that parses. Mutated queries (dns/testkit.ts mutate, fixed seed) go to a server with
// the stock plugins — kubernetes, hosts, chaos, cache, loadbalance, forward to a real named —
// over UDP and TCP; each reply must decode, and the query it answered is printed when not.
// scripts/fuzz-flood.mjs sends the same kind of queries by the million to a running kdns.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { decodeMessage } from '../lib/dns/codec.js';
import { fuzzCorefile, mutatedQueries } from '../../test/util/fuzz.js';
import { freePort, sleep } from '../../test/util/net.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { exampleZone, missing, namedUpstream, rootZone, type NamedUpstream } from '../../test/util/upstream.js';

const UDP_PACKETS = 20_000;
const TCP_PACKETS = 3_000;

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
    s = await startTestServer(fuzzCorefile(named.port));
  });
  after(async () => {
    await s?.stop();
    await named?.dispose();
  });

  /** Fails with the first replies that do not parse and the queries they answer. */
  function assertAllParse(replies: Buffer[], sent: Uint8Array[]): void {
    const bad = replies.filter(isBad);
    const query = (r: Buffer): string => (r.length >= 2 ? Buffer.from(sent[r.readUInt16BE(0)] ?? []).toString('hex') : '?');
    const shown = bad.slice(0, 5).map((r) => `reply ${r.toString('hex')} to ${query(r)}`);
    assert.equal(bad.length, 0, `${bad.length} of ${replies.length} replies do not parse:\n${shown.join('\n')}`);
    // The property must be exercised: most mutated queries are still answered.
    assert.ok(replies.length > sent.length / 2, `only ${replies.length} replies to ${sent.length} queries`);
  }

  it(`${UDP_PACKETS} mutated queries over UDP: every reply parses`, async () => {
    const list = [...mutatedQueries(UDP_PACKETS, 0x6b646e75)];
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
    assertAllParse(replies, list);
  });

  it(`${TCP_PACKETS} mutated queries pipelined over TCP: every reply parses`, async () => {
    const list = [...mutatedQueries(TCP_PACKETS, 0x6b646e74)];
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
    assertAllParse(replies, list);
  });
});
