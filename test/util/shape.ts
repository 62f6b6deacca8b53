// A reply as plugin table tests compare it: RCODE and each section as sorted presentation
// lines, SOA serials (which follow the clock or the store) shown as SERIAL.
import { decodeMessage } from '../../src/lib/dns/codec.js';
import { rcodeName, rrToString } from '../../src/lib/dns/rr.js';
import type { ResourceRecord } from '../../src/lib/dns/types.js';
import { finalizeReply } from '../../src/server/finalize.js';
import type { Reply } from '../../src/server/reply.js';
import type { DnsRequest } from '../../src/server/request.js';

export interface ReplyShape {
  rcode: string;
  answer: string[];
  authority: string[];
  additional: string[];
}

function lines(rs: readonly ResourceRecord[]): string[] {
  return rs.map((r) => rrToString(r).replaceAll('\t', ' ').replace(/(hostmaster\.\S+) \d+/, '$1 SERIAL')).sort();
}

/** The reply as the client would get it (finalized), and whether it is authoritative. */
export function replyShape(req: DnsRequest, reply: Reply): ReplyShape & { aa: boolean } {
  const msg = decodeMessage(finalizeReply(req, reply));
  return { rcode: rcodeName(msg.rcode), answer: lines(msg.answers), authority: lines(msg.authority), additional: lines(msg.additional), aa: msg.aa };
}
