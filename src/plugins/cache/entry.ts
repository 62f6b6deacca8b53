// What the cache keeps per answer, and the two byte-level steps around it: turning an upstream
// reply into an entry (once per miss), and an entry into the reply for one client (every hit).
// A hit builds no message objects: copy the stored bytes, patch ID, RD and the question's case,
// write the remaining TTL at offsets found when the entry was made, add an OPT if the client
// used EDNS.
import { fullRcode, isTruncated, readU16, sameQuestion, scanMessage, Section, writeU16, type RecordRef, type ScannedMessage } from '../../lib/dns/wire.js';
import { readNameAt } from '../../lib/dns/codec.js';
import { lowerName } from '../../lib/dns/name.js';
import { RCode, RRType } from '../../lib/dns/types.js';
import { ADVERTISED_UDP_SIZE } from '../../server/finalize.js';
import type { DnsRequest } from '../../server/request.js';
import { cacheKeyName } from './key.js';
import type { CacheOptions } from './options.js';

export type EntryKind = 'success' | 'denial';

export interface CacheEntry {
  /** Type, class and flags of the query (see cacheTag in handler.ts). */
  tag: number;
  /** Lower-case question name. */
  name: string;
  kind: EntryKind;
  /** The reply without OPT, ID 0, AA set, every TTL set to `ttl`. */
  wire: Buffer;
  /** Offset of each record's TTL field in `wire`. */
  ttlOffsets: Uint16Array;
  /** End of the question name: bytes 12..nameEnd are overwritten with the client's spelling. */
  nameEnd: number;
  rcode: number;
  /** TTL in seconds as stored; what a client sees right after the store. */
  ttl: number;
  storedAt: number;
  /** When the entry stops being fresh (ms since epoch). */
  expiresAt: number;
  /** Prefetch popularity: hits in the current run without a gap of the prefetch window. */
  hits: number;
  lastHit: number;
  /** A refresh (prefetch or stale) is in flight for this entry. */
  refreshing: boolean;
  /** serve_stale's failure recheck: no refresh before this time (ms since epoch) after one failed. */
  retryAfter: number;
  /** A success entry whose answer section answers the question (not a referral). */
  answers: boolean;
  /** Used since the eviction hand last passed (second-chance eviction). */
  used: boolean;
  /** Neighbours in the store's age order (see store.ts). */
  older: CacheEntry | undefined;
  newer: CacheEntry | undefined;
}

/** How a reply is cached, as CoreDNS's response.Typify sorts them. */
export type Classification = EntryKind | 'servfail' | 'uncacheable';

export const FLAG_AA_BYTE2 = 0x04;
const OPCODE_MASK_BYTE2 = 0x78;

const CLASS_ANY = 255;

/** A record's owner name, lower-case; undefined when it cannot be read. */
function ownerAt(wire: Uint8Array, at: number): string | undefined {
  try {
    return lowerName(readNameAt(wire, at));
  } catch {
    return undefined;
  }
}

/**
 * Whether a NOERROR reply's answer section answers its question (RFC 1034 §3.6.2, RFC 2308 §2.2):
 * a record of the asked type at the end of the CNAME chain that starts at the question's name.
 * ANY wants any record at the name; CNAME wants the name's one CNAME. A chain that forks (two
 * targets for one owner, RFC 2181 §10.1) or loops has no end, and answers nothing.
 */
export function answersQuestion(wire: Uint8Array, scan: ScannedMessage, qtype: number, qclass: number): boolean {
  const answers = scan.records.filter((r) => r.section === Section.ANSWER);
  if (answers.length === 0) return false;
  const classOk = (r: RecordRef): boolean => qclass === CLASS_ANY || r.klass === qclass;
  // The common case costs no name reading: the first answer is the asked type, owned by the
  // question's name through a pointer to it (offset 12).
  const first = answers[0] as RecordRef;
  if (first.type === qtype && wire[first.start] === 0xc0 && wire[first.start + 1] === 12 && classOk(first)) return true;
  const qname = ownerAt(wire, 12);
  if (qname === undefined) return false;
  const owners = answers.map((r) => ownerAt(wire, r.start));
  if (qtype === RRType.ANY) return answers.some((r, i) => owners[i] === qname && classOk(r));
  /** The one CNAME target of `owner`: '' when it has none, undefined when it has two. */
  const targetOf = (owner: string): string | undefined => {
    let target = '';
    for (const [i, r] of answers.entries()) {
      if (r.type !== RRType.CNAME || owners[i] !== owner || !classOk(r)) continue;
      const t = ownerAt(wire, r.rdStart);
      if (t === undefined || (target !== '' && t !== target)) return undefined;
      target = t;
    }
    return target;
  };
  if (qtype === RRType.CNAME) return (targetOf(qname) ?? '') !== '';
  const seen = new Set<string>();
  let name = qname;
  for (;;) {
    if (seen.has(name)) return false;
    seen.add(name);
    const target = targetOf(name);
    if (target === undefined) return false;
    if (target === '') break;
    name = target;
  }
  return answers.some((r, i) => r.type === qtype && owners[i] === name && classOk(r));
}

/**
 * How a reply is cached, as CoreDNS 1.14.7 sorts them, with RFC 2308 §5: a negative answer
 * without a SOA has no lifetime to be kept for, so it is not cached at all — an NXDOMAIN, a
 * NOERROR whose answers do not answer the question (a CNAME chain that stops short), and an
 * empty NOERROR that carries nothing else.
 */
export function classify(rcode: number, scan: ScannedMessage, wire: Uint8Array, qtype: number, qclass: number): Classification {
  if (rcode === RCode.SERVFAIL) return 'servfail';
  if (rcode !== RCode.NOERROR && rcode !== RCode.NXDOMAIN) return 'uncacheable';
  let hasAnswer = false;
  let hasSoa = false;
  let hasNs = false;
  let hasExtra = false;
  for (const r of scan.records) {
    if (r.section === Section.ANSWER) hasAnswer = true;
    else if (r.section === Section.AUTHORITY) {
      if (r.type === RRType.SOA) hasSoa = true;
      else if (r.type === RRType.NS) hasNs = true;
    } else hasExtra = true;
  }
  if (rcode === RCode.NXDOMAIN) return hasSoa ? 'denial' : 'uncacheable';
  if (hasAnswer) {
    if (answersQuestion(wire, scan, qtype, qclass)) return 'success';
    return hasSoa ? 'denial' : 'uncacheable';
  }
  if (hasSoa) return 'denial';
  // No answers and no SOA: a referral (NS) is data, and so are records in the additional
  // section alone (whoami answers there); with nothing at all it is a NODATA without SOA.
  return hasNs || hasExtra ? 'success' : 'uncacheable';
}

/** RFC 2308: a negative answer lives as long as the smaller of its SOA's TTL and MINIMUM field. */
function soaNegativeTtl(wire: Uint8Array, scan: ScannedMessage): number | undefined {
  for (const r of scan.records) {
    if (r.section !== Section.AUTHORITY || r.type !== RRType.SOA) continue;
    // MINIMUM is the last 4 bytes of SOA RDATA.
    if (r.end - r.rdStart < 22) return r.ttl;
    const minimum = ((wire[r.end - 4] as number) * 2 ** 24) + (((wire[r.end - 3] as number) << 16) | ((wire[r.end - 2] as number) << 8) | (wire[r.end - 1] as number));
    return Math.min(r.ttl, minimum);
  }
  return undefined;
}

/** The lifetime in seconds of a reply of this kind, before min/max clamps. */
export function replyTtl(kind: EntryKind, wire: Uint8Array, scan: ScannedMessage): number {
  if (kind === 'denial') return soaNegativeTtl(wire, scan) ?? 0;
  let min = Infinity;
  for (const r of scan.records) if (r.ttl < min) min = r.ttl;
  return min === Infinity ? 0 : min;
}

export function clampTtl(ttl: number, minTtl: number, maxTtl: number): number {
  return Math.min(Math.max(ttl, minTtl), maxTtl);
}

/** Why a reply is not stored (for the drops metric), or the entry. */
export type MakeResult = { entry: CacheEntry } | { skip: 'uncacheable' } | { drop: string };

/**
 * An entry for the reply `bytes` to `req`, or why there is none. `bytes` is not kept: the entry
 * owns a copy, since the server patches the reply it sends in place.
 */
/**
 * The entry to store for this reply, or why there is none. `keep` copies the stored bytes to
 * where they will live (the cache's arena); the default makes a Buffer of their own.
 */
export function makeEntry(bytes: Uint8Array, req: DnsRequest, tag: number, now: number, opts: CacheOptions, keep: (b: Uint8Array) => Buffer = (b) => Buffer.from(b)): MakeResult {
  if (bytes.length < 12) return { drop: 'short reply' };
  const scan = scanMessage(bytes);
  if (!scan) return { drop: 'malformed reply' };
  if (!sameQuestion(req.raw, req.query.questionEnd, bytes)) return { drop: 'reply question does not match the query' };
  if (isTruncated(bytes) || ((bytes[2] as number) & OPCODE_MASK_BYTE2) !== 0) return { skip: 'uncacheable' };
  const rcode = fullRcode(bytes, scan.opt);
  const kind = classify(rcode, scan, bytes, req.query.qtype, req.query.qclass);
  if (kind === 'uncacheable') return { skip: 'uncacheable' };
  let ttl: number;
  let lifetimeMs: number;
  let entryKind: EntryKind;
  if (kind === 'servfail') {
    if (opts.servfailMs <= 0) return { skip: 'uncacheable' };
    entryKind = 'denial';
    lifetimeMs = opts.servfailMs;
    ttl = Math.ceil(opts.servfailMs / 1000);
  } else {
    entryKind = kind;
    const t = opts[kind];
    ttl = clampTtl(replyTtl(kind, bytes, scan), t.minTtl, t.maxTtl);
    lifetimeMs = ttl * 1000;
  }
  if (lifetimeMs <= 0) return { skip: 'uncacheable' };
  // OPT goes: a later client may have no EDNS, or another size. Only an OPT at the very end can
  // be cut without moving other records (after it can only come TSIG, which must not be cached).
  let length = bytes.length;
  if (scan.opt) {
    if (scan.opt.end !== bytes.length) return { skip: 'uncacheable' };
    length = scan.opt.start;
  }
  const wire = keep(bytes.subarray(0, length));
  if (scan.opt) writeU16(wire, 10, readU16(wire, 10) - 1);
  writeU16(wire, 0, 0);
  // Hits are authoritative, as CoreDNS's are: some stub resolvers (older glibc) throw away a
  // whole reply without AA, and kubernetes's own answers must not lose it by being stored.
  wire[2] = (wire[2] as number) | FLAG_AA_BYTE2;
  const ttlOffsets = new Uint16Array(scan.records.length);
  scan.records.forEach((r, i) => {
    ttlOffsets[i] = r.typeAt + 4;
  });
  writeTtls(wire, ttlOffsets, ttl);
  return {
    entry: {
      tag,
      name: cacheKeyName(req.query),
      kind: entryKind,
      wire,
      ttlOffsets,
      nameEnd: req.query.questionEnd - 4,
      rcode,
      ttl,
      storedAt: now,
      expiresAt: now + lifetimeMs,
      hits: 0,
      lastHit: 0,
      refreshing: false,
      retryAfter: 0,
      answers: entryKind === 'success' && answersQuestion(bytes, scan, req.query.qtype, req.query.qclass),
      used: false,
      older: undefined,
      newer: undefined,
    },
  };
}

/** Writes one TTL at every offset. */
export function writeTtls(wire: Uint8Array, offsets: Uint16Array, ttl: number): void {
  const b0 = (ttl >>> 24) & 0xff;
  const b1 = (ttl >>> 16) & 0xff;
  const b2 = (ttl >>> 8) & 0xff;
  const b3 = ttl & 0xff;
  for (let i = 0; i < offsets.length; i++) {
    const o = offsets[i] as number;
    wire[o] = b0;
    wire[o + 1] = b1;
    wire[o + 2] = b2;
    wire[o + 3] = b3;
  }
}

/** Seconds left before the entry expires, counted down in whole seconds as CoreDNS does. */
export function remainingTtl(e: CacheEntry, now: number): number {
  return Math.max(0, e.ttl - Math.floor((now - e.storedAt) / 1000));
}

const OPT_RECORD_SIZE = 11;

/**
 * The reply for `req` from entry `e` at time `now`: fresh bytes, ready for the server to send.
 * An expired entry (serve_stale) is answered with `staleTtl` (RFC 8767: a TTL above 0, 30 s
 * recommended; CoreDNS's and kdns's default stays 0).
 */
export function answerFrom(e: CacheEntry, req: DnsRequest, now: number, keepTtl: boolean, staleTtl = 0): Buffer {
  const stored = e.wire;
  const edns = req.query.edns;
  const out = Buffer.allocUnsafe(stored.length + (edns ? OPT_RECORD_SIZE : 0));
  // TypedArray#set and a byte loop: Buffer#copy's argument checks cost more than the copying.
  out.set(stored, 0);
  const id = req.query.id;
  out[0] = id >>> 8;
  out[1] = id & 0xff;
  // RD is echoed from each query; bit 0 of byte 2.
  out[2] = ((out[2] as number) & 0xfe) | (req.query.rd ? 1 : 0);
  const raw = req.raw;
  for (let i = 12; i < e.nameEnd; i++) out[i] = raw[i] as number;
  writeTtls(out, e.ttlOffsets, now >= e.expiresAt ? staleTtl : keepTtl ? e.ttl : remainingTtl(e, now));
  if (edns) {
    let p = stored.length;
    out[p++] = 0; // root owner
    out[p++] = 0;
    out[p++] = RRType.OPT;
    out[p++] = ADVERTISED_UDP_SIZE >>> 8;
    out[p++] = ADVERTISED_UDP_SIZE & 0xff;
    out[p++] = 0; // extended RCODE
    out[p++] = 0; // version
    out[p++] = edns.do ? 0x80 : 0;
    out[p++] = 0;
    out[p++] = 0; // RDLENGTH
    out[p] = 0;
    const ar = readU16(out, 10) + 1;
    out[10] = ar >>> 8;
    out[11] = ar & 0xff;
  }
  return out;
}
