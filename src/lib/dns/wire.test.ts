import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildQuery, fullRcode, isTruncated, questionEnd, sameQuestion, scanMessage, skipName } from './wire.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// www.example.test. A IN, id 0x0102, RD.
const QUERY = hex('0102 0100 0001 0000 0000 0000 03777777 076578616d706c65 0474657374 00 0001 0001');
// Reply: QR AA RD RA, 1 answer (owner = pointer to the question), 1 SOA in authority, OPT with ext-rcode 1.
const REPLY = hex(
  '0102 8580 0001 0001 0001 0001' +
    '03777777 076578616d706c65 0474657374 00 0001 0001' +
    'c00c 0001 0001 0000012c 0004 c0000201' + // www A 300 192.0.2.1
    'c010 0006 0001 00000e10 0018 c010 c010 00000001 00000e10 00000258 00015180 0000001e' + // SOA, ttl 3600, minimum 30
    '00 0029 04d0 01000000 0000', // OPT udp 1232, ext-rcode 1
);

describe('wire reading', () => {
  const names: Array<{ what: string; buf: Buffer; at: number; want: number }> = [
    { what: 'plain name', buf: QUERY, at: 12, want: 30 },
    { what: 'root', buf: hex('00'), at: 0, want: 1 },
    { what: 'pointer', buf: hex('c00c'), at: 0, want: 2 },
    { what: 'pointer cut short', buf: hex('c0'), at: 0, want: -1 },
    { what: 'label past the end', buf: hex('05616263'), at: 0, want: -1 },
    { what: 'reserved label type 0x40', buf: hex('4100'), at: 0, want: -1 },
  ];
  for (const c of names) {
    it(`skipName: ${c.what}`, () => assert.equal(skipName(c.buf, c.at), c.want));
  }

  it('questionEnd finds the end of the question, -1 for a short packet', () => {
    assert.deepEqual([questionEnd(QUERY), questionEnd(REPLY), questionEnd(QUERY.subarray(0, 20)), questionEnd(hex('0000'))], [34, 34, -1, -1]);
  });

  const questions: Array<{ what: string; response: Buffer; want: boolean }> = [
    { what: 'same bytes', response: REPLY, want: true },
    { what: 'other case', response: Buffer.concat([REPLY.subarray(0, 13), Buffer.from('WWW'), REPLY.subarray(16)]), want: true },
    { what: 'other name', response: Buffer.concat([REPLY.subarray(0, 13), Buffer.from('wwx'), REPLY.subarray(16)]), want: false },
    { what: 'other type', response: Buffer.concat([REPLY.subarray(0, 30), hex('001c'), REPLY.subarray(32)]), want: false },
    { what: 'no question', response: hex('0102 8180 0000 0000 0000 0000'), want: false },
  ];
  for (const c of questions) {
    it(`sameQuestion: ${c.what}`, () => assert.equal(sameQuestion(QUERY, 34, c.response), c.want));
  }

  it('scanMessage lists records with TTLs and lifts out the OPT', () => {
    const scan = scanMessage(REPLY);
    assert.ok(scan);
    assert.deepEqual(
      scan.records.map((r) => ({ section: r.section, type: r.type, ttl: r.ttl, typeAt: r.typeAt, rdLen: r.end - r.rdStart })),
      [
        { section: 1, type: 1, ttl: 300, typeAt: 36, rdLen: 4 },
        { section: 2, type: 6, ttl: 3600, typeAt: 52, rdLen: 24 },
      ],
    );
    assert.equal(scan.opt?.klass, 1232);
    assert.equal(fullRcode(REPLY, scan.opt), 16); // BADVERS: ext-rcode 1 << 4 | 0
    assert.equal(isTruncated(REPLY), false);
  });

  it('scanMessage refuses a record that runs past the end', () => {
    assert.equal(scanMessage(REPLY.subarray(0, REPLY.length - 3)), undefined);
  });

  it('buildQuery writes header, question and OPT', () => {
    const q = buildQuery(new Uint8Array([0]), 2, 1, { id: 0xabcd, rd: false, ednsUdpSize: 1232, dnssecOk: true });
    assert.equal(q.toString('hex'), 'abcd' + '0000' + '0001' + '0000' + '0000' + '0001' + '00' + '0002' + '0001' + '00' + '0029' + '04d0' + '00008000' + '0000');
  });
});
