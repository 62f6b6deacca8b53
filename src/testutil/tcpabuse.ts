// Test and benchmark helper: abuses a DNS server over TCP (idle connections, connections that
// stop half-way through a frame, clients that pipeline queries and never read the answers)
// while measuring what well-behaved clients get: UDP queries at a steady rate, and new TCP
// clients that connect, ask once and leave.
//
// Run as a program it prints the measurement as JSON:
//   node dist/testutil/tcpabuse.js --port 5353 [--idle 2000 --half 200 --pipeliners 50 --seconds 10]
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
}

export interface Latencies {
  sent: number;
  answered: number;
  p50: number;
  p99: number;
  max: number;
}

export interface AbuseResult {
  udp: Latencies;
  newTcp: Latencies & { failures: typeof probeFailures };
  /** The same, for the probes sent once every abusive connection was open (the connect flood over). */
  steady: { udp: Latencies; newTcp: Latencies };
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

/** Asks `qname` over a fresh TCP connection; resolves to the ms from connect to answer, or undefined. */
function newTcpProbe(host: string, port: number, qname: string, id: number, timeoutMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const start = performance.now();
    const socket = net.connect({ host, port, noDelay: true });
    let got = Buffer.alloc(0);
    let done = false;
    let connected = false;
    const finish = (v: number | undefined): void => {
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
      if (socket.readyState === 'closed' && !done) probeFailures[connected ? 'closed' : 'refused']++;
      finish(undefined);
    });
    socket.once('connect', () => {
      connected = true;
      socket.write(framed(queryBytes(qname, id)));
    });
    socket.on('data', (b: Buffer) => {
      got = Buffer.concat([got, b]);
      if (got.length >= 4 && got.length >= 2 + got.readUInt16BE(0) && got.readUInt16BE(2) === id) finish(performance.now() - start);
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
}

type Measured = Pick<AbuseResult, 'udp' | 'newTcp' | 'steady'>;

interface Probes {
  /** Every abusive connection is open: later probes also count as steady. */
  markSteady: () => void;
  stop: () => Promise<Measured>;
}

/** Starts the well-behaved clients; `stop` ends them and waits for the last answers. */
async function startProbes(o: ProbeOptions): Promise<Probes> {
  const { host, qname, probeTimeoutMs } = o;
  const udpTimes: number[] = [];
  const udpSteady: number[] = [];
  let udpSent = 0;
  let steadyFrom = Infinity;
  let udpSentSteady = 0;
  const udp = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
  await new Promise<void>((r) => udp.bind(0, r));
  const sentAt = new Map<number, number>();
  udp.on('message', (m) => {
    if (m.length < 2) return;
    const at = sentAt.get(m.readUInt16BE(0));
    if (at === undefined) return;
    sentAt.delete(m.readUInt16BE(0));
    const ms = performance.now() - at;
    if (ms > probeTimeoutMs) return;
    udpTimes.push(ms);
    if (at >= steadyFrom) udpSteady.push(ms);
  });
  const udpTimer = setInterval(() => {
    const id = udpSent++ & 0xffff;
    const now = performance.now();
    if (now >= steadyFrom) udpSentSteady++;
    sentAt.set(id, now);
    udp.send(queryBytes(qname, id), o.port, host);
  }, 1000 / o.udpPerSecond);

  const tcpProbes: Array<Promise<number | undefined>> = [];
  const tcpSteady: Array<Promise<number | undefined>> = [];
  let tcpId = 0;
  const tcpTimer = setInterval(() => {
    const probe = newTcpProbe(host, o.port, qname, ++tcpId & 0xffff, probeTimeoutMs);
    tcpProbes.push(probe);
    if (performance.now() >= steadyFrom) tcpSteady.push(probe);
  }, o.tcpEveryMs);
  const answered = async (probes: Array<Promise<number | undefined>>): Promise<number[]> => (await Promise.all(probes)).filter((v): v is number => v !== undefined);

  return {
    markSteady: () => {
      steadyFrom = performance.now();
    },
    stop: async () => {
      clearInterval(udpTimer);
      clearInterval(tcpTimer);
      const tcpTimes = await answered(tcpProbes);
      const tcpSteadyTimes = await answered(tcpSteady);
      await new Promise((r) => setTimeout(r, probeTimeoutMs));
      udp.close();
      return {
        udp: summarize(udpSent, udpTimes),
        newTcp: { ...summarize(tcpProbes.length, tcpTimes), failures: { ...probeFailures } },
        steady: { udp: summarize(udpSentSteady, udpSteady), newTcp: summarize(tcpSteady.length, tcpSteadyTimes) },
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
        stop: () =>
          new Promise((done) => {
            child.once('message', (m) => done(m as Measured));
            child.send('stop');
          }),
      }),
    );
  });
}

/** Runs the abuse and the measurement; closes every connection it opened before resolving. */
export async function abuseTcp(o: AbuseOptions): Promise<AbuseResult> {
  const host = o.host ?? '127.0.0.1';
  const qname = o.qname ?? 'a.example.org';
  const probeTimeoutMs = o.probeTimeoutMs ?? 2000;

  const probeOptions: ProbeOptions = { host, port: o.port, qname, udpPerSecond: o.udpPerSecond ?? 100, tcpEveryMs: o.tcpEveryMs ?? 100, probeTimeoutMs };
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
  probes.markSteady();

  await new Promise((r) => setTimeout(r, Math.max(0, o.measureMs - (performance.now() - started))));
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  stopped = true;
  const measured = await probes.stop();

  const result: AbuseResult = {
    ...measured,
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
    process.send?.(await probes.stop(), () => process.exit(0));
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
    probesInChild: true,
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
