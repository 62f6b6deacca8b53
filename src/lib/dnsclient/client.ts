// A DNS client for one upstream server: UDP, TCP, DNS-over-TLS and DNS-over-HTTPS with reused sockets. Callers
// hand it a query in wire form and get the reply in wire form with their own ID back on it; the
// ID on the wire is fresh and random. The forward plugin uses it; so can anything else in kdns
// that needs to ask an upstream (nodecache, node-resolver).
import net from 'node:net';
import { ExchangeError } from './errors.js';
import { DohTransport, type DohMethod } from './doh.js';
import { StreamTransport, type ConnLifetime, type TlsSettings } from './stream.js';
import { UdpTransport, type ConnCounters, type ConnStats } from './udp.js';
import { questionEnd } from '../dns/wire.js';

export type { ConnLifetime, TlsSettings } from './stream.js';
export type { DohMethod } from './doh.js';
export type { ConnCounters, ConnStats } from './udp.js';

/** How the query travels. For a DNS-over-TLS upstream both mean TLS. */
export type Proto = 'udp' | 'tcp';

export interface UpstreamTarget {
  /** IP address literal (IPv4 or IPv6, no brackets). */
  host: string;
  port: number;
  /** Present for DNS over TLS, and for DNS over HTTPS (its TLS). */
  tls?: TlsSettings;
  /** Present for DNS over HTTPS: every exchange is an HTTPS request, whatever `proto` says. */
  doh?: { method: DohMethod };
  /** Bind every socket to this address (forward's source_address); default: the kernel's choice. */
  localAddress?: string;
}

export interface DnsClientOptions {
  /** Reused sockets and connections are closed after this long unused (CoreDNS `expire`, default 10 s). */
  expireMs?: number;
  /** Also count connection reuse here, per protocol ("udp", "tcp", "tcp-tls"). */
  counters?: (proto: string) => ConnCounters;
  /**
   * Over UDP, send a query again when its reply is later than this upstream's replies usually
   * are (retransmit.ts). Off by default: one datagram per exchange, as a test or a probe wants.
   */
  retransmit?: boolean;
  /** Counts UDP queries sent again because their reply was late. */
  resent?: { inc(): void };
  /**
   * TCP/TLS connections retire after this lifetime or this many queries, each with jitter
   * (forward's `max_age`, `maxtcpqueries`); default: neither, only `expireMs` idle closes them.
   */
  connLifetime?: ConnLifetime;
  /** At most this many idle TCP/TLS connections stay open (forward's max_idle_conns); 0: no limit. */
  maxIdleConns?: number;
}

export const DEFAULT_EXPIRE_MS = 10_000;

/** "127.0.0.1:53", "[2001:db8::1]:53": how CoreDNS names an upstream in logs and metric labels. */
export function hostPort(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

export class DnsClient {
  /** "ip:port" of the upstream. */
  readonly address: string;
  private readonly udp?: UdpTransport;
  private readonly stream?: StreamTransport;
  private readonly doh?: DohTransport;
  private closed = false;

  constructor(
    readonly target: UpstreamTarget,
    opts: DnsClientOptions = {},
  ) {
    const expireMs = opts.expireMs ?? DEFAULT_EXPIRE_MS;
    this.address = hostPort(target.host, target.port);
    const local = target.localAddress;
    if (target.doh) {
      const settings = { method: target.doh.method, tls: target.tls ?? {}, localAddress: local, maxAgeMs: opts.connLifetime?.maxAgeMs };
      this.doh = new DohTransport(target.host, target.port, this.address, settings, expireMs, opts.counters?.('https'));
      return;
    }
    if (!target.tls) this.udp = new UdpTransport(target.host, target.port, this.address, expireMs, opts.counters?.('udp'), opts.retransmit ? { resent: opts.resent } : undefined, local);
    this.stream = new StreamTransport(target.host, target.port, this.address, target.tls, expireMs, opts.counters?.(target.tls ? 'tcp-tls' : 'tcp'), opts.connLifetime, {
      localAddress: local,
      maxIdleConns: opts.maxIdleConns,
    });
  }

  /** DNS over TLS or DNS over HTTPS: there is no UDP, so never a truncated reply to ask again. */
  get isTls(): boolean {
    return this.target.tls !== undefined || this.target.doh !== undefined;
  }

  /** Connection reuse per protocol ("udp", "tcp", "tcp-tls"), for the conn_cache metrics. */
  connStats(): Array<{ proto: string; stats: ConnStats }> {
    if (this.doh) return [{ proto: 'https', stats: this.doh.stats }];
    const out = this.stream ? [{ proto: this.stream.proto, stats: this.stream.stats }] : [];
    if (this.udp) out.unshift({ proto: 'udp', stats: this.udp.stats });
    return out;
  }

  /** The protocol an exchange asked as `proto` actually uses. */
  protoFor(proto: Proto): string {
    if (this.doh) return 'https';
    return this.isTls ? 'tcp-tls' : proto;
  }

  /** The current UDP retransmission timeout in ms (undefined without `retransmit` or for DNS over TLS). */
  get udpRetransmitTimeoutMs(): number | undefined {
    return this.udp?.estimator?.rtoMs;
  }

  /**
   * Sends `query` and resolves to the reply, its ID set back to the query's. Rejects with
   * ExchangeError. Over UDP with `retransmit`, a query whose reply is later than the upstream's
   * replies usually are is sent again (the same bytes, same ID) while `timeoutMs` lasts. A query
   * whose reused TCP/TLS connection the upstream had closed is sent once more on a fresh
   * connection, as that says nothing about the upstream's health.
   */
  exchange(query: Uint8Array, proto: Proto, timeoutMs: number): Promise<Buffer> {
    if (this.closed) return Promise.reject(new ExchangeError('shutdown', this.protoFor(proto), this.address, 'client closed'));
    const qEnd = questionEnd(query);
    if (qEnd < 0) {
      return Promise.reject(new ExchangeError('network', this.protoFor(proto), this.address, 'malformed query'));
    }
    if (proto === 'udp' && this.udp) return this.udp.exchange(query, qEnd, timeoutMs);
    const transport = (this.doh ?? this.stream) as DohTransport | StreamTransport;
    const started = Date.now();
    return transport.exchange(query, qEnd, timeoutMs).catch((e: unknown) => {
      const left = timeoutMs - (Date.now() - started);
      if (e instanceof ExchangeError && e.kind === 'closed' && left > 0 && !this.closed) return transport.exchange(query, qEnd, left);
      throw e;
    });
  }

  /**
   * Takes no new queries; sockets close as soon as the queries already in flight are answered or
   * time out (so retiring a client on reload fails nobody).
   */
  close(): void {
    this.closed = true;
    this.udp?.close();
    this.stream?.close();
    this.doh?.close();
  }
}
