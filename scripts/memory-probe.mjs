// memory-probe.mjs — where a running kdns's memory is, on request. Preloaded by
// scripts/bench-memory.sh (PROBE=1) with `node --import ./scripts/memory-probe.mjs …`; never
// shipped. On SIGWINCH (whose default is to do nothing, and which kdns does not trap) it appends
// one JSON line to $KDNS_MEMORY_PROBE:
//
//   label     the text of $KDNS_MEMORY_PROBE.label, read at the signal (the script writes the
//             measuring point there: loaded, settled, after-load, idle, after-gc)
//   pid, role the process, and "worker N" for a multisocket worker, "main" for any other (the
//             parent of workers, or a process serving alone); the table has a block per pid
//   usage     process.memoryUsage() in bytes
//   heap      v8.getHeapStatistics(), and each space's committed, physical and used bytes
//   code      v8.getHeapCodeStatistics(): compiled code and bytecode inside the heap
//   mappings  resident kB of /proc/self/smaps by mapping: the node binary's pages, shared
//             libraries, malloc's brk heap, anonymous (V8's heap and malloc's large blocks),
//             thread stacks and the rest
//
// With $KDNS_MEMORY_PROBE_SNAPSHOT set to a path, a signal whose label is "snapshot" writes a
// heap snapshot there (a full collection first: the figures after it are the live heap), to be
// summarised by scripts/heap-summary.mjs. The probe itself is node:v8 and node:fs, both
// loaded by node at start anyway.
import { appendFileSync, readFileSync, realpathSync } from 'node:fs';
import v8 from 'node:v8';

const out = process.env.KDNS_MEMORY_PROBE;
const snapshotPath = process.env.KDNS_MEMORY_PROBE_SNAPSHOT;
const execPath = realpathSync(process.execPath);

/** Resident kB per kind of mapping, from /proc/self/smaps. */
function mappings() {
  const kinds = { binary: 0, libraries: 0, brk: 0, anonymous: 0, stacks: 0, other: 0 };
  let kind = 'other';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      const path = header[1] ?? '';
      kind =
        path === execPath ? 'binary'
        : path === '[heap]' ? 'brk'
        : path === '' ? 'anonymous'
        : path.startsWith('[stack') ? 'stacks'
        : /\.so(\.|$)/.test(path) ? 'libraries'
        : 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kinds[kind] += Number(rss[1]);
  }
  return kinds;
}

function spaces() {
  return Object.fromEntries(
    v8.getHeapSpaceStatistics().map((s) => [s.space_name, { committed: s.space_size, physical: s.physical_space_size, used: s.space_used_size }]),
  );
}

function label() {
  try {
    return readFileSync(`${out}.label`, 'utf8').trim();
  } catch {
    return '';
  }
}

if (out) {
  process.on('SIGWINCH', () => {
    const at = label();
    if (at === 'snapshot' && snapshotPath) v8.writeHeapSnapshot(snapshotPath);
    const record = {
      label: at,
      pid: process.pid,
      role: process.env.KDNS_WORKER === '1' ? `worker ${process.env.KDNS_WORKER_INDEX ?? 0}` : 'main',
      node: process.version,
      usage: process.memoryUsage(),
      heap: v8.getHeapStatistics(),
      spaces: spaces(),
      code: v8.getHeapCodeStatistics(),
      mappings: mappings(),
    };
    appendFileSync(out, JSON.stringify(record) + '\n');
  });
}

// As a script: `node scripts/memory-probe.mjs FILE.jsonl` prints the records of FILE side by
// side, MiB, one column per measuring point.
const mib = (bytes) => (bytes / 1048576).toFixed(1);
function table(file) {
  const all = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  // Several processes (a parent and its workers) write to one file: a block for each.
  const pids = [...new Set(all.map((r) => r.pid))];
  for (const pid of pids) {
    const records = all.filter((r) => r.pid === pid);
    if (pids.length > 1) console.log(`-- ${records[0].role ?? 'process'} (pid ${pid})`);
    processTable(records);
  }
}

function processTable(records) {
  const spaceNames = [...new Set(records.flatMap((r) => Object.keys(r.spaces)))];
  const rows = [
    ['RSS', (r) => r.usage.rss],
    ['  node binary (text, data)', (r) => r.mappings.binary * 1024],
    ['  shared libraries', (r) => r.mappings.libraries * 1024],
    ['  malloc brk heap', (r) => r.mappings.brk * 1024],
    ['  anonymous (V8 heap, large mallocs)', (r) => r.mappings.anonymous * 1024],
    ['  stacks and other', (r) => (r.mappings.stacks + r.mappings.other) * 1024],
    ['V8 heap, resident', (r) => r.heap.total_physical_size],
    ...spaceNames.map((s) => [`  ${s}`, (r) => r.spaces[s]?.physical ?? 0]),
    ['V8 heap, used', (r) => r.heap.used_heap_size],
    ['  code and metadata', (r) => r.code.code_and_metadata_size],
    ['  bytecode and metadata', (r) => r.code.bytecode_and_metadata_size],
    ['malloced by V8', (r) => r.heap.malloced_memory],
    ['external (Buffers, native)', (r) => r.usage.external],
    ['  of it ArrayBuffers', (r) => r.usage.arrayBuffers],
    ['anonymous - V8 heap', (r) => r.mappings.anonymous * 1024 - r.heap.total_physical_size],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  console.log(['MiB'.padEnd(width), ...records.map((r) => r.label.padStart(10))].join(' '));
  for (const [name, value] of rows) console.log([name.padEnd(width), ...records.map((r) => mib(value(r)).padStart(10))].join(' '));
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(new URL(import.meta.url).pathname)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node scripts/memory-probe.mjs FILE.jsonl');
    process.exit(2);
  }
  table(file);
}
