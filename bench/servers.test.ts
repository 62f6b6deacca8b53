// Every server's configuration, as the bench writes it, answers the fixture as its zone says:
// each record of every name, the RCODE and answer count of every auth query, the upstream's
// answers through each forwarder. Real servers on loopback, started by the runner's own code.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/util/net.js';
import { readZoneRecords, writeFixture, type FixtureMeta, type FixtureOptions } from './fixture.js';
import { parseOptions } from './options.js';
import { ask, type QueryType } from './probe.js';
import { processTree } from './procstat.js';
import { start, stop, waitReady, type Started } from './runner.js';
import { dnsmasq } from './servers/dnsmasq.js';
import { kdns } from './servers/kdns.js';
import { kresd } from './servers/kresd.js';
import { minimal } from './servers/minimal.js';
import { named, upstreamProcess } from './servers/named.js';
import type { Role, ServerSpec } from './servers/server.js';
import { unbound } from './servers/unbound.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SMALL: FixtureOptions = { services: 60, namespaces: 5, pods: 0, authQueries: 300, fwdNames: 10, fwdRepeat: 2, missNames: 20, seed: 11 };
const ALL_CPUS = `0-${cpus().length - 1}`;

function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', 'command -v "$1" >/dev/null', 'sh', command]).status === 0;
}

/** A test that needs a program skips without it, saying which package has it; never under CI. */
function needs(command: string, debian: string): { skip: string | false } {
  return { skip: !hasCommand(command) && process.env.CI !== 'true' ? `needs ${command} (Debian package ${debian})` : false };
}

let dir: string;
let fixture: string;
let meta: FixtureMeta;
let upstreamPort: number;
let upstream: Started | undefined;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kdns-bench-servers-'));
  fixture = join(dir, 'fixture');
  meta = writeFixture(fixture, SMALL);
  if (!hasCommand('named')) return;
  upstreamPort = await freePort();
  mkdirSync(join(dir, 'upstream'));
  upstream = start([upstreamProcess(fixture, join(dir, 'upstream'), upstreamPort)], ALL_CPUS, join(dir, 'upstream.log'));
  await waitReady(upstreamPort, { name: 'ns.dns.example.test', type: 'A', address: '127.0.0.1' }, upstream, 30, false, 'upstream');
});

after(async () => {
  if (upstream) await stop(upstream, 'SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

/** How many of the processes run this node binary. */
function nodeProcesses(pids: readonly number[]): number {
  const node = realpathSync(process.execPath);
  return pids.filter((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/exe`) === node;
    } catch {
      return false;
    }
  }).length;
}

/** Starts a server for a role, runs `body` against its port, stops it. */
async function serve(server: ServerSpec, role: Role, body: (port: number) => Promise<void>, processes?: number): Promise<void> {
  const runDir = mkdtempSync(join(dir, `${server.id}-${role}-`));
  const port = await freePort();
  const opts = parseOptions({});
  const started = start(server.prepare({ role, port, upstreamPort, fixture, runDir, opts }), ALL_CPUS, join(runDir, 'server.log'));
  try {
    await waitReady(port, role === 'auth' ? meta.probes.auth : meta.probes.fwd, started, 60, false, server.label);
    // A server of several processes is measured over its whole tree: they must all be in it.
    // (Node processes only: tsx starts an esbuild service beside the ones it runs.)
    if (processes !== undefined) assert.equal(nodeProcesses(processTree(started.children.map((c) => c.pid as number))), processes, `${server.label}: node processes`);
    await body(port);
  } finally {
    await stop(started, server.stopSignal);
  }
}

/** What the zone says each (name, type) answers: its records, sorted, as the probe writes them. */
function zoneAnswers(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of readZoneRecords(readFileSync(join(fixture, 'cluster.local.zone'), 'utf8'))) {
    if (r.type !== 'A' && r.type !== 'SRV') continue;
    if (r.owner.startsWith('ns.dns.')) continue; // the zone's own name server, not a cluster name
    const key = `${r.owner.slice(0, -1)} ${r.type}`;
    out.set(key, [...(out.get(key) ?? []), `${r.type} ${r.data}`].sort());
  }
  return out;
}

async function answersAsTheZone(port: number): Promise<void> {
  const zone = zoneAnswers();
  const owners = new Set([...zone.keys()].map((k) => k.split(' ')[0]));
  for (const [key, records] of zone) {
    const [name, type] = key.split(' ') as [string, QueryType];
    const got = await ask(port, name, type);
    assert.deepEqual({ key, rcode: got?.rcode, records: got?.records.sort() }, { key, rcode: 'NOERROR', records });
  }
  const queries = readFileSync(join(fixture, 'queries-auth.txt'), 'utf8').trim().split('\n');
  for (const line of queries) {
    const [name, type] = line.split(' ') as [string, QueryType];
    const want = owners.has(name) ? { rcode: 'NOERROR', answers: zone.get(`${name} ${type}`)?.length ?? 0 } : { rcode: 'NXDOMAIN', answers: 0 };
    const got = await ask(port, name, type);
    assert.deepEqual({ line, rcode: got?.rcode, answers: got?.answers }, { line, ...want });
  }
}

async function forwardsToTheUpstream(port: number): Promise<void> {
  const zone = readZoneRecords(readFileSync(join(fixture, 'example.test.zone'), 'utf8'));
  for (const line of readFileSync(join(fixture, 'warm-fwd.txt'), 'utf8').trim().split('\n')) {
    const name = line.split(' ')[0] as string;
    const want = zone.find((r) => r.owner === `${name}.` && r.type === 'A')?.data;
    assert.deepEqual({ name, addresses: (await ask(port, name, 'A'))?.addresses }, { name, addresses: [want] });
  }
  for (const line of readFileSync(join(fixture, 'queries-miss.txt'), 'utf8').trim().split('\n').slice(0, 5)) {
    const name = line.split(' ')[0] as string;
    assert.deepEqual({ name, addresses: (await ask(port, name, 'A'))?.addresses }, { name, addresses: [meta.probes.miss.address] });
  }
}

/** kdns from this working tree's source (through tsx), launched the way the bench launches bin/kdns. */
function kdnsFromSource(which: 'plain' | 'stock', workers = 1): ServerSpec {
  const tree = join(dir, `kdns-${which}-${workers}`);
  mkdirSync(join(tree, 'bin'), { recursive: true });
  writeFileSync(join(tree, 'bin/kdns'), `import(${JSON.stringify(join(ROOT, 'src/cli/main.ts'))}).then((m) => m.main(process.argv)).catch((e) => { console.error(e); process.exit(1); });\n`);
  return kdns(which, { tree, revision: 'source' }, { path: process.execPath, version: process.version, labelled: false }, ['--import', import.meta.resolve('tsx')], workers);
}

const opts = parseOptions({});
const servers: Array<{ name: string; make: () => ServerSpec; command: string; debian: string; processes?: number }> = [
  { name: 'kdns (plain Corefile)', make: () => kdnsFromSource('plain'), command: 'node', debian: 'nodejs' },
  { name: 'kdns (stock Corefile)', make: () => kdnsFromSource('stock'), command: 'node', debian: 'nodejs' },
  // KDNS_WORKERS=2: a parent and two workers, each answering from its own socket on the port.
  { name: 'kdns ×2 (plain Corefile, multisocket 2)', make: () => kdnsFromSource('plain', 2), command: 'node', debian: 'nodejs', processes: 3 },
  { name: 'kdns ×2 (stock Corefile, multisocket 2)', make: () => kdnsFromSource('stock', 2), command: 'node', debian: 'nodejs', processes: 3 },
  { name: 'unbound', make: () => unbound(opts), command: 'unbound', debian: 'unbound' },
  { name: 'named', make: () => named(opts), command: 'named', debian: 'bind9' },
  { name: 'kresd', make: () => kresd(opts), command: 'kresd', debian: 'knot-resolver' },
  { name: 'dnsmasq', make: () => dnsmasq(opts), command: 'dnsmasq', debian: 'dnsmasq-base' },
];

describe('bench servers answer the fixture as its zone says', () => {
  for (const s of servers) {
    const skip = needs(s.command, s.debian).skip || needs('named', 'bind9').skip || needs('taskset', 'util-linux').skip;
    it(`${s.name}: every record of every name, and every auth query's RCODE and answer count`, { skip }, async () => {
      await serve(s.make(), 'auth', answersAsTheZone, s.processes);
    });
    it(`${s.name}: forwards the fwd names and the miss wildcard to the upstream`, { skip }, async () => {
      await serve(s.make(), 'forward', forwardsToTheUpstream, s.processes);
    });
  }

  it('the minimal responder echoes every question as an empty NOERROR', { skip: needs('taskset', 'util-linux').skip }, async () => {
    const server = minimal({ path: process.execPath, version: process.version, labelled: false });
    const runDir = mkdtempSync(join(dir, 'minimal-'));
    const port = await freePort();
    const started = start(server.prepare({ role: 'auth', port, upstreamPort: 1, fixture, runDir, opts }), ALL_CPUS, join(runDir, 'log'));
    try {
      await waitReady(port, meta.probes.auth, started, 30, true, server.label);
      assert.deepEqual(await ask(port, 'anything.example', 'SRV'), { rcode: 'NOERROR', answers: 0, addresses: [], records: [] });
    } finally {
      await stop(started, server.stopSignal);
    }
  });
});
