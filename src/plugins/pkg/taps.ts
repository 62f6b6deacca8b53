// The dnstap plugins of one server block, for the forward plugins of the same block, which tell
// them of every exchange with an upstream (dnstap's FORWARDER_QUERY and FORWARDER_RESPONSE, as
// CoreDNS's forward sends them to the block's dnstap). Kept in the config instance's map like
// ./forwarders.ts, so a reload starts from a clean slate; forward sees only this narrow view.
import type { BlockInfo } from '../../server/plugin.js';
import type { DnsRequest } from '../../server/request.js';

/** How forward reached an upstream for one exchange. */
export type UpstreamProtocol = 'udp' | 'tcp' | 'tls' | 'https';

/** One exchange of forward with an upstream, as a tap records it. */
export interface ForwardedExchange {
  /** The upstream's address as forward dials it (an IP, or a DNS-over-HTTPS host name) and its port. */
  readonly host: string;
  readonly port: number;
  readonly protocol: UpstreamProtocol;
  /** The query's bytes as sent. */
  readonly query: Uint8Array;
  /** The reply's bytes; undefined when none came (a timeout, a refused connection). */
  readonly reply: Uint8Array | undefined;
  /** When the query was sent, as performance.now(). */
  readonly sentAt: number;
}

export interface ForwardTap {
  forwarded(req: DnsRequest, exchange: ForwardedExchange): void;
}

function key(block: BlockInfo): string {
  return `dnstap@${block.file}:${block.line}`;
}

/** The block's taps, created empty on first ask (dnstap adds itself; forward keeps the list). */
export function blockTaps(instance: Map<string, unknown>, block: BlockInfo): ForwardTap[] {
  let taps = instance.get(key(block)) as ForwardTap[] | undefined;
  if (!taps) {
    taps = [];
    instance.set(key(block), taps);
  }
  return taps;
}
