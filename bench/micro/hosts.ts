// Micro-benchmark of the hosts hot path (not a test): 10,000 names, the bench workload's mix
// (80% A of known names, 10% AAAA of the same names = NODATA, 10% unknown = NXDOMAIN).
//   npx tsx bench/micro/hosts.ts [queries]
// Prints CPU ns/query for parse + DnsRequest, then with the handler, then with the finalizer
// (what the server does per UDP query apart from the sockets); the differences are the costs.

import { RRType } from '../../src/lib/dns/types.js';
import { finalizeReply } from '../../src/server/finalize.js';
import { createLogger } from '../../src/server/log.js';
import type { Reply } from '../../src/server/reply.js';
import { cpuNsPerQuery } from '../../test/util/bench.js';
import { edns, queryWire, requestOf } from '../../test/util/request.js';
import { HostsPlugin } from '../../src/plugins/hosts/handler.js';
import { parseHostsText } from '../../src/plugins/hosts/hostsfile.js';

const NAMES = 10_000;
const total = Number(process.argv[2] ?? 2_000_000);

function name(i: number): string {
  return `svc-${i}.ns-${i % 100}.svc.cluster.local.`;
}

function query(qname: string, type: number, id: number): Buffer {
  return queryWire(qname, type, { id, edns: edns() });
}

const hostsText = Array.from({ length: NAMES }, (_, i) => `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255} ${name(i).slice(0, -1)}`).join('\n');
const loadStart = process.hrtime.bigint();
const plugin = new HostsPlugin(
  { path: '/nonexistent', zones: ['cluster.local.'], ttl: 5, autoReverse: true, reloadMs: 0, inline: parseHostsText(hostsText).lines },
  { log: createLogger(() => undefined) },
);
const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;

// Many distinct packets in a scattered order, as dnsperf sends them: the lookups miss the CPU
// caches as they do in the server, and every query brings a fresh name string to hash.
const PACKETS = 1 << 16;
const packets: Buffer[] = [];
for (let i = 0; i < PACKETS; i++) {
  const k = (i * 7919) % NAMES;
  const roll = i % 10;
  packets.push(roll < 8 ? query(name(k), RRType.A, i) : roll === 8 ? query(name(k), RRType.AAAA, i) : query(`nope-${k}.ns-1.svc.cluster.local.`, RRType.A, i));
}
const next = (): undefined => undefined;

const run = (label: string, body: (raw: Buffer) => unknown): number => cpuNsPerQuery(label, packets, total, body, 40);

console.log(`hosts: ${NAMES} names loaded and encoded in ${loadMs.toFixed(1)} ms; ${total} queries per run`);
const base = run('parse + request', (raw) => requestOf(raw).name.length > 0);
const handled = run('parse + request + handler', (raw) => plugin.serve(requestOf(raw), next));
const finalized = run('parse + request + handler + finalize', (raw) => {
  const req = requestOf(raw);
  return finalizeReply(req, plugin.serve(req, next) as Reply).length > 0;
});
console.log(`=> handler ≈ ${(handled - base).toFixed(0)} ns/query, finalize ≈ ${(finalized - handled).toFixed(0)} ns/query`);
