#!/usr/bin/env node
// bench-change.mjs — how long a Service change takes to reach answers (issue #4: median under
// 1 s at 10,000 Services), with the stock Corefile's `cache 30` in front of `kubernetes`.
//
// Usage: node scripts/bench-change.mjs [CLUSTER_DIR] [ROUNDS]    (npm run bench:change)
//   CLUSTER_DIR defaults to the bench's 10,000-Service cluster, .bench/fixture/cluster (written
//   by bench/fixture.ts when it is not there, as `npm run bench` writes it), ROUNDS to 20.
//
// The folder is copied to a temporary one and served by `kdns serve` on 127.0.0.1:$PORT (5330).
// Each round asks for one Service (so its answer is kept and would be cached), rewrites the
// Service file with that Service's clusterIP changed (written beside it and renamed over it, as
// editors and `kubectl get -o json >` through a temp file do), and asks every 5 ms until the new
// address is served. Prints the latencies' median, 90th percentile and maximum.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import dgram from 'node:dgram';
import { cp, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const fixture = join(here, '.bench/fixture');
if (process.argv[2] === undefined && !existsSync(join(fixture, 'meta.json'))) {
  const made = spawnSync(process.execPath, ['--import', 'tsx', 'bench/fixture.ts', '--out', fixture], { cwd: here, stdio: 'inherit' });
  if (made.status !== 0) throw new Error('bench/fixture.ts could not write the fixture');
}
const source = resolve(process.argv[2] ?? join(fixture, 'cluster'));
if (!existsSync(source)) {
  console.error(`bench-change: ${source}: no such folder of manifests`);
  process.exit(2);
}
const rounds = Number(process.argv[3] ?? 20);
const port = Number(process.env.PORT ?? 5330);
const nodeFlags = (process.env.KDNS_NODE_FLAGS ?? '--max-semi-space-size=1 --v8-pool-size=1').split(' ').filter(Boolean);

const { buildQuery } = await import(join(here, 'dist/lib/dns/wire.js'));
const { nameToWire } = await import(join(here, 'dist/lib/dns/name.js'));
const { decodeMessage } = await import(join(here, 'dist/lib/dns/codec.js'));

const socket = dgram.createSocket('udp4');
await new Promise((ok) => socket.bind(0, '127.0.0.1', ok));
let pending;
socket.on('message', (msg) => pending?.(msg));
/** One A query; resolves with the addresses, or [] after 200 ms without a reply. */
function ask(name) {
  const q = buildQuery(nameToWire(name), 1, 1, { id: Math.floor(Math.random() * 65536) });
  return new Promise((ok) => {
    const timer = setTimeout(() => ok([]), 200);
    pending = (msg) => {
      if (msg.readUInt16BE(0) !== q.readUInt16BE(0)) return;
      clearTimeout(timer);
      ok(decodeMessage(msg).answers.filter((r) => r.type === 1).map((r) => r.data.address));
    };
    socket.send(q, port, '127.0.0.1');
  });
}

const dir = await mkdtemp(join(tmpdir(), 'kdns-bench-change-'));
await cp(source, join(dir, 'cluster'), { recursive: true });
const files = (await readdir(join(dir, 'cluster'))).filter((f) => f.endsWith('.json'));
let servicesFile;
let list;
for (const f of files) {
  const parsed = JSON.parse(await readFile(join(dir, 'cluster', f), 'utf8'));
  if (parsed.items?.some((o) => o.kind === 'Service')) {
    servicesFile = join(dir, 'cluster', f);
    list = parsed;
    break;
  }
}
if (!servicesFile) throw new Error(`no file of Services in ${source}`);
const services = list.items.filter((o) => o.kind === 'Service' && o.spec?.clusterIP && o.spec.clusterIP !== 'None' && !o.spec.clusterIPs);

await writeFile(
  join(dir, 'Corefile'),
  `.:${port} {\n    bind 127.0.0.1\n    errors\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        manifests ${join(dir, 'cluster')}\n        pods insecure\n        ttl 30\n    }\n    cache 30\n    loadbalance\n}\n`,
);
const kdns = spawn(process.execPath, [...nodeFlags, join(here, 'bin/kdns'), 'serve', '--conf', join(dir, 'Corefile')], { stdio: ['ignore', 'ignore', 'inherit'] });
const stop = async () => {
  kdns.kill();
  socket.close();
  await rm(dir, { recursive: true, force: true });
};

try {
  const first = services[0];
  const nameOf = (s) => `${s.metadata.name}.${s.metadata.namespace}.svc.cluster.local`;
  for (let tries = 0; (await ask(nameOf(first))).length === 0; tries++) {
    if (tries > 600) throw new Error('kdns did not answer within 2 minutes');
    await new Promise((ok) => setTimeout(ok, 200));
  }
  const latencies = [];
  for (let round = 0; round < rounds; round++) {
    const svc = services[Math.floor(Math.random() * services.length)];
    const name = nameOf(svc);
    const before = (await ask(name))[0];
    const next = `10.${200 + (round % 50)}.${Math.floor(round / 50) % 256}.${1 + (round % 250)}`;
    svc.spec.clusterIP = next;
    await writeFile(`${servicesFile}.tmp`, JSON.stringify(list));
    const t0 = performance.now();
    await rename(`${servicesFile}.tmp`, servicesFile);
    let got = before;
    while (got !== next) {
      if (performance.now() - t0 > 10_000) throw new Error(`${name}: still ${got} 10 s after the change to ${next}`);
      await new Promise((ok) => setTimeout(ok, 5));
      got = (await ask(name))[0];
    }
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(0);
  console.log(`${list.items.filter((o) => o.kind === 'Service').length} Services in ${files.length} files (changes drawn from the ${services.length} with one ClusterIP), ${rounds} changes behind cache 30: median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`);
} finally {
  await stop();
}
