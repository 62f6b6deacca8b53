// TCP and DNS-over-TLS to one upstream: length-prefixed messages (RFC 1035 4.2.2), several
// queries in flight on one connection at once (pipelining, RFC 7766 6.2.1.1) with replies
// matched by ID in whatever order they come, and connections kept open for reuse until they
// have been idle for `expireMs`. A connection may also be given a lifetime and a query cap
// (forward's `max_age` and `maxtcpqueries`): past either it takes no new queries and closes once
// those in flight are answered, so that an upstream behind a connection-level load balancer
// (a Kubernetes Service) sees this client's queries spread over its endpoints as they change.
import { createRequire } from 'node:module';
import net from 'node:net';
import { describeSocketError, type ExchangeFailure } from './errors.js';
import { PendingQueries } from './pending.js';
import type { ConnCounters, ConnStats } from './udp.js';

type Tls = typeof import('node:tls');
let tlsModule: Tls | undefined;

/**
 * node:tls, loaded with the first DNS-over-TLS connection: loading it costs 0.5-0.9 MiB of RSS,
 * and most forwarders never speak TLS.
 */
function tls(): Tls {
  tlsModule ??= createRequire(import.meta.url)('node:tls') as Tls;
  return tlsModule;
}

/** Queries in flight on one connection before another is opened beside it. */
const MAX_PIPELINE = 64;

/**
 * Each connection's lifetime and query cap are drawn between (1 - JITTER) and 1 times the
 * configured value. Downward only, so both stay true upper bounds (a client cap equal to a
 * server's own per-connection cap never runs into the server's close); a fifth of the value is
 * spread enough that connections opened together (a burst, a restart of every node) do not all
 * roll over in the same moment and reconnect to the load balancer at once.
 */
export const RETIRE_JITTER = 0.2;

/** When a pooled connection stops taking new queries. 0 in either field: no such limit. */
export interface ConnLifetime {
  /** Retire a connection this long after it was opened (forward's `max_age`). */
  maxAgeMs: number;
  /** Retire a connection once it has carried this many queries (forward's `maxtcpqueries`). */
  maxQueries: number;
  /** Uniform in [0, 1): the jitter's draw. Math.random unless a test fixes it. */
  random?: () => number;
  /** The clock, in ms. Date.now unless a test drives it. */
  now?: () => number;
}

/** How a StreamTransport dials and pools, beyond its upstream's address. */
export interface StreamOptions {
  /** Bind connections to this address (forward's source_address). */
  localAddress?: string;
  /** Keep at most this many idle connections open (forward's max_idle_conns); 0: no limit. */
  maxIdleConns?: number;
}

/** A connection's own lifetime in ms, given the configured one and a draw `r` in [0, 1). */
export function jitteredAgeMs(maxAgeMs: number, r: number): number {
  return maxAgeMs * (1 - RETIRE_JITTER * r);
}

/** A connection's own query cap, given the configured one and a draw `r` in [0, 1); at least 1. */
export function jitteredQueryCap(maxQueries: number, r: number): number {
  return Math.max(1, Math.floor(maxQueries * (1 - RETIRE_JITTER * r)));
}

export interface TlsSettings {
  /** Name to send in SNI and to verify the certificate against (default: the address). */
  servername?: string;
  /** PEM bundle of CAs to trust instead of the system's. */
  ca?: Buffer;
  /** Client certificate and key (PEM), for upstreams that require client authentication. */
  cert?: Buffer;
  key?: Buffer;
}

class StreamConn {
  private readonly socket: net.Socket;
  private readonly pending: PendingQueries;
  private connected = false;
  private leftover?: Buffer;
  /** Queries written so far: a reply-less close after the first one means the server hung up on reuse. */
  private written = 0;
  private readonly reusedQueries = new WeakSet<Buffer>();
  private retiring = false;
  closed = false;
  lastActive: number;
  /** When this connection stops taking new queries (Infinity: never by age). */
  retireAt = Infinity;
  /** Queries this connection may carry (Infinity: no cap). */
  queryCap = Infinity;

  constructor(
    host: string,
    port: number,
    upstream: string,
    proto: string,
    tlsSettings: TlsSettings | undefined,
    session: Buffer | undefined,
    onSession: (s: Buffer) => void,
    private readonly onClosed: (c: StreamConn) => void,
    private readonly now: () => number,
    /** Called when the last query in flight is settled and the connection stays open. */
    private readonly onIdle: (c: StreamConn) => void,
    localAddress: string | undefined,
  ) {
    this.lastActive = now();
    this.pending = new PendingQueries(proto, upstream);
    if (tlsSettings) {
      const sock = tls().connect({
        host,
        port,
        // With a source address the TCP connection is made here, bound, and TLS runs over it.
        socket: localAddress === undefined ? undefined : net.connect({ host, port, localAddress }),
        // SNI must not carry an IP address (RFC 6066 3); without a name, Node checks the IP SAN.
        servername: tlsSettings.servername,
        ca: tlsSettings.ca,
        cert: tlsSettings.cert,
        key: tlsSettings.key,
        session,
        ALPNProtocols: ['dot'],
      });
      sock.on('secureConnect', () => this.onConnect());
      sock.on('session', onSession);
      this.socket = sock;
    } else {
      this.socket = net.connect({ host, port, localAddress }, () => this.onConnect());
    }
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', (e) => {
      const { kind, detail } = describeSocketError(e);
      this.shutdown(kind, detail);
    });
    this.socket.on('close', () => this.shutdown('closed', 'connection closed by upstream'));
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Queries sent on this connection so far. */
  get queriesSent(): number {
    return this.written;
  }

  get isRetiring(): boolean {
    return this.retiring;
  }

  /** Open, not retired, and not past its lifetime or cap: may take a new query. */
  takesQueries(now: number): boolean {
    return !this.closed && !this.retiring && now < this.retireAt && this.written < this.queryCap;
  }

  private onConnect(): void {
    this.connected = true;
  }

  /** Closes once the queries in flight are settled. */
  retire(): void {
    this.retiring = true;
    if (this.pending.size === 0) this.close();
  }

  exchange(query: Uint8Array, questionEnd: number, timeoutMs: number): Promise<Buffer> {
    this.lastActive = this.now();
    const { wire, reply } = this.pending.add(query, questionEnd, timeoutMs, () => {
      this.lastActive = this.now();
      if (this.pending.size > 0) return;
      if (this.retiring) this.close();
      else if (!this.closed) this.onIdle(this);
    });
    if (this.written > 0) this.reusedQueries.add(wire);
    this.written++;
    const framed = Buffer.allocUnsafe(wire.length + 2);
    framed.writeUInt16BE(wire.length, 0);
    wire.copy(framed, 2);
    // net.Socket buffers writes made before the connection is up, so no queueing of our own.
    this.socket.write(framed);
    // The cap's last query: stop taking more now, close when its replies are in.
    if (this.written >= this.queryCap) this.retiring = true;
    return reply;
  }

  private onData(chunk: Buffer): void {
    let buf = this.leftover ? Buffer.concat([this.leftover, chunk]) : chunk;
    while (buf.length >= 2) {
      const len = buf.readUInt16BE(0);
      if (buf.length < len + 2) break;
      // Copy out: the reply outlives this chunk and is patched in place by the caller.
      this.pending.deliver(Buffer.from(buf.subarray(2, len + 2)));
      buf = buf.subarray(len + 2);
    }
    this.leftover = buf.length > 0 ? buf : undefined;
  }

  private shutdown(kind: ExchangeFailure, detail: string): void {
    if (this.closed) return;
    this.closed = true;
    // A close with no error on a connection we reused is the server expiring it: those
    // queries may go again on a fresh connection. Anything else is a real failure.
    const kindOf = (sent: Buffer): ExchangeFailure => (kind === 'closed' && !this.reusedQueries.has(sent) ? 'network' : kind);
    this.pending.failAll(kind === 'closed' ? kindOf : kind, this.connected ? detail : `connect: ${detail}`);
    this.socket.destroy();
    this.onClosed(this);
  }

  close(): void {
    if (this.closed) return;
    this.pending.failAll('shutdown', 'client closed');
    this.shutdown('shutdown', 'client closed');
  }
}

export class StreamTransport {
  readonly stats: ConnStats = { hits: 0, misses: 0 };
  private conns: StreamConn[] = [];
  private session?: Buffer;
  private idleTimer?: NodeJS.Timeout;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly upstream: string,
    private readonly tlsSettings: TlsSettings | undefined,
    /** How long an unused connection stays open. 0: one connection per query. */
    private readonly expireMs: number,
    private readonly counters?: ConnCounters,
    private readonly lifetime: ConnLifetime = { maxAgeMs: 0, maxQueries: 0 },
    private readonly dial: StreamOptions = {},
  ) {
    this.now = lifetime.now ?? Date.now;
    this.random = lifetime.random ?? Math.random;
  }

  private readonly now: () => number;
  private readonly random: () => number;

  get proto(): string {
    return this.tlsSettings ? 'tcp-tls' : 'tcp';
  }

  get openConnections(): number {
    return this.conns.length;
  }

  exchange(query: Uint8Array, questionEnd: number, timeoutMs: number): Promise<Buffer> {
    const now = this.now();
    this.retireExpired(now);
    let conn = this.expireMs > 0 ? this.conns.find((c) => c.takesQueries(now) && c.inFlight < MAX_PIPELINE) : undefined;
    if (conn) {
      this.stats.hits++;
      this.counters?.hit.inc();
    } else {
      conn = this.open();
      this.stats.misses++;
      this.counters?.miss.inc();
    }
    const reply = conn.exchange(query, questionEnd, timeoutMs);
    if (this.expireMs === 0) {
      const c = conn;
      void reply.then(
        () => c.close(),
        () => c.close(),
      );
    }
    return reply;
  }

  private open(): StreamConn {
    const conn = new StreamConn(
      this.host,
      this.port,
      this.upstream,
      this.proto,
      this.tlsSettings,
      this.session,
      (s) => {
        this.session = s;
      },
      (c) => {
        this.conns = this.conns.filter((x) => x !== c);
      },
      this.now,
      this.onIdle,
      this.dial.localAddress,
    );
    const { maxAgeMs, maxQueries } = this.lifetime;
    if (maxAgeMs > 0) conn.retireAt = conn.lastActive + jitteredAgeMs(maxAgeMs, this.random());
    if (maxQueries > 0) conn.queryCap = jitteredQueryCap(maxQueries, this.random());
    this.conns.push(conn);
    this.armIdleTimer();
    return conn;
  }

  /**
   * A connection has nothing in flight: with max_idle_conns, it closes when as many idle ones are
   * open already (CoreDNS closes a connection given back to a full pool the same way).
   */
  private readonly onIdle = (conn: StreamConn): void => {
    const max = this.dial.maxIdleConns ?? 0;
    if (max <= 0) return;
    let idle = 0;
    for (const c of this.conns) if (c !== conn && !c.closed && c.inFlight === 0) idle++;
    if (idle >= max) conn.close();
  };

  private armIdleTimer(): void {
    if (this.idleTimer || this.expireMs === 0) return;
    // Checking at half the expiry keeps an idle connection's life within [expire, 1.5 × expire).
    this.idleTimer = setInterval(() => this.closeIdle(), Math.max(50, this.expireMs / 2));
    this.idleTimer.unref();
  }

  /** Connections past their lifetime or cap take no new queries and close once drained. */
  private retireExpired(now: number): void {
    for (const c of [...this.conns]) {
      if (!c.closed && !c.isRetiring && (now >= c.retireAt || c.queriesSent >= c.queryCap)) c.retire();
    }
  }

  private closeIdle(): void {
    const now = this.now();
    // An old connection that sits idle closes here too, not only when the next query comes.
    this.retireExpired(now);
    for (const c of [...this.conns]) {
      if (c.inFlight === 0 && now - c.lastActive >= this.expireMs) c.close();
    }
    if (this.conns.length === 0 && this.idleTimer) {
      clearInterval(this.idleTimer);
      this.idleTimer = undefined;
    }
  }

  /** Takes no new queries; each connection closes once its queries in flight are settled. */
  close(): void {
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = undefined;
    for (const c of [...this.conns]) c.retire();
    this.conns = [];
  }
}
