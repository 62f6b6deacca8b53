import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nameToWire } from '../dns/name.js';
import { buildQuery, questionEnd } from '../dns/wire.js';
import { replyCost, udpReplyLimit } from './rcvbuf.js';

/** A query for www.example.test A with, after its question, the additional records given. */
function query(additional: number[] = [], arcount = additional.length > 0 ? 1 : 0): Buffer {
  const q = Buffer.from(buildQuery(nameToWire('www.example.test.'), 1, 1, { id: 7 }));
  q.writeUInt16BE(arcount, 10);
  return Buffer.concat([q, Buffer.from(additional)]);
}

/** An OPT record advertising `size` bytes: root owner, type 41, the size as its class, TTL and RDLENGTH 0. */
function opt(size: number): number[] {
  return [0, 0, 41, size >> 8, size & 0xff, 0, 0, 0, 0, 0, 0];
}

describe('udpReplyLimit and replyCost', () => {
  const cases: Array<{ what: string; q: Buffer; limit: number; cost: number }> = [
    { what: 'no EDNS: the 512 bytes of RFC 1035', q: query(), limit: 512, cost: 2048 },
    { what: 'EDNS 1232 (the usual)', q: query(opt(1232)), limit: 1232, cost: 3488 },
    { what: 'EDNS 4096', q: query(opt(4096)), limit: 4096, cost: 9216 },
    { what: 'EDNS below 512 counts as 512', q: query(opt(100)), limit: 512, cost: 2048 },
    // A TSIG-like record first: no OPT where one is looked for, so as large as kdns reads.
    { what: 'an additional record that is not OPT', q: query([3, 107, 101, 121, 0, 0, 250, 0, 255, 0, 0, 0, 0, 0, 0]), limit: 4096, cost: 9216 },
    { what: 'ARCOUNT without the record (truncated query)', q: query([], 1), limit: 4096, cost: 9216 },
  ];
  for (const c of cases) {
    it(c.what, () => {
      const end = questionEnd(c.q);
      assert.equal(udpReplyLimit(c.q, end), c.limit);
      assert.equal(replyCost(c.q, end), c.cost);
    });
  }
});
