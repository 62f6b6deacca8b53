// The dnstap plugin: every query the block takes and the response it sends, as dnstap
// CLIENT_QUERY and CLIENT_RESPONSE messages over Frame Streams to a collector; and every exchange
// the block's forward has with an upstream, as FORWARDER_QUERY and FORWARDER_RESPONSE.

import { hostname } from 'node:os';
import { parseIP } from '../../lib/dns/ip.js';
import { encodeMessage as encodeDns } from '../../lib/dns/codec.js';
import { finalizeReply } from '../../server/finalize.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import type { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { ForwardTap, ForwardedExchange, UpstreamProtocol } from '../pkg/taps.js';
import { FrameStreamWriter, type Endpoint } from './fstrm.js';
import { MessageType, SocketFamily, SocketProtocol, encodeDnstap, type TapMessage } from './proto.js';

export interface DnstapConfig {
  endpoint: Endpoint;
  /** `full`: the DNS messages themselves go in the log, not only who asked when. */
  full: boolean;
  /** Sent in every message; default the host name. */
  identity: string;
  /** Sent in every message; default "kdns-<version>". */
  version: string;
  /** The `extra` field: text with `{/label}` placeholders for request metadata. */
  extra?: string;
  /** Messages kept while the collector is away (CoreDNS's queue × 10,000). */
  queueLimit: number;
}

/** Unix time at `at` (a performance.now() reading; default now), in whole seconds and the nanoseconds past them. */
export function unixTime(at: number = performance.now()): { sec: number; nsec: number } {
  const ms = performance.timeOrigin + at;
  const sec = Math.floor(ms / 1000);
  return { sec, nsec: Math.min(999_999_999, Math.round((ms - sec * 1000) * 1e6)) };
}

const PROTOCOL_OF: Record<UpstreamProtocol, number> = { udp: SocketProtocol.UDP, tcp: SocketProtocol.TCP, tls: SocketProtocol.DOT, https: SocketProtocol.DOH };

/**
 * The socket fields of an exchange with an upstream, as CoreDNS's forward fills them: the
 * upstream is the response address (the family is its), the client whose query it was the query
 * address, and the protocol the one forward used toward the upstream. A DNS-over-HTTPS upstream
 * dialled by name has no address to give.
 */
export function upstreamFields(req: DnsRequest, ex: ForwardedExchange): Pick<TapMessage, 'socketFamily' | 'socketProtocol' | 'queryAddress' | 'queryPort' | 'responseAddress' | 'responsePort'> {
  const client = clientFields(req);
  const upstream = parseIP(ex.host);
  return {
    socketFamily: upstream === undefined ? client.socketFamily : upstream.length === 16 ? SocketFamily.INET6 : SocketFamily.INET,
    socketProtocol: PROTOCOL_OF[ex.protocol],
    queryAddress: client.queryAddress,
    queryPort: client.queryPort,
    ...(upstream === undefined ? {} : { responseAddress: upstream }),
    responsePort: ex.port,
  };
}

/** `{/label}` replaced by the request's metadata (`-` when absent), as CoreDNS's replacer does. */
export function expandExtra(format: string, metadata: ReadonlyMap<string, string>): string {
  return format.replace(/\{\/([^{}]+)\}/g, (_, label: string) => metadata.get(label) ?? '-');
}

/** Who asked and how: the dnstap socket fields of a request. */
export function clientFields(req: DnsRequest): Pick<TapMessage, 'socketFamily' | 'socketProtocol' | 'queryAddress' | 'queryPort'> {
  const raw = parseIP(req.client.remoteAddress);
  // An IPv4-mapped IPv6 address is IPv4, as CoreDNS records it.
  const mapped = raw?.length === 16 && raw.subarray(0, 10).every((b) => b === 0) && raw[10] === 0xff && raw[11] === 0xff;
  const address = mapped ? raw?.subarray(12) : raw;
  return {
    socketFamily: address?.length === 16 ? SocketFamily.INET6 : SocketFamily.INET,
    socketProtocol: req.transport === 'udp' ? SocketProtocol.UDP : SocketProtocol.TCP,
    queryAddress: address,
    queryPort: req.client.remotePort,
  };
}

export class DnstapPlugin implements Plugin, ForwardTap {
  readonly name = 'dnstap';
  private readonly identity: Buffer;
  private readonly version: Buffer;

  constructor(
    readonly config: DnstapConfig,
    private readonly writer: FrameStreamWriter,
  ) {
    this.identity = Buffer.from(config.identity);
    this.version = Buffer.from(config.version);
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const queried = unixTime();
    const client = clientFields(req);
    this.tap(req, { type: MessageType.CLIENT_QUERY, ...client, queryTimeSec: queried.sec, queryTimeNsec: queried.nsec, ...(this.config.full ? { queryMessage: req.raw } : {}) });
    const out = next(req);
    if (out instanceof Promise) return out.then((r) => this.responded(req, r, client, queried));
    return this.responded(req, out, client, queried);
  }

  private responded(req: DnsRequest, reply: Reply | undefined, client: ReturnType<typeof clientFields>, queried: { sec: number; nsec: number }): Reply | undefined {
    if (!reply || reply.dropped) return reply;
    const now = unixTime();
    let responseMessage: Buffer | undefined;
    if (this.config.full) {
      try {
        // The bytes the client gets (the server sends these same bytes: finalizeReply keeps them).
        responseMessage = finalizeReply(req, reply);
      } catch {
        responseMessage = encodeDns(reply.view());
      }
    }
    this.tap(req, {
      type: MessageType.CLIENT_RESPONSE,
      ...client,
      queryTimeSec: queried.sec,
      queryTimeNsec: queried.nsec,
      responseTimeSec: now.sec,
      responseTimeNsec: now.nsec,
      ...(responseMessage ? { responseMessage } : {}),
    });
    return reply;
  }

  /** One exchange of forward with an upstream: FORWARDER_QUERY, and FORWARDER_RESPONSE when a reply came. */
  forwarded(req: DnsRequest, ex: ForwardedExchange): void {
    const fields = upstreamFields(req, ex);
    const sent = unixTime(ex.sentAt);
    const full = this.config.full;
    this.tap(req, { type: MessageType.FORWARDER_QUERY, ...fields, queryTimeSec: sent.sec, queryTimeNsec: sent.nsec, ...(full ? { queryMessage: ex.query } : {}) });
    if (ex.reply === undefined) return;
    const now = unixTime();
    this.tap(req, {
      type: MessageType.FORWARDER_RESPONSE,
      ...fields,
      queryTimeSec: sent.sec,
      queryTimeNsec: sent.nsec,
      responseTimeSec: now.sec,
      responseTimeNsec: now.nsec,
      ...(full ? { responseMessage: ex.reply } : {}),
    });
  }

  private tap(req: DnsRequest, message: TapMessage): void {
    const extra = this.config.extra === undefined ? undefined : Buffer.from(expandExtra(this.config.extra, req.metadata));
    this.writer.write(encodeDnstap({ identity: this.identity, version: this.version, extra, message }));
  }

  start(): void {
    this.writer.connect();
  }

  stop(): Promise<void> {
    return this.writer.close();
  }
}

export function defaultIdentity(): string {
  return hostname();
}
