// Micro-benchmark of rewrite's cost on a query no rule matches (not a test): the bench auth
// workload's names against `rewrite name exact foo.example. bar.example.` and against a longer
// list of the rule kinds real Corefiles use.
//   npx tsx bench/micro/rewrite.ts [queries]
// Prints CPU ns/query for parse + DnsRequest + an empty next, then with the rewrite handler in
// front; the difference is what the rules cost.

import { RRType } from '../../src/lib/dns/types.js';
import type { Next } from '../../src/server/plugin.js';
import { cpuNsPerQuery } from '../../test/util/bench.js';
import { directiveIn } from '../../test/util/corefile.js';
import { edns, queryWire, requestOf } from '../../test/util/request.js';
import { RewritePlugin } from '../../src/plugins/rewrite/handler.js';
import { parseRewrite } from '../../src/plugins/rewrite/setup.js';

const total = Number(process.argv[2] ?? 2_000_000);

function plugin(...rules: string[]): RewritePlugin {
  const p = new RewritePlugin();
  for (const r of rules) p.rules.push(parseRewrite(directiveIn(r)));
  return p;
}

const PACKETS = 1 << 16;
const packets: Buffer[] = [];
for (let i = 0; i < PACKETS; i++) {
  const k = (i * 7919) % 10_000;
  packets.push(queryWire(`svc-${k}.ns-${k % 100}.svc.cluster.local.`, i % 10 === 8 ? RRType.AAAA : RRType.A, { id: i, edns: edns() }));
}
const next: Next = () => undefined;

const one = plugin('rewrite name exact foo.example. bar.example.');
const several = plugin(
  'rewrite name exact foo.example. bar.example.',
  'rewrite name suffix .corp.example. .svc.cluster.local. answer auto',
  'rewrite name regex ^(.*)\\.legacy\\.example\\.$ {1}.svc.cluster.local. answer auto',
  'rewrite ttl suffix .internal.example. 30-300',
  'rewrite rcode exact broken.example. SERVFAIL NOERROR',
);

const run = (label: string, body: (raw: Buffer) => unknown): number => cpuNsPerQuery(label, packets, total, body, 48);
console.log(`rewrite: ${total} queries per run, none matching`);
const base = run('parse + request + next', (raw) => next(requestOf(raw)) === undefined);
const withOne = run('... + rewrite (1 exact rule)', (raw) => one.serve(requestOf(raw), next) === undefined);
const withSeveral = run('... + rewrite (5 rules: exact/suffix/regex/ttl/rcode)', (raw) => several.serve(requestOf(raw), next) === undefined);
console.log(`=> 1 exact rule ≈ ${(withOne - base).toFixed(0)} ns/query, 5 rules ≈ ${(withSeveral - base).toFixed(0)} ns/query`);
