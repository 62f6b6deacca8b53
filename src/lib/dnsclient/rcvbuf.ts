// How much of a UDP socket's receive buffer the reply to a query may take. One socket carries
// every query in flight to an upstream, and its replies wait in the kernel's buffer whenever
// kdns is busy elsewhere (reading a burst of client queries, a garbage collection, another
// process on the CPU). A reply that finds the buffer full is dropped by the kernel, and its query
// waits out the exchange timeout — two seconds, then the next upstream or SERVFAIL. So a channel
// takes a query only while the replies of all its queries in flight fit its buffer, and the
// transport opens another socket when they would not.
import { readU16 } from '../dns/wire.js';

/**
 * The receive buffer an upstream socket asks for (the kernel's figure). 4 MiB holds the replies
 * of about 1,500 queries in flight with a 1,232-byte EDNS buffer; a smaller buffer (the kernel
 * caps the request at twice net.core.rmem_max) only means more sockets.
 */
export const UPSTREAM_RECEIVE_BUFFER = 4 << 20;

/** What the kernel gives a socket that asks for nothing (net.core.rmem_default on most nodes). */
export const DEFAULT_RECEIVE_BUFFER = 212_992;

/** The OPT pseudo-record's type. */
const OPT = 41;
/** The largest reply a query without EDNS may get over UDP (RFC 1035). */
const PLAIN_UDP_LIMIT = 512;
/** Assumed when the additional section does not start with an OPT record: as large as kdns reads. */
const UNKNOWN_LIMIT = 4096;

/**
 * The largest reply the upstream may send over UDP for `query`: the payload size its OPT record
 * advertises (at least 512), or 512 without one.
 */
export function udpReplyLimit(query: Uint8Array, questionEnd: number): number {
  if (readU16(query, 10) === 0) return PLAIN_UDP_LIMIT;
  // A query's additional section is in practice its OPT record alone: root owner, type 41, and
  // the payload size in the class field.
  if (questionEnd + 5 > query.length || query[questionEnd] !== 0 || readU16(query, questionEnd + 1) !== OPT) return UNKNOWN_LIMIT;
  return Math.max(PLAIN_UDP_LIMIT, readU16(query, questionEnd + 3));
}

/**
 * Receive-buffer bytes to hold for the reply to `query`. The kernel charges a datagram at its
 * allocated size, not its length: on Linux 6, 832 bytes for a 100-byte reply, 1,280 for 512,
 * 2,304 for 1,232 and 4,224 for 4,000. Twice the largest allowed reply plus 1 KiB covers each
 * of those with room to spare.
 */
export function replyCost(query: Uint8Array, questionEnd: number): number {
  return 2 * udpReplyLimit(query, questionEnd) + 1024;
}
