// Whether another process serves this node cache's addresses: the next node-cache pod of a
// rolling update (maxSurge) binds the same local IP and port beside this one (SO_REUSEPORT)
// before this one is asked to stop. Then this one must leave the interface and the iptables
// rules in place, since its successor serves through them, and hand its queries over instead
// of dropping them. The kernel's socket tables (/proc/net/udp, udp6, tcp, tcp6 of the node's
// network namespace) name every bound socket by inode; the sockets this process holds are
// the inodes of its descriptors (/proc/self/fd), so any other socket on the address is
// someone else's.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import { endianness } from 'node:os';
import type { GroupShare } from '../server/steer.js';

/** A listening socket from a /proc/net table. */
export interface BoundSocket {
  /** The local address as text (IPv4 dotted, IPv6 in full lowercase hex groups, v4-mapped as ::ffff:a.b.c.d). */
  address: string;
  port: number;
  inode: number;
}

/**
 * The states of a socket that takes queries: TCP LISTEN (0A), and UDP unconnected (07; a
 * connected UDP socket, 01, is a predecessor draining its last queries, not a server).
 */
const SERVING_STATE = { tcp: '0A', udp: '07' } as const;

/** Four bytes of /proc's hex, which prints each 32-bit word in the host's byte order. */
function wordBytes(hex: string, little: boolean): number[] {
  const b = [0, 2, 4, 6].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return little ? b.reverse() : b;
}

/** /proc/net's local address (8 or 32 hex digits) as text, or undefined when it is not one. */
export function procAddress(hex: string, little = endianness() === 'LE'): string | undefined {
  if (!/^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{32})$/.test(hex)) return undefined;
  if (hex.length === 8) return wordBytes(hex, little).join('.');
  const bytes = [0, 8, 16, 24].flatMap((i) => wordBytes(hex.slice(i, i + 8), little));
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return `::ffff:${bytes.slice(12).join('.')}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] as number) << 8) | (bytes[i + 1] as number)).toString(16));
  return groups.join(':');
}

/** The bound sockets of one /proc/net table (udp, udp6, tcp, tcp6); lines that do not parse are skipped. */
export function parseProcNet(text: string, kind: 'udp' | 'tcp', little = endianness() === 'LE'): BoundSocket[] {
  const out: BoundSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    if (f[3] !== SERVING_STATE[kind]) continue;
    const [addrHex, portHex] = (f[1] as string).split(':');
    const address = procAddress(addrHex ?? '', little);
    const port = parseInt(portHex ?? '', 16);
    const inode = Number(f[9]);
    if (address === undefined || !Number.isInteger(port) || !Number.isInteger(inode) || inode === 0) continue;
    out.push({ address, port, inode });
  }
  return out;
}

/** `ip` as procAddress writes it, so the two compare as strings. */
export function canonicalAddress(ip: string): string | undefined {
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return undefined;
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const part = (s: string | undefined): string[] => (s ? s.split(':') : []);
  let left = part(head);
  let right = part(tail);
  const v4 = (right.length > 0 ? right : left).at(-1);
  const toGroups = (p: string[]): string[] =>
    p.flatMap((g) => {
      if (!g.includes('.')) return [parseInt(g, 16).toString(16)];
      const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
      return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
    });
  left = toGroups(left);
  right = toGroups(right);
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  if (groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff' && v4?.includes('.')) return `::ffff:${v4}`;
  return groups.join(':');
}

/**
 * True when some socket bound to one of `ips` on `port` is not among `ours` (inodes): another
 * process listens on the address. An IPv4 address also matches its v4-mapped form (a dual-stack
 * IPv6 socket bound to ::ffff:a.b.c.d).
 */
export function othersBound(sockets: readonly BoundSocket[], ours: ReadonlySet<number>, ips: readonly string[], port: number): boolean {
  const wanted = new Set(ips.flatMap((ip) => {
    const c = canonicalAddress(ip);
    return c === undefined ? [] : isIPv4(c) ? [c, `::ffff:${c}`] : [c];
  }));
  return sockets.some((s) => s.port === port && wanted.has(s.address) && !ours.has(s.inode));
}

/** The socket inodes of a process's descriptors (`self`, or a pid), added to `into`. */
function socketInodes(pid: string, into: Set<number>): Set<number> {
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) into.add(Number(m[1]));
    } catch {
      // closed meanwhile (the directory's own descriptor)
    }
  }
  return into;
}

/**
 * The sockets of this pod's own node cache: this process's, and with `multisocket` its parent's
 * and its sibling workers' (every child of the same parent), which stop with it and are no
 * successor. The parent's count too: it holds a copy of every worker's sockets, and a sibling
 * that has already ended leaves its sockets in the parent's hands until the parent lets go.
 */
function ownSocketInodes(withSiblings: boolean): Set<number> {
  const inodes = socketInodes('self', new Set());
  if (!withSiblings) return inodes;
  try {
    socketInodes(String(process.ppid), inodes);
  } catch {
    // the parent ended meanwhile
  }
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)) {
    try {
      const ppid = /\nPPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      if (Number(ppid) === process.ppid) socketInodes(pid, inodes);
    } catch {
      // ended meanwhile, or not ours to read
    }
  }
  return inodes;
}

/**
 * How many of the listening sockets bound to exactly `ip` and `port` (listening TCP sockets of
 * one table: one address family, as the kernel's SO_REUSEPORT group of that address) are `ours`
 * and how many another process's. A v4-mapped socket is not in an IPv4 address's group.
 */
export function groupShare(sockets: readonly BoundSocket[], ours: ReadonlySet<number>, ip: string, port: number): GroupShare {
  const address = canonicalAddress(ip);
  const share = { own: 0, others: 0 };
  for (const s of sockets) {
    if (s.port !== port || s.address !== address) continue;
    if (ours.has(s.inode)) share.own++;
    else share.others++;
  }
  return share;
}

/**
 * The SO_REUSEPORT group of a TCP listener on `ip` and `port` in this network namespace: this
 * pod's sockets (with `withSiblings` its sibling workers' too) and others'; undefined where
 * /proc cannot tell.
 */
export function tcpGroupShare(ip: string, port: number, withSiblings = false): GroupShare | undefined {
  try {
    const ours = ownSocketInodes(withSiblings);
    return groupShare(boundSockets(['tcp', 'tcp6']), ours, ip, port);
  } catch {
    return undefined;
  }
}

const PROC_NET_TABLES = { udp: 'udp', udp6: 'udp', tcp: 'tcp', tcp6: 'tcp' } as const;

/** Every bound UDP socket and listening TCP socket of this network namespace (of `files`), by /proc/net. */
function boundSockets(files: ReadonlyArray<keyof typeof PROC_NET_TABLES> = ['udp', 'udp6', 'tcp', 'tcp6']): BoundSocket[] {
  const out: BoundSocket[] = [];
  for (const [file, kind] of files.map((f) => [f, PROC_NET_TABLES[f]] as const)) {
    try {
      out.push(...parseProcNet(readFileSync(`/proc/net/${file}`, 'utf8'), kind));
    } catch {
      // no IPv6 in this kernel: nothing bound there
    }
  }
  return out;
}

/**
 * Whether another process serves `ips` on `port` in this network namespace (false where /proc cannot tell).
 *
 * Our own sockets are read before the kernel's tables, never after. While the pod stops, its
 * sockets only go away: a sibling worker ends and the parent then closes its copies. Read the
 * other way round, a sibling's socket could be in the tables yet already gone from every process
 * of ours by the time their descriptors are read, and count as a successor's.
 */
export function successorServing(ips: readonly string[], port: number, withSiblings = false): boolean {
  try {
    const ours = ownSocketInodes(withSiblings);
    return othersBound(boundSockets(), ours, ips, port);
  } catch {
    return false;
  }
}
