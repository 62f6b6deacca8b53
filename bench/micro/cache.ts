// Micro-benchmark of the cache hit path (not a test): the bench's fwd workload shape, 1,000
// names under example.test all cached, asked in a scattered order.
//   npx tsx bench/micro/cache.ts [queries]
// Prints CPU ns/query for parse + DnsRequest alone, then with cache.serve (the hit), then with
// the finalizer (what the server does per UDP query apart from the sockets); the differences
// are the costs of each step. Also times inserts under eviction (the miss path's store).
import { Registry } from '../../src/server/promclient.js';
import { encodeMessage } from '../../src/lib/dns/codec.js';
import { finalizeReply } from '../../src/server/finalize.js';
import { Reply } from '../../src/server/reply.js';
import { cpuNsPerQuery } from '../../test/util/bench.js';
import { edns, queryWire, requestOf, responseMessage } from '../../test/util/request.js';
import { CachePlugin } from '../../src/plugins/cache/handler.js';
import { cacheCells } from '../../src/plugins/cache/metrics.js';
import { defaultCacheOptions, type CacheOptions } from '../../src/plugins/cache/options.js';

const NAMES = 1000;
const total = Number(process.argv[2] ?? 2_000_000);

const options: CacheOptions = defaultCacheOptions();

function query(name: string, id: number, withEdns: boolean): Buffer {
  return queryWire(name, 1, { id, edns: withEdns ? edns() : undefined });
}

/** What named answers for these names: one A record, NS in authority, glue in additional. */
function upstreamReply(name: string): Buffer {
  return encodeMessage(responseMessage({
    id: 0,
    aa: true,
    questions: [{ name, type: 1, class: 1 }],
    answers: [{ name, type: 1, class: 1, ttl: 300, data: { address: '192.0.2.1' } }],
    authority: [{ name: 'example.test.', type: 2, class: 1, ttl: 300, data: { target: 'ns.example.test.' } }],
    additional: [{ name: 'ns.example.test.', type: 1, class: 1, ttl: 300, data: { address: '127.0.0.1' } }],
    edns: edns(),
  }));
}

const name = (i: number): string => `name-${i}.example.test.`;

const plugin = new CachePlugin(options, cacheCells(new Registry(), 'dns://:53', '.'));
for (let i = 0; i < NAMES; i++) {
  const raw = query(name(i), i, false);
  void plugin.serve(requestOf(raw), () => Reply.fromWire(upstreamReply(name(i)), 0));
}

// dnsperf sends without EDNS by default; the bench's dig checks with it. Half and half.
const PACKETS = 1 << 14;
const packets: Buffer[] = [];
for (let i = 0; i < PACKETS; i++) packets.push(query(name((i * 7919) % NAMES), i & 0xffff, i % 2 === 0));
const miss = (): undefined => {
  throw new Error('unexpected miss');
};

const run = (label: string, body: (raw: Buffer) => unknown): number => cpuNsPerQuery(label, packets, total, body);

const parse = run('parse + DnsRequest', (raw) => requestOf(raw));
const hit = run('… + cache.serve (hit)', (raw) => plugin.serve(requestOf(raw), miss));
const full = run('… + finalizeReply', (raw) => {
  const req = requestOf(raw);
  return finalizeReply(req, plugin.serve(req, miss) as Reply);
});
console.log(`cache hit itself: ${(hit - parse).toFixed(0)} ns; finalizer on a hit: ${(full - hit).toFixed(0)} ns`);

// The store under eviction: 4,096 names round robin through 1,000 places, so every query misses
// and every store pushes one entry out.
const small = new CachePlugin({ ...options, success: { ...options.success, capacity: 1000 } }, cacheCells(new Registry(), 'dns://:53', '.'));
const floodRaw = Array.from({ length: 4096 }, (_, i) => query(`flood-${i}.example.test.`, i, false));
const floodReplies = floodRaw.map((_, i) => upstreamReply(`flood-${i}.example.test.`));
let n = 0;
const inserts = 200_000;
const start = process.cpuUsage();
for (let i = 0; i < inserts; i++) {
  const k = n++ & 4095;
  const raw = floodRaw[k] as Buffer;
  // A fresh reply each time: the server hands the cache bytes it may keep patching.
  void small.serve(requestOf(raw), () => Reply.fromWire(Buffer.from(floodReplies[k] as Buffer), 0));
}
const used = process.cpuUsage(start);
console.log(`miss + store (capacity 1000, evicting)         ${(((used.user + used.system) * 1000) / inserts).toFixed(0).padStart(5)} ns/query`);
