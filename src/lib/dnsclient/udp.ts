// UDP to one upstream over a connected socket that many queries share (told apart by ID).
// Connecting lets the kernel drop datagrams from anyone but the upstream and report ICMP
// "port unreachable" back to us, so a dead upstream fails in microseconds instead of timing out.
// The socket is replaced after `expireMs`, which also moves us to a fresh source port.
import dgram from 'node:dgram';
import net from 'node:net';
import { describeSocketError } from './errors.js';
import { NativeUdpChannel } from './nativechannel.js';
import { MAX_IN_FLIGHT_PER_SOCKET } from './pending.js';
import { replyCost, UPSTREAM_RECEIVE_BUFFER } from './rcvbuf.js';
import { UdpChannelBase, type ChannelContext } from './channel.js';
import { RttEstimator } from './retransmit.js';
import { nativeUdp } from '../native/udp.js';

export interface ConnStats {
  /** Exchanges that found an open socket or connection to use. */
  hits: number;
  /** Exchanges that had to open one. */
  misses: number;
}

/** Where a caller wants connection reuse counted as well (metrics). */
export interface ConnCounters {
  hit: { inc(): void };
  miss: { inc(): void };
}

class UdpChannel extends UdpChannelBase {
  private readonly socket: dgram.Socket;
  private connected = false;
  private readonly connecting: Promise<void>;

  constructor(host: string, port: number, upstream: string, context: ChannelContext, localAddress?: string) {
    super(upstream, context);
    // node asks the kernel for the buffer once the socket is bound (connect binds it); the kernel
    // doubles the figure, as the native socket's setReceiveBuffer accounts for.
    this.socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4', recvBufferSize: UPSTREAM_RECEIVE_BUFFER / 2 });
    this.socket.on('message', (msg) => this.pending.deliver(msg));
    this.socket.on('error', (e) => {
      // An error before connecting means the socket never will (bind failed: no such family).
      if (!this.connected) {
        this.fail(e);
        return;
      }
      const { kind, detail } = describeSocketError(e);
      this.pending.failAll(kind, detail);
    });
    this.connecting = new Promise<void>((resolve) => {
      // Node hands a failed connect (no route, no IPv6 on this node) to this callback, not to
      // 'error'. The socket is then unconnected, where send() wants an address: the channel is
      // done, and the queries waiting on it fail as the kernel said.
      const connect = (): void =>
        this.socket.connect(port, host, (err?: Error | null) => {
          if (err) this.fail(err);
          else {
            this.connected = true;
            this.capacity = this.socket.getRecvBufferSize();
          }
          resolve();
        });
      // forward's source_address: bound first, so connect keeps that address. A bind that fails
      // (an address this node does not have) comes as 'error' before connecting, failing the channel.
      if (localAddress === undefined) connect();
      else {
        this.socket.once('error', () => resolve());
        this.socket.bind({ address: localAddress, port: 0, exclusive: true }, connect);
      }
    });
  }

  exchange(query: Uint8Array, questionEnd: number, timeoutMs: number, cost: number): Promise<Buffer> {
    const { wire, reply } = this.pending.add(query, questionEnd, timeoutMs, this.onSettled, cost);
    if (this.connected) this.send(wire);
    else void this.connecting.then(() => this.send(wire));
    return reply;
  }

  protected resend(wire: Buffer): void {
    // Not connected yet: the first copy is still waiting for the connect and goes out with it.
    if (this.connected) this.send(wire);
  }

  private send(wire: Buffer): void {
    if (this.closed) return;
    this.socket.send(wire, (err) => {
      if (err) {
        const { kind, detail } = describeSocketError(err);
        this.pending.fail(wire, kind, detail);
      }
    });
  }

  /** The socket cannot be used: fails the queries on it with `err` and closes it. */
  private fail(err: Error): void {
    const { kind, detail } = describeSocketError(err);
    this.pending.failAll(kind, detail);
    this.close();
  }

  protected release(): void {
    try {
      this.socket.close();
    } catch {
      // already closed by a failed connect
    }
  }
}

export class UdpTransport {
  readonly stats: ConnStats = { hits: 0, misses: 0 };
  /** This upstream's reply times, kept across its sockets (when late queries are sent again). */
  readonly estimator: RttEstimator | undefined;
  private readonly context: ChannelContext;
  private current?: UdpChannelBase;
  private lastUsed = 0;
  private idleTimer?: NodeJS.Timeout;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly upstream: string,
    /** Socket lifetime; also how long an unused socket stays open. 0: a socket per query. */
    private readonly expireMs: number,
    private readonly counters?: ConnCounters,
    /** Present: a query whose reply is late is sent again (retransmit.ts), each copy counted in `resent`. */
    retransmit?: { resent?: { inc(): void } },
    /** The address sockets are bound to before connecting (forward's source_address); default: the kernel's choice. */
    private readonly localAddress?: string,
  ) {
    this.estimator = retransmit ? new RttEstimator() : undefined;
    this.context = { estimator: this.estimator, resent: retransmit?.resent };
  }

  exchange(query: Uint8Array, questionEnd: number, timeoutMs: number): Promise<Buffer> {
    const now = Date.now();
    this.lastUsed = now;
    const cost = replyCost(query, questionEnd);
    let ch = this.current;
    // A socket whose receive buffer could not hold one more reply beside those it waits for is
    // retired (it closes once they are in) and the query goes out on a fresh one: a reply the
    // kernel drops for want of room costs its query the whole exchange timeout.
    if (!ch || ch.closed || now - ch.openedAt >= this.expireMs || ch.inFlight >= MAX_IN_FLIGHT_PER_SOCKET || !ch.fits(cost)) {
      ch?.retire();
      ch = this.open();
      this.current = ch;
      this.stats.misses++;
      this.counters?.miss.inc();
      this.armIdleTimer();
    } else {
      this.stats.hits++;
      this.counters?.hit.inc();
    }
    const reply = ch.exchange(query, questionEnd, timeoutMs, cost);
    if (this.expireMs === 0) ch.retire();
    return reply;
  }

  /**
   * The native batched socket when the addon is there (KDNS_UDP=dgram or no addon: node:dgram).
   * A socket per query (expire 0) gains nothing from batching, so it stays on dgram.
   */
  private open(): UdpChannelBase {
    const addon = this.expireMs > 0 ? nativeUdp() : null;
    return addon
      ? new NativeUdpChannel(addon, this.host, this.port, this.upstream, this.context, this.localAddress)
      : new UdpChannel(this.host, this.port, this.upstream, this.context, this.localAddress);
  }

  /** Closes the socket when nothing used it for `expireMs`, so idle upstreams hold no descriptors. */
  private armIdleTimer(): void {
    if (this.idleTimer || this.expireMs === 0) return;
    this.idleTimer = setInterval(() => {
      const ch = this.current;
      if (!ch || ch.closed) {
        this.stopIdleTimer();
        return;
      }
      if (Date.now() - this.lastUsed >= this.expireMs) {
        ch.retire();
        this.current = undefined;
        this.stopIdleTimer();
      }
    }, this.expireMs);
    this.idleTimer.unref();
  }

  private stopIdleTimer(): void {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = undefined;
  }

  /**
   * Takes no new queries. The socket closes once the queries in flight have their replies (or
   * time out), so a reload that retires this client does not fail queries already sent.
   */
  close(): void {
    this.stopIdleTimer();
    this.current?.retire();
    this.current = undefined;
  }
}
