// Micro-benchmark (not a test): what the workloads plugin adds to one query.
//   node dist/plugins/workloads/bench.js
// CPU time of the same synchronous chain with and without the plugin in front, from 1,000 pods of 100
// workloads, names that walk a ClusterFirst search list (A, AAAA) and service names.

import { encodeMessage } from '../../src/lib/dns/codec.js';
import { RRType } from '../../src/lib/dns/types.js';
import { finalizeReply } from '../../src/server/finalize.js';
import type { Next } from '../../src/server/plugin.js';
import { Reply, responseFor } from '../../src/server/reply.js';
import type { DnsRequest } from '../../src/server/request.js';
import { toPodInfo } from '../../src/lib/cluster/convert.js';
import type { PodInfo } from '../../src/lib/cluster/records.js';
import { cpuNsPerCall } from '../../test/util/bench.js';
import { edns, testRequest } from '../../test/util/request.js';
import { Accounting, type PodIndex } from '../../src/plugins/workloads/accounting.js';
import { WorkloadsPlugin } from '../../src/plugins/workloads/handler.js';

const PODS = 1000;
const byIp = new Map<string, PodInfo[]>();
for (let i = 0; i < PODS; i++) {
  const ip = `10.8.${i >> 8}.${i & 255}`;
  const rs = `app${i % 100}-6d4f`;
  const pod = toPodInfo({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${rs}-${i}`, namespace: `ns${i % 10}`, labels: { 'pod-template-hash': '6d4f' }, ownerReferences: [{ kind: 'ReplicaSet', name: rs, controller: true }] },
    status: { phase: 'Running', podIP: ip },
  });
  byIp.set(ip, [pod]);
}
const index: PodIndex = { podsByIP: (ip) => byIp.get(ip) ?? [] };

const names = ['www.example.com.ns1.svc.cluster.local.', 'www.example.com.svc.cluster.local.', 'www.example.com.cluster.local.', 'www.example.com.', 'db.ns1.svc.cluster.local.'];
const queries: DnsRequest[] = [];
for (let i = 0; i < 4000; i++) {
  const name = names[i % names.length] as string;
  const qtype = (i >> 3) % 2 === 0 ? RRType.A : RRType.AAAA;
  const address = `10.8.${((i * 7) % PODS) >> 8}.${((i * 7) % PODS) & 255}`;
  queries.push(testRequest(name, qtype, { id: 7, edns: edns(), zone: 'cluster.local.', client: { transport: 'udp', remoteAddress: address, remotePort: 5353, localAddress: '127.0.0.1', localPort: 53 } }));
}
const replies = new Map(
  queries.map((q) => {
    const r = Reply.fromWire(encodeMessage(responseFor(q)), 0);
    finalizeReply(q, r);
    return [q, r];
  }),
);
const chain: Next = (req) => replies.get(req);

const N = Number(process.env.N ?? 2_000_000);
const acc = new Accounting({ maxSeries: 50, zone: 'cluster.local.', hostSearch: [] });
const plugin = new WorkloadsPlugin(acc, () => index);
let k = 0;
for (let round = 1; round <= 3; round++) {
  const base = cpuNsPerCall(`round ${round}: chain alone`, N, () => {
    chain(queries[k++ % queries.length] as DnsRequest);
  });
  const withPlugin = cpuNsPerCall(`round ${round}: workloads + chain`, N, () => {
    plugin.serve(queries[k++ % queries.length] as DnsRequest, chain);
  });
  console.log(`round ${round}: workloads adds ${(withPlugin - base).toFixed(1)} ns/query`);
}
