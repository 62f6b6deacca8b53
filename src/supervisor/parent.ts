// The parent of serving workers: one, or `multisocket`'s count. It binds the listening sockets
// (a set of its own for each worker, SO_REUSEPORT on one address), hands each set to a worker
// process that serves it, and starts another worker when one ends without being asked to,
// handing it the same sockets. Queries that arrive meanwhile wait in the sockets' buffers
// (8 MiB of UDP queries, the TCP accept queue) and are answered by the next worker: an OOM
// kill or a crash costs the time a worker takes to start, not an outage until the pod is
// restarted, and the other workers go on answering meanwhile. The parent never reads a socket
// and loads no plugin, so it stays a few MiB; it carries what workers tell each other
// (./relayhub.ts: the summed /metrics, the cluster state one worker reads for all).
//
// Signals go to every worker: SIGTERM, SIGINT and SIGQUIT stop them (and then the parent, with
// the first failing exit code, else 0); the others kdns acts on or ignores are passed on as they
// are. A worker that fails before it serves (a bad Corefile, a port in use) ends them all and the
// parent with its exit code: restarting it would fail the same way.

import { spawn, type ChildProcess } from 'node:child_process';
import { isIPv6 } from 'node:net';
import { constants } from 'node:os';
import { LISTEN_FDS_ENV, type InheritedListener } from '../server/inherited.js';
import type { NativeUdp } from '../lib/native/udp.js';
import type { ListenSlot } from './plan.js';
import { WORKER_COUNT_ENV, WORKER_INDEX_ENV, type SiblingRequest } from '../server/siblings.js';
import { WORKER_ARGV_ENV, WORKER_ENV, type WorkerMessage } from './protocol.js';
import { RelayHub } from './relayhub.js';

export interface SuperviseOptions {
  /** The command line the worker runs (argv as main() gets it). */
  argv: readonly string[];
  /** The module the worker process starts from (it runs main() on WORKER_ARGV_ENV). */
  workerEntry: string;
  /** Addresses to hold, UDP and TCP each. */
  slots: readonly ListenSlot[];
  /** How many workers to start: the largest `multisocket` of the configuration (1 without). */
  workers: number;
  /** Bind addresses that are not up yet (the node cache's, before its interface exists). */
  freebind: boolean;
  /** Binds the sockets the parent holds; without it each worker binds its own (SO_REUSEPORT), and they close with it. */
  addon: NativeUdp | undefined;
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
function holdSockets(o: SuperviseOptions, slots: readonly ListenSlot[]): InheritedListener[] {
  const addon = o.addon;
  if (!addon) return [];
  const held: InheritedListener[] = [];
  for (const slot of slots) {
    const family = slot.address === '' || isIPv6(slot.address) ? 6 : 4;
    const bindTo = slot.address === '' ? '::' : slot.address;
    const pair: InheritedListener[] = [];
    try {
      for (const kind of ['udp', 'tcp'] as const) pair.push({ kind, address: slot.address, port: slot.port, fd: addon.bindListener(kind, family, bindTo, slot.port, o.freebind) });
      held.push(...pair);
    } catch (e) {
      for (const p of pair) addon.closeDescriptor(p.fd);
      o.log.warn(`kdns: ${slot.address || '*'}:${slot.port} is not held across worker restarts: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return held;
}

const STDIO_FIRST_FD = 4; // after stdin, stdout, stderr and the IPC channel

/** Signals that end the workers (each its own way: lameduck, a second SIGINT, at once) and then the parent. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGQUIT'] as const;
/**
 * Signals the worker acts on or logs and ignores (src/cli/signals.ts): passed on. Trapped here
 * too because most of them would end a process that does not.
 */
const PASSED_SIGNALS = ['SIGUSR1', 'SIGUSR2', 'SIGHUP', 'SIGALRM', 'SIGVTALRM', 'SIGPWR', 'SIGIO', 'SIGXCPU', 'SIGXFSZ'] as const;

/** One worker's place: its sockets, and the process that serves them now. */
interface WorkerSlot {
  index: number;
  held: InheritedListener[];
  child?: ChildProcess;
  serving: boolean;
  quickEnds: number;
  startedAt: number;
}

/** Starts supervising: binds, starts the workers, and from then on lives for them. */
export function supervise(o: SuperviseOptions): void {
  const count = Math.max(1, o.workers);
  const workers: WorkerSlot[] = Array.from({ length: count }, (_, index) => ({
    index,
    held: holdSockets(o, o.slots.filter((s) => (s.workers ?? 1) > index)),
    serving: false,
    quickEnds: 0,
    startedAt: 0,
  }));
  const relay = new RelayHub();
  let stopping = false;
  let stopSignal: NodeJS.Signals | undefined;
  let exitCode: number | undefined;

  const closeHeld = (w: WorkerSlot): void => {
    for (const h of w.held) o.addon?.closeDescriptor(h.fd);
    w.held = [];
  };
  const finishIfAllEnded = (): void => {
    if (workers.every((w) => w.child === undefined)) process.exit(exitCode ?? 0);
  };

  const start = (w: WorkerSlot): void => {
    w.serving = false;
    w.startedAt = Date.now();
    const inherited = w.held.map((h, i) => ({ ...h, fd: STDIO_FIRST_FD + i }));
    const child = spawn(process.execPath, [...workerExecArgv(process.execArgv), o.workerEntry], {
      stdio: ['inherit', 'inherit', 'inherit', 'ipc', ...w.held.map((h) => h.fd)],
      env: {
        ...process.env,
        [WORKER_ENV]: '1',
        [WORKER_ARGV_ENV]: JSON.stringify(o.argv),
        [LISTEN_FDS_ENV]: JSON.stringify(inherited),
        [WORKER_INDEX_ENV]: String(w.index),
        [WORKER_COUNT_ENV]: String(count),
      },
    });
    w.child = child;
    child.on('message', (m: WorkerMessage | SiblingRequest) => {
      if (m?.type === 'serving') {
        w.serving = true;
        const unused = new Set(m.unused.map((u) => `${u.kind} ${u.address} ${u.port}`));
        for (const h of w.held.filter((x) => unused.has(`${x.kind} ${x.address} ${x.port}`))) o.addon?.closeDescriptor(h.fd);
        w.held = w.held.filter((x) => !unused.has(`${x.kind} ${x.address} ${x.port}`));
      } else if (m?.type === 'gather') relay.gather(child, m.id, m.topic, workers.filter((x) => x.serving && x.child).map((x) => x.child as ChildProcess));
      else if (m?.type === 'answer') relay.answered(child, m.id, m.value);
      else if (m?.type === 'publish') relay.publish(child, m.channel, m.ops);
      else if (m?.type === 'follow') relay.follow(child, m.channel);
    });
    child.on('exit', (code, signal) => {
      w.child = undefined;
      relay.gone(child);
      if (stopping || !w.serving) {
        // A worker still starting when asked to stop ends by the signal itself: that is the stop asked for.
        const ended = stopping && !w.serving && signal === stopSignal ? 0 : exitCodeOf(code, signal);
        if (exitCode === undefined || exitCode === 0) exitCode = ended;
        closeHeld(w);
        // A worker that fails before it serves would fail the same way again: stop them all.
        if (!stopping) stop('SIGTERM');
        else finishIfAllEnded();
        return;
      }
      w.quickEnds = Date.now() - w.startedAt < 10_000 ? w.quickEnds + 1 : 0;
      const delay = restartDelayMs(w.quickEnds);
      const which = count > 1 ? `worker ${w.index} (pid ${child.pid ?? '?'})` : `worker ${child.pid ?? '?'}`;
      o.log.error(`kdns: ${which} ended (${signal ?? `exit code ${code}`}) while serving; starting another${delay > 0 ? ` in ${delay} ms` : ''}`);
      setTimeout(() => {
        if (!stopping) start(w);
        else finishIfAllEnded();
      }, delay);
    });
  };

  const stop = (signal: NodeJS.Signals): void => {
    stopping = true;
    stopSignal = signal;
    // No worker comes after these: let go of the sockets now, so that each worker's close is
    // their last and they leave the address (a successor's sockets get every query from then
    // on) instead of taking queries in the parent's copy that nobody would read.
    for (const w of workers) closeHeld(w);
    for (const w of workers) w.child?.kill(signal);
    finishIfAllEnded();
  };
  for (const s of STOP_SIGNALS) process.on(s, () => stop(s));
  for (const s of PASSED_SIGNALS) process.on(s, () => workers.forEach((w) => w.child?.kill(s)));
  for (const w of workers) start(w);
}
