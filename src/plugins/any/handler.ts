// RFC 8482: rather than assembling every RRset of a name (expensive, and a favourite of
// amplification attacks), answer ANY with one small synthesized HINFO record.

import { DnsClass, RRType, type ResourceRecord } from '../../lib/dns/types.js';
import type { Next, Plugin } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';

/** The same TTL and text CoreDNS uses, so tools that recognise its answer keep doing so. */
export const HINFO_TTL = 8482;
export const HINFO_CPU = 'ANY obsoleted';
export const HINFO_OS = 'See RFC 8482';

export function hinfoFor(qname: string): ResourceRecord {
  return { name: qname, type: RRType.HINFO, class: DnsClass.IN, ttl: HINFO_TTL, data: { cpu: HINFO_CPU, os: HINFO_OS } };
}

export class AnyPlugin implements Plugin {
  readonly name = 'any';

  serve(req: DnsRequest, next: Next): ReturnType<Next> {
    if (req.qtype !== RRType.ANY) return next(req);
    const msg = responseFor(req);
    msg.answers.push(hinfoFor(req.qname));
    return Reply.of(msg);
  }
}
