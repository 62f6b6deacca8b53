// UDP and TCP sockets for one address:port. Both hand raw messages to a Dispatcher, whose
// routing table a reload swaps without closing the sockets.

import dgram from 'node:dgram';
import net from 'node:net';
import { getSystemErrorName } from 'node:util';
import type { Dispatcher } from './dispatch.js';
import { isPromise } from './promise.js';
import { LISTENER_RECEIVE_BUFFER, listenUdpNative, MAX_UDP_QUERY } from './nativeudp.js';
import { nativeUdp } from '../lib/native/udp.js';
import type { ClientInfo } from './request.js';
import { takeInherited } from './inherited.js';
import { ConnectionTable, DEFAULT_TCP_LIMITS, TcpConnection, type TcpLimits } from './tcpconn.js';
import { handOverConnections, type GroupShareOf } from './steer.js';

export { ConnectionTable, DEFAULT_TCP_LIMITS, type TcpLimits } from './tcpconn.js';

const MAPPED_V4 = '::ffff:';

/**
 * SO_REUSEPORT for listeners, as CoreDNS's: the next node-cache pod, or a parent's restarted
 * worker, binds the same address while this one still serves. (Node 22.12's option; the
 * typings this project builds against predate it.)
 */
const REUSE_PORT = { reusePort: true } as Record<string, boolean>;

/** Dual-stack sockets report IPv4 clients as ::ffff:a.b.c.d; plugins want a.b.c.d. */
export function plainAddress(a: string): string {
  return a.startsWith(MAPPED_V4) && a.includes('.') ? a.slice(MAPPED_V4.length) : a;
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
  /**
   * Leaving to a successor bound to the same address (SO_REUSEPORT): take no new queries,
   * answer those already taken, then close. Missing where the socket cannot stop taking new
   * queries without closing (node:dgram): close() is all there is.
   */
  drain?(shareOf?: GroupShareOf): Promise<void>;
  /**
   * TCP: removes a program a predecessor left on the address's SO_REUSEPORT group
   * (./steer.ts), once this process serves the address alone.
   */
  forgetSteering?(): void;
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
  const inherited = port === 0 ? undefined : takeInherited('udp', address, port);
  // A parent's socket is bound here, by the first worker that serves it (src/lib/native/udp.c).
  if (inherited !== undefined) openInherited(inherited, address, port);
  if (addon && (address === '' || (net.isIP(address) !== 0 && !address.includes('%')))) {
    const local = address === '' ? '::' : address;
    const native = listenUdpNative(addon, address, port, local, dispatcher, inherited);
    return { transport: 'udp', via: 'native', address, port: native.port, close: () => native.close(), drain: () => native.drain() };
  }
  return listenUdpDgram(address, port, dispatcher, inherited);
}

function openInherited(fd: number, address: string, port: number): void {
  const rc = nativeUdp()?.openListener(fd, address === '' ? '::' : address, port) ?? 0;
  if (rc === 0) return;
  const code = getSystemErrorName(-rc);
  throw Object.assign(new Error(`bind ${address || '*'}:${port}: ${code}`), { code });
}

async function listenUdpDgram(address: string, port: number, dispatcher: Dispatcher, inherited?: number): Promise<Listener> {
  const wildcard = address === '';
  const type = wildcard || net.isIPv6(address) ? 'udp6' : 'udp4';
  // The same receive buffer as the native socket's (see LISTENER_RECEIVE_BUFFER); node asks for
  // it once bound, and the kernel caps it at net.core.rmem_max. SO_REUSEPORT, as every kdns
  // listener (a successor binds the address while this one still serves; Node 22.12+).
  const socket = dgram.createSocket({ type, ipv6Only: false, lookup: literalLookup(type === 'udp6' ? 6 : 4), recvBufferSize: LISTENER_RECEIVE_BUFFER / 2, ...REUSE_PORT });
  const bindTo = wildcard ? '::' : address;
  await new Promise<void>((resolveBind, reject) => {
    socket.once('error', reject);
    const bound = (): void => {
      socket.off('error', reject);
      resolveBind();
    };
    if (inherited === undefined) socket.bind(port, bindTo, bound);
    else socket.bind({ fd: inherited }, bound);
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

/**
 * The peer of a TCP connection. Its addresses are asked of the kernel (a syscall each) only when
 * a query needs them: a flood of connections that never ask costs no more than their accept.
 */
class TcpClient implements ClientInfo {
  readonly transport = 'tcp' as const;
  private remote: { address: string; port: number } | undefined;
  private local: { address: string; port: number } | undefined;

  constructor(private readonly socket: net.Socket) {}

  private get peer(): { address: string; port: number } {
    return (this.remote ??= { address: plainAddress(this.socket.remoteAddress ?? ''), port: this.socket.remotePort ?? 0 });
  }

  private get own(): { address: string; port: number } {
    return (this.local ??= { address: plainAddress(this.socket.localAddress ?? ''), port: this.socket.localPort ?? 0 });
  }

  get remoteAddress(): string {
    return this.peer.address;
  }
  set remoteAddress(v: string) {
    this.peer.address = v;
  }
  get remotePort(): number {
    return this.peer.port;
  }
  set remotePort(v: number) {
    this.peer.port = v;
  }
  get localAddress(): string {
    return this.own.address;
  }
  set localAddress(v: string) {
    this.own.address = v;
  }
  get localPort(): number {
    return this.own.port;
  }
  set localPort(v: number) {
    this.own.port = v;
  }
}

/**
 * One accepted connection, plain or already decrypted (DoT): 2-byte framing, pipelining and the
 * fairness and idle-first closing of its listener's table.
 */
export function serveConnection(socket: net.Socket, dispatcher: Dispatcher, limits: TcpLimits, table: ConnectionTable): void {
  const c = new TcpConnection(socket, new TcpClient(socket), dispatcher, limits, (conn) => table.touch(conn));
  if (!table.admit(c)) socket.destroy();
}

/**
 * As Go (and so CoreDNS) does: the kernel's maximum (net.core.somaxconn, to which listen()
 * clamps this), not Node's 511. A burst of connections beyond the accept queue has its SYNs
 * dropped, and a well-behaved client caught in it waits a second for the retry.
 */
const LISTEN_BACKLOG = 65535;

/** A draining TCP listener closes its connections after this even with queries under way. */
const TCP_DRAIN_LIMIT_MS = 5_000;
/** A draining listener's connection that has not asked for this long is idle: it is closed (RFC 7766 lets the client ask again elsewhere). */
const TCP_DRAIN_RECENT_MS = 1_000;

/** The descriptor of a listening net.Server (Node keeps it on the handle, on Unix); undefined when there is none. */
function serverDescriptor(server: net.Server): number | undefined {
  const fd = (server as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

export async function listenTcp(address: string, port: number, dispatcher: Dispatcher, limits: TcpLimits = DEFAULT_TCP_LIMITS): Promise<Listener> {
  const inherited = port === 0 ? undefined : takeInherited('tcp', address, port);
  const server = net.createServer({ noDelay: true });
  const table = new ConnectionTable(limits);
  let lastAccept = 0;
  server.on('connection', (socket) => {
    lastAccept = performance.now();
    serveConnection(socket, dispatcher, limits, table);
  });
  server.on('error', () => undefined);
  const wildcard = address === '';
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    const listening = (): void => {
      server.off('error', reject);
      resolveListen();
    };
    // An inherited descriptor's backlog is listen's second argument: Node reads no `backlog`
    // from options with `fd`.
    if (inherited === undefined) server.listen({ port, host: wildcard ? '::' : address, ipv6Only: false, backlog: LISTEN_BACKLOG, ...REUSE_PORT }, listening);
    else server.listen({ fd: inherited }, LISTEN_BACKLOG, listening);
  });
  const bound = server.address() as net.AddressInfo;
  const addon = nativeUdp();
  return {
    transport: 'tcp',
    address,
    port: bound.port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        table.closeAll();
      }),
    // A successor listens on the same address: new connections go to it, those already queued
    // here are taken and answered (./steer.ts); then no more accepts (the listening socket
    // leaves the address with its last descriptor), and connections already open get the
    // answers to the queries they sent, then close.
    drain: async (shareOf?: GroupShareOf) => {
      const fd = serverDescriptor(server);
      if (shareOf && addon && fd !== undefined) {
        await handOverConnections(
          { fd, address: bound.address, port: bound.port, steer: addon.steerReusePort, acceptQueue: addon.acceptQueue, lastAccept: () => lastAccept },
          shareOf,
        );
      }
      const closing = new Promise<void>((r) => server.close(() => r()));
      const limit = performance.now() + TCP_DRAIN_LIMIT_MS;
      while (table.busy(TCP_DRAIN_RECENT_MS) && performance.now() < limit) await new Promise((r) => setTimeout(r, 10));
      table.closeAll();
      await closing;
    },
    forgetSteering: () => {
      const fd = serverDescriptor(server);
      if (addon && fd !== undefined) addon.clearReusePortSteering(fd);
    },
  };
}
