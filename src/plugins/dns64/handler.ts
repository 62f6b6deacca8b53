// dns64 (RFC 6147): an IPv6-only client asking AAAA for a name that has only A records gets
// AAAA records made from them, inside a NAT64 prefix, so it can reach IPv4-only services
// through the NAT64 gateway.
//
// The A question goes to the rest of the chain (cache, kubernetes, forward, ...), as any other
// plugin's follow-up question does in kdns; plugins ahead of dns64 (log, prometheus) see the
// client's AAAA question only.

import { formatIPv6, parseIPv4 } from '../../lib/dns/ip.js';
import { DnsClass, RCode, RRType, type Message, type ResourceRecord } from '../../lib/dns/types.js';
import type { Counter } from '../../server/promclient.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { ClientInfo, DnsRequest } from '../../server/request.js';
import { isPromise } from '../../server/promise.js';

export interface Dns64Config {
  /** The NAT64 prefix: its first `length / 8` bytes are used. */
  prefix: { text: string; bytes: Uint8Array; length: number };
  /** Synthesize even when the name has AAAA records (RFC 6147 5.1.1 says not to). */
  translateAll: boolean;
  /** Synthesize for IPv4 clients too (dual-stack clients then get NAT64 addresses). */
  allowIPv4: boolean;
}

/** The TTL of synthesized records when the AAAA answer carries no SOA (RFC 6147 5.1.7). */
const TTL_WITHOUT_SOA = 600;

/**
 * RFC 6052 section 2.2: the IPv4 address's four bytes follow the prefix, skipping byte 8 (bits
 * 64–71, which must be zero), and the rest is zero. `prefixLength` is 32, 40, 48, 56, 64 or 96.
 */
export function embedIPv4(prefix: Uint8Array, prefixLength: number, v4: Uint8Array): Uint8Array {
  const out = new Uint8Array(16);
  const head = prefixLength / 8;
  out.set(prefix.subarray(0, head));
  let at = head;
  for (const byte of v4) {
    if (at === 8) at++;
    out[at++] = byte;
  }
  return out;
}

/** True when the client came over IPv6 (the server gives IPv4 clients of dual-stack sockets as a.b.c.d). */
export function isIPv6Client(client: Pick<ClientInfo, 'remoteAddress' | 'remoteFamily'>): boolean {
  if (client.remoteFamily !== undefined) return client.remoteFamily === 6;
  return client.remoteAddress.includes(':');
}

/** RFC 6147 5.1.1 and 5.1.2: the AAAA answer calls for synthesis (NXDOMAIN never; other errors count as no data). */
export function wantsSynthesis(aaaa: Message, translateAll: boolean): boolean {
  if (aaaa.rcode === RCode.NXDOMAIN) return false;
  if (translateAll) return true;
  if (aaaa.rcode !== RCode.NOERROR) return true;
  return !aaaa.answers.some((rr) => rr.type === RRType.AAAA);
}

/** The SOA TTL of a negative answer, or 600 when it has none (RFC 6147 5.1.7). */
function soaTtl(m: Message): number {
  const soa = m.authority.find((rr) => rr.type === RRType.SOA);
  return soa ? soa.ttl : TTL_WITHOUT_SOA;
}

/**
 * The client's answer made from the A answer: each A record becomes an AAAA record in the
 * prefix, with the smaller of its TTL and the AAAA answer's SOA TTL; other records (the CNAME
 * chain) pass unchanged, as do the authority and additional sections (RFC 6147 5.3).
 * Undefined when the A answer has no address to translate: the AAAA answer then stands.
 */
export function synthesize(req: DnsRequest, aaaa: Message, a: Message, config: Dns64Config): Message | undefined {
  if (a.rcode !== RCode.NOERROR || !a.answers.some((rr) => rr.type === RRType.A)) return undefined;
  const ceiling = soaTtl(aaaa);
  const answers: ResourceRecord[] = a.answers.map((rr) => {
    if (rr.type !== RRType.A) return rr;
    const v4 = parseIPv4((rr.data as { address: string }).address) as Uint8Array;
    return { name: rr.name, type: RRType.AAAA, class: rr.class, ttl: Math.min(rr.ttl, ceiling), data: { address: formatIPv6(embedIPv4(config.prefix.bytes, config.prefix.length, v4)) } };
  });
  // The synthesized records are not the zone's data: not authoritative, and never DNSSEC-valid.
  return { ...responseFor(req), ra: a.ra, tc: a.tc, answers, authority: a.authority, additional: a.additional };
}

export class Dns64Plugin implements Plugin {
  readonly name = 'dns64';

  constructor(
    readonly config: Dns64Config,
    private readonly translated: Counter<'server'>,
    /** The `server` label for a query that arrived on a local address (CoreDNS labels by the listener that took it). */
    private readonly serverFor: (localAddress: string) => string,
  ) {}

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    if (req.qtype !== RRType.AAAA || req.qclass !== DnsClass.IN) return next(req);
    if (!this.config.allowIPv4 && !isIPv6Client(req.client)) return next(req);
    const result = next(req);
    return isPromise(result) ? result.then((reply) => this.afterAaaa(req, reply, next)) : this.afterAaaa(req, result, next);
  }

  private async afterAaaa(req: DnsRequest, reply: Reply | undefined, next: Next): Promise<Reply | undefined> {
    if (!reply || reply.dropped || !wantsSynthesis(reply.view(), this.config.translateAll)) return reply;
    const aReply = await next(req.derive(req.qname, RRType.A));
    if (!aReply) return reply;
    const made = synthesize(req, reply.view(), aReply.view(), this.config);
    if (!made) return reply;
    this.translated.inc({ server: this.serverFor(req.client.localAddress) });
    return Reply.of(made);
  }
}
