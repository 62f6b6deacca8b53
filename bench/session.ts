// What every bench session does before its first run, shared by run.ts and autopath.ts: find
// the node binaries and the kdns to bench, install what is missing, write the fixture, move into
// a network namespace of its own, and describe the session for the results.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_FIXTURE, ensureFixture, type FixtureMeta } from './fixture.js';
import type { Options } from './options.js';
import type { RunContext } from './results.js';
import { log, stopAllOnExit } from './runner.js';
import type { KdnsBuild } from './servers/kdns.js';
import type { ServerSpec } from './servers/server.js';

export const BENCH = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH, '..');
const IN_NETNS = 'KDNS_BENCH_IN_NETNS';

export interface NodeBinary {
  path: string;
  version: string;
  /** True when several are benched: each row then names its node. */
  labelled: boolean;
}

export function fail(message: string, code = 2): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(code);
}

function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', 'command -v "$1" >/dev/null', 'sh', command]).status === 0;
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export function nodeBinaries(opts: Options): NodeBinary[] {
  const paths = opts.NODES.length > 0 ? opts.NODES : [process.execPath];
  const found = paths.map((p) => {
    const path = isAbsolute(p) ? p : resolve(p);
    if (!existsSync(path)) fail(`NODES: ${p} does not exist`);
    const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
    return { path, version, labelled: paths.length > 1 };
  });
  if (new Set(found.map((n) => n.version)).size < found.length) fail(`NODES: two of the binaries are the same version (${found.map((n) => n.version).join(' ')})`);
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
export function kdnsBuild(opts: Options): KdnsBuild {
  if (opts.KDNS_REV === '') {
    const main = join(ROOT, 'dist/cli/main.js');
    if (!existsSync(main)) {
      log('no dist/: building kdns (npm run build)');
      buildKdns(ROOT);
      if (!existsSync(main)) fail('the build did not write dist/cli/main.js');
    } else if (newestSource(join(ROOT, 'src')) > statSync(main).mtimeMs) {
      log('note: src/ has changes newer than dist/: run `npm run build` to bench them');
    }
    const dirty = git(['status', '--porcelain', '--', 'src', 'bin', 'package.json']) !== '';
    return { tree: ROOT, revision: `${git(['rev-parse', '--short=12', 'HEAD'])}${dirty ? ' with uncommitted changes in src/' : ''} (working tree)` };
  }
  let sha = '';
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
    buildKdns(building);
    if (!existsSync(join(building, 'dist/cli/main.js'))) fail(`building ${sha.slice(0, 12)} wrote no dist/cli/main.js`);
    spawnSync(process.execPath, ['scripts/build-native.mjs'], { cwd: building, stdio: 'inherit' });
    renameSync(building, tree);
  }
  const subject = git(['log', '-1', '--format=%s', sha]);
  return { tree, revision: `${sha.slice(0, 12)} ("${subject.length > 60 ? `${subject.slice(0, 60)}…` : subject}")` };
}

/**
 * Compiles the kdns in `dir` into its dist/: with tsconfig.build.json (the production build) where
 * the tree has one, else with tsconfig.json, which emitted dist/ in revisions before that file.
 */
function buildKdns(dir: string): void {
  const config = existsSync(join(dir, 'tsconfig.build.json')) ? 'tsconfig.build.json' : 'tsconfig.json';
  spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', config], { cwd: dir, stdio: 'inherit' });
}

/** The Debian package of each tool this session needs and does not find. */
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

export interface Session {
  fixture: string;
  meta: FixtureMeta;
  /** The file each run's result is appended to. */
  results: string;
  context: RunContext;
}

/**
 * Everything before the first run. As root this process ends here after running the rest of
 * the session in a new network namespace (the same script again, told so by the environment);
 * what it returns is for the process that does the runs.
 */
export function startSession(opts: Options, servers: readonly ServerSpec[], nodes: readonly NodeBinary[], build: KdnsBuild | undefined, resultsName: string): Session {
  if (opts.NETNS === 'on' && !isRoot()) fail('NETNS=on: a network namespace needs root');
  const netns = opts.NETNS === 'on' || (opts.NETNS === 'auto' && isRoot());
  const inNetns = process.env[IN_NETNS] === '1';
  if (!inNetns) {
    const missing = missingPackages(servers, netns);
    if (missing.length > 0) {
      if (opts.INSTALL === 'off' || !isRoot()) fail(`missing: ${missing.join(' ')} (as root: bash bench/install.sh ${missing.join(' ')}; or run the bench as root, which installs them)`);
      log(`installing ${missing.join(' ')}`);
      if (spawnSync('bash', [join(BENCH, 'install.sh'), ...missing], { stdio: 'inherit' }).status !== 0) fail('bench/install.sh failed');
    }
  }
  const fixture = resolve(ROOT, opts.FIXTURE);
  const meta = ensureFixture(fixture, { ...DEFAULT_FIXTURE, services: opts.SERVICES });
  const session = process.env.KDNS_BENCH_SESSION ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const results = opts.RESULTS !== '' ? resolve(opts.RESULTS) : join(ROOT, '.bench', `${resultsName}-${session.replace(/[-:]/g, '')}.jsonl`);
  if (netns && !inNetns) {
    // The rest inside a new network namespace that has only loopback: nothing a server under
    // test sends can leave the machine, and no port of the host is in the way.
    const child = spawnSync('unshare', ['--net', '--', process.execPath, ...process.execArgv, process.argv[1] as string, ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, [IN_NETNS]: '1', KDNS_BENCH_SESSION: session, RESULTS: results },
    });
    process.exit(child.status ?? 1);
  }
  if (inNetns) execFileSync('ip', ['link', 'set', 'lo', 'up']);
  else log("not root: running on the host's 127.0.0.1 (PORT and UPSTREAM_PORT must be free)");
  stopAllOnExit();
  mkdirSync(dirname(results), { recursive: true });
  const help = spawnSync('dnsperf', ['-h'], { encoding: 'utf8' });
  const cpu = cpus();
  return {
    fixture,
    meta,
    results,
    context: {
      session,
      kdns: build?.revision ?? '(not run)',
      nodes: nodes.map((n) => n.version),
      dnsperf: `dnsperf ${/Version\s+(\S+)/.exec(`${help.stdout}${help.stderr}`)?.[1] ?? '?'}`,
      durationS: opts.DURATION,
      clients: opts.CLIENTS,
      outstanding: opts.OUTSTANDING,
      dnsperfThreads: opts.DNSPERF_THREADS,
      rate: opts.RATE ?? null,
      serverCpus: opts.SERVER_CPUS,
      loadCpus: opts.LOAD_CPUS,
      netns,
      services: meta.services,
      host: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, Linux ${release()}`,
    },
  };
}

/** The options from the environment, or a message naming each bad variable. */
export function optionsOrExit(parse: () => Options): Options {
  try {
    return parse();
  } catch (e) {
    fail(`${e instanceof Error ? e.message : String(e)}\n(npm run bench -- --help lists the options)`);
  }
}
