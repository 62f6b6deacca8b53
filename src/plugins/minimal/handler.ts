// minimal: a positive answer goes out with its answer section only. The authority and
// additional sections (NS records, glue) cost bytes and are rarely used by stub resolvers.
// Negative answers (NXDOMAIN, NODATA), referrals and errors keep their sections: their
// SOA is what resolvers cache the negative answer by.

import { RCode, type Message } from '../../lib/dns/types.js';
import type { Next, Plugin } from '../../server/plugin.js';
import type { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';

/** Whether minimal trims this message: NOERROR with an answer. */
export function isPositive(m: Message): boolean {
  return m.rcode === RCode.NOERROR && m.answers.length > 0;
}

export class MinimalPlugin implements Plugin {
  readonly name = 'minimal';

  async serve(req: DnsRequest, next: Next): Promise<Reply | undefined> {
    const reply = await next(req);
    if (!reply || reply.rcode !== RCode.NOERROR) return reply;
    const view = reply.view();
    if (!isPositive(view) || (view.authority.length === 0 && view.additional.length === 0)) return reply;
    const m = reply.edit();
    m.authority = [];
    m.additional = [];
    return reply;
  }
}
