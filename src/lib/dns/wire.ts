// Reading DNS messages as bytes, without building objects. The upstream client, the cache's
// store and hit paths and loadbalance touch every packet; a full decode there would cost more
// than the network round trip they save.

export const HEADER_SIZE = 12;

/** Header flag bits (the 16-bit word at offset 2). */
export const Flag = {
  QR: 0x8000,
  AA: 0x0400,
  TC: 0x0200,
  RD: 0x0100,
  RA: 0x0080,
  AD: 0x0020,
  CD: 0x0010,
} as const;

const TYPE_OPT = 41;
const POINTER = 0xc0;

export const Section = { ANSWER: 1, AUTHORITY: 2, ADDITIONAL: 3 } as const;
export type SectionKind = (typeof Section)[keyof typeof Section];

/** Where one resource record sits in a message. */
export interface RecordRef {
  section: SectionKind;
  /** First byte of the owner name. */
  start: number;
  /** Offset of the TYPE field (just past the owner name). */
  typeAt: number;
  type: number;
  /** The CLASS field (for OPT: the UDP payload size). */
  klass: number;
  ttl: number;
  rdStart: number;
  /** Offset just past the RDATA: the next record starts here. */
  end: number;
}

export interface ScannedMessage {
  /** Offset just past the question section. */
  questionEnd: number;
  records: RecordRef[];
  /** The OPT pseudo-record, when there is one. */
  opt?: RecordRef;
}

/** Offset just past the (possibly compressed) name at `p`, or -1 when malformed or cut short. */
export function skipName(buf: Uint8Array, p: number): number {
  const n = buf.length;
  while (p < n) {
    const len = buf[p] as number;
    if (len === 0) return p + 1;
    if ((len & POINTER) === POINTER) return p + 2 <= n ? p + 2 : -1;
    if ((len & POINTER) !== 0) return -1; // 0x40/0x80 label types are obsolete or unknown
    p += len + 1;
  }
  return -1;
}

export function readU16(buf: Uint8Array, p: number): number {
  return ((buf[p] as number) << 8) | (buf[p + 1] as number);
}

export function readU32(buf: Uint8Array, p: number): number {
  return (((buf[p] as number) << 24) >>> 0) + (((buf[p + 1] as number) << 16) | ((buf[p + 2] as number) << 8) | (buf[p + 3] as number));
}

export function writeU16(buf: Uint8Array, p: number, v: number): void {
  buf[p] = (v >>> 8) & 0xff;
  buf[p + 1] = v & 0xff;
}

export function writeU32(buf: Uint8Array, p: number, v: number): void {
  buf[p] = (v >>> 24) & 0xff;
  buf[p + 1] = (v >>> 16) & 0xff;
  buf[p + 2] = (v >>> 8) & 0xff;
  buf[p + 3] = v & 0xff;
}

/** Offset just past the question section, or -1 when it does not parse. */
export function questionEnd(buf: Uint8Array): number {
  if (buf.length < HEADER_SIZE) return -1;
  const qd = readU16(buf, 4);
  let p = HEADER_SIZE;
  for (let i = 0; i < qd; i++) {
    p = skipName(buf, p);
    if (p < 0 || p + 4 > buf.length) return -1;
    p += 4;
  }
  return p;
}

function lowerAscii(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c;
}

/**
 * True when `response` carries the same single question as `query` (whose question section
 * ends at `queryQuestionEnd`): name compared without regard to ASCII case, type and class
 * exactly. Queries never compress their question name, and neither do responses in practice, so
 * a byte comparison is exact enough; a compressed echo simply does not match.
 */
export function sameQuestion(query: Uint8Array, queryQuestionEnd: number, response: Uint8Array): boolean {
  if (response.length < queryQuestionEnd || readU16(response, 4) !== 1) return false;
  for (let i = HEADER_SIZE; i < queryQuestionEnd; i++) {
    const a = query[i] as number;
    const b = response[i] as number;
    if (a !== b && lowerAscii(a) !== lowerAscii(b)) return false;
  }
  return true;
}

/** Walks every record of the message once. Undefined when anything is cut short or malformed. */
export function scanMessage(buf: Uint8Array): ScannedMessage | undefined {
  const qEnd = questionEnd(buf);
  if (qEnd < 0) return undefined;
  const counts = [readU16(buf, 6), readU16(buf, 8), readU16(buf, 10)];
  const records: RecordRef[] = [];
  let opt: RecordRef | undefined;
  let p = qEnd;
  for (let s = 0; s < 3; s++) {
    const section = (s + 1) as SectionKind;
    for (let i = 0; i < (counts[s] as number); i++) {
      const typeAt = skipName(buf, p);
      if (typeAt < 0 || typeAt + 10 > buf.length) return undefined;
      const rdStart = typeAt + 10;
      const end = rdStart + readU16(buf, typeAt + 8);
      if (end > buf.length) return undefined;
      const rec: RecordRef = {
        section,
        start: p,
        typeAt,
        type: readU16(buf, typeAt),
        klass: readU16(buf, typeAt + 2),
        ttl: readU32(buf, typeAt + 4),
        rdStart,
        end,
      };
      if (rec.type === TYPE_OPT && section === Section.ADDITIONAL) opt = rec;
      else records.push(rec);
      p = end;
    }
  }
  return { questionEnd: qEnd, records, opt };
}

/** The full 12-bit RCODE: the header's 4 bits plus the OPT record's upper 8. */
export function fullRcode(buf: Uint8Array, opt: RecordRef | undefined): number {
  const low = (buf[3] as number) & 0x0f;
  return opt ? ((buf[opt.typeAt + 4] as number) << 4) | low : low;
}

/** The RCODE a reply shows without a full scan (the header's 4 bits; extended codes need the OPT). */
export function headerRcode(buf: Uint8Array): number {
  return (buf[3] as number) & 0x0f;
}

export function isTruncated(buf: Uint8Array): boolean {
  return ((buf[2] as number) & 0x02) !== 0;
}

export function isResponse(buf: Uint8Array): boolean {
  return ((buf[2] as number) & 0x80) !== 0;
}

export interface QueryOptions {
  /** Recursion desired (default true). */
  rd?: boolean;
  /** Add an OPT record with this UDP size. */
  ednsUdpSize?: number;
  dnssecOk?: boolean;
  id?: number;
}

/**
 * A query for one question in wire form, from the name's uncompressed wire bytes. Used for the
 * queries kdns sends itself (health checks, loop detection, node-resolver's lookups), never for
 * forwarded client queries.
 */
export function buildQuery(nameWire: Uint8Array, qtype: number, qclass: number, opts: QueryOptions = {}): Buffer {
  const optLen = opts.ednsUdpSize !== undefined ? 11 : 0;
  const out = Buffer.alloc(HEADER_SIZE + nameWire.length + 4 + optLen);
  out.writeUInt16BE(opts.id ?? 0, 0);
  out.writeUInt16BE(opts.rd === false ? 0 : Flag.RD, 2);
  out.writeUInt16BE(1, 4);
  out.writeUInt16BE(optLen ? 1 : 0, 10);
  out.set(nameWire, HEADER_SIZE);
  let p = HEADER_SIZE + nameWire.length;
  out.writeUInt16BE(qtype, p);
  out.writeUInt16BE(qclass, p + 2);
  p += 4;
  if (optLen) {
    out[p] = 0;
    out.writeUInt16BE(TYPE_OPT, p + 1);
    out.writeUInt16BE(opts.ednsUdpSize as number, p + 3);
    out.writeUInt32BE(opts.dnssecOk ? 0x8000 : 0, p + 5);
    out.writeUInt16BE(0, p + 9);
  }
  return out;
}
