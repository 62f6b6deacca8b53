// nsid (RFC 5001): a client that sends an empty NSID option learns which server answered, e.g.
// which replica behind a Service. Only replies to queries that ask get the option.

import type { Next, Plugin } from '../../server/plugin.js';
import type { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';

export const EDNS_NSID = 3;

export class NsidPlugin implements Plugin {
  readonly name = 'nsid';
  private readonly data: Uint8Array;

  constructor(id: string) {
    this.data = Buffer.from(id, 'utf8');
  }

  async serve(req: DnsRequest, next: Next): Promise<Reply | undefined> {
    const asked = req.edns?.options.some((o) => o.code === EDNS_NSID) ?? false;
    const reply = await next(req);
    if (!asked || !reply) return reply;
    const m = reply.edit();
    const edns = m.edns ?? { udpSize: req.edns?.udpSize ?? 512, version: 0, do: req.do, zFlags: 0, options: [] };
    edns.options = [...edns.options.filter((o) => o.code !== EDNS_NSID), { code: EDNS_NSID, data: this.data }];
    m.edns = edns;
    return reply;
  }
}
