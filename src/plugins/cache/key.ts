// The cache key of a query: a number for type, class, DO and CD, and a string for the name.
import type { ParsedQuery } from '../../lib/dns/types.js';

/**
 * Type, class, DO and CD of a query as one number: with the lower-case name, the cache key.
 * Class IN (nearly all queries) keeps it a small integer, the cheapest kind of Map key.
 */
export function cacheTag(q: ParsedQuery): number {
  const flags = (q.edns?.do ? 1 : 0) + (q.cd ? 2 : 0);
  return q.qtype * 4 + flags + (q.qclass === 1 ? 0 : q.qclass * 262144);
}

/** EDNS option codes for local and experimental use (RFC 6891 §9): their meaning is local. */
const LOCAL_OPTION_MIN = 65001;
const LOCAL_OPTION_MAX = 65534;

/**
 * The name part of the cache key: the lower-case name, plus the content of any local-use EDNS
 * option. Such an option can change the answer — autopath's search paths (65534 by default)
 * do — so two nodes sending different search paths for the same name must not share an entry.
 * Standard options (cookies, padding, client subnet is not supported) leave the key alone.
 */
export function cacheKeyName(q: ParsedQuery): string {
  const options = q.edns?.options;
  if (!options || options.length === 0) return q.name;
  let key = q.name;
  for (const o of options) {
    if (o.code >= LOCAL_OPTION_MIN && o.code <= LOCAL_OPTION_MAX) key += `|${o.code}:${Buffer.from(o.data.buffer, o.data.byteOffset, o.data.byteLength).toString('hex')}`;
  }
  return key;
}
