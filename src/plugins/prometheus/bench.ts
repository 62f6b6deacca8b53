// Micro-benchmark (not a test): what the prometheus plugin adds to one query.
//   npx tsx src/plugins/prometheus/bench.ts        (or node dist/plugins/prometheus/bench.js)
// Runs the same synchronous chain (a reply made as bytes, as the cache and the pre-encoded fast
// paths make them) with and without the plugin in front, and prints the difference per query.
// The reply is finalized once up front: the server finalizes every reply anyway, so that cost
// is not the plugin's.

import { Registry } from 'prom-client';
import { encodeMessage, parseQuery } from '../../dns/codec.js';
import { RRType } from '../../dns/types.js';
import { finalizeReply } from '../../server/finalize.js';
import { createLogger } from '../../server/log.js';
import type { BlockInfo, Next, Shared } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import { DnsRequest } from '../../server/request.js';
import { PrometheusPlugin } from './handler.js';

function request(name: string, qtype: number): DnsRequest {
  const raw = encodeMessage({
    id: 4242,
    qr: false,
    opcode: 0,
    aa: false,
    tc: false,
    rd: true,
    ra: false,
    z: false,
    ad: false,
    cd: false,
    rcode: 0,
    questions: [{ name, type: qtype, class: 1 }],
    answers: [],
    authority: [],
    additional: [],
    edns: { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [] },
  });
  const req = new DnsRequest(raw, parseQuery(raw), { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 40000, localAddress: '127.0.0.1', localPort: 53 });
  req.zone = 'cluster.local.';
  return req;
}

function shared(): Shared {
  const map = new Map<string, unknown>();
  return {
    metrics: new Registry(),
    log: createLogger(() => undefined),
    singleton<T>(key: string, create: () => T): T {
      if (!map.has(key)) map.set(key, create());
      return map.get(key) as T;
    },
  };
}

const block: BlockInfo = { keys: [], zones: ['cluster.local.'], port: 53, settings: { listenAddresses: [] },
  plugins: [], file: 'Corefile', line: 1 };

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
const plugin = new PrometheusPlugin({ address: { host: '127.0.0.1', port: 0, text: '127.0.0.1:0' } }, shared(), block);

for (let round = 1; round <= 3; round++) {
  const base = nsPerCall(`round ${round}: chain alone`, N, () => {
    chain(queries[k++ % 3] as DnsRequest);
  });
  const withPlugin = nsPerCall(`round ${round}: prometheus + chain`, N, () => {
    plugin.serve(queries[k++ % 3] as DnsRequest, chain);
  });
  console.log(`round ${round}: prometheus adds ${(withPlugin - base).toFixed(1)} ns/query`);
}
