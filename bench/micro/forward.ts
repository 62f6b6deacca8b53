// Latency added by kdns on a cold miss (not a test): the same kind of query asked of named
// directly and through kdns (cache + forward, every name new so every query misses), one at a
// time, interleaved so both see the same machine. Needs named (bind9).
//   npx tsx bench/micro/forward.ts [queries]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DnsClient } from '../../src/lib/dnsclient/client.js';
import { exampleZone, namedUpstream } from '../../test/util/upstream.js';
import { buildQuery, headerRcode } from '../../src/lib/dns/wire.js';
import { nameToWire } from '../../src/lib/dns/name.js';
import { createLogger } from '../../src/server/log.js';
import { startServer } from '../../src/server/server.js';
import { freePort } from '../../test/util/net.js';

const total = Number(process.argv[2] ?? 3000);

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function main(): Promise<void> {
  const named = namedUpstream({ zones: { 'example.test': exampleZone() }, port: await freePort() });
  await named.start();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'kdns-bench-'));
  const corefile = `.:${port} {\n  bind 127.0.0.1\n  cache 30\n  forward . 127.0.0.1:${named.port}\n}\n`;
  writeFileSync(join(dir, 'Corefile'), corefile);
  const server = await startServer({ corefilePath: join(dir, 'Corefile'), log: createLogger(() => undefined) });
  const direct = new DnsClient({ host: '127.0.0.1', port: named.port });
  const viaKdns = new DnsClient({ host: '127.0.0.1', port });
  const times = { direct: [] as number[], kdns: [] as number[] };
  const ask = async (client: DnsClient, name: string, into?: number[]): Promise<void> => {
    const q = buildQuery(nameToWire(name), 1, 1, { id: 1 });
    const t0 = process.hrtime.bigint();
    const reply = await client.exchange(q, 'udp', 2000);
    const us = Number(process.hrtime.bigint() - t0) / 1000;
    if (headerRcode(reply) !== 0) throw new Error(`${name}: rcode ${headerRcode(reply)}`);
    into?.push(us);
  };
  try {
    for (let i = 0; i < 500; i++) {
      await ask(direct, `w${i}.d.wild.example.test`);
      await ask(viaKdns, `w${i}.k.wild.example.test`);
    }
    for (let i = 0; i < total; i++) {
      await ask(direct, `m${i}.d.wild.example.test`, times.direct);
      await ask(viaKdns, `m${i}.k.wild.example.test`, times.kdns);
    }
  } finally {
    direct.close();
    viaKdns.close();
    await server.stop();
    await named.dispose();
  }
  const d = [...times.direct].sort((x, y) => x - y);
  const k = [...times.kdns].sort((x, y) => x - y);
  const row = (label: string, s: number[]): string => `${label.padEnd(26)} median ${quantile(s, 0.5).toFixed(0).padStart(5)} µs   p90 ${quantile(s, 0.9).toFixed(0).padStart(5)} µs`;
  console.log(row('named directly', d));
  console.log(row('through kdns (cold miss)', k));
  console.log(`added by kdns: median ${(quantile(k, 0.5) - quantile(d, 0.5)).toFixed(0)} µs over ${total} queries each`);
}

void main();
