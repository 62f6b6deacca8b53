// What tests of kdns's parent and workers (src/supervisor/) look at from outside: the processes a
// parent started, whether a process is still alive, and how many of a burst of UDP queries from
// many source ports are answered (the kernel spreads a port's queries over its SO_REUSEPORT
// sockets by the sender's address and port, so many sources reach every worker).
import dgram from 'node:dgram';
import { existsSync, readFileSync } from 'node:fs';
import { nameToWire } from '../../src/lib/dns/name.js';
import { buildQuery } from '../../src/lib/dns/wire.js';
import { parseProcNet } from '../../src/nodecache/successor.js';
import { waitFor } from './net.js';

/** The processes `pid` started (its main thread's children). */
export function childrenOf(pid: number): number[] {
  const path = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

export const alive = (pid: number): boolean => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

/**
 * Sends `count` A queries for `name` at once from `sources` sockets; resolves with how many were
 * answered within `waitMs`.
 */
export async function udpBurst(port: number, count: number, opts: { name?: string; sources?: number; waitMs?: number } = {}): Promise<number> {
  const { name = 'web.example.', sources = 1, waitMs = 5000 } = opts;
  const seen = new Set<number>();
  const sockets = await Promise.all(
    Array.from({ length: sources }, async () => {
      const socket = dgram.createSocket('udp4');
      socket.on('message', (m) => seen.add(m.readUInt16BE(0)));
      await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
      return socket;
    }),
  );
  for (let id = 1; id <= count; id++) sockets[id % sources]?.send(buildQuery(nameToWire(name), 1, 1, { id }), port, '127.0.0.1');
  await waitFor(() => seen.size === count, waitMs).catch(() => undefined);
  for (const s of sockets) s.close();
  return seen.size;
}

/** How many UDP sockets of this network namespace are bound to `port` and take queries (a worker binds its socket as it starts serving). */
export function udpSocketsOn(port: number): number {
  const tables = ['/proc/net/udp', '/proc/net/udp6'].filter(existsSync).map((f) => readFileSync(f, 'utf8'));
  return tables.flatMap((t) => parseProcNet(t, 'udp')).filter((s) => s.port === port).length;
}
