#!/usr/bin/env node
// fuzz-flood.mjs — the fuzz test's property at volume: sends COUNT mutated queries over UDP
// (test/util/fuzz.ts, fixed seed) to a real `kdns serve` with the stock plugins (kubernetes
// on examples/cluster, hosts, chaos, cache, loadbalance, forward to a real named) and checks
// that every reply parses (decodeMessage). Prints what was sent and received, the first replies
// that do not parse with the queries they answer, and whether kdns was still running after.
//
// Usage: node scripts/fuzz-flood.mjs [COUNT] [SEED]     (after `npm run build`)
//   COUNT defaults to 1,000,000. BATCH (env, default 16) queries go out per millisecond tick.
// Exit code: 0 when every reply parsed and kdns survived, 1 otherwise.
import dgram from 'node:dgram';
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const count = Number(process.argv[2] ?? 1_000_000);
const seed = Number(process.argv[3] ?? 0x666c6f6f);
const batch = Number(process.env.BATCH ?? 16);

// The test helpers run from their TypeScript sources (never built into dist/); kdns itself from dist/.
register();
const { decodeMessage } = await import(join(here, 'dist/lib/dns/codec.js'));
const { fuzzCorefile, mutatedQueries } = await import(join(here, 'test/util/fuzz.ts'));
const { freePort, sleep, waitFor } = await import(join(here, 'test/util/net.ts'));
const { kdnsCommand } = await import(join(here, 'test/util/kdns.ts'));
const { exampleZone, namedUpstream, rootZone } = await import(join(here, 'test/util/upstream.ts'));

const named = namedUpstream({ zones: { 'example.test': exampleZone(), '': rootZone() }, port: await freePort() });
await named.start();
const port = await freePort();
const dir = await mkdtemp(join(tmpdir(), 'kdns-flood-'));
const corefile = join(dir, 'Corefile');
await writeFile(corefile, fuzzCorefile(named.port).replaceAll('{PORT}', String(port)));
const kdns = spawn(process.execPath, kdnsCommand(['serve', '--conf', corefile]), { stdio: ['ignore', 'pipe', 'pipe'] });
let log = '';
kdns.stdout.on('data', (b) => (log += b));
kdns.stderr.on('data', (b) => (log += b));
await waitFor(() => log.includes('kdns listening on') || kdns.exitCode !== null, 20_000, 50);

// The last 65536 queries by ID, to name the query a bad reply answered.
const sentById = new Array(65536);
let sent = 0;
let replies = 0;
const bad = [];
const sock = dgram.createSocket('udp4');
sock.on('message', (m) => {
  replies++;
  try {
    decodeMessage(m);
  } catch (e) {
    if (bad.length < 10) bad.push({ reply: m.toString('hex'), query: m.length >= 2 ? sentById[m.readUInt16BE(0)] : '?', error: e.message });
    else bad.push(null);
  }
});
await new Promise((r) => sock.bind(0, '127.0.0.1', r));
const started = Date.now();
let pending = 0;
for (const q of mutatedQueries(count, seed)) {
  if (q.length >= 2) sentById[(q[0] << 8) | q[1]] = Buffer.from(q).toString('hex');
  pending++;
  sock.send(q, port, '127.0.0.1', () => pending--);
  sent++;
  if (sent % batch === 0) await sleep(1);
  if (sent % 100_000 === 0) console.log(`${sent} sent, ${replies} replies, ${bad.length} unparseable, ${Math.round(sent / ((Date.now() - started) / 1000))} q/s`);
}
await waitFor(() => pending === 0, 10_000, 10);
await sleep(2000);
sock.close();
const alive = kdns.exitCode === null && kdns.signalCode === null;
const panics = log.split('\n').filter((l) => /panic/i.test(l));
console.log(JSON.stringify({ sent, replies, unparseable: bad.length, seconds: (Date.now() - started) / 1000, kdnsAlive: alive, panicLines: panics.length }, null, 2));
for (const b of bad.filter(Boolean)) console.log(`reply ${b.reply} (${b.error}) to ${b.query}`);
for (const l of panics.slice(0, 5)) console.log(l);
kdns.kill('SIGTERM');
await new Promise((r) => kdns.once('exit', r));
await named.dispose();
process.exit(bad.length === 0 && alive && panics.length === 0 ? 0 : 1);
