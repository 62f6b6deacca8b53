// header: puts header flags (aa, ra, rd) in the wanted state on the query before the rest of the
// chain sees it, and/or on the response before the client does. Rules apply in order, so the
// last rule about a flag wins.

import { parseQuery } from '../../lib/dns/codec.js';
import type { Next, Plugin } from '../../server/plugin.js';
import type { Reply } from '../../server/reply.js';
import { DnsRequest } from '../../server/request.js';

export type HeaderFlag = 'aa' | 'ra' | 'rd';

export interface FlagRule {
  flag: HeaderFlag;
  set: boolean;
}

/** Bits of the header's second 16-bit word (RFC 1035 4.1.1). */
const FLAG_BITS: Record<HeaderFlag, number> = { aa: 0x0400, rd: 0x0100, ra: 0x0080 };

/** The flags word after the rules. */
export function applyToFlags(flags: number, rules: readonly FlagRule[]): number {
  let out = flags;
  for (const r of rules) out = r.set ? out | FLAG_BITS[r.flag] : out & ~FLAG_BITS[r.flag];
  return out;
}

/** The same request with its header flags changed (a copy of the wire with new flag bits). */
function withFlags(req: DnsRequest, rules: readonly FlagRule[]): DnsRequest {
  const flags = req.raw.readUInt16BE(2);
  const changed = applyToFlags(flags, rules);
  if (changed === flags) return req;
  const raw = Buffer.from(req.raw);
  raw.writeUInt16BE(changed, 2);
  const out = new DnsRequest(raw, parseQuery(raw), req.client, req.received);
  out.zone = req.zone;
  out.maxUdpSize = req.maxUdpSize;
  for (const [k, v] of req.metadata) out.metadata.set(k, v);
  return out;
}

export class HeaderPlugin implements Plugin {
  readonly name = 'header';

  constructor(
    private readonly queryRules: readonly FlagRule[],
    private readonly responseRules: readonly FlagRule[],
  ) {}

  async serve(req: DnsRequest, next: Next): Promise<Reply | undefined> {
    const reply = await next(this.queryRules.length > 0 ? withFlags(req, this.queryRules) : req);
    if (!reply || this.responseRules.length === 0) return reply;
    const m = reply.edit();
    for (const r of this.responseRules) m[r.flag] = r.set;
    return reply;
  }
}
