// Test support for what kdns does with a burst of UDP datagrams it cannot read at once: a kdns
// process to stop and continue (SIGSTOP/SIGCONT: the kernel keeps queueing for it, as while it
// waits for its CPU), a client that sends many queries at once and counts the answers, and a
// scripted upstream that holds its replies until told. Used by the socket-buffer tests of the
// server and forward.
import dgram from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { nameToWire } from '../../src/lib/dns/name.js';
import { buildQuery, headerRcode, readU16 } from '../../src/lib/dns/wire.js';
import { kdnsCommand } from './kdns.js';
import { freePort, waitFor } from './net.js';
import { spawnCollected } from './proc.js';
import { bareReply } from './upstream.js';

const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

export interface KdnsProcess {
  child: ChildProcess;
  port: number;
  output(): string;
  /** Stops the process from running (the kernel still queues its datagrams). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/**
 * `kdns serve` on a free loopback port for `corefile` (its `{PORT}` replaced), with `env` added
 * to the environment (KDNS_UDP=dgram for the node:dgram sockets); resolves once it listens.
 */
export async function startKdnsProcess(corefile: string, env: Record<string, string> = {}): Promise<KdnsProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'kdns-burst-'));
  writeFileSync(join(dir, 'Corefile'), corefile.replaceAll('{PORT}', String(port)));
  const p = spawnCollected(process.execPath, kdnsCommand(['serve', '--conf', join(dir, 'Corefile')]), { env: { ...process.env, ...env }, killAfterMs: 5000 });
  await waitFor(() => p.output().includes(`listening on 127.0.0.1:${port}`) || p.child.exitCode !== null, 30_000).catch(() => undefined);
  if (!p.output().includes(`listening on 127.0.0.1:${port}`)) {
    await p.stop();
    throw new Error(`kdns did not start:\n${p.output()}`);
  }
  const signal = (s: NodeJS.Signals): void => {
    p.child.kill(s);
  };
  return {
    child: p.child,
    port,
    output: p.output,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    stop: async () => {
      signal('SIGCONT');
      await p.stop();
    },
  };
}

export interface BurstAnswers {
  /** Answers by RCODE name. */
  rcodes: Record<string, number>;
  /** Queries that got no answer while the client waited. */
  unanswered: number;
}

export interface Burst {
  /** Resolves once every query has left the client's sockets. */
  sent: Promise<void>;
  /** Waits until every query is answered, or `waitMs` has passed, and counts. */
  answers(waitMs: number): Promise<BurstAnswers>;
}

/**
 * Sends an A query for each of `names` to 127.0.0.1:port at once, over `sockets` sockets whose
 * receive buffers are large enough that the client drops no answer itself.
 */
export async function sendBurst(port: number, names: readonly string[], sockets = 4): Promise<Burst> {
  const socks: dgram.Socket[] = [];
  const rcodes: Record<string, number> = {};
  const pending = new Set<string>();
  let allAnswered: () => void = () => undefined;
  const done = new Promise<void>((r) => (allAnswered = r));
  for (let k = 0; k < sockets; k++) {
    const s = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
    s.on('message', (msg) => {
      const key = `${k}/${readU16(msg, 0)}`;
      if (!pending.delete(key)) return;
      const name = RCODE_NAMES[headerRcode(msg)] ?? String(headerRcode(msg));
      rcodes[name] = (rcodes[name] ?? 0) + 1;
      if (pending.size === 0) allAnswered();
    });
    socks.push(s);
  }
  const sends: Array<Promise<void>> = [];
  names.forEach((name, i) => {
    const k = i % sockets;
    const id = Math.floor(i / sockets) & 0xffff;
    pending.add(`${k}/${id}`);
    const s = socks[k] as dgram.Socket;
    sends.push(new Promise<void>((r) => s.send(buildQuery(nameToWire(name), 1, 1, { id }), port, '127.0.0.1', () => r())));
  });
  return {
    sent: Promise.all(sends).then(() => undefined),
    answers: async (waitMs) => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
      clearTimeout(timer);
      for (const s of socks) s.close();
      return { rcodes, unanswered: pending.size };
    },
  };
}

export interface HoldingUpstream {
  port: number;
  /** UDP queries received, repeats included. */
  received: number;
  /** Sends the replies to every query held so far, and answers each later query at once. */
  release(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Scripted because no real server can be told to hold its answers: records every UDP query and
 * answers none (an empty NOERROR reply each) until `release()`. Its own receive buffer is large,
 * so a burst from kdns is not lost on its side.
 */
export async function holdingUpstream(): Promise<HoldingUpstream> {
  const udp = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 << 20 });
  const held: Array<{ msg: Buffer; port: number }> = [];
  let releasing = false;
  const state: HoldingUpstream = {
    port: 0,
    received: 0,
    release: async () => {
      releasing = true;
      const all = held.splice(0);
      await Promise.all(all.map((h) => new Promise<void>((r) => udp.send(bareReply(h.msg, 0x0400), h.port, '127.0.0.1', () => r()))));
    },
    close: () => new Promise<void>((r) => udp.close(() => r())),
  };
  udp.on('message', (msg, rinfo) => {
    state.received++;
    if (releasing) udp.send(bareReply(msg, 0x0400), rinfo.port, rinfo.address);
    else held.push({ msg, port: rinfo.port });
  });
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  state.port = udp.address().port;
  return state;
}
