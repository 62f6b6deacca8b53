// The arena the pre-encoded answers live in: copies are exact and independent of the original,
// and it reports waste only once dropped bytes are the larger half of several chunks.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Arena, CHUNK_SIZE } from './arena.js';

test('arena: a kept copy has the bytes and does not follow the original', () => {
  const a = new Arena();
  const src = Buffer.from([1, 2, 3, 4, 5]);
  const kept = a.keep(src);
  src.fill(9);
  assert.deepEqual([...kept], [1, 2, 3, 4, 5]);
  assert.equal(a.liveBytes, 5);
  assert.equal(a.heldBytes, CHUNK_SIZE);
});

test('arena: consecutive copies share a chunk and do not overlap', () => {
  const a = new Arena();
  const x = a.keep(Buffer.alloc(100, 1));
  const y = a.keep(Buffer.alloc(100, 2));
  assert.equal(x.buffer, y.buffer);
  assert.equal(y.byteOffset - x.byteOffset, 100);
  assert.deepEqual([x[99], y[0]], [1, 2]);
});

test('arena: a message larger than a chunk gets a chunk of its own size', () => {
  const a = new Arena();
  const big = a.keep(Buffer.alloc(CHUNK_SIZE + 1, 7));
  assert.equal(big.length, CHUNK_SIZE + 1);
  assert.equal(a.heldBytes, CHUNK_SIZE + 1);
});

const wasteRows: Array<{ what: string; kept: number; dropped: number; wasteful: boolean }> = [
  // 1,000-byte messages: 65 fit a chunk, so 400 of them fill 7 chunks (458,752 bytes held).
  { what: 'nothing dropped', kept: 400, dropped: 0, wasteful: false },
  { what: 'less than half dropped', kept: 400, dropped: 150, wasteful: false },
  { what: 'more than half dropped', kept: 400, dropped: 250, wasteful: true },
  { what: 'everything dropped but within two chunks', kept: 100, dropped: 100, wasteful: false },
];

for (const row of wasteRows) {
  test(`arena: wasteful() when ${row.what}`, () => {
    const a = new Arena();
    const kept = Array.from({ length: row.kept }, () => a.keep(Buffer.alloc(1000)));
    for (const k of kept.slice(0, row.dropped)) a.drop(k);
    assert.equal(a.wasteful(), row.wasteful);
  });
}

test('arena: reset forgets the chunks, copies handed out stay readable', () => {
  const a = new Arena();
  const kept = a.keep(Buffer.from('answer'));
  a.reset();
  assert.deepEqual([a.heldBytes, a.liveBytes], [0, 0]);
  assert.equal(kept.toString(), 'answer');
});

const compactRows: Array<{ what: string; dropped: number; compacts: boolean; live: number; held: number }> = [
  // 400 messages of 1,000 bytes in 7 chunks; after compaction the rest fit ceil(n / 65) chunks.
  { what: 'less than half dropped: left alone', dropped: 150, compacts: false, live: 250_000, held: 7 * CHUNK_SIZE },
  { what: 'more than half dropped: the rest copied into fresh chunks', dropped: 250, compacts: true, live: 150_000, held: 3 * CHUNK_SIZE },
];

for (const row of compactRows) {
  test(`arena: compactIfWasteful when ${row.what}`, () => {
    const a = new Arena();
    let kept = Array.from({ length: 400 }, (_, i) => a.keep(Buffer.alloc(1000, i % 256)));
    for (const k of kept.slice(0, row.dropped)) a.drop(k);
    kept = kept.slice(row.dropped);
    const before = kept[0] as Buffer;
    const compacted = a.compactIfWasteful((keep) => {
      kept = kept.map((k) => keep(k));
    });
    assert.deepEqual([compacted, a.liveBytes, a.heldBytes], [row.compacts, row.live, row.held]);
    assert.equal((kept[0] as Buffer).buffer !== before.buffer, row.compacts, 'moved only when compacted');
    assert.deepEqual([...(kept[0] as Buffer).subarray(0, 2)], [row.dropped % 256, row.dropped % 256]);
  });
}

test('arena: put() copies (a head and a tail as one) and returns a location that chunkAt and offsetAt read back', () => {
  const a = new Arena();
  const first = a.put(Buffer.from('first'));
  const second = a.put(Buffer.from('sec'), Buffer.from('ond'));
  const big = a.put(Buffer.alloc(CHUNK_SIZE, 7));
  const read = (loc: number, n: number): string => a.chunkAt(loc).subarray(a.offsetAt(loc), a.offsetAt(loc) + n).toString('latin1');
  assert.deepEqual([read(first, 5), read(second, 6), a.offsetAt(second), a.offsetAt(big), a.chunkAt(big) !== a.chunkAt(first)], ['first', 'second', 5, 0, true]);
  assert.deepEqual([a.liveBytes, a.heldBytes], [11 + CHUNK_SIZE, 2 * CHUNK_SIZE]);
});

test('arena: compactLocationsIfWasteful moves what is still used to fresh chunks, once half is released', () => {
  const a = new Arena();
  // 400 messages of 1,000 bytes in 7 chunks; 250 released leaves 150, which fit 3 chunks.
  let locations = Array.from({ length: 400 }, (_, i) => a.put(Buffer.alloc(1000, i % 256)));
  for (let i = 0; i < 250; i++) a.release(1000);
  locations = locations.slice(250);
  const compacted = a.compactLocationsIfWasteful((relocate) => {
    locations = locations.map((loc) => relocate(loc, 1000));
  });
  const firstByte = (loc: number): number => a.chunkAt(loc)[a.offsetAt(loc)] as number;
  assert.deepEqual([compacted, a.liveBytes, a.heldBytes], [true, 150_000, 3 * CHUNK_SIZE]);
  assert.deepEqual([firstByte(locations[0] as number), firstByte(locations[149] as number)], [250 % 256, 399 % 256]);
});
