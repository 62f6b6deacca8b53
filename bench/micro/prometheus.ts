// Micro-benchmark (not a test): what the prometheus plugin adds to one query.
//   npx tsx bench/micro/prometheus.ts        (or node dist/plugins/prometheus/bench.js)
// Runs the same synchronous chain (a reply made as bytes, as the cache and the pre-encoded fast
// paths make them) with and without the plugin in front, and prints the difference per query.
// The reply is finalized once up front: the server finalizes every reply anyway, so that cost
// is not the plugin's.

import { encodeMessage } from '../../src/lib/dns/codec.js';
import { RRType } from '../../src/lib/dns/types.js';
import { finalizeReply } from '../../src/server/finalize.js';
import type { Next } from '../../src/server/plugin.js';
import { Reply, responseFor } from '../../src/server/reply.js';
import type { DnsRequest } from '../../src/server/request.js';
import { edns, testBlock, testRequest, testShared } from '../../test/util/request.js';
import { PrometheusPlugin } from '../../src/plugins/prometheus/handler.js';

function request(name: string, qtype: number): DnsRequest {
  return testRequest(name, qtype, { id: 4242, edns: edns(), zone: 'cluster.local.' });
}

const block = testBlock(['cluster.local.']);

function nsPerCall(label: string, n: number, fn: () => void): number {
  for (let i = 0; i < n / 10; i++) fn(); // warm-up: let the JIT settle
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  const ns = Number(process.hrtime.bigint() - start) / n;
  console.log(`${label.padEnd(34)} ${ns.toFixed(1)} ns/query`);
  return ns;
}

const N = Number(process.env.N ?? 2_000_000);
const queries = [request('web.demo.svc.cluster.local.', RRType.A), request('web.demo.svc.cluster.local.', RRType.AAAA), request('x.cluster.local.', RRType.SRV)];
const replies = queries.map((q) => {
  const r = Reply.fromWire(encodeMessage(responseFor(q)), 0);
  finalizeReply(q, r);
  return r;
});
let k = 0;
const chain: Next = (req) => replies[queries.indexOf(req)];
const plugin = new PrometheusPlugin({ address: { host: '127.0.0.1', port: 0, text: '127.0.0.1:0' } }, testShared(), block);

for (let round = 1; round <= 3; round++) {
  const base = nsPerCall(`round ${round}: chain alone`, N, () => {
    chain(queries[k++ % 3] as DnsRequest);
  });
  const withPlugin = nsPerCall(`round ${round}: prometheus + chain`, N, () => {
    plugin.serve(queries[k++ % 3] as DnsRequest, chain);
  });
  console.log(`round ${round}: prometheus adds ${(withPlugin - base).toFixed(1)} ns/query`);
}
