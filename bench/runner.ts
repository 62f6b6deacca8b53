// One measured run: start a server pinned to its CPUs, wait until it answers, check a few
// answers, warm it up, load it with dnsperf pinned to the other CPUs, read its CPU time and
// memory from /proc, stop it. Every step is bounded in time; every process is stopped by the
// PID this module started.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dnsperfArgs, parseDnsperf, type DnsperfReport } from './dnsperf.js';
import type { Check, FixtureMeta, Probe } from './fixture.js';
import type { Options, WorkloadName } from './options.js';
import { ask } from './probe.js';
import { busyPercent, cpuListMembers, cpuShares, sampleCores, TICKS_PER_SECOND, treeCpuTicksByPid, treeMemoryKiB } from './procstat.js';
import { emptyFigures, type RunContext, type RunResult } from './results.js';
import { upstreamProcess } from './servers/named.js';
import type { ProcessSpec, Role, ServerSpec } from './servers/server.js';

export interface Workload {
  name: string;
  role: Role;
  /** The measured queries (dnsperf's -d). */
  queries: string;
  /** Asked once, one at a time, before the warm-up: fills a cache with every name (fwd). */
  warmPass?: string;
  /** Queries of the timed warm-up; never the measured ones when those must stay uncached (miss). */
  warm: string;
  probe: Probe;
  checks: Check[];
}

export function standardWorkloads(fixture: string, meta: FixtureMeta): Record<WorkloadName, Workload> {
  const f = (name: string): string => join(fixture, name);
  return {
    auth: { name: 'auth', role: 'auth', queries: f('queries-auth.txt'), warm: f('queries-auth.txt'), probe: meta.probes.auth, checks: meta.checks.auth },
    fwd: { name: 'fwd', role: 'forward', queries: f('queries-fwd.txt'), warmPass: f('warm-fwd.txt'), warm: f('queries-fwd.txt'), probe: meta.probes.fwd, checks: meta.checks.fwd },
    miss: { name: 'miss', role: 'forward', queries: f('queries-miss.txt'), warm: f('warm-miss.txt'), probe: meta.probes.miss, checks: meta.checks.miss },
  };
}

export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Every process started and not yet reaped, so that an interrupted bench leaves none behind. */
const running = new Set<ChildProcess>();

export function stopAllOnExit(): void {
  const stopAll = (): void => {
    for (const c of running) c.kill('SIGKILL');
    process.exit(130);
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
}

export interface Started {
  children: ChildProcess[];
  logPath: string;
}

function isRunning(c: ChildProcess): boolean {
  return c.exitCode === null && c.signalCode === null;
}

/** Starts each process through `taskset -c cpus` (which execs it: the PID is the server's). */
export function start(specs: readonly ProcessSpec[], cpus: string, logPath: string): Started {
  const fd = openSync(logPath, 'a');
  try {
    const children = specs.map((s) => {
      const child = spawn('taskset', ['-c', cpus, ...s.argv], { cwd: s.cwd, env: { ...process.env, ...s.env }, stdio: ['ignore', fd, fd] });
      child.on('error', () => {}); // a missing binary shows as an exit, read by waitReady
      running.add(child);
      child.once('exit', () => running.delete(child));
      return child;
    });
    return { children, logPath };
  } finally {
    closeSync(fd);
  }
}

export async function stop(started: Started, signal: NodeJS.Signals): Promise<void> {
  const exited = (c: ChildProcess): Promise<void> => (isRunning(c) ? new Promise((r) => c.once('exit', () => r())) : Promise.resolve());
  for (const c of started.children) if (isRunning(c)) c.kill(signal);
  const all = Promise.all(started.children.map(exited));
  const late = await Promise.race([all.then(() => false), sleep(5000).then(() => true)]);
  if (late) {
    for (const c of started.children) if (isRunning(c)) c.kill('SIGKILL');
    await all;
  }
}

function pids(started: Started): number[] {
  return started.children.map((c) => c.pid).filter((p): p is number => p !== undefined);
}

function tail(path: string, lines = 12): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Until the server answers the probe with its address (or, for a server that does not serve
 * the fixture, answers at all). Throws with the log's last lines when a process exits first.
 */
export async function waitReady(port: number, probe: Probe, started: Started, timeoutS: number, anyAnswer: boolean, what: string): Promise<void> {
  const deadline = Date.now() + timeoutS * 1000;
  while (Date.now() < deadline) {
    const gone = started.children.find((c) => !isRunning(c));
    if (gone) throw new Error(`${what} exited (${gone.exitCode ?? gone.signalCode}) before answering:\n${tail(started.logPath)}`);
    const got = await ask(port, probe.name, probe.type, 500);
    if (got && (anyAnswer || (got.rcode === 'NOERROR' && (probe.address === '' ? got.addresses.length > 0 : got.addresses.includes(probe.address))))) return;
    await sleep(200);
  }
  throw new Error(`${what} did not answer ${probe.name} ${probe.type} with ${probe.address || 'an address'} within ${timeoutS} s:\n${tail(started.logPath)}`);
}

/** 'ok', or each check that got another RCODE or number of answers. */
export async function runChecks(port: number, checks: readonly Check[]): Promise<string> {
  const failed: string[] = [];
  for (const c of checks) {
    const got = await ask(port, c.name, c.type, 1000);
    const seen = got ? `${got.rcode}/${got.answers}` : 'no answer';
    if (seen !== `${c.rcode}/${c.answers}`) failed.push(`${c.type} ${c.name}: ${seen}, want ${c.rcode}/${c.answers}`);
  }
  return failed.length === 0 ? 'ok' : failed.join('; ');
}

/**
 * The checks, asked again every half second until they pass or `deadline` (ms since the epoch):
 * a server may answer its probe before it has read all its data — kdns, like CoreDNS, starts
 * serving after `startup_timeout` (5 s) with what it has, and answers SERVFAIL for names it
 * has not read yet (seen on Node 20 on a busy machine). A server that is wrong stays wrong.
 */
export async function checksWhenReady(port: number, checks: readonly Check[], deadline: number): Promise<string> {
  for (;;) {
    const result = await runChecks(port, checks);
    if (result === 'ok' || Date.now() >= deadline) return result;
    await sleep(500);
  }
}

/** dnsperf pinned to `cpus`; its report, or an error with its output when it fails or hangs. */
async function dnsperf(args: string[], cpus: string, limitS: number): Promise<DnsperfReport> {
  const child = spawn('taskset', ['-c', cpus, 'dnsperf', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), limitS * 1000);
  const code = await new Promise<number | null>((r) => {
    child.once('error', () => r(-1));
    child.once('close', (c) => r(c));
  });
  clearTimeout(timer);
  running.delete(child);
  if (code !== 0) throw new Error(`dnsperf ${args.join(' ')} ended with ${code}:\n${out.trim().split('\n').slice(-8).join('\n')}`);
  return parseDnsperf(out);
}

export interface RunPlan {
  server: ServerSpec;
  workload: Workload;
  rep: number;
  fixture: string;
  opts: Options;
  context: RunContext;
}

/** One server, one workload, measured. A failure is returned as a result with `error` set. */
export async function runOne(plan: RunPlan): Promise<RunResult> {
  const { server, workload, opts } = plan;
  const safe = (s: string): string => s.replace(/[^\w.-]+/g, '_');
  const runDir = mkdtempSync(join(tmpdir(), `kdns-bench-${safe(server.id)}-${safe(workload.name)}-`));
  const base = { context: plan.context, rep: plan.rep, workload: workload.name, server: server.id, label: server.label, kind: server.kind, threads: server.threads };
  let upstream: Started | undefined;
  let under: Started | undefined;
  try {
    // The upstream runs for every workload: the stock Corefile forwards (and loop-checks) even under auth.
    const upstreamDir = join(runDir, 'upstream');
    mkdirSync(upstreamDir);
    upstream = start([upstreamProcess(plan.fixture, upstreamDir, opts.UPSTREAM_PORT)], opts.LOAD_CPUS, join(runDir, 'upstream.log'));
    const upstreamProbe: Probe = { name: `ns.dns.example.test`, type: 'A', address: '127.0.0.1' };
    await waitReady(opts.UPSTREAM_PORT, upstreamProbe, upstream, opts.READY_TIMEOUT, false, 'the upstream (named)');

    const specs = server.prepare({ role: workload.role, port: opts.PORT, upstreamPort: opts.UPSTREAM_PORT, fixture: plan.fixture, runDir, opts });
    const startedAt = Date.now();
    under = start(specs, opts.SERVER_CPUS, join(runDir, 'server.log'));
    await waitReady(opts.PORT, workload.probe, under, opts.READY_TIMEOUT, !server.answersChecks, server.label);
    log(`${server.label}: answering after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    const checks = server.answersChecks ? await checksWhenReady(opts.PORT, workload.checks, startedAt + opts.READY_TIMEOUT * 1000) : 'n/a';
    if (checks !== 'ok' && checks !== 'n/a') log(`${server.label}: checks failed: ${checks}`);

    const load = { port: opts.PORT, clients: opts.CLIENTS, outstanding: opts.OUTSTANDING, threads: opts.DNSPERF_THREADS, timeout: opts.TIMEOUT };
    if (workload.warmPass) await dnsperf(dnsperfArgs({ ...load, file: workload.warmPass, passes: 1, clients: 1, outstanding: 20 }), opts.LOAD_CPUS, 300);
    if (opts.WARMUP > 0) await dnsperf(dnsperfArgs({ ...load, file: workload.warm, seconds: opts.WARMUP, rate: opts.RATE }), opts.LOAD_CPUS, opts.WARMUP + opts.TIMEOUT + 60);

    const roots = pids(under);
    const byPid0 = treeCpuTicksByPid(roots);
    const cores0 = sampleCores();
    const report = await dnsperf(dnsperfArgs({ ...load, file: workload.queries, seconds: opts.DURATION, rate: opts.RATE }), opts.LOAD_CPUS, opts.DURATION + opts.TIMEOUT + 60);
    const cores1 = sampleCores();
    const byPid1 = treeCpuTicksByPid(roots);
    const rssKiB = treeMemoryKiB(roots, 'VmRSS');
    const hwmKiB = treeMemoryKiB(roots, 'VmHWM');
    const died = under.children.some((c) => !isRunning(c));
    const ticks = (m: ReadonlyMap<number, number>): number => [...m.values()].reduce((sum, t) => sum + t, 0);
    const cpuSeconds = (ticks(byPid1) - ticks(byPid0)) / TICKS_PER_SECOND;
    const note = server.noteFromLog?.(readFileSync(under.logPath, 'utf8'));
    return {
      ...base,
      ...emptyFigures(),
      qps: report.qps,
      sent: report.sent,
      completed: report.completed,
      lost: report.lost,
      rcodes: report.rcodes,
      avgLatencyMs: report.avgLatencyMs,
      maxLatencyMs: report.maxLatencyMs,
      cpuSeconds,
      cpuUsPerQuery: report.completed > 0 ? (cpuSeconds / report.completed) * 1e6 : 0,
      rssKiB,
      hwmKiB,
      processCpuShares: cpuShares(byPid0, byPid1),
      serverShare: (100 * cpuSeconds) / ((cores1.atMs - cores0.atMs) / 1000),
      serverBusy: busyPercent(cores0, cores1, cpuListMembers(opts.SERVER_CPUS)),
      loadBusy: busyPercent(cores0, cores1, cpuListMembers(opts.LOAD_CPUS)),
      checks: died ? `${checks}; the server exited during the load` : checks,
      ...(note ? { note } : {}),
    };
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    log(`${server.label} ${workload.name}: ${error}`);
    // One line for the table: what failed and the last thing the server logged.
    const lines = error.split('\n').map((l) => l.trim()).filter(Boolean);
    return { ...base, ...emptyFigures(), checks: 'not run', error: lines.length > 1 ? `${lines[0]} ${lines[lines.length - 1]}` : (lines[0] ?? 'failed') };
  } finally {
    if (under) await stop(under, server.stopSignal);
    if (upstream) await stop(upstream, 'SIGTERM');
    if (opts.KEEP_RUN_DIRS === '1') log(`run folder kept: ${runDir}`);
    else rmSync(runDir, { recursive: true, force: true });
  }
}
