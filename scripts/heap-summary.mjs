// heap-summary.mjs — a V8 heap snapshot summarised: bytes and counts by constructor (objects)
// or by node type (strings, arrays, code, closures…), largest first.
//
// Usage: node scripts/heap-summary.mjs FILE.heapsnapshot [TOP=40]
//
// Self sizes only (what each object itself takes), which add up to the heap's used size; what
// an object keeps alive through others is not summed here.
import { readFileSync } from 'node:fs';

const [file, topText = '40'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/heap-summary.mjs FILE.heapsnapshot [TOP]');
  process.exit(2);
}
const top = Number(topText);
const snap = JSON.parse(readFileSync(file, 'utf8'));
const fields = snap.snapshot.meta.node_fields;
const types = snap.snapshot.meta.node_types[0];
const stride = fields.length;
const typeAt = fields.indexOf('type');
const nameAt = fields.indexOf('name');
const sizeAt = fields.indexOf('self_size');
const nodes = snap.nodes;
const strings = snap.strings;

/** Objects by their constructor; everything else by its type ("code", "string", "array"…), system names kept for "hidden" and "code". */
function group(type, name) {
  if (type === 'object' || type === 'native') return `${type}: ${name}`;
  if (type === 'code' || type === 'hidden') return `${type}: ${name.replace(/ \/ .*$/, '').slice(0, 60)}`;
  return type;
}

const totals = new Map();
let all = 0;
for (let i = 0; i < nodes.length; i += stride) {
  const type = types[nodes[i + typeAt]];
  const size = nodes[i + sizeAt];
  const key = group(type, strings[nodes[i + nameAt]]);
  const t = totals.get(key) ?? { bytes: 0, count: 0 };
  t.bytes += size;
  t.count += 1;
  totals.set(key, t);
  all += size;
}
const rows = [...totals].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top);
const kib = (n) => (n / 1024).toFixed(0).padStart(8);
console.log(`${kib(all)} KiB in ${nodes.length / stride} nodes (self sizes)`);
for (const [key, t] of rows) console.log(`${kib(t.bytes)} KiB ${String(t.count).padStart(8)}  ${key}`);
