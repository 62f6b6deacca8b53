// The table of pre-encoded answers: found by name, type and question length, patched per query,
// slots reused after a name is forgotten, and answers intact after compaction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nameToWire } from '../../lib/dns/name.js';
import { buildQuery } from '../../lib/dns/wire.js';
import { requestOf } from '../../../test/util/request.js';
import { MAX_TYPES_PER_NAME, NONE, Templates } from './templates.js';

const A = 1;
const AAAA = 28;
/** A stored answer: the lower-case query for `name` as a reply with one byte of payload. */
function answer(name: string, qtype: number, payload: number): { wire: Buffer; qEnd: number } {
  const q = buildQuery(nameToWire(name), qtype, 1, { id: 0 });
  return { wire: Buffer.concat([q, Buffer.from([payload])]), qEnd: q.length };
}

test('templates: find by name, type and question length; NONE otherwise', () => {
  const t = new Templates();
  const web = answer('web.demo.svc.cluster.local', A, 1);
  const slot = t.add('web.demo.svc.cluster.local.', A, web.wire, 0, web.qEnd, { min: 5, max: 5 });
  const rows: Array<[string, number, number, number]> = [
    ['web.demo.svc.cluster.local.', A, web.qEnd, slot],
    ['web.demo.svc.cluster.local.', AAAA, web.qEnd, NONE],
    ['web.demo.svc.cluster.local.', A, web.qEnd + 1, NONE],
    ['api.demo.svc.cluster.local.', A, web.qEnd, NONE],
  ];
  for (const [name, qtype, qEnd, want] of rows) assert.equal(t.find(name, qtype, qEnd), want, `${name} ${qtype} ${qEnd}`);
});

test("templates: a reply carries the client's ID, RD and spelling, QR and AA, the rcode and the TTL range", () => {
  const t = new Templates();
  const web = answer('web.demo.svc.cluster.local', A, 9);
  const slot = t.add('web.demo.svc.cluster.local.', A, web.wire, 3, web.qEnd, { min: 5, max: 30 });
  const raw = buildQuery(nameToWire('WEB.Demo.svc.cluster.local'), A, 1, { id: 0xbeef });
  const reply = t.reply(slot, requestOf(raw));
  const wire = reply.wire as Buffer;
  assert.deepEqual(
    [wire.readUInt16BE(0), wire.readUInt16BE(2).toString(16), wire.subarray(12, web.qEnd).equals(raw.subarray(12)), wire[wire.length - 1], reply.rcode, reply.kept],
    [0xbeef, '8500', true, 9, 3, { min: 5, max: 30 }],
  );
});

test('templates: forgetting a name drops all its types and frees their slots for reuse', () => {
  const t = new Templates();
  const a = answer('web.demo.svc.cluster.local', A, 1);
  const aaaa = answer('web.demo.svc.cluster.local', AAAA, 2);
  const s1 = t.add('web.demo.svc.cluster.local.', A, a.wire, 0, a.qEnd, { min: 5, max: 5 });
  const s2 = t.add('web.demo.svc.cluster.local.', AAAA, aaaa.wire, 0, aaaa.qEnd, { min: 5, max: 5 });
  t.forget('web.demo.svc.cluster.local.');
  assert.deepEqual([t.names, t.find('web.demo.svc.cluster.local.', A, a.qEnd)], [0, NONE]);
  const api = answer('api.demo.svc.cluster.local', A, 3);
  const s3 = t.add('api.demo.svc.cluster.local.', A, api.wire, 0, api.qEnd, { min: 5, max: 5 });
  assert.ok([s1, s2].includes(s3), `slot ${s3} reused`);
  assert.equal(t.reply(s3, requestOf(buildQuery(nameToWire('api.demo.svc.cluster.local'), A, 1))).wire?.at(-1), 3);
});

test('templates: answers kept across compaction and growth read back the same', () => {
  const t = new Templates();
  const names = Array.from({ length: 3000 }, (_, i) => `s${i}.demo.svc.cluster.local`);
  for (const [i, n] of names.entries()) {
    const a = answer(n, A, i % 251);
    t.add(`${n}.`, A, Buffer.concat([a.wire, Buffer.alloc(100)]), 0, a.qEnd, { min: 5, max: 5 });
  }
  // Forget three quarters: the arena is then mostly released bytes and compacts.
  for (const n of names.slice(0, 2250)) t.forget(`${n}.`);
  t.compactIfWasteful();
  const kept = names.slice(2250).map((n, j) => {
    const a = answer(n, A, 0);
    const slot = t.find(`${n}.`, A, a.qEnd);
    return (t.reply(slot, requestOf(buildQuery(nameToWire(n), A, 1))).wire as Buffer)[a.qEnd] === (2250 + j) % 251;
  });
  assert.deepEqual([t.names, kept.every(Boolean)], [750, true]);
});

test('templates: a name keeps at most MAX_TYPES_PER_NAME types; the next is not kept', () => {
  const t = new Templates();
  const slots = Array.from({ length: MAX_TYPES_PER_NAME + 1 }, (_, qtype) => {
    const a = answer('web.demo.svc.cluster.local', qtype + 1, 0);
    return t.add('web.demo.svc.cluster.local.', qtype + 1, a.wire, 0, a.qEnd, { min: 5, max: 5 });
  });
  assert.deepEqual([slots.slice(0, MAX_TYPES_PER_NAME).includes(NONE), slots[MAX_TYPES_PER_NAME]], [false, NONE]);
});
