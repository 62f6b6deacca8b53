// UDP and TCP sockets for one address:port. Both hand raw messages to a Dispatcher, whose
// routing table a reload swaps without closing the sockets.

import dgram from 'node:dgram';
import net from 'node:net';
import type { Dispatcher, Outcome } from './dispatch.js';
import { listenUdpNative, MAX_UDP_QUERY, nativeUdp } from './nativeudp.js';
import type { ClientInfo } from './request.js';

export interface TcpLimits {
  /** Close a connection with no complete query for this long (ms). */
  idleTimeoutMs: number;
  /** Refuse connections beyond this many open ones. */
  maxConnections: number;
  /** Queries of one connection being answered at once; reading pauses beyond it. */
  maxInflightPerConnection: number;
  /** Drop a client that does not read its answers once this much is queued (bytes). */
  maxQueuedBytes: number;
}

export const DEFAULT_TCP_LIMITS: TcpLimits = {
  idleTimeoutMs: 10_000,
  maxConnections: 1000,
  maxInflightPerConnection: 128,
  maxQueuedBytes: 1 << 20,
};

const MAPPED_V4 = '::ffff:';

/** Dual-stack sockets report IPv4 clients as ::ffff:a.b.c.d; plugins want a.b.c.d. */
function plainAddress(a: string): string {
  return a.startsWith(MAPPED_V4) && a.includes('.') ? a.slice(MAPPED_V4.length) : a;
}

function isPromise(v: Outcome): v is Promise<Buffer | undefined> {
  return typeof (v as { then?: unknown } | undefined)?.then === 'function';
}

/** How UDP is read and written: kdns's batched socket when built, else node:dgram. */
export type UdpTransport = 'auto' | 'native' | 'dgram';

export interface Listener {
  readonly transport: 'udp' | 'tcp';
  /** For UDP: the socket implementation serving it. */
  readonly via?: 'native' | 'dgram';
  readonly address: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Replies go to the address a query came from, always an IP literal. dgram would pass it through
 * dns.lookup and a nextTick on every send; answering the lookup at once saves both on the
 * hottest path of the server.
 */
function literalLookup(family: 4 | 6) {
  return (address: string, _options: unknown, callback: (err: Error | null, address: string, family: number) => void): void => {
    callback(null, address, family);
  };
}

/**
 * UDP on address:port. 'auto' takes the native socket when it is built (and KDNS_UDP is not
 * "dgram"); 'native' insists on it, failing when it is missing.
 */
export async function listenUdp(address: string, port: number, dispatcher: Dispatcher, transport: UdpTransport = 'auto'): Promise<Listener> {
  const addon = transport === 'dgram' ? null : nativeUdp();
  if (transport === 'native' && !addon) throw new Error('the native UDP socket is not built (npm run build:native)');
  // Scoped IPv6 (fe80::1%eth0) and names stay with dgram, which resolves them.
  if (addon && (address === '' || (net.isIP(address) !== 0 && !address.includes('%')))) {
    const local = address === '' ? '::' : address;
    const native = listenUdpNative(addon, address, port, local, dispatcher);
    return { transport: 'udp', via: 'native', address, port: native.port, close: () => native.close() };
  }
  return listenUdpDgram(address, port, dispatcher);
}

async function listenUdpDgram(address: string, port: number, dispatcher: Dispatcher): Promise<Listener> {
  const wildcard = address === '';
  const type = wildcard || net.isIPv6(address) ? 'udp6' : 'udp4';
  const socket = dgram.createSocket({ type, ipv6Only: false, lookup: literalLookup(type === 'udp6' ? 6 : 4) });
  const bindTo = wildcard ? '::' : address;
  await new Promise<void>((resolveBind, reject) => {
    socket.once('error', reject);
    socket.bind(port, bindTo, () => {
      socket.off('error', reject);
      resolveBind();
    });
  });
  const local = socket.address();
  socket.on('error', () => {
    // A send to a vanished client (ICMP unreachable) surfaces here; the socket stays usable.
  });
  const localAddress = plainAddress(local.address);
  let closed = false;
  socket.on('message', (msg, rinfo) => {
    if (msg.length > MAX_UDP_QUERY) return;
    const client: ClientInfo = {
      transport: 'udp',
      remoteAddress: plainAddress(rinfo.address),
      remotePort: rinfo.port,
      localAddress,
      localPort: local.port,
    };
    const out = dispatcher.handle(msg, client);
    if (out === undefined) return;
    if (isPromise(out)) {
      out.then((bytes) => {
        // A reload may have closed the socket while the answer was made: send() would throw.
        if (bytes && !closed) socket.send(bytes, rinfo.port, rinfo.address);
      });
    } else {
      socket.send(out, rinfo.port, rinfo.address);
    }
  });
  return {
    transport: 'udp',
    via: 'dgram',
    address,
    port: local.port,
    close: () => {
      closed = true;
      return new Promise<void>((r) => socket.close(() => r()));
    },
  };
}

export async function listenTcp(address: string, port: number, dispatcher: Dispatcher, limits: TcpLimits = DEFAULT_TCP_LIMITS): Promise<Listener> {
  const server = net.createServer({ noDelay: true });
  server.maxConnections = limits.maxConnections;
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serveConnection(socket, dispatcher, limits);
  });
  server.on('error', () => undefined);
  const wildcard = address === '';
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen({ port, host: wildcard ? '::' : address, ipv6Only: false }, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const bound = server.address() as net.AddressInfo;
  return {
    transport: 'tcp',
    address,
    port: bound.port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      }),
  };
}

/**
 * One TCP connection: 2-byte length framing, any number of queries, answered as they complete
 * (pipelined, possibly out of order, as RFC 7766 allows).
 */
function serveConnection(socket: net.Socket, dispatcher: Dispatcher, limits: TcpLimits): void {
  const client: ClientInfo = {
    transport: 'tcp',
    remoteAddress: plainAddress(socket.remoteAddress ?? ''),
    remotePort: socket.remotePort ?? 0,
    localAddress: plainAddress(socket.localAddress ?? ''),
    localPort: socket.localPort ?? 0,
  };
  let pending: Buffer = Buffer.alloc(0);
  let inflight = 0;
  socket.setTimeout(limits.idleTimeoutMs, () => socket.destroy());
  socket.on('error', () => socket.destroy());

  const write = (bytes: Buffer | undefined): void => {
    if (!bytes || socket.destroyed) return;
    const frame = Buffer.allocUnsafe(bytes.length + 2);
    frame.writeUInt16BE(bytes.length, 0);
    bytes.copy(frame, 2);
    socket.write(frame);
    if (socket.writableLength > limits.maxQueuedBytes) socket.destroy();
  };

  const settle = (bytes: Buffer | undefined): void => {
    inflight--;
    write(bytes);
    if (socket.isPaused() && inflight < limits.maxInflightPerConnection) socket.resume();
  };

  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 2) {
      const len = pending.readUInt16BE(0);
      if (pending.length < 2 + len) break;
      const msg = pending.subarray(2, 2 + len);
      pending = pending.subarray(2 + len);
      inflight++;
      const out = dispatcher.handle(msg, client);
      if (isPromise(out)) out.then(settle, () => settle(undefined));
      else settle(out);
    }
    if (inflight >= limits.maxInflightPerConnection) socket.pause();
  });
}

/** The startup log's note on how UDP is served; says how to get the faster socket when missing. */
export function udpNote(via: 'native' | 'dgram' | undefined): string {
  if (via !== 'dgram') return '';
  return process.env.KDNS_UDP === 'dgram' ? '; udp via node:dgram, as KDNS_UDP=dgram asks' : '; udp via node:dgram: the native socket is not built (npm run build:native)';
}

/** The `--help` text on KDNS_UDP, shared by the commands that serve DNS (serve, nodecache). */
export const UDP_ENV_HELP = "\nEnvironment:\n  KDNS_UDP=dgram  serve UDP through node:dgram instead of kdns's batched native socket\n                  (the fallback when the socket is not built; see npm run build:native)\n";
