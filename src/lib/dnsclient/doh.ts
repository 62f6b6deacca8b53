// DNS over HTTPS to one upstream (RFC 8484): each query a request on one HTTP/2 connection that
// all queries share as streams, POST with the message as body or GET with it in `?dns=`
// (unpadded base64url), always to /dns-query as CoreDNS does. The message goes with ID 0 (RFC
// 8484 4.1: HTTP already pairs requests with responses, and a fixed ID lets HTTP caches share
// answers); the caller's ID is put back on the reply. The connection closes after `expireMs`
// unused and is replaced after its `max_age`; one that fails or is closed by the upstream is
// simply opened again by the next query.
import { createRequire } from 'node:module';
import net from 'node:net';
import type { ClientHttp2Session, ClientHttp2Stream } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { describeSocketError, ExchangeError } from './errors.js';
import type { ConnCounters, ConnStats } from './udp.js';
import type { TlsSettings } from './stream.js';
import { isResponse, sameQuestion, writeU16 } from '../dns/wire.js';

type Http2 = typeof import('node:http2');
type Tls = typeof import('node:tls');
let modules: { http2: Http2; tls: Tls } | undefined;

/** node:http2 and node:tls, loaded with the first DoH upstream: most forwarders never speak HTTP. */
function load(): { http2: Http2; tls: Tls } {
  if (!modules) {
    const require = createRequire(import.meta.url);
    modules = { http2: require('node:http2') as Http2, tls: require('node:tls') as Tls };
  }
  return modules;
}

export const DOH_PATH = '/dns-query';
export const DOH_MEDIA_TYPE = 'application/dns-message';
/** A DNS message never exceeds this (the TCP length prefix's limit); a longer body is not one. */
const MAX_REPLY_BYTES = 65535;

export type DohMethod = 'GET' | 'POST';

export interface DohSettings {
  method: DohMethod;
  tls: TlsSettings;
  /** Bind the connection to this address (forward's source_address). */
  localAddress?: string;
  /** Replace the connection this long after it was opened (forward's `max_age`); 0: never. */
  maxAgeMs?: number;
}

/** The request line and headers of one query (its wire form with ID 0 already). */
export function dohRequestHeaders(method: DohMethod, authority: string, wire: Buffer): Record<string, string> {
  const path = method === 'GET' ? `${DOH_PATH}?dns=${wire.toString('base64url')}` : DOH_PATH;
  const headers: Record<string, string> = { ':method': method, ':scheme': 'https', ':authority': authority, ':path': path, accept: DOH_MEDIA_TYPE };
  if (method === 'POST') headers['content-type'] = DOH_MEDIA_TYPE;
  return headers;
}

/**
 * The :authority of the requests: the TLS server name when there is one (what a server hosting
 * several names tells them apart by), else the address; the port only when it is not 443.
 */
export function dohAuthority(servername: string | undefined, upstream: string, port: number): string {
  if (servername === undefined) return port === 443 ? upstream.slice(0, upstream.lastIndexOf(':')) : upstream;
  return port === 443 ? servername : `${servername}:${port}`;
}

export class DohTransport {
  readonly stats: ConnStats = { hits: 0, misses: 0 };
  private session: ClientHttp2Session | undefined;
  private openedAt = 0;
  private lastUsed = 0;
  private inFlight = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The :authority header of every request (dohAuthority). */
  private readonly authority: string;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly upstream: string,
    private readonly settings: DohSettings,
    /** How long an unused connection stays open; 0: a connection per query. */
    private readonly expireMs: number,
    private readonly counters?: ConnCounters,
  ) {
    this.authority = dohAuthority(settings.tls.servername, upstream, port);
  }

  exchange(query: Uint8Array, questionEnd: number, timeoutMs: number): Promise<Buffer> {
    const wire = Buffer.from(query);
    const callerId = wire.readUInt16BE(0);
    writeU16(wire, 0, 0);
    const session = this.sessionForQuery();
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(dohRequestHeaders(this.settings.method, this.authority, wire), { endStream: this.settings.method === 'GET' });
    } catch (e) {
      const { kind, detail } = describeSocketError(e);
      return Promise.reject(new ExchangeError(kind, 'https', this.upstream, detail));
    }
    this.inFlight++;
    if (this.settings.method === 'POST') stream.end(wire);
    return new Promise<Buffer>((resolve, reject) => {
      let settled = false;
      const done = (): boolean => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        this.settle();
        return true;
      };
      const fail = (kind: ExchangeError['kind'], detail: string): void => {
        if (!done()) return;
        stream.close();
        reject(new ExchangeError(kind, 'https', this.upstream, detail));
      };
      const timer = setTimeout(() => fail('timeout', `no reply within ${timeoutMs} ms`), timeoutMs);
      let status = 0;
      let type = '';
      stream.on('response', (headers) => {
        status = Number(headers[':status']);
        type = String(headers['content-type'] ?? '');
      });
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_REPLY_BYTES) fail('malformed', `response body longer than ${MAX_REPLY_BYTES} bytes`);
        else chunks.push(chunk);
      });
      stream.on('error', (e) => {
        const { kind, detail } = describeSocketError(e);
        fail(kind, detail);
      });
      stream.on('end', () => {
        // Unlike CoreDNS, which reads any body as a DNS message, an HTTP error is one: its body is
        // an error page, and the upstream is answering but not with DNS.
        if (status !== 200) return fail('network', `HTTP status ${status}`);
        if (!type.toLowerCase().startsWith(DOH_MEDIA_TYPE)) return fail('malformed', `content-type "${type}" is not ${DOH_MEDIA_TYPE}`);
        const reply = Buffer.concat(chunks);
        if (reply.length < 12 || !isResponse(reply) || !sameQuestion(wire, questionEnd, reply)) return fail('malformed', 'reply does not answer the question asked');
        if (!done()) return;
        writeU16(reply, 0, callerId);
        resolve(reply);
      });
      stream.on('close', () => fail('closed', 'stream closed before the reply'));
    });
  }

  /** The open connection when it may take a query (open, young enough), else a new one. */
  private sessionForQuery(): ClientHttp2Session {
    const now = Date.now();
    this.lastUsed = now;
    const maxAge = this.settings.maxAgeMs ?? 0;
    let s = this.session;
    if (s && (s.closed || s.destroyed || (maxAge > 0 && now - this.openedAt >= maxAge) || this.expireMs === 0)) {
      // Past its lifetime: no new streams; it closes once those in flight are done.
      s.close();
      s = undefined;
      this.session = undefined;
    }
    if (s) {
      this.stats.hits++;
      this.counters?.hit.inc();
      return s;
    }
    this.stats.misses++;
    this.counters?.miss.inc();
    s = this.open();
    this.session = s;
    this.openedAt = now;
    this.armIdleTimer();
    return s;
  }

  private open(): ClientHttp2Session {
    const { http2, tls } = load();
    const t = this.settings.tls;
    const authorityUrl = `https://${this.upstream}`;
    const session = http2.connect(authorityUrl, {
      createConnection: (): TLSSocket =>
        tls.connect({
          host: this.host,
          port: this.port,
          // With a source address the TCP connection is made here, bound, and TLS runs over it.
          socket: this.settings.localAddress === undefined ? undefined : net.connect({ host: this.host, port: this.port, localAddress: this.settings.localAddress }),
          // SNI must not carry an IP address (RFC 6066 3); without a name, Node checks the IP SAN.
          servername: t.servername,
          ca: t.ca,
          cert: t.cert,
          key: t.key,
          ALPNProtocols: ['h2'],
        }),
    });
    // Errors reach the streams in flight; the session is dropped so the next query opens a new one.
    session.on('error', () => {
      if (this.session === session) this.session = undefined;
    });
    session.on('close', () => {
      if (this.session === session) this.session = undefined;
    });
    session.on('goaway', () => {
      if (this.session === session) this.session = undefined;
    });
    // An idle session must not hold the process open.
    session.unref();
    return session;
  }

  private settle(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.lastUsed = Date.now();
    if (this.inFlight === 0 && (this.closed || this.expireMs === 0)) {
      this.session?.close();
      this.session = undefined;
    }
  }

  private armIdleTimer(): void {
    if (this.idleTimer || this.expireMs === 0) return;
    this.idleTimer = setInterval(() => {
      if (!this.session) {
        clearInterval(this.idleTimer);
        this.idleTimer = undefined;
        return;
      }
      if (this.inFlight === 0 && Date.now() - this.lastUsed >= this.expireMs) {
        this.session.close();
        this.session = undefined;
      }
    }, Math.max(50, this.expireMs / 2));
    this.idleTimer.unref();
  }

  /** Takes no new queries; the connection closes once the queries in flight are answered. */
  close(): void {
    this.closed = true;
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = undefined;
    // close() on an HTTP/2 session lets open streams finish before it goes.
    this.session?.close();
    this.session = undefined;
  }
}
