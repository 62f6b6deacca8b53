// The hot path. Every answer the plugin can give is encoded once, when the data is loaded:
// per name and type, the answer records as wire bytes whose owner is a compression pointer to
// the question name (offset 12). A query is then answered by copying its own header and
// question (so ID and the client's spelling of the name come for free), patching flags and
// counts, and appending those bytes: no message objects, no name encoding per query.

import { nameToWire } from '../../lib/dns/name.js';
import { DnsClass, RRType } from '../../lib/dns/types.js';
import { ADVERTISED_UDP_SIZE } from '../../server/finalize.js';
import { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { isWildcardName, type HostsTable } from './table.js';

/** Some answer records, ready to append after a question. */
export interface EncodedRRs {
  bytes: Buffer;
  count: number;
}

export interface EncodedName {
  a: EncodedRRs;
  aaaa: EncodedRRs;
}

export interface AnswerIndex {
  names: Map<string, EncodedName>;
  reverse: Map<string, EncodedRRs>;
  entries: number;
  /** Some name is a wildcard (`*.example.org.`): a name not found may still be answered by one. */
  wildcards: boolean;
}

export const NO_RECORDS: EncodedRRs = { bytes: Buffer.alloc(0), count: 0 };

/** Pointer to offset 12, where the question name starts in every reply. */
const OWNER_POINTER = 0xc00c;
/** Owner pointer, type, class, TTL, RDLENGTH. */
const RR_FIXED = 12;
/**
 * A DNS message over TCP tops out at 65535 bytes; with the header and the longest possible
 * question, this much answer still fits. Records past it are left out at load time (a
 * `0.0.0.0 name` ad-block list can put 100k names on one address).
 */
export const MAX_ANSWER_BYTES = 65535 - 12 - 255 - 4;

export function encodeRRs(type: number, ttl: number, rdatas: readonly Uint8Array[]): EncodedRRs {
  let size = 0;
  let count = 0;
  for (const rd of rdatas) {
    if (size + RR_FIXED + rd.length > MAX_ANSWER_BYTES) break;
    size += RR_FIXED + rd.length;
    count++;
  }
  if (count === 0) return NO_RECORDS;
  const out = Buffer.allocUnsafe(size);
  let p = 0;
  for (let i = 0; i < count; i++) {
    const rd = rdatas[i] as Uint8Array;
    out.writeUInt16BE(OWNER_POINTER, p);
    out.writeUInt16BE(type, p + 2);
    out.writeUInt16BE(DnsClass.IN, p + 4);
    out.writeUInt32BE(ttl, p + 6);
    out.writeUInt16BE(rd.length, p + 10);
    out.set(rd, p + RR_FIXED);
    p += RR_FIXED + rd.length;
  }
  return { bytes: out, count };
}

/**
 * The same text as one flat string. Names built by concatenation are ropes inside V8, and
 * every lookup that lands on a rope key compares it piece by piece.
 */
export function flatString(s: string): string {
  return Buffer.from(s, 'latin1').toString('latin1');
}

export function encodeIndex(table: HostsTable, ttl: number): AnswerIndex {
  const names = new Map<string, EncodedName>();
  for (const [name, addrs] of table.names) {
    names.set(flatString(name), { a: encodeRRs(RRType.A, ttl, addrs.v4), aaaa: encodeRRs(RRType.AAAA, ttl, addrs.v6) });
  }
  const reverse = new Map<string, EncodedRRs>();
  for (const [rev, targets] of table.reverse) {
    reverse.set(flatString(rev), encodeRRs(RRType.PTR, ttl, targets.map((t) => nameToWire(t))));
  }
  return { names, reverse, entries: table.entries, wildcards: [...table.names.keys()].some(isWildcardName) };
}

// Header flag bits kept from the query (opcode, RD, CD) and set in every hosts reply (QR, AA).
const KEEP_FROM_QUERY = 0x7800 | 0x0100 | 0x0010;
const QR_AA = 0x8000 | 0x0400;
const SMALL_COPY = 128;

/** Root owner, TYPE, CLASS, TTL (extended RCODE, version, flags), RDLENGTH. */
const OPT_LENGTH = 11;
const OPT_TYPE = 41;

/**
 * The reply to `req`: its header and question, then `rrs` as the answer section, and the OPT
 * record an EDNS client is owed. Writing OPT here, where the buffer is made, spares the
 * finalizer from copying the whole reply into a larger one to append it.
 */
export function wireReply(req: DnsRequest, rcode: number, rrs: EncodedRRs): Reply {
  const q = req.query;
  const qEnd = q.questionEnd;
  const raw = req.raw;
  const bytes = rrs.bytes;
  const end = qEnd + bytes.length;
  const edns = q.edns;
  const out = Buffer.allocUnsafe(edns === undefined ? end : end + OPT_LENGTH);
  // Byte loops and stores rather than Buffer#copy/writeUInt16BE: for a few dozen bytes the
  // call and bounds-check overhead is most of the cost (measured ~100 vs ~170 ns per copy).
  for (let i = 12; i < qEnd; i++) out[i] = raw[i] as number;
  if (bytes.length <= SMALL_COPY) {
    for (let i = 0; i < bytes.length; i++) out[qEnd + i] = bytes[i] as number;
  } else {
    bytes.copy(out, qEnd);
  }
  const flags = (q.flags & KEEP_FROM_QUERY) | QR_AA | rcode;
  const count = rrs.count;
  out[0] = raw[0] as number; // ID
  out[1] = raw[1] as number;
  out[2] = flags >> 8;
  out[3] = flags & 0xff;
  out[4] = 0; // QDCOUNT 1
  out[5] = 1;
  out[6] = count >> 8; // ANCOUNT
  out[7] = count & 0xff;
  out[8] = 0; // NSCOUNT 0
  out[9] = 0;
  out[10] = 0; // ARCOUNT: the OPT or nothing
  out[11] = edns === undefined ? 0 : 1;
  if (edns !== undefined) {
    out[end] = 0; // root owner
    out[end + 1] = 0;
    out[end + 2] = OPT_TYPE;
    out[end + 3] = ADVERTISED_UDP_SIZE >> 8;
    out[end + 4] = ADVERTISED_UDP_SIZE & 0xff;
    out[end + 5] = 0; // extended RCODE: ours all fit the header
    out[end + 6] = 0; // EDNS version 0
    out[end + 7] = edns.do ? 0x80 : 0; // DO echoed (RFC 3225)
    out[end + 8] = 0;
    out[end + 9] = 0; // no options
    out[end + 10] = 0;
  }
  return Reply.fromWire(out, rcode);
}
