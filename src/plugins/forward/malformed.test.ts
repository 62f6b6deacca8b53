// forward and an upstream whose replies do not parse: such a reply is a failed exchange, like a
// timeout (as CoreDNS's forward, which unpacks every reply), never bytes passed on to the
// client. Every reply kdns sends must parse.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { decodeMessage } from '../../lib/dns/codec.js';
import { dig } from '../../../test/util/dig.js';
import { freePort } from '../../../test/util/net.js';
import { startTestServer } from '../../../test/util/server.js';
import { bareReply, exampleZone, missing, namedUpstream, rootZone, type NamedUpstream } from '../../../test/util/upstream.js';

const skip = missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils');

/**
 * A reply to `query` (its header and question) with ANCOUNT `answers` and `records(qEnd)` after
 * the question, which ends at qEnd.
 */
function replyWith(query: Buffer, answers: number, records: (qEnd: number) => number[]): Buffer {
  const head = bareReply(query, 0x0400);
  head.writeUInt16BE(answers, 6);
  return Buffer.concat([head, Buffer.from(records(head.length))]);
}

/** Owner (pointer to the question), type A, class IN, TTL 60: RDLENGTH and RDATA follow. */
const A_HEADER = [0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60];

const broken: Array<{ what: string; reply: (q: Buffer) => Buffer }> = [
  { what: 'an answer cut short', reply: (q) => replyWith(q, 1, () => [...A_HEADER, 0, 4, 10, 0]) },
  { what: 'more answers counted than sent', reply: (q) => replyWith(q, 2, () => [...A_HEADER, 0, 4, 10, 0, 0, 1]) },
  { what: 'an A record of 3 octets', reply: (q) => replyWith(q, 1, () => [...A_HEADER, 0, 3, 10, 0, 0]) },
  // CNAME whose target is a pointer to itself: the record's bounds hold, the name does not.
  { what: 'a CNAME target pointing at itself', reply: (q) => replyWith(q, 1, (qEnd) => [0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 2, 0xc0 | ((qEnd + 12) >> 8), (qEnd + 12) & 0xff]) },
];

/** Scripted because no real server can be told to send broken replies: answers every UDP query with `make(query)`. */
async function brokenUpstream(make: (query: Buffer) => Buffer): Promise<{ port: number; queries: () => number; close: () => Promise<void> }> {
  const udp = dgram.createSocket('udp4');
  let queries = 0;
  udp.on('message', (msg, rinfo) => {
    queries++;
    udp.send(make(msg), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  return { port: udp.address().port, queries: () => queries, close: () => new Promise<void>((r) => udp.close(() => r())) };
}

describe('forward to an upstream whose replies do not parse', { skip }, () => {
  let named: NamedUpstream;

  before(async () => {
    named = namedUpstream({ zones: { 'example.test': exampleZone(), '': rootZone() }, port: await freePort() });
    await named.start();
  });
  after(async () => {
    await named?.dispose();
  });

  for (const c of broken) {
    for (const withGood of [false, true]) {
      const want = withGood ? 'NOERROR from the next upstream' : 'SERVFAIL';
      it(`${c.what}: ${want}, and what kdns sends parses`, async () => {
        const bad = await brokenUpstream(c.reply);
        const upstreams = withGood ? `127.0.0.1:${bad.port} 127.0.0.1:${named.port} {\n    policy sequential\n  }` : `127.0.0.1:${bad.port}`;
        const s = await startTestServer(`.:{PORT} {\n  bind 127.0.0.1\n  forward . ${upstreams}\n}\n`);
        try {
          const r = await dig('www.example.test', 'A', { port: s.port });
          assert.ok(bad.queries() >= 1, 'the broken upstream was asked');
          assert.equal(r.status, withGood ? 'NOERROR' : 'SERVFAIL', r.raw);
          assert.deepEqual(r.answer.map((a) => a.data), withGood ? ['192.0.2.1'] : []);
          assert.doesNotMatch(r.raw, /malformed message/i);
        } finally {
          await s.stop();
          await bad.close();
        }
      });
    }
  }

  it('the replies the broken upstream sends do not parse (the cases test what they say)', async () => {
    const q = Buffer.from('abcd01000001000000000000037777770765786d706c6504746573740000010001', 'hex');
    for (const c of broken) assert.throws(() => decodeMessage(c.reply(q)), c.what);
  });
});
