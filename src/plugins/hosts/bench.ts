// Micro-benchmark of the hosts hot path (not a test): 10,000 names, the bench workload's mix
// (80% A of known names, 10% AAAA of the same names = NODATA, 10% unknown = NXDOMAIN).
//   npx tsx src/plugins/hosts/bench.ts [queries]
// Prints ns/query for the handler alone, and for what the server does around it per UDP query
// (fast query parse + DnsRequest + handler + finalize to bytes).

import { encodeMessage, parseQuery } from '../../dns/codec.js';
import { RRType } from '../../dns/types.js';
import { finalizeReply } from '../../server/finalize.js';
import { createLogger } from '../../server/log.js';
import type { Reply } from '../../server/reply.js';
import { DnsRequest, type ClientInfo } from '../../server/request.js';
import { HostsPlugin } from './handler.js';
import { parseHostsText } from './hostsfile.js';

const NAMES = 10_000;
const total = Number(process.argv[2] ?? 2_000_000);

function name(i: number): string {
  return `svc-${i}.ns-${i % 100}.svc.cluster.local.`;
}

function query(qname: string, type: number, id: number): Buffer {
  return encodeMessage({
    id, qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, z: false, ad: false, cd: false, rcode: 0,
    questions: [{ name: qname, type, class: 1 }], answers: [], authority: [], additional: [],
    edns: { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [] },
  });
}

const hostsText = Array.from({ length: NAMES }, (_, i) => `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255} ${name(i).slice(0, -1)}`).join('\n');
const loadStart = process.hrtime.bigint();
const plugin = new HostsPlugin(
  { path: '/nonexistent', zones: ['cluster.local.'], ttl: 5, autoReverse: true, reloadMs: 0, inline: parseHostsText(hostsText).lines },
  { log: createLogger(() => undefined) },
);
const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;

const client: ClientInfo = { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 40000, localAddress: '127.0.0.1', localPort: 53 };
const packets: Buffer[] = [];
for (let i = 0; i < 4096; i++) {
  const k = (i * 7919) % NAMES;
  const roll = i % 10;
  packets.push(roll < 8 ? query(name(k), RRType.A, i) : roll === 8 ? query(name(k), RRType.AAAA, i) : query(`nope-${k}.ns-1.svc.cluster.local.`, RRType.A, i));
}
const requests = packets.map((p) => new DnsRequest(p, parseQuery(p), client));
const next = (): undefined => undefined;

function run(label: string, body: (i: number) => unknown): void {
  for (let i = 0; i < 200_000; i++) body(i); // warm-up for the JIT
  const start = process.hrtime.bigint();
  let sink = 0;
  for (let i = 0; i < total; i++) if (body(i)) sink++;
  const ns = Number(process.hrtime.bigint() - start) / total;
  console.log(`${label.padEnd(44)} ${ns.toFixed(0).padStart(5)} ns/query  (${(1e9 / ns / 1000).toFixed(0)}k/s, ${sink === total ? 'all answered' : `${sink} answered`})`);
}

console.log(`hosts: ${NAMES} names loaded and encoded in ${loadMs.toFixed(1)} ms; ${total} queries per run`);
run('handler (serve → Reply.fromWire)', (i) => plugin.serve(requests[i & 4095] as DnsRequest, next));
run('parse + request + handler + finalize', (i) => {
  const raw = Buffer.from(packets[i & 4095] as Buffer); // the server gets a fresh buffer per datagram
  const req = new DnsRequest(raw, parseQuery(raw), client);
  const reply = plugin.serve(req, next) as Reply;
  return finalizeReply(req, reply).length > 0;
});
