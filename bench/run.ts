// npm run bench: kdns beside unbound, named, kresd, dnsmasq and a minimal Node.js responder,
// each loaded by dnsperf in turn on the same workloads, then the side-by-side tables.
// Options are environment variables (bench/options.ts, `npm run bench -- --help`);
// bench/README.md says what each figure means.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_FIXTURE, ensureFixture } from './fixture.js';
import { optionsHelp, parseOptions, type Options, type PeerName } from './options.js';
import type { RunContext, RunResult } from './results.js';
import { log, runOne, standardWorkloads, stopAllOnExit } from './runner.js';
import { dnsmasq } from './servers/dnsmasq.js';
import { kdns, type KdnsBuild } from './servers/kdns.js';
import { kresd } from './servers/kresd.js';
import { minimal } from './servers/minimal.js';
import { named } from './servers/named.js';
import type { ServerSpec } from './servers/server.js';
import { unbound } from './servers/unbound.js';
import { summarize } from './summarize.js';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH, '..');
const IN_NETNS = 'KDNS_BENCH_IN_NETNS';

interface NodeBinary {
  path: string;
  version: string;
  labelled: boolean;
}

function fail(message: string, code = 2): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(code);
}

function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v "$1" >/dev/null`, 'sh', command]).status === 0;
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The tools this session needs and the Debian package of each missing one. */
function missingPackages(servers: readonly ServerSpec[], netns: boolean): string[] {
  const needs = [
    { command: 'dnsperf', debian: 'dnsperf' },
    { command: 'named', debian: 'bind9' }, // the forwarding upstream
    { command: 'taskset', debian: 'util-linux' },
    ...(netns ? [{ command: 'unshare', debian: 'util-linux' }, { command: 'ip', debian: 'iproute2' }] : []),
    ...servers.flatMap((s) => s.needs),
  ];
  return [...new Set(needs.filter((n) => !hasCommand(n.command)).map((n) => n.debian))];
}

function nodeBinaries(opts: Options): NodeBinary[] {
  const paths = opts.NODE.length > 0 ? opts.NODE : [process.execPath];
  const found = paths.map((p) => {
    const path = isAbsolute(p) ? p : resolve(p);
    if (!existsSync(path)) fail(`NODE: ${p} does not exist`);
    const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
    return { path, version, labelled: paths.length > 1 };
  });
  if (new Set(found.map((n) => n.version)).size < found.length) fail(`NODE: two of the binaries are the same version (${found.map((n) => n.version).join(' ')})`);
  return found;
}

/** The newest modification time among a folder's .ts files, tests left out. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * The kdns to bench. Unset KDNS_REV: the working tree as built (built first when dist/ is
 * missing). KDNS_REV=<rev>: that commit exported under .bench/kdns/<sha>/ and built there,
 * leaving the working tree's dist/ and build/ alone.
 */
function kdnsBuild(opts: Options): KdnsBuild {
  if (opts.KDNS_REV === '') {
    const main = join(ROOT, 'dist/cli/main.js');
    if (!existsSync(main)) {
      log('no dist/: building kdns (npm run build)');
      spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
      if (!existsSync(main)) fail('the build did not write dist/cli/main.js');
    } else if (newestSource(join(ROOT, 'src')) > statSync(main).mtimeMs) {
      log('note: src/ has changes newer than dist/: run `npm run build` to bench them');
    }
    const dirty = git(['status', '--porcelain', '--', 'src', 'bin', 'package.json']) !== '';
    return { tree: ROOT, revision: `${git(['rev-parse', '--short', 'HEAD'])}${dirty ? ' with uncommitted changes in src/' : ''} (working tree)` };
  }
  let sha: string;
  try {
    sha = git(['rev-parse', '--verify', `${opts.KDNS_REV}^{commit}`]);
  } catch {
    fail(`KDNS_REV: "${opts.KDNS_REV}" is not a commit of this repository`);
  }
  const tree = join(ROOT, '.bench/kdns', sha);
  if (!existsSync(join(tree, 'dist/cli/main.js'))) {
    const building = `${tree}.building`;
    rmSync(building, { recursive: true, force: true });
    mkdirSync(building, { recursive: true });
    log(`exporting ${sha.slice(0, 12)} to ${tree} and building it`);
    execFileSync('sh', ['-c', 'git archive --format=tar "$1" | tar -x -C "$2"', 'sh', sha, building], { cwd: ROOT, stdio: 'inherit' });
    symlinkSync(join(ROOT, 'node_modules'), join(building, 'node_modules'));
    spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: building, stdio: 'inherit' });
    if (!existsSync(join(building, 'dist/cli/main.js'))) fail(`building ${sha.slice(0, 12)} wrote no dist/cli/main.js`);
    spawnSync(process.execPath, ['scripts/build-native.mjs'], { cwd: building, stdio: 'inherit' });
    renameSync(building, tree);
  }
  const subject = git(['log', '-1', '--format=%s', sha]);
  return { tree, revision: `${sha.slice(0, 12)} ("${subject.length > 60 ? `${subject.slice(0, 60)}…` : subject}")` };
}

function peerSpec(peer: PeerName, opts: Options, node: NodeBinary): ServerSpec {
  switch (peer) {
    case 'minimal':
      return minimal(node);
    case 'dnsmasq':
      return dnsmasq(opts);
    case 'unbound':
      return unbound(opts);
    case 'kresd':
      return kresd(opts);
    case 'named':
      return named(opts);
  }
}

/** kdns in each configuration on each node, then the peers in PEERS's order (the floor once per node). */
function serverList(opts: Options, nodes: readonly NodeBinary[], build: KdnsBuild | undefined): ServerSpec[] {
  const out: ServerSpec[] = [];
  if (build) for (const which of opts.KDNS_COREFILES) for (const n of nodes) out.push(kdns(which, build, n, opts.KDNS_NODE_FLAGS));
  for (const peer of opts.PEERS) {
    if (peer === 'minimal') for (const n of nodes) out.push(peerSpec(peer, opts, n));
    else out.push(peerSpec(peer, opts, nodes[0] as NodeBinary));
  }
  return out;
}

function usage(): string {
  return `npm run bench [-- --help]: kdns beside its peers under dnsperf; tables on stdout.
Run as root: it installs missing peers with apt-get, and runs in a network namespace of its own.
Options (environment variables) [default]:
${optionsHelp()}
Example: DURATION=5 WORKLOADS=auth PEERS=unbound npm run bench`;
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  let opts: Options;
  try {
    opts = parseOptions(process.env);
  } catch (e) {
    fail(`${e instanceof Error ? e.message : String(e)}\n(npm run bench -- --help lists the options)`);
  }
  const netns = opts.NETNS === 'on' || (opts.NETNS === 'auto' && isRoot());
  if (opts.NETNS === 'on' && !isRoot()) fail('NETNS=on: a network namespace needs root');
  const nodes = nodeBinaries(opts);
  const inNetns = process.env[IN_NETNS] === '1';

  const build = opts.KDNS_COREFILES.length > 0 ? kdnsBuild(opts) : undefined;
  const servers = serverList(opts, nodes, build);
  if (servers.length === 0) fail('nothing to run: PEERS and KDNS_COREFILES are both empty');

  if (!inNetns) {
    const missing = missingPackages(servers, netns);
    if (missing.length > 0) {
      if (opts.INSTALL === 'off' || !isRoot()) fail(`missing: ${missing.join(' ')} (as root: apt-get install ${missing.join(' ')}; or run the bench as root to install them)`);
      log(`installing ${missing.join(' ')}`);
      if (spawnSync('bash', [join(BENCH, 'install.sh'), ...missing], { stdio: 'inherit' }).status !== 0) fail('bench/install.sh failed');
    }
  }
  const fixture = resolve(ROOT, opts.FIXTURE);
  const meta = ensureFixture(fixture, { ...DEFAULT_FIXTURE, services: opts.SERVICES });

  const session = process.env.KDNS_BENCH_SESSION ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const results = opts.RESULTS !== '' ? resolve(opts.RESULTS) : join(ROOT, '.bench', `results-${session.replace(/[-:]/g, '')}.jsonl`);
  if (netns && !inNetns) {
    // Everything from here on inside a new network namespace that has only loopback.
    const child = spawnSync('unshare', ['--net', '--', process.execPath, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, [IN_NETNS]: '1', KDNS_BENCH_SESSION: session, RESULTS: results },
    });
    process.exit(child.status ?? 1);
  }
  if (inNetns) execFileSync('ip', ['link', 'set', 'lo', 'up']);
  if (!netns) log('not root: running on the host\'s 127.0.0.1 (ports PORT and UPSTREAM_PORT must be free)');

  stopAllOnExit();
  mkdirSync(dirname(results), { recursive: true });
  const help = spawnSync('dnsperf', ['-h'], { encoding: 'utf8' });
  const dnsperfVersion = /Version\s+(\S+)/.exec(`${help.stdout}${help.stderr}`)?.[1] ?? '?';
  const cpu = cpus();
  const context: RunContext = {
    session,
    kdns: build?.revision ?? '(not run)',
    nodes: nodes.map((n) => n.version),
    dnsperf: `dnsperf ${dnsperfVersion}`,
    durationS: opts.DURATION,
    clients: opts.CLIENTS,
    outstanding: opts.OUTSTANDING,
    rate: opts.RATE ?? null,
    serverCpus: opts.SERVER_CPUS,
    loadCpus: opts.LOAD_CPUS,
    netns,
    services: meta.services,
    host: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, Linux ${release()}`,
  };
  const workloads = standardWorkloads(fixture, meta);
  const all: RunResult[] = [];
  const total = opts.REPS * opts.WORKLOADS.length * servers.length;
  // Repetitions interleaved: a drift of the machine spreads over every server instead of one.
  for (let rep = 1; rep <= opts.REPS; rep++) {
    for (const w of opts.WORKLOADS) {
      for (const server of servers) {
        log(`run ${all.length + 1}/${total}: ${server.label}, ${w}${opts.REPS > 1 ? `, repetition ${rep}` : ''}`);
        const r = await runOne({ server, workload: workloads[w], rep, fixture, opts, context });
        all.push(r);
        appendFileSync(results, `${JSON.stringify(r)}\n`);
        if (!r.error) log(`  ${Math.round(r.qps)} QPS, ${r.cpuUsPerQuery.toFixed(1)} µs/query, ${(r.rssKiB / 1024).toFixed(1)} MiB, lost ${r.lost}, checks ${r.checks}`);
      }
    }
  }
  process.stdout.write(`${summarize(all)}\n`);
  log(`raw results: ${results} (again as tables: node --import tsx bench/summarize.ts ${results})`);
}

main().catch((e: unknown) => fail(e instanceof Error ? (e.stack ?? e.message) : String(e), 1));
