// The rig's recorder: what it answers from a zone map, and, over real UDP and TCP sockets on
// loopback, truncation, malformed queries and its query log. No root needed.

import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { describe, test } from 'node:test';
import { decodeMessage, encodeQuery } from '../../../src/lib/dns/codec.js';
import { rcodeName, rdataToString } from '../../../src/lib/dns/rr.js';
import { RRType } from '../../../src/lib/dns/types.js';
import { frame, splitFrames } from './protocol.js';
import { answerFromZone, indexZone, startRecorder, type Zone } from './recorder.js';

const ZONE: Zone = {
  'API.example.com.': { A: ['192.0.2.10'], AAAA: ['2001:db8::10'] },
  'alias.example.com': { CNAME: 'api.example.com' },
  'alias2.example.com': { CNAME: 'alias.example.com.' },
  'dangling.example.com': { CNAME: 'gone.example.com' },
  'loop1.example.com': { CNAME: 'loop2.example.com' },
  'loop2.example.com': { CNAME: 'loop1.example.com' },
  'empty.example.com': {},
  'broken.example.com': { rcode: 'SERVFAIL' },
  'refused.example.com': { rcode: 5 },
  'big.example.com': { A: Array.from({ length: 40 }, (_, i) => `192.0.2.${i + 1}`) },
};

describe('answerFromZone', () => {
  const index = indexZone(ZONE);
  const cases: Array<{ name: string; qname: string; qtype: number; rcode: string; answers: string[] }> = [
    { name: 'A of a listed name (any case, trailing dot optional)', qname: 'api.EXAMPLE.com.', qtype: RRType.A, rcode: 'NOERROR', answers: ['api.EXAMPLE.com. A 192.0.2.10'] },
    { name: 'AAAA', qname: 'api.example.com.', qtype: RRType.AAAA, rcode: 'NOERROR', answers: ['api.example.com. AAAA 2001:db8::10'] },
    { name: 'a listed name without the type: NODATA', qname: 'empty.example.com.', qtype: RRType.A, rcode: 'NOERROR', answers: [] },
    { name: 'an unlisted name: NXDOMAIN', qname: 'nothing.example.com.', qtype: RRType.A, rcode: 'NXDOMAIN', answers: [] },
    { name: 'a CNAME chain, followed', qname: 'alias2.example.com.', qtype: RRType.A, rcode: 'NOERROR', answers: ['alias2.example.com. CNAME alias.example.com.', 'alias.example.com. CNAME api.example.com.', 'api.example.com. A 192.0.2.10'] },
    { name: 'the CNAME itself when asked for', qname: 'alias.example.com.', qtype: RRType.CNAME, rcode: 'NOERROR', answers: ['alias.example.com. CNAME api.example.com.'] },
    { name: 'a CNAME to nowhere: NXDOMAIN with the CNAME', qname: 'dangling.example.com.', qtype: RRType.A, rcode: 'NXDOMAIN', answers: ['dangling.example.com. CNAME gone.example.com.'] },
    { name: 'a CNAME loop: SERVFAIL', qname: 'loop1.example.com.', qtype: RRType.A, rcode: 'SERVFAIL', answers: [] },
    { name: 'a forced rcode by name', qname: 'broken.example.com.', qtype: RRType.A, rcode: 'SERVFAIL', answers: [] },
    { name: 'a forced rcode by number', qname: 'refused.example.com.', qtype: RRType.AAAA, rcode: 'REFUSED', answers: [] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = answerFromZone(index, c.qname, c.qtype, 30);
      assert.deepEqual({ rcode: rcodeName(r.rcode), answers: r.answers.map((rr) => `${rr.name} ${rr.type === RRType.CNAME ? 'CNAME' : rr.type === RRType.A ? 'A' : 'AAAA'} ${rdataToString(rr)}`) }, { rcode: c.rcode, answers: c.answers });
    });
  }

  const bad: Array<[string, Zone, RegExp]> = [
    ['an A that is not IPv4', { 'a.example': { A: ['2001:db8::1'] } }, /^Error: zone\["a\.example"\]\.A: "2001:db8::1" is not an IPv4 address/],
    ['an AAAA that is not IPv6', { 'a.example': { AAAA: ['192.0.2.1'] } }, /^Error: zone\["a\.example"\]\.AAAA: "192\.0\.2\.1" is not an IPv6 address/],
    ['an unknown rcode', { 'a.example': { rcode: 'BROKEN' } }, /^Error: zone\["a\.example"\]\.rcode: "BROKEN" is not an rcode/],
  ];
  for (const [name, zone, want] of bad) test(`${name} is refused`, () => assert.throws(() => indexZone(zone), want));
});

function udpAsk(port: number, wire: Buffer): Promise<Buffer> {
  const socket = dgram.createSocket('udp4');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no UDP answer')), 2000);
    socket.on('message', (m) => {
      clearTimeout(timer);
      socket.close();
      resolve(m);
    });
    socket.send(wire, port, '127.0.0.1');
  });
}

function tcpAsk(port: number, wire: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.21' });
    let got: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      const [answer] = splitFrames(got).messages;
      if (answer) {
        socket.end();
        resolve(Buffer.from(answer));
      }
    });
    socket.on('error', reject);
    socket.write(frame(wire));
  });
}

describe('the recorder on real sockets', () => {
  test('UDP: 40 addresses do not fit 512 bytes: TC with the records that fit; TCP: all of them', async () => {
    const rec = await startRecorder({ zone: ZONE });
    try {
      const query = encodeQuery(0x1234, 0x0100, 'big.example.com.', RRType.A, 1, undefined).wire;
      const udp = decodeMessage(await udpAsk(rec.port, query));
      const tcp = decodeMessage(await tcpAsk(rec.port, query));
      assert.deepEqual({ tc: udp.tc, n: udp.answers.length, id: udp.id, aa: udp.aa, rd: udp.rd }, { tc: true, n: 29, id: 0x1234, aa: true, rd: true });
      assert.deepEqual({ tc: tcp.tc, n: tcp.answers.length }, { tc: false, n: 40 });
      assert.deepEqual(
        rec.queries.map((q) => `${q.transport} ${q.from} ${q.id} ${q.qname} ${q.qtype} ${q.rcode}`),
        ['udp 127.0.0.1 4660 big.example.com A NOERROR', 'tcp 127.0.0.21 4660 big.example.com A NOERROR'],
      );
    } finally {
      await rec.close();
    }
  });

  test('EDNS: a larger UDP size lets all 40 through, and the answer carries an OPT', async () => {
    const rec = await startRecorder({ zone: ZONE });
    try {
      const query = encodeQuery(7, 0x0100, 'big.example.com.', RRType.A, 1, { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [] }).wire;
      const answer = decodeMessage(await udpAsk(rec.port, query));
      assert.deepEqual({ tc: answer.tc, n: answer.answers.length, udpSize: answer.edns?.udpSize }, { tc: false, n: 40, udpSize: 1232 });
    } finally {
      await rec.close();
    }
  });

  test('a query whose question cannot be read: FORMERR, logged without a name', async () => {
    const rec = await startRecorder({ zone: ZONE });
    try {
      // A header claiming one question, and a label running past the end.
      const garbage = Buffer.from([0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0x3f, 0x61]);
      const answer = await udpAsk(rec.port, garbage);
      assert.deepEqual({ id: answer.readUInt16BE(0), rcode: answer[3]! & 0x0f, qr: (answer[2]! & 0x80) !== 0 }, { id: 0xabcd, rcode: 1, qr: true });
      assert.deepEqual(rec.queries.map((q) => `${q.qname} ${q.qtype} ${q.rcode}`), ['null null FORMERR']);
    } finally {
      await rec.close();
    }
  });

  test('setZone and clear', async () => {
    const rec = await startRecorder({ zone: ZONE });
    try {
      const query = encodeQuery(1, 0x0100, 'new.example.com.', RRType.A, 1, undefined).wire;
      assert.equal(decodeMessage(await udpAsk(rec.port, query)).rcode, 3);
      rec.clear();
      rec.setZone({ 'new.example.com': { A: ['192.0.2.55'] } });
      const answer = decodeMessage(await udpAsk(rec.port, query));
      assert.deepEqual(answer.answers.map((rr) => rdataToString(rr)), ['192.0.2.55']);
      assert.deepEqual(rec.queries.map((q) => `${q.qname} ${q.rcode}`), ['new.example.com NOERROR']);
    } finally {
      await rec.close();
    }
  });

  test('a host that is not loopback is refused', async () => {
    await assert.rejects(startRecorder({ zone: ZONE, host: '0.0.0.0' }), /^Error: host: 0\.0\.0\.0 is not a loopback address/);
  });
});
