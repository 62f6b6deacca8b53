// The parent of a serving worker. It binds the listening sockets, hands them to a worker
// process that serves them, and starts another worker when one ends without being asked to,
// handing it the same sockets. Queries that arrive meanwhile wait in the sockets' buffers
// (8 MiB of UDP queries, the TCP accept queue) and are answered by the next worker: an OOM
// kill or a crash costs the time a worker takes to start, not an outage until the pod is
// restarted. The parent never reads a socket and loads no plugin, so it stays a few MiB.
//
// Signals go to the worker: SIGTERM, SIGINT and SIGQUIT stop it (and then the parent, with its
// exit code); the others kdns acts on or ignores are passed on as they are. A worker that fails before it
// serves (a bad Corefile, a port in use) ends the parent with its exit code: restarting it
// would fail the same way.

import { spawn, type ChildProcess } from 'node:child_process';
import { isIPv6 } from 'node:net';
import { constants } from 'node:os';
import { LISTEN_FDS_ENV, type InheritedListener } from '../server/inherited.js';
import type { NativeUdp } from '../lib/native/udp.js';
import type { ListenSlot } from './plan.js';
import { WORKER_ARGV_ENV, WORKER_ENV, type WorkerMessage } from './protocol.js';

export interface SuperviseOptions {
  /** The command line the worker runs (argv as main() gets it). */
  argv: readonly string[];
  /** The module the worker process starts from (it runs main() on WORKER_ARGV_ENV). */
  workerEntry: string;
  /** Addresses to hold, UDP and TCP each. */
  slots: readonly ListenSlot[];
  /** Bind addresses that are not up yet (the node cache's, before its interface exists). */
  freebind: boolean;
  addon: NativeUdp;
  log: { warn(line: string): void; error(line: string): void };
}

/** Node options of this process that a worker should get too: all but an inline script. */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i] as string;
    if (a === '-e' || a === '--eval' || a === '-p' || a === '--print') {
      i++;
      continue;
    }
    if (/^--(eval|print|input-type)=/.test(a)) continue;
    out.push(a);
  }
  return out;
}

/**
 * How long to wait before starting the next worker, given how many workers in a row ended within
 * 10 s of their start (this one included): at once for the first, then doubling from 100 ms to
 * 5 s, so a worker that cannot stay up does not spin.
 */
export function restartDelayMs(quickEnds: number): number {
  return quickEnds <= 1 ? 0 : Math.min(100 * 2 ** (quickEnds - 2), 5_000);
}

/** A worker's end as an exit code of the parent: its code, or 128 + its signal's number. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? constants.signals[signal] : undefined;
  return n === undefined ? 1 : 128 + n;
}

/** Binds UDP and TCP for every slot; a slot that cannot be bound is left to the worker. */
function holdSockets(o: SuperviseOptions): InheritedListener[] {
  const held: InheritedListener[] = [];
  for (const slot of o.slots) {
    const family = slot.address === '' || isIPv6(slot.address) ? 6 : 4;
    const bindTo = slot.address === '' ? '::' : slot.address;
    const pair: InheritedListener[] = [];
    try {
      for (const kind of ['udp', 'tcp'] as const) pair.push({ kind, address: slot.address, port: slot.port, fd: o.addon.bindListener(kind, family, bindTo, slot.port, o.freebind) });
      held.push(...pair);
    } catch (e) {
      for (const p of pair) o.addon.closeDescriptor(p.fd);
      o.log.warn(`kdns: ${slot.address || '*'}:${slot.port} is not held across worker restarts: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return held;
}

const STDIO_FIRST_FD = 4; // after stdin, stdout, stderr and the IPC channel

/** Signals that end the worker (each its own way: lameduck, a second SIGINT, at once) and then the parent. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGQUIT'] as const;
/**
 * Signals the worker acts on or logs and ignores (src/cli/signals.ts): passed on. Trapped here
 * too because most of them would end a process that does not.
 */
const PASSED_SIGNALS = ['SIGUSR1', 'SIGUSR2', 'SIGHUP', 'SIGALRM', 'SIGVTALRM', 'SIGPWR', 'SIGIO', 'SIGXCPU', 'SIGXFSZ'] as const;

/** Starts supervising: binds, starts the first worker, and from then on lives for it. */
export function supervise(o: SuperviseOptions): void {
  let held = holdSockets(o);
  let worker: ChildProcess | undefined;
  let serving = false;
  let stopping = false;
  let quickEnds = 0;
  let startedAt = 0;

  const start = (): void => {
    serving = false;
    startedAt = Date.now();
    const inherited = held.map((h, i) => ({ ...h, fd: STDIO_FIRST_FD + i }));
    const child = spawn(process.execPath, [...workerExecArgv(process.execArgv), o.workerEntry], {
      stdio: ['inherit', 'inherit', 'inherit', 'ipc', ...held.map((h) => h.fd)],
      env: { ...process.env, [WORKER_ENV]: '1', [WORKER_ARGV_ENV]: JSON.stringify(o.argv), [LISTEN_FDS_ENV]: JSON.stringify(inherited) },
    });
    worker = child;
    child.on('message', (m: WorkerMessage) => {
      if (m?.type !== 'serving') return;
      serving = true;
      const unused = new Set(m.unused.map((u) => `${u.kind} ${u.address} ${u.port}`));
      for (const h of held.filter((x) => unused.has(`${x.kind} ${x.address} ${x.port}`))) o.addon.closeDescriptor(h.fd);
      held = held.filter((x) => !unused.has(`${x.kind} ${x.address} ${x.port}`));
    });
    child.on('exit', (code, signal) => {
      worker = undefined;
      if (stopping || !serving) {
        for (const h of held) o.addon.closeDescriptor(h.fd);
        process.exit(exitCodeOf(code, signal));
      }
      quickEnds = Date.now() - startedAt < 10_000 ? quickEnds + 1 : 0;
      const delay = restartDelayMs(quickEnds);
      o.log.error(`kdns: worker ${child.pid ?? '?'} ended (${signal ?? `exit code ${code}`}) while serving; starting another${delay > 0 ? ` in ${delay} ms` : ''}`);
      setTimeout(start, delay);
    });
  };

  const stop = (signal: NodeJS.Signals): void => {
    stopping = true;
    // No worker comes after this one: let go of the sockets now, so that the worker's close is
    // their last and they leave the address (a successor's sockets get every query from then
    // on) instead of taking queries in the parent's copy that nobody would read.
    for (const h of held) o.addon.closeDescriptor(h.fd);
    held = [];
    if (worker) worker.kill(signal);
    else process.exit(0);
  };
  for (const s of STOP_SIGNALS) process.on(s, () => stop(s));
  for (const s of PASSED_SIGNALS) process.on(s, () => worker?.kill(s));
  start();
}
