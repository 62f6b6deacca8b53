// local: answers for localhost and the loopback/"this network"/broadcast reverse zones itself,
// so these queries never reach an upstream (RFC 6761 section 6.3; CoreDNS's local plugin).

import { DnsClass, RCode, RRType, type Message, type ResourceRecord } from '../../lib/dns/types.js';
import { lowerName } from '../../lib/dns/name.js';
import type { Counter } from '../../server/promclient.js';
import type { Next, Plugin } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';

/** One week, as CoreDNS: these answers never change. */
export const LOCAL_TTL = 604800;
export const LOCAL_ZONES = ['localhost.', '0.in-addr.arpa.', '127.in-addr.arpa.', '255.in-addr.arpa.'] as const;

function soa(owner: string): ResourceRecord {
  return { name: owner, type: RRType.SOA, class: DnsClass.IN, ttl: LOCAL_TTL, data: { mname: 'localhost.', rname: 'root.localhost.', serial: 1, refresh: 0, retry: 0, expire: 0, minimum: LOCAL_TTL } };
}

function loopback(owner: string, qtype: number): ResourceRecord | undefined {
  if (qtype === RRType.A) return { name: owner, type: RRType.A, class: DnsClass.IN, ttl: LOCAL_TTL, data: { address: '127.0.0.1' } };
  if (qtype === RRType.AAAA) return { name: owner, type: RRType.AAAA, class: DnsClass.IN, ttl: LOCAL_TTL, data: { address: '::1' } };
  return undefined;
}

/** The owner name in `qname`'s own spelling of the zone suffix. */
function zoneSpelling(qname: string, zone: string): string {
  return qname.slice(qname.length - zone.length);
}

/**
 * Fills `m` for a query local answers and says why ("localhost" for a name under or starting
 * with localhost, "zone" for the local zones), or returns false to pass it on. `name` is
 * lower-case, `qname` as the client spelled it.
 */
export function answerLocal(m: Message, qname: string, name: string, qtype: number, localhostPrefix: boolean): 'localhost' | 'zone' | false {
  const under = name.length > 'localhost.'.length && (name.endsWith('.localhost.') || (localhostPrefix && name.startsWith('localhost.')));
  if (under) {
    const rr = loopback(qname, qtype);
    if (rr) m.answers.push(rr);
    else m.authority.push(soa(qname));
    return 'localhost';
  }
  const zone = LOCAL_ZONES.find((z) => name === z || name.endsWith(`.${z}`));
  if (!zone) return false;
  if (name === zone) {
    const rr = name === 'localhost.' ? loopback(qname, qtype) : undefined;
    if (rr) m.answers.push(rr);
    else if (qtype === RRType.SOA) m.answers.push(soa(qname));
    else if (qtype === RRType.NS) m.answers.push({ name: qname, type: RRType.NS, class: DnsClass.IN, ttl: LOCAL_TTL, data: { target: 'localhost.' } });
    else m.authority.push(soa(qname));
    return 'zone';
  }
  if (name === '1.0.0.127.in-addr.arpa.') {
    if (qtype === RRType.PTR) m.answers.push({ name: qname, type: RRType.PTR, class: DnsClass.IN, ttl: LOCAL_TTL, data: { target: 'localhost.' } });
    else m.authority.push(soa(zoneSpelling(qname, zone)));
    return 'zone';
  }
  m.authority.push(soa(zoneSpelling(qname, zone)));
  m.rcode = RCode.NXDOMAIN;
  return 'zone';
}

export class LocalPlugin implements Plugin {
  readonly name = 'local';

  constructor(
    private readonly localhostPrefix: boolean,
    private readonly localhostRequests: Counter,
  ) {}

  serve(req: DnsRequest, next: Next): ReturnType<Next> {
    const m = responseFor(req);
    const how = answerLocal(m, req.qname, lowerName(req.qname), req.qtype, this.localhostPrefix);
    if (!how) return next(req);
    if (how === 'localhost') this.localhostRequests.inc();
    return Reply.of(m);
  }
}
