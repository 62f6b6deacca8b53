// Run as a child process by the cache memory test, with the Node.js flags kdns ships with
// (SHIPPED_NODE_FLAGS): asks a 5,000-entry cache 100,000 unique names and prints, as JSON, the
// process's memory after 20,000 and after 100,000 of them and once it has settled after them,
// and the cache's entry count and arena.
// A child of its own because V8's young generation is sized by those flags: measured inside the
// test runner (no flags), newer V8 lets it grow to 128 MiB under this allocation rate, which is
// not what a kdns started as shipped holds.
import v8 from 'node:v8';
import vm from 'node:vm';
import { Registry } from 'prom-client';
import { buildQuery } from '../../src/lib/dns/wire.js';
import { nameToWire } from '../../src/lib/dns/name.js';
import { Reply } from '../../src/server/reply.js';
import { CachePlugin } from '../../src/plugins/cache/handler.js';
import { cacheCells } from '../../src/plugins/cache/metrics.js';
import { defaultCacheOptions } from '../../src/plugins/cache/options.js';
import { requestOf } from './request.js';

export interface FloodReport {
  warm: NodeJS.MemoryUsage;
  /** Right after the flood (and a full collection). */
  after: NodeJS.MemoryUsage;
  /** Once RSS is back within SETTLED_WITHIN of warm, or SETTLE_MS after the flood if it never is. */
  settled: NodeJS.MemoryUsage;
  /** How long after the flood that was. */
  settledAfterMs: number;
  /** SETTLED_WITHIN, for the test to hold it to. */
  settledWithin: number;
  size: number;
  arena: { live: number; held: number };
}

/** What counts as back where it was. */
const SETTLED_WITHIN = 16 * 2 ** 20;
/**
 * How long the flood's aftermath may take to go. Node 26's V8 keeps the pages a burst of
 * allocation used for a while, and its memory reducer, which starts once allocation stops,
 * returns them: measured 29 MiB right after the flood and back within 1 MiB of warm 20 s later.
 */
const SETTLE_MS = 45_000;

function gc(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

/** The upstream's side: a fixed reply with the asked name written in (A record, owner compressed to the question). */
function answerFor(raw: Buffer): Buffer {
  const out = Buffer.alloc(raw.length + 16);
  raw.copy(out);
  out.writeUInt16BE(0x8580, 2);
  out.writeUInt16BE(1, 6);
  Buffer.from('c00c000100010000012c0004c0000201', 'hex').copy(out, raw.length);
  return out;
}

async function flood(): Promise<FloodReport> {
  const plugin = new CachePlugin(defaultCacheOptions(['.'], 5000), cacheCells(new Registry(), 'dns://:53', '.'));
  const ask = async (i: number): Promise<void> => {
    const raw = buildQuery(nameToWire(`n${String(i).padStart(7, '0')}.flood.example.test`), 1, 1, { id: i & 0xffff });
    await plugin.serve(requestOf(raw), (r) => Reply.fromWire(answerFor(r.raw), 0));
  };
  for (let i = 0; i < 20_000; i++) await ask(i);
  gc();
  const warm = process.memoryUsage();
  for (let i = 20_000; i < 100_000; i++) await ask(i);
  gc();
  const after = process.memoryUsage();
  const flooded = performance.now();
  let settled = after;
  while (settled.rss - warm.rss >= SETTLED_WITHIN && performance.now() - flooded < SETTLE_MS) {
    await new Promise((r) => setTimeout(r, 500));
    settled = process.memoryUsage();
  }
  return { warm, after, settled, settledAfterMs: Math.round(performance.now() - flooded), settledWithin: SETTLED_WITHIN, size: plugin.size('success'), arena: plugin.arenaBytes() };
}

process.stdout.write(`${JSON.stringify(await flood())}\n`);
