// Test and benchmark helper: abuses a DNS server over TCP (idle connections, connections that
// stop half-way through a frame, clients that pipeline queries and never read the answers)
// while measuring what well-behaved clients get: UDP queries at a steady rate, and new TCP
// clients that connect, ask once and leave.
//
// Run as a program it prints the measurement as JSON, per phase: the connect storm (probes sent
// while the abusers connect), steady abuse (once all are connected), the idle connections'
// expiry (while the server closes them after the storm, if within the window) and the whole
// window:
//   node --import tsx test/util/tcpabuse.ts --port 5353 [--idle 2000 --half 200 --pipeliners 50 --seconds 10]
//     [--timeline MS: also the slowest probe of every MS]
// It needs about idle + half + pipeliners + 100 file descriptors (ulimit -n).

import dgram from 'node:dgram';
import net from 'node:net';
import { fork } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface AbuseOptions {
  port: number;
  host?: string;
  /** Connections opened and never used. */
  idle: number;
  /** Connections that send one byte of a length prefix and stop. */
  halfFrame: number;
  /** Connections that write queries as fast as the server takes them and never read. */
  pipeliners: number;
  /** How long the well-behaved clients are measured, once the abuse runs. */
  measureMs: number;
  /** Well-behaved UDP queries per second. */
  udpPerSecond?: number;
  /** A new well-behaved TCP client every this many ms. */
  tcpEveryMs?: number;
  /** The name the server answers (both probes and abusers ask it). */
  qname?: string;
  /** A probe not answered within this is counted as lost. */
  probeTimeoutMs?: number;
  /** Run the well-behaved clients in a child process, so the abusers' work does not delay them. */
  probesInChild?: boolean;
  /** Also report the slowest probe of each slot of this many ms (AbuseResult.timeline). */
  timelineMs?: number;
}

export interface Latencies {
  sent: number;
  answered: number;
  p50: number;
  p99: number;
  max: number;
}

/** New TCP clients: from connect() to the answer, and apart the handshake alone (connectP99). */
export type NewTcpLatencies = Latencies & { connectP99: number };

/** What the well-behaved clients got in one phase of the abuse. */
export interface PhaseResult {
  udp: Latencies;
  newTcp: NewTcpLatencies;
}

export interface AbuseResult {
  /** Over the whole abuse window, from the first abusive connection to the end. */
  udp: Latencies;
  newTcp: NewTcpLatencies & { failures: typeof probeFailures };
  /**
   * Probes sent during the connect storm: until the server had accepted every abusive
   * connection, which a client cannot see (its handshake completes in the kernel, before the
   * accept), so the tool asks once more on a new connection after the last abuser connected:
   * the server accepts in order, and its answer means the accept queue ahead of it was drained.
   */
  storm: PhaseResult;
  /** Probes sent once the server had accepted every abusive connection. */
  steady: PhaseResult;
  /**
   * Probes sent while the server closed the idle and half-frame connections after the storm
   * (its idle timeout ending them in a wave, as they had all opened within the storm): from the
   * first such close to 100 ms after the last, in ms from the probes' start. Absent when the
   * server closed none of them within the window.
   */
  expiry?: PhaseResult & { fromMs: number; toMs: number; closed: number };
  /** How long the connect storm lasted (ms from the probes' start). */
  stormMs: number;
  /** Of it, how long the server took to accept what waited once the last abuser had connected. */
  acceptBacklogMs: number;
  /** Abusive connections the server refused or closed before the measurement began. */
  refusedAtConnect: number;
  /** Times the server closed a pipeliner (each one reconnects at once). */
  pipelinersClosed: number;
  /** Idle and half-frame connections the server had closed by the end. */
  idleClosed: number;
  /** How long the probes ran (longer than asked when opening the abusers took longer). */
  seconds: number;
  /** Queries the pipeliners managed to hand to the kernel. */
  pipelinedQueries: number;
  /** With timelineMs: the slowest probes of each slot, from the probes' start. */
  timeline?: TimelineSlot[];
}

/** A query for `name` type A with `id`, RD set. */
export function queryBytes(name: string, id: number): Buffer {
  const labels = name.split('.').filter(Boolean);
  const q = Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0, 0, 1, 0, 1])]);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id & 0xffff, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, q]);
}

function framed(msg: Buffer): Buffer {
  const out = Buffer.alloc(msg.length + 2);
  out.writeUInt16BE(msg.length, 0);
  msg.copy(out, 2);
  return out;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function summarize(sent: number, times: number[]): Latencies {
  const sorted = [...times].sort((a, b) => a - b);
  const round = (v: number): number => Math.round(v * 100) / 100;
  return { sent, answered: sorted.length, p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), max: round(sorted[sorted.length - 1] ?? NaN) };
}

interface Tracked {
  socket: net.Socket;
  closed: boolean;
  /** When the connection closed (epochNow()). */
  closedAt?: number;
}

/** Milliseconds on a clock both the abusers' and the probes' processes read alike. */
function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Opens `count` connections, `parallel` at a time; each gets `onOpen` once connected. */
async function openMany(count: number, host: string, port: number, onOpen: (s: net.Socket) => void): Promise<{ open: Tracked[]; failed: number }> {
  const open: Tracked[] = [];
  let failed = 0;
  let next = 0;
  const parallel = 100;
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = net.connect({ host, port });
      // A SYN the server's accept queue dropped is retried for minutes; count it as refused.
      socket.setTimeout(5000, () => socket.destroy());
      const t: Tracked = { socket, closed: false };
      socket.on('error', () => undefined);
      socket.on('close', () => {
        t.closed = true;
        t.closedAt = epochNow();
      });
      socket.once('connect', () => {
        socket.setTimeout(0);
        open.push(t);
        onOpen(socket);
        resolve();
      });
      socket.once('close', () => resolve());
    });
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  // A connection the server accepts and closes at once still connected; count it as refused.
  await new Promise((r) => setTimeout(r, 200));
  failed += count - open.filter((t) => !t.closed).length;
  return { open, failed };
}

/** Why new TCP clients went unanswered: closed by the server after connecting, never connected, or no answer in time. */
const probeFailures = { closed: 0, refused: 0, timeout: 0 };

/** A new TCP client's answer: ms from connect() to the answer, and to the handshake's end. */
interface TcpProbeTimes {
  totalMs: number;
  connectMs: number;
}

/** Asks `qname` over a fresh TCP connection; resolves to its times, or undefined when unanswered. */
function newTcpProbe(host: string, port: number, qname: string, id: number, timeoutMs: number): Promise<TcpProbeTimes | undefined> {
  return new Promise((resolve) => {
    const start = performance.now();
    const socket = net.connect({ host, port, noDelay: true });
    let got = Buffer.alloc(0);
    let done = false;
    let connectMs: number | undefined;
    const finish = (v: TcpProbeTimes | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => {
      probeFailures.timeout++;
      finish(undefined);
    }, timeoutMs);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (socket.readyState === 'closed' && !done) probeFailures[connectMs !== undefined ? 'closed' : 'refused']++;
      finish(undefined);
    });
    socket.once('connect', () => {
      connectMs = performance.now() - start;
      socket.write(framed(queryBytes(qname, id)));
    });
    socket.on('data', (b: Buffer) => {
      got = Buffer.concat([got, b]);
      if (got.length >= 4 && got.length >= 2 + got.readUInt16BE(0) && got.readUInt16BE(2) === id) finish({ totalMs: performance.now() - start, connectMs: connectMs ?? NaN });
    });
  });
}

interface ProbeOptions {
  host: string;
  port: number;
  qname: string;
  udpPerSecond: number;
  tcpEveryMs: number;
  probeTimeoutMs: number;
  /** Also report the slowest probe of each this many ms (0: no timeline). */
  timelineMs: number;
}

/** The slowest UDP and new-TCP probe sent in one slot of the timeline (ms from the probes' start). */
export interface TimelineSlot {
  atMs: number;
  udpMax: number;
  udpLost: number;
  newTcpMax: number;
  newTcpLost: number;
}

type Measured = Pick<AbuseResult, 'udp' | 'newTcp' | 'storm' | 'steady' | 'expiry' | 'stormMs' | 'timeline'>;

/** The idle connections' closing wave, on the epochNow() clock. */
interface ExpiryWave {
  fromEpochMs: number;
  toEpochMs: number;
  closed: number;
}

interface Probes {
  /** Every abusive connection is open: later probes count as steady, earlier ones as the storm. */
  markSteady: () => void;
  stop: (expiry: ExpiryWave | undefined) => Promise<Measured>;
}

/** One probe: when it was sent (ms from the probes' start) and its answer, if any. */
interface Sent<T> {
  at: number;
  answer: T | undefined;
}

/** Summaries of the probes sent in [from, to). */
function phase(udp: ReadonlyArray<Sent<number>>, tcp: ReadonlyArray<Sent<TcpProbeTimes>>, from: number, to: number): PhaseResult {
  const inPhase = <T>(p: Sent<T>): boolean => p.at >= from && p.at < to;
  const udpIn = udp.filter(inPhase);
  const tcpIn = tcp.filter(inPhase);
  const tcpAnswered = tcpIn.flatMap((p) => (p.answer ? [p.answer] : []));
  const connects = summarize(0, tcpAnswered.map((t) => t.connectMs));
  return {
    udp: summarize(udpIn.length, udpIn.flatMap((p) => (p.answer === undefined ? [] : [p.answer]))),
    newTcp: { ...summarize(tcpIn.length, tcpAnswered.map((t) => t.totalMs)), connectP99: connects.p99 },
  };
}

function timeline(udp: ReadonlyArray<Sent<number>>, tcp: ReadonlyArray<Sent<TcpProbeTimes>>, slotMs: number): TimelineSlot[] {
  const end = Math.max(0, ...udp.map((p) => p.at), ...tcp.map((p) => p.at));
  const slots: TimelineSlot[] = [];
  for (let at = 0; at <= end; at += slotMs) {
    const u = udp.filter((p) => p.at >= at && p.at < at + slotMs);
    const t = tcp.filter((p) => p.at >= at && p.at < at + slotMs);
    const round = (v: number): number => Math.round(v * 10) / 10;
    slots.push({
      atMs: at,
      udpMax: round(Math.max(0, ...u.map((p) => p.answer ?? 0))),
      udpLost: u.filter((p) => p.answer === undefined).length,
      newTcpMax: round(Math.max(0, ...t.map((p) => p.answer?.totalMs ?? 0))),
      newTcpLost: t.filter((p) => p.answer === undefined).length,
    });
  }
  return slots;
}

/** Starts the well-behaved clients; `stop` ends them and waits for the last answers. */
async function startProbes(o: ProbeOptions): Promise<Probes> {
  const { host, qname, probeTimeoutMs } = o;
  const t0 = performance.now();
  const since = (): number => performance.now() - t0;
  const fromEpoch = (ms: number): number => ms - (performance.timeOrigin + t0);
  const expiryPhase = (w: ExpiryWave): NonNullable<Measured['expiry']> => {
    const fromMs = Math.round(fromEpoch(w.fromEpochMs));
    const toMs = Math.round(fromEpoch(w.toEpochMs));
    return { ...phase(udpProbes, tcpProbes, fromMs, toMs), fromMs, toMs, closed: w.closed };
  };
  let steadyFrom = Infinity;
  const udpProbes: Array<Sent<number>> = [];
  const udp = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
  await new Promise<void>((r) => udp.bind(0, r));
  const waiting = new Map<number, Sent<number>>();
  udp.on('message', (m) => {
    if (m.length < 2) return;
    const p = waiting.get(m.readUInt16BE(0));
    if (p === undefined) return;
    waiting.delete(m.readUInt16BE(0));
    const ms = since() - p.at;
    if (ms <= probeTimeoutMs) p.answer = ms;
  });
  const udpTimer = setInterval(() => {
    const id = udpProbes.length & 0xffff;
    const p: Sent<number> = { at: since(), answer: undefined };
    udpProbes.push(p);
    waiting.set(id, p);
    udp.send(queryBytes(qname, id), o.port, host);
  }, 1000 / o.udpPerSecond);

  const tcpProbes: Array<Sent<TcpProbeTimes>> = [];
  const tcpDone: Array<Promise<void>> = [];
  const tcpTimer = setInterval(() => {
    const p: Sent<TcpProbeTimes> = { at: since(), answer: undefined };
    tcpProbes.push(p);
    tcpDone.push(newTcpProbe(host, o.port, qname, tcpProbes.length & 0xffff, probeTimeoutMs).then((t) => void (p.answer = t)));
  }, o.tcpEveryMs);

  return {
    markSteady: () => {
      steadyFrom = since();
    },
    stop: async (expiry) => {
      clearInterval(udpTimer);
      clearInterval(tcpTimer);
      await Promise.all(tcpDone);
      await new Promise((r) => setTimeout(r, probeTimeoutMs));
      udp.close();
      const whole = phase(udpProbes, tcpProbes, 0, Infinity);
      return {
        udp: whole.udp,
        newTcp: { ...whole.newTcp, failures: { ...probeFailures } },
        storm: phase(udpProbes, tcpProbes, 0, steadyFrom),
        steady: phase(udpProbes, tcpProbes, steadyFrom, Infinity),
        ...(expiry ? { expiry: expiryPhase(expiry) } : {}),
        stormMs: Math.round(steadyFrom),
        ...(o.timelineMs > 0 ? { timeline: timeline(udpProbes, tcpProbes, o.timelineMs) } : {}),
      };
    },
  };
}

/**
 * The probes in a child process of their own: in the abusers' process, their timings include
 * that process's event loop, busy writing 64 KiB blocks for the pipeliners (a probe process
 * beside it measured new-TCP p99 27 ms where the in-process probes said 52 ms). The child runs
 * at a higher priority where allowed (root): on a core the pumping abusers keep busy, a probe
 * woken by its answer otherwise waits for the scheduler, and that wait is the client's, not
 * the server's.
 */
function startProbesInChild(o: ProbeOptions): Promise<Probes> {
  const child = fork(fileURLToPath(import.meta.url), ['--probes-only', JSON.stringify(o)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    if (child.pid !== undefined) setPriority(child.pid, -15);
  } catch {
    // Not root: measured at the normal priority.
  }
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', () =>
      resolve({
        markSteady: () => child.send('steady'),
        stop: (expiry) =>
          new Promise((done) => {
            child.once('message', (m) => done(m as Measured));
            child.send({ stop: expiry ?? null });
          }),
      }),
    );
  });
}

/** Closes within one second of the wave: more than the trickle a full table makes. */
const WAVE_PER_SECOND = 50;

/**
 * The wave in which the server closed idle connections after the storm (its idle timeout, all
 * at about the same time since they opened together): the seconds in which at least
 * WAVE_PER_SECOND closed, from the first close in them to 100 ms after the last. Outside it a
 * full table closes one idle connection per new client, which is no wave.
 */
function closingWave(closedAt: readonly number[]): ExpiryWave | undefined {
  const perSecond = new Map<number, number[]>();
  for (const t of closedAt) {
    const second = Math.floor(t / 1000);
    perSecond.set(second, [...(perSecond.get(second) ?? []), t]);
  }
  const inWave = [...perSecond.values()].filter((ts) => ts.length >= WAVE_PER_SECOND).flat();
  if (inWave.length === 0) return undefined;
  return { fromEpochMs: Math.min(...inWave), toEpochMs: Math.max(...inWave) + 100, closed: inWave.length };
}

/** Runs the abuse and the measurement; closes every connection it opened before resolving. */
export async function abuseTcp(o: AbuseOptions): Promise<AbuseResult> {
  const host = o.host ?? '127.0.0.1';
  const qname = o.qname ?? 'a.example.org';
  const probeTimeoutMs = o.probeTimeoutMs ?? 2000;

  const probeOptions: ProbeOptions = { host, port: o.port, qname, udpPerSecond: o.udpPerSecond ?? 100, tcpEveryMs: o.tcpEveryMs ?? 100, probeTimeoutMs, timelineMs: o.timelineMs ?? 0 };
  const probes = await (o.probesInChild ? startProbesInChild(probeOptions) : startProbes(probeOptions));
  const started = performance.now();

  // One 64 KiB block of framed queries, written again each time the socket drains.
  const frames: Buffer[] = [];
  for (let size = 0, id = 0; size < 65536; id++) {
    const f = framed(queryBytes(qname, id));
    frames.push(f);
    size += f.length;
  }
  const block = Buffer.concat(frames);
  let pipelinedQueries = 0;
  let stopped = false;
  const pump = (s: net.Socket): void => {
    while (!stopped && !s.destroyed) {
      pipelinedQueries += frames.length;
      if (!s.write(block)) {
        s.once('drain', () => pump(s));
        return;
      }
    }
  };
  let pipelinersClosed = 0;
  const reconnected: net.Socket[] = [];
  const abuse = (s: net.Socket): void => {
    // Never read: paused, the socket takes what fits in its buffer and then leaves the rest in the kernel.
    s.pause();
    pump(s);
    // A closed pipeliner comes back, as an attacker would.
    s.once('close', () => {
      if (stopped) return;
      pipelinersClosed++;
      setTimeout(() => {
        if (stopped) return;
        const again = net.connect({ host, port: o.port });
        again.on('error', () => undefined);
        again.once('connect', () => abuse(again));
        reconnected.push(again);
      }, 50);
    });
  };
  const pipe = await openMany(o.pipeliners, host, o.port, abuse);

  // The pipeliners first, so that when the idle ones fill the server's table they are already in.
  const idle = await openMany(o.idle, host, o.port, () => undefined);
  const half = await openMany(o.halfFrame, host, o.port, (s) => s.write(Buffer.from([0])));
  const connectedAt = performance.now();
  // Unanswered within the window (a server that stops accepting when full): the storm is the window.
  await newTcpProbe(host, o.port, qname, 0, o.measureMs);
  const acceptBacklogMs = Math.round(performance.now() - connectedAt);
  probes.markSteady();
  const steadyAt = epochNow();

  await new Promise((r) => setTimeout(r, Math.max(0, o.measureMs - (performance.now() - started))));
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  stopped = true;
  const wave = closingWave([...idle.open, ...half.open].flatMap((t) => (t.closedAt !== undefined && t.closedAt >= steadyAt ? [t.closedAt] : [])));
  const measured = await probes.stop(wave);

  const result: AbuseResult = {
    ...measured,
    acceptBacklogMs,
    refusedAtConnect: idle.failed + half.failed + pipe.failed,
    pipelinersClosed,
    idleClosed: [...idle.open, ...half.open].filter((t) => t.closed).length,
    seconds,
    pipelinedQueries,
  };
  for (const t of [...idle.open, ...half.open, ...pipe.open]) t.socket.destroy();
  for (const s of reconnected) s.destroy();
  return result;
}

function flag(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv[2] === '--probes-only') {
  const probes = await startProbes(JSON.parse(process.argv[3] ?? '{}') as ProbeOptions);
  process.on('message', async (m) => {
    if (m === 'steady') {
      probes.markSteady();
      return;
    }
    const expiry = (m as { stop?: ExpiryWave | null }).stop ?? undefined;
    process.send?.(await probes.stop(expiry), () => process.exit(0));
  });
  process.send?.('ready');
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const result = await abuseTcp({
    port: flag(args, 'port', 53),
    idle: flag(args, 'idle', 2000),
    halfFrame: flag(args, 'half', 200),
    pipeliners: flag(args, 'pipeliners', 50),
    measureMs: flag(args, 'seconds', 10) * 1000,
    udpPerSecond: flag(args, 'udp-rate', 100),
    tcpEveryMs: flag(args, 'tcp-every', 100),
    probeTimeoutMs: flag(args, 'probe-timeout', 2000),
    timelineMs: flag(args, 'timeline', 0),
    probesInChild: true,
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
