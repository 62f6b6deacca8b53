// DNS wire format (RFC 1035, 3597, 6891): full decode/encode of messages, a fast query parser
// for the hot path, and in-place patching of ID and TTLs for pre-encoded answers.
//
// Decoding and encoding are synchronous and share module-level scratch state (buffers, the
// compression map, the error context): nothing here awaits, so calls never interleave.
//
// Trailing bytes after the last section are ignored, as miekg/dns (and so CoreDNS) does.

import { formatIPv4, formatIPv6, parseIPv4Into, parseIPv6Into } from './ip.js';
import { decimalEscape, lowerName } from './name.js';
import type {
  AddressData,
  Edns,
  EdnsOption,
  HINFOData,
  Message,
  MXData,
  NameData,
  OpaqueData,
  ParsedQuery,
  Question,
  RData,
  ResourceRecord,
  SOAData,
  SRVData,
  TXTData,
} from './types.js';
import { RRType } from './types.js';

/**
 * A message that cannot be decoded. The fields say how far decoding got, so the server can
 * answer FORMERR when it knows the ID (and question), and drop the packet otherwise.
 *
 * - `id` and `flags` are set once the 12-byte header was read.
 * - `questionEnd` is set once the question section was read and holds at most one question
 *   (12 when QDCOUNT is 0): the bytes [12, questionEnd) are the question to echo back.
 */
export class DnsFormatError extends Error {
  constructor(
    message: string,
    readonly id?: number,
    readonly flags?: number,
    readonly questionEnd?: number,
  ) {
    super(message);
    this.name = 'DnsFormatError';
  }
}

export interface EncodeOptions {
  /**
   * Largest size allowed (UDP limit; default and cap 65535). Larger messages lose whole RRs
   * from the end and get TC, unless only additional records had to go (RFC 2181 §9).
   */
  maxSize?: number;
  /** Name compression (default true). */
  compress?: boolean;
  /**
   * Compress a name only into an earlier one with the same octets, case included (default
   * false: ASCII case is ignored, so a name takes the spelling of the first occurrence, e.g. an
   * owner written in lower case takes the client's spelling of the question). For messages
   * whose names must each keep their own spelling.
   */
  exactCase?: boolean;
}

const DOT = 0x2e;
const BACKSLASH = 0x5c;
const HEADER = 12;
const MAX_MESSAGE = 65535;
/** Highest offset a 14-bit compression pointer can reach. */
const MAX_POINTER = 0x3fff;

/** The bytes [start, end) of `bytes` as a string of one character per byte (TXT data, any octet). */
function latin1(bytes: Uint8Array, start: number, end: number): string {
  const buf = bytes instanceof Buffer ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return buf.toString('latin1', start, end);
}

// ---- error context ------------------------------------------------------------------------

let ctxId: number | undefined;
let ctxFlags: number | undefined;
let ctxQuestionEnd: number | undefined;

function resetContext(): void {
  ctxId = undefined;
  ctxFlags = undefined;
  ctxQuestionEnd = undefined;
}

function fail(message: string): never {
  throw new DnsFormatError(message, ctxId, ctxFlags, ctxQuestionEnd);
}

function u16(b: Uint8Array, o: number): number {
  return (b[o] << 8) | b[o + 1];
}

function u32(b: Uint8Array, o: number): number {
  return ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
}

// ---- reading names --------------------------------------------------------------------------

/** Presentation text of the name being read: at most 255 wire octets, 4 characters each. */
const nameText = Buffer.allocUnsafe(1024);
/** Where the last name read by readName/skipName ended in the message (after its pointer, if any). */
let nameEnd = 0;

function isPlainByte(b: number): boolean {
  return b > 0x20 && b < 0x7f && b !== DOT && b !== BACKSLASH;
}

/**
 * Reads the (possibly compressed) name at `start`. Every pointer must point strictly before the
 * name or label sequence it interrupts, which rules out loops and forward references.
 */
/** The name at `start` in presentation form (as decodeMessage gives it); throws when malformed. */
export function readNameAt(buf: Uint8Array, start: number): string {
  return readName(buf, start);
}

function readName(buf: Uint8Array, start: number): string {
  const len = buf.length;
  const out = nameText;
  let off = start;
  let limit = start;
  let wire = 1;
  let end = -1;
  let w = 0;
  for (;;) {
    if (off >= len) fail('name runs past the end of the message');
    const l = buf[off];
    if (l === 0) {
      if (end < 0) end = off + 1;
      break;
    }
    const kind = l & 0xc0;
    if (kind === 0xc0) {
      if (off + 1 >= len) fail('compression pointer runs past the end of the message');
      const target = ((l & 0x3f) << 8) | buf[off + 1];
      if (target >= len) fail(`compression pointer to ${target}, beyond the message`);
      if (target >= limit) fail(`compression pointer to ${target} does not point backwards`);
      if (end < 0) end = off + 2;
      limit = off = target;
      continue;
    }
    if (kind !== 0) fail(`label length byte 0x${l.toString(16)}: reserved label type or label longer than 63`);
    wire += l + 1;
    if (wire > 255) fail('name longer than 255 octets');
    if (off + 1 + l > len) fail('label runs past the end of the message');
    for (let k = off + 1; k <= off + l; k++) {
      const b = buf[k];
      if (isPlainByte(b)) {
        out[w++] = b;
      } else if (b === DOT || b === BACKSLASH) {
        out[w++] = BACKSLASH;
        out[w++] = b;
      } else {
        out[w++] = BACKSLASH;
        out[w++] = 48 + ((b / 100) | 0);
        out[w++] = 48 + (((b / 10) | 0) % 10);
        out[w++] = 48 + (b % 10);
      }
    }
    out[w++] = DOT;
    off += l + 1;
  }
  nameEnd = end;
  return w === 0 ? '.' : out.toString('latin1', 0, w);
}

/** Steps over a name without building it; checks its structure but does not follow pointers. */
function skipName(buf: Uint8Array, start: number): number {
  const len = buf.length;
  let off = start;
  let wire = 1;
  for (;;) {
    if (off >= len) fail('name runs past the end of the message');
    const l = buf[off];
    if (l === 0) return off + 1;
    const kind = l & 0xc0;
    if (kind === 0xc0) {
      if (off + 1 >= len) fail('compression pointer runs past the end of the message');
      const target = ((l & 0x3f) << 8) | buf[off + 1];
      if (target >= len) fail(`compression pointer to ${target}, beyond the message`);
      if (target >= start) fail(`compression pointer to ${target} does not point backwards`);
      return off + 2;
    }
    if (kind !== 0) fail(`label length byte 0x${l.toString(16)}: reserved label type or label longer than 63`);
    wire += l + 1;
    if (wire > 255) fail('name longer than 255 octets');
    off += l + 1;
  }
}

// ---- decoding -------------------------------------------------------------------------------

/** Set by decodeRR: where the record ended, and the OPT it found (decodeRR returns undefined then). */
let rrEnd = 0;
let foundEdns: Edns | undefined;
let foundExtendedRcode = 0;

type Section = 0 | 1 | 2;
const Section = { Answer: 0, Authority: 1, Additional: 2 } as const;
const SECTION_NAMES = ['answer', 'authority', 'additional'];

/** Decodes a full message. Throws DnsFormatError on anything malformed. */
export function decodeMessage(buf: Uint8Array): Message {
  resetContext();
  foundEdns = undefined;
  foundExtendedRcode = 0;
  const len = buf.length;
  if (len < HEADER) fail(`message of ${len} octets is shorter than the 12-octet header`);
  const id = u16(buf, 0);
  const flags = u16(buf, 2);
  ctxId = id;
  ctxFlags = flags;
  const qdcount = u16(buf, 4);
  const counts = [u16(buf, 6), u16(buf, 8), u16(buf, 10)];

  let off = HEADER;
  const questions: Question[] = [];
  for (let i = 0; i < qdcount; i++) {
    const name = readName(buf, off);
    off = nameEnd;
    if (off + 4 > len) fail('question runs past the end of the message');
    questions.push({ name, type: u16(buf, off), class: u16(buf, off + 2) });
    off += 4;
  }
  if (qdcount <= 1) ctxQuestionEnd = off;

  const sections: ResourceRecord[][] = [[], [], []];
  for (let s: Section = Section.Answer; s <= Section.Additional; s = (s + 1) as Section) {
    for (let i = 0; i < counts[s]; i++) {
      const rr = decodeRR(buf, off, s);
      off = rrEnd;
      if (rr) sections[s].push(rr);
    }
  }

  const msg: Message = {
    id,
    qr: (flags & 0x8000) !== 0,
    opcode: (flags >> 11) & 0xf,
    aa: (flags & 0x0400) !== 0,
    tc: (flags & 0x0200) !== 0,
    rd: (flags & 0x0100) !== 0,
    ra: (flags & 0x0080) !== 0,
    z: (flags & 0x0040) !== 0,
    ad: (flags & 0x0020) !== 0,
    cd: (flags & 0x0010) !== 0,
    rcode: (foundExtendedRcode << 4) | (flags & 0xf),
    questions,
    answers: sections[Section.Answer],
    authority: sections[Section.Authority],
    additional: sections[Section.Additional],
  };
  if (foundEdns) msg.edns = foundEdns;
  return msg;
}

/** One RR at `start`; sets rrEnd. Returns undefined for the OPT record, which goes to foundEdns. */
function decodeRR(buf: Uint8Array, start: number, section: Section): ResourceRecord | undefined {
  const name = readName(buf, start);
  let off = nameEnd;
  if (off + 10 > buf.length) fail(`${SECTION_NAMES[section]} record header runs past the end of the message`);
  const type = u16(buf, off);
  const cls = u16(buf, off + 2);
  const ttl = u32(buf, off + 4);
  const rdlength = u16(buf, off + 8);
  off += 10;
  const rdEnd = off + rdlength;
  if (rdEnd > buf.length) fail(`RDATA of a type ${type} record runs past the end of the message`);
  rrEnd = rdEnd;
  if (type === RRType.OPT) {
    if (section !== Section.Additional) fail(`OPT record in the ${SECTION_NAMES[section]} section`);
    if (foundEdns) fail('more than one OPT record');
    if (name !== '.') fail('OPT record with a non-root owner name');
    foundEdns = decodeOpt(buf, cls, ttl, off, rdEnd);
    foundExtendedRcode = ttl >>> 24;
    return undefined;
  }
  return { name, type, class: cls, ttl, data: decodeRData(buf, type, cls, off, rdEnd) };
}

function decodeOpt(buf: Uint8Array, cls: number, ttl: number, start: number, end: number): Edns {
  const options: EdnsOption[] = [];
  let p = start;
  while (p < end) {
    if (p + 4 > end) fail('EDNS option header runs past the OPT RDATA');
    const code = u16(buf, p);
    const l = u16(buf, p + 2);
    if (p + 4 + l > end) fail(`EDNS option ${code} runs past the OPT RDATA`);
    options.push({ code, data: copyBytes(buf, p + 4, l) });
    p += 4 + l;
  }
  return {
    udpSize: cls,
    version: (ttl >>> 16) & 0xff,
    do: (ttl & 0x8000) !== 0,
    zFlags: ttl & 0x7fff,
    options,
  };
}

/** A copy of buf[start, start+length), detached from the packet buffer (which the server may reuse). */
function copyBytes(buf: Uint8Array, start: number, length: number): Uint8Array {
  const copy = new Uint8Array(length);
  // Options are mostly a few octets (cookies: 8-40): a loop beats creating a subarray view to set() from.
  if (length <= 64) for (let i = 0; i < length; i++) copy[i] = buf[start + i];
  else copy.set(buf.subarray(start, start + length));
  return copy;
}

function expectEnd(at: number, end: number, type: number): void {
  if (at !== end) fail(`RDATA length of a ${typeLabel(type)} record does not match its content`);
}

function typeLabel(type: number): string {
  for (const [k, v] of Object.entries(RRType)) if (v === type) return k;
  return `TYPE${type}`;
}

function decodeRData(buf: Uint8Array, type: number, cls: number, start: number, end: number): RData {
  const len = end - start;
  // Dynamic update (RFC 2136) deletes RRsets with class ANY/NONE and empty RDATA, whatever the type.
  if (len === 0 && (cls === 254 || cls === 255)) return { raw: new Uint8Array(0) };
  switch (type) {
    case RRType.A:
      if (len !== 4) fail(`A RDATA of ${len} octets (want 4)`);
      return { address: formatIPv4(buf, start) };
    case RRType.AAAA:
      if (len !== 16) fail(`AAAA RDATA of ${len} octets (want 16)`);
      return { address: formatIPv6(buf, start) };
    case RRType.NS:
    case RRType.CNAME:
    case RRType.PTR:
    case RRType.DNAME: {
      const target = readName(buf, start);
      expectEnd(nameEnd, end, type);
      return { target };
    }
    case RRType.SOA: {
      const mname = readName(buf, start);
      const rname = readName(buf, nameEnd);
      const p = nameEnd;
      expectEnd(p + 20, end, type);
      return {
        mname,
        rname,
        serial: u32(buf, p),
        refresh: u32(buf, p + 4),
        retry: u32(buf, p + 8),
        expire: u32(buf, p + 12),
        minimum: u32(buf, p + 16),
      };
    }
    case RRType.MX: {
      if (len < 3) fail(`MX RDATA of ${len} octets`);
      const exchange = readName(buf, start + 2);
      expectEnd(nameEnd, end, type);
      return { preference: u16(buf, start), exchange };
    }
    case RRType.SRV: {
      if (len < 7) fail(`SRV RDATA of ${len} octets`);
      const target = readName(buf, start + 6);
      expectEnd(nameEnd, end, type);
      return { priority: u16(buf, start), weight: u16(buf, start + 2), port: u16(buf, start + 4), target };
    }
    case RRType.TXT:
      return { strings: readCharacterStrings(buf, start, end, -1) };
    case RRType.HINFO: {
      const [cpu, os] = readCharacterStrings(buf, start, end, 2);
      return { cpu, os };
    }
    default:
      return { raw: copyBytes(buf, start, len) };
  }
}

/** The character-strings filling [start, end); exactly `want` of them unless want is -1. */
function readCharacterStrings(buf: Uint8Array, start: number, end: number, want: number): string[] {
  const strings: string[] = [];
  let p = start;
  while (p < end) {
    const l = buf[p];
    if (p + 1 + l > end) fail('character-string runs past the RDATA');
    strings.push(latin1(buf, p + 1, p + 1 + l));
    p += 1 + l;
  }
  if (want >= 0 && strings.length !== want) fail(`RDATA holds ${strings.length} character-strings (want ${want})`);
  return strings;
}

// ---- checking without decoding ----------------------------------------------------------------

/** Set by checkName: the wire length of the name it checked (1 for the root). */
let checkedNameWire = 0;

/**
 * readName's rules without building the text: the end of the name at `start` in the message
 * (after its pointer, if any), or -1 when readName would throw.
 */
function checkName(buf: Uint8Array, start: number): number {
  const len = buf.length;
  let off = start;
  let limit = start;
  let wire = 1;
  let end = -1;
  for (;;) {
    if (off >= len) return -1;
    const l = buf[off];
    if (l === 0) {
      checkedNameWire = wire;
      return end < 0 ? off + 1 : end;
    }
    const kind = l & 0xc0;
    if (kind === 0xc0) {
      if (off + 1 >= len) return -1;
      const target = ((l & 0x3f) << 8) | buf[off + 1];
      if (target >= len || target >= limit) return -1;
      if (end < 0) end = off + 2;
      limit = off = target;
      continue;
    }
    if (kind !== 0) return -1;
    wire += l + 1;
    if (wire > 255 || off + 1 + l > len) return -1;
    off += l + 1;
  }
}

/** decodeRData's checks: true when the RDATA at [start, end) decodes. */
function checkRData(buf: Uint8Array, type: number, cls: number, start: number, end: number): boolean {
  const len = end - start;
  if (len === 0 && (cls === 254 || cls === 255)) return true;
  switch (type) {
    case RRType.A:
      return len === 4;
    case RRType.AAAA:
      return len === 16;
    case RRType.NS:
    case RRType.CNAME:
    case RRType.PTR:
    case RRType.DNAME:
      return checkName(buf, start) === end;
    case RRType.SOA: {
      const rname = checkName(buf, start);
      if (rname < 0) return false;
      const numbers = checkName(buf, rname);
      return numbers >= 0 && numbers + 20 === end;
    }
    case RRType.MX:
      return len >= 3 && checkName(buf, start + 2) === end;
    case RRType.SRV:
      return len >= 7 && checkName(buf, start + 6) === end;
    case RRType.TXT:
    case RRType.HINFO: {
      let strings = 0;
      for (let p = start; p < end; p += 1 + buf[p]) {
        if (p + 1 + buf[p] > end) return false;
        strings++;
      }
      return type === RRType.TXT || strings === 2;
    }
    default:
      return true;
  }
}

/**
 * True exactly when decodeMessage would accept `buf`, at a fraction of its cost: nothing is
 * built. For bytes from elsewhere (an upstream's reply) that kdns would pass on as they are.
 */
export function isWellFormedMessage(buf: Uint8Array): boolean {
  const len = buf.length;
  if (len < HEADER) return false;
  let off = HEADER;
  for (let i = u16(buf, 4); i > 0; i--) {
    off = checkName(buf, off);
    if (off < 0 || off + 4 > len) return false;
    off += 4;
  }
  let edns = false;
  for (let s = 0; s < 3; s++) {
    for (let i = u16(buf, 6 + 2 * s); i > 0; i--) {
      off = checkName(buf, off);
      if (off < 0 || off + 10 > len) return false;
      const type = u16(buf, off);
      const rdStart = off + 10;
      const rdEnd = rdStart + u16(buf, off + 8);
      if (rdEnd > len) return false;
      if (type === RRType.OPT) {
        if (s !== Section.Additional || edns || checkedNameWire !== 1) return false;
        edns = true;
        for (let p = rdStart; p < rdEnd; p += 4 + u16(buf, p + 2)) {
          if (p + 4 > rdEnd || p + 4 + u16(buf, p + 2) > rdEnd) return false;
        }
      } else if (!checkRData(buf, type, u16(buf, off + 2), rdStart, rdEnd)) {
        return false;
      }
      off = rdEnd;
    }
  }
  return true;
}

// ---- the query fast path ----------------------------------------------------------------------

const qnameText = Buffer.allocUnsafe(256);
const qnameLower = Buffer.allocUnsafe(256);
/** Set by readQueryName: the question name as sent and lower-cased. */
let queryName = '.';
let queryNameLower = '.';

/**
 * Reads the first question name at offset 12 and returns where it ends. While the name has no
 * pointers and no octets that need escaping (nearly always), its octets are copied straight into
 * two scratch buffers, as sent and lower-cased, and each becomes a string in one call.
 */
function readQueryName(buf: Uint8Array): number {
  const len = buf.length;
  let off = HEADER;
  let w = 0;
  let wire = 1;
  let hasUpper = false;
  for (;;) {
    if (off >= len) fail('name runs past the end of the message');
    const l = buf[off];
    if (l === 0) break;
    if (l > 63) return readQueryNameSlowly(buf);
    wire += l + 1;
    if (wire > 255) fail('name longer than 255 octets');
    if (off + 1 + l > len) fail('label runs past the end of the message');
    for (let k = off + 1; k <= off + l; k++) {
      const b = buf[k];
      if (!isPlainByte(b)) return readQueryNameSlowly(buf);
      qnameText[w] = b;
      if (b >= 65 && b <= 90) {
        hasUpper = true;
        qnameLower[w] = b | 0x20;
      } else {
        qnameLower[w] = b;
      }
      w++;
    }
    qnameText[w] = DOT;
    qnameLower[w] = DOT;
    w++;
    off += l + 1;
  }
  queryName = w === 0 ? '.' : qnameText.toString('latin1', 0, w);
  queryNameLower = hasUpper ? qnameLower.toString('latin1', 0, w) : queryName;
  return off + 1;
}

/** Names with pointers or escapes: the general reader. */
function readQueryNameSlowly(buf: Uint8Array): number {
  queryName = readName(buf, HEADER);
  queryNameLower = lowerName(queryName);
  return nameEnd;
}

/** Steps over `count` records that parseQuery does not need; OPT must not be among them. */
function skipRecords(buf: Uint8Array, start: number, count: number): number {
  const len = buf.length;
  let off = start;
  for (let i = 0; i < count; i++) {
    off = skipName(buf, off);
    if (off + 10 > len) fail('record header runs past the end of the message');
    if (u16(buf, off) === RRType.OPT) fail('OPT record outside the additional section');
    off += 10 + u16(buf, off + 8);
    if (off > len) fail('RDATA runs past the end of the message');
  }
  return off;
}

/** The OPT record among the `count` additional records at `start`, if any (at most one allowed). */
function findOpt(buf: Uint8Array, start: number, count: number): Edns | undefined {
  const len = buf.length;
  let off = start;
  let edns: Edns | undefined;
  for (let i = 0; i < count; i++) {
    const owner = off;
    off = skipName(buf, off);
    if (off + 10 > len) fail('record header runs past the end of the message');
    const rdStart = off + 10;
    const rdEnd = rdStart + u16(buf, off + 8);
    if (rdEnd > len) fail('RDATA runs past the end of the message');
    if (u16(buf, off) === RRType.OPT) {
      if (edns) fail('more than one OPT record');
      if (buf[owner] !== 0 && readName(buf, owner) !== '.') fail('OPT record with a non-root owner name');
      edns = decodeOpt(buf, u16(buf, off + 2), u32(buf, off + 4), rdStart, rdEnd);
    }
    off = rdEnd;
  }
  return edns;
}

/**
 * Fast path: header + question + OPT. Throws DnsFormatError like decodeMessage. Records in the
 * answer and authority sections (unusual in queries) are stepped over: their structure is checked
 * but not their RDATA, so a query decodeMessage would reject may still parse here.
 */
export function parseQuery(buf: Uint8Array): ParsedQuery {
  resetContext();
  const len = buf.length;
  if (len < HEADER) fail(`message of ${len} octets is shorter than the 12-octet header`);
  const id = u16(buf, 0);
  const flags = u16(buf, 2);
  ctxId = id;
  ctxFlags = flags;
  const qdcount = u16(buf, 4);
  if (qdcount === 0) {
    ctxQuestionEnd = HEADER;
    fail('query without a question');
  }
  let off = readQueryName(buf);
  if (off + 4 > len) fail('question runs past the end of the message');
  const qtype = u16(buf, off);
  const qclass = u16(buf, off + 2);
  off += 4;
  for (let i = 1; i < qdcount; i++) {
    off = skipName(buf, off) + 4;
    if (off > len) fail('question runs past the end of the message');
  }
  const questionEnd = off;
  if (qdcount === 1) ctxQuestionEnd = off;
  off = skipRecords(buf, off, u16(buf, 6) + u16(buf, 8));
  const edns = findOpt(buf, off, u16(buf, 10));
  return {
    id,
    flags,
    opcode: (flags >> 11) & 0xf,
    rd: (flags & 0x0100) !== 0,
    cd: (flags & 0x0010) !== 0,
    qdcount,
    qname: queryName,
    name: queryNameLower,
    qtype,
    qclass,
    questionEnd,
    edns,
  };
}

// ---- patching pre-encoded messages -------------------------------------------------------------

/** Writes a new message ID in place. */
export function patchId(buf: Uint8Array, id: number): void {
  buf[0] = (id >> 8) & 0xff;
  buf[1] = id & 0xff;
}

/**
 * Offsets of the TTL field of every RR in the answer, authority and additional sections,
 * except OPT (whose "TTL" carries EDNS flags). Throws DnsFormatError on a malformed message.
 */
export function findTtlOffsets(wire: Uint8Array): number[] {
  resetContext();
  const len = wire.length;
  if (len < HEADER) fail(`message of ${len} octets is shorter than the 12-octet header`);
  const qdcount = u16(wire, 4);
  const rrcount = u16(wire, 6) + u16(wire, 8) + u16(wire, 10);
  let off = HEADER;
  for (let i = 0; i < qdcount; i++) {
    off = skipName(wire, off) + 4;
    if (off > len) fail('question runs past the end of the message');
  }
  const offsets: number[] = [];
  for (let i = 0; i < rrcount; i++) {
    off = skipName(wire, off);
    if (off + 10 > len) fail('record header runs past the end of the message');
    if (u16(wire, off) !== RRType.OPT) offsets.push(off + 4);
    off += 10 + u16(wire, off + 8);
    if (off > len) fail('RDATA runs past the end of the message');
  }
  return offsets;
}

/**
 * Copies the question of `query` (bytes 12 up to `questionEnd`, from parseQuery) over the question
 * of a pre-encoded single-question response, so an answer made for one spelling of a name echoes
 * the client's own (resolvers using 0x20 mixed case check it). Returns false, changing nothing,
 * unless both questions are the same name, type and class apart from ASCII case.
 */
export function copyQuestion(response: Uint8Array, query: Uint8Array, questionEnd: number): boolean {
  if (questionEnd <= HEADER || response.length < questionEnd || query.length < questionEnd) return false;
  if (u16(response, 4) !== 1) return false;
  for (let i = HEADER; i < questionEnd; i++) {
    const x = response[i];
    const y = query[i];
    // Case-folding a length octet or a type/class octet could only pair values that differ by
    // 0x20 outside A-Z, which sameIgnoringCase rejects.
    if (!sameIgnoringCase(x, y)) return false;
  }
  // Same octets up to case, so the same labels: the response's question ends where the query's does,
  // provided the name really ends there (a compressed or longer response question would not).
  resetContext();
  let end: number;
  try {
    end = skipName(response, HEADER) + 4;
  } catch {
    return false;
  }
  if (end !== questionEnd) return false;
  for (let i = HEADER; i < questionEnd; i++) response[i] = query[i];
  return true;
}

function writeU32(buf: Uint8Array, o: number, v: number): void {
  buf[o] = v >>> 24;
  buf[o + 1] = (v >>> 16) & 0xff;
  buf[o + 2] = (v >>> 8) & 0xff;
  buf[o + 3] = v & 0xff;
}

function clampTtl(ttl: number): number {
  if (!(ttl > 0)) return 0;
  return ttl >= 0xffffffff ? 0xffffffff : Math.floor(ttl);
}

/** Sets every TTL at `offsets` (from findTtlOffsets) to `ttl`. */
export function setTtls(wire: Uint8Array, offsets: readonly number[], ttl: number): void {
  const v = clampTtl(ttl);
  for (const o of offsets) writeU32(wire, o, v);
}

/** The TTLs at `offsets`, in order. */
export function readTtls(wire: Uint8Array, offsets: readonly number[]): number[] {
  return offsets.map((o) => u32(wire, o));
}

/**
 * Lowers every TTL at `offsets` by `seconds` (not below 0), in place. Returns the smallest TTL
 * left (Infinity when there are no offsets), so a cache can tell when the entry ran out.
 */
export function decrementTtls(wire: Uint8Array, offsets: readonly number[], seconds: number): number {
  let min = Infinity;
  for (const o of offsets) {
    const left = clampTtl(u32(wire, o) - seconds);
    writeU32(wire, o, left);
    if (left < min) min = left;
  }
  return min;
}

// ---- encoding -----------------------------------------------------------------------------------

// Worst case before the truncation check: a full 64 KiB message plus one maximal record.
let out = Buffer.allocUnsafe(2 * MAX_MESSAGE + 1024);
let pos = 0;
let compressing = true;
/** 0x20 while compression ignores ASCII case (folded into hashes), 0 when it must match exactly. */
let caseFold = 0x20;

// Compression. A name is first written uncompressed; then each of its suffixes, longest first,
// is looked up by a hash of its lower-cased wire octets, and a hit is confirmed by comparing
// those octets with the earlier occurrence before the suffix is replaced by a pointer. Keying
// by a hash of octets rather than by suffix strings saves a string slice and hash per label.
// An open-addressing table (hash → offset) in typed arrays: no per-message clearing (entries
// of older messages carry an older generation) and no Map overhead on the hot path.
const TABLE_SLOTS = 4096;
/** Beyond this many suffixes (a huge message) new ones are simply not offered for compression. */
const TABLE_MAX_ENTRIES = 3072;
const tableHash = new Int32Array(TABLE_SLOTS);
const tableOffset = new Int32Array(TABLE_SLOTS);
const tableGeneration = new Uint32Array(TABLE_SLOTS);
let generation = 0;
let tableEntries = 0;

function resetTable(): void {
  generation++;
  if (generation === 0xffffffff) {
    tableGeneration.fill(0);
    generation = 1;
  }
  tableEntries = 0;
}

/** Offset of the suffix with hash `h`, or -1. */
function tableGet(h: number): number {
  let i = h & (TABLE_SLOTS - 1);
  while (tableGeneration[i] === generation) {
    if (tableHash[i] === h) return tableOffset[i];
    i = (i + 1) & (TABLE_SLOTS - 1);
  }
  return -1;
}

/** Records the first offset of a suffix; later ones with the same hash are ignored. */
function tablePut(h: number, offset: number): void {
  if (tableEntries >= TABLE_MAX_ENTRIES) return;
  let i = h & (TABLE_SLOTS - 1);
  while (tableGeneration[i] === generation) {
    if (tableHash[i] === h) return;
    i = (i + 1) & (TABLE_SLOTS - 1);
  }
  tableGeneration[i] = generation;
  tableHash[i] = h;
  tableOffset[i] = offset;
  tableEntries++;
}

/** Offsets of the length octet of each label of the name being written. */
const labelAt = new Int32Array(128);
const labelHash = new Int32Array(128);
const suffixHash = new Int32Array(128);

function ensure(n: number): void {
  if (pos + n <= out.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(out.length * 2, pos + n));
  out.copy(bigger, 0, 0, pos);
  out = bigger;
}

function putU16(v: number): void {
  out[pos++] = (v >> 8) & 0xff;
  out[pos++] = v & 0xff;
}

function putU32(v: number): void {
  writeU32(out, pos, v);
  pos += 4;
}

function invalidName(name: string, why: string): never {
  throw new Error(`cannot encode name ${JSON.stringify(name)}: ${why}`);
}

/** Longest presentation text that can still be a 255-octet name (every octet as \DDD). */
const MAX_NAME_TEXT = 4 * 255;

/**
 * Writes a name. `mayPoint`: whether this name may be compressed (and pointed to later): true
 * for owner names, questions and the RFC 1035 RDATA names; false for SRV and DNAME targets.
 * Names without a trailing dot are taken as absolute.
 */
function writeName(name: string, mayPoint: boolean): void {
  if (typeof name !== 'string') invalidName(String(name), 'not a string');
  const n = name.length;
  if (n === 0 || (n === 1 && name.charCodeAt(0) === DOT)) {
    ensure(1);
    out[pos++] = 0;
    return;
  }
  if (n > MAX_NAME_TEXT) invalidName(name.slice(0, 40) + '…', 'longer than 255 octets');
  ensure(n + 2);
  const labels = writeLabels(name);
  if (compressing && mayPoint) compressLast(labels);
}

/** Folds one octet into a label hash. ASCII case is folded with | 0x20 (over-folding is harmless: hits are verified). */
function foldOctet(h: number, b: number): number {
  return Math.imul(h ^ (b | caseFold), 0x01000193);
}

const HASH_SEED = 0x811c9dc5 | 0;

/**
 * Writes the labels of `name` (no longer than MAX_NAME_TEXT) and hashes each for compressLast;
 * `\.`, `\\`, `\DDD` and `\X` escapes are decoded. Returns the number of labels.
 */
function writeLabels(name: string): number {
  const o = out;
  const n = name.length;
  const start = pos;
  let p = pos;
  let labels = 0;
  let j = 0;
  while (j < n) {
    if (labels === labelAt.length) invalidName(name, 'longer than 255 octets');
    const lengthAt = p++;
    let h = HASH_SEED;
    for (; j < n; j++) {
      let c = name.charCodeAt(j);
      if (c === DOT) break;
      if (c < 0x20 || c > 0x7e) {
        invalidName(name, `character ${c} at offset ${j} (use \\DDD escapes)`);
      } else if (c === BACKSLASH) {
        const d = j + 1 < n ? name.charCodeAt(j + 1) : -1;
        if (d >= 48 && d <= 57) {
          c = decimalEscape(name, j + 1);
          if (c < 0) invalidName(name, `bad \\DDD escape at offset ${j}`);
          j += 3;
        } else if (d >= 0x20 && d <= 0x7e) {
          c = d;
          j += 1;
        } else {
          invalidName(name, `bad escape at offset ${j}`);
        }
      }
      o[p++] = c;
      h = foldOctet(h, c);
    }
    const l = p - lengthAt - 1;
    if (l === 0) invalidName(name, `empty label at offset ${j}`);
    if (l > 63) invalidName(name, 'label longer than 63 octets');
    o[lengthAt] = l;
    labelAt[labels] = lengthAt;
    labelHash[labels] = h;
    labels++;
    j++; // the dot
  }
  o[p++] = 0;
  if (p - start > 255) invalidName(name, `longer than 255 octets (${p - start})`);
  pos = p;
  return labels;
}

/** Replaces the longest already-written suffix of the name just written by a pointer. */
function compressLast(labels: number): void {
  const o = out;
  let h = HASH_SEED;
  for (let k = labels - 1; k >= 0; k--) {
    h = Math.imul(h ^ labelHash[k], 0x9e3779b1) ^ o[labelAt[k]];
    suffixHash[k] = h;
  }
  let hit = labels;
  let target = 0;
  for (let k = 0; k < labels; k++) {
    const earlier = tableGet(suffixHash[k]);
    if (earlier >= 0 && sameName(earlier, labelAt[k])) {
      hit = k;
      target = earlier;
      break;
    }
  }
  for (let k = 0; k < hit; k++) {
    const at = labelAt[k];
    if (at <= MAX_POINTER) tablePut(suffixHash[k], at);
  }
  if (hit < labels) {
    const at = labelAt[hit];
    o[at] = 0xc0 | (target >> 8);
    o[at + 1] = target & 0xff;
    pos = at + 2;
  }
}

function sameIgnoringCase(x: number, y: number): boolean {
  if (x === y) return true;
  const lx = x | 0x20;
  return lx === (y | 0x20) && lx >= 97 && lx <= 122;
}

/** Whether the (possibly compressed) name at `a` in `out` equals the uncompressed one at `b`, ignoring ASCII case unless exactCase. */
function sameName(a: number, b: number): boolean {
  const o = out;
  for (;;) {
    let la = o[a];
    while ((la & 0xc0) === 0xc0) {
      a = ((la & 0x3f) << 8) | o[a + 1];
      la = o[a];
    }
    if (la !== o[b]) return false;
    if (la === 0) return true;
    if (caseFold === 0) {
      for (let i = 1; i <= la; i++) if (o[a + i] !== o[b + i]) return false;
    } else {
      for (let i = 1; i <= la; i++) if (!sameIgnoringCase(o[a + i], o[b + i])) return false;
    }
    a += la + 1;
    b += la + 1;
  }
}

function rdataError(rr: ResourceRecord, why: string): never {
  throw new Error(`cannot encode ${typeLabel(rr.type)} record for ${rr.name}: ${why}`);
}

function writeCharacterString(rr: ResourceRecord, s: unknown): void {
  if (typeof s !== 'string') rdataError(rr, 'character-string is not a string');
  if (s.length > 255) rdataError(rr, `character-string of ${s.length} octets (max 255)`);
  ensure(1 + s.length);
  out[pos++] = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) rdataError(rr, 'character-string holds a character above \\u00ff (strings are binary/latin1)');
    out[pos++] = c;
  }
}

function writeRData(rr: ResourceRecord): void {
  const data = rr.data;
  if (typeof data !== 'object' || data === null) rdataError(rr, 'no RDATA');
  if ((data as OpaqueData).raw instanceof Uint8Array) {
    const raw = (data as OpaqueData).raw;
    ensure(raw.length);
    out.set(raw, pos);
    pos += raw.length;
    return;
  }
  ensure(32);
  switch (rr.type) {
    case RRType.A: {
      const address = (data as AddressData).address;
      if (typeof address !== 'string' || !parseIPv4Into(address, out, pos)) rdataError(rr, `bad IPv4 address ${address}`);
      pos += 4;
      return;
    }
    case RRType.AAAA: {
      const address = (data as AddressData).address;
      if (typeof address !== 'string' || !parseIPv6Into(address, out, pos)) rdataError(rr, `bad IPv6 address ${address}`);
      pos += 16;
      return;
    }
    case RRType.NS:
    case RRType.CNAME:
    case RRType.PTR:
      writeName(requireName(rr, (data as NameData).target), true);
      return;
    case RRType.DNAME:
      // RFC 6672 §2.1: the DNAME target is always sent uncompressed.
      writeName(requireName(rr, (data as NameData).target), false);
      return;
    case RRType.SOA: {
      const soa = data as SOAData;
      writeName(requireName(rr, soa.mname), true);
      writeName(requireName(rr, soa.rname), true);
      ensure(20);
      putU32(clampTtl(soa.serial));
      putU32(clampTtl(soa.refresh));
      putU32(clampTtl(soa.retry));
      putU32(clampTtl(soa.expire));
      putU32(clampTtl(soa.minimum));
      return;
    }
    case RRType.MX: {
      const mx = data as MXData;
      putU16(mx.preference);
      writeName(requireName(rr, mx.exchange), true);
      return;
    }
    case RRType.SRV: {
      const srv = data as SRVData;
      putU16(srv.priority);
      putU16(srv.weight);
      putU16(srv.port);
      // RFC 2782: "name compression is not to be used for this field".
      writeName(requireName(rr, srv.target), false);
      return;
    }
    case RRType.TXT: {
      const strings = (data as TXTData).strings;
      if (!Array.isArray(strings)) rdataError(rr, 'TXT data without strings');
      for (const s of strings) writeCharacterString(rr, s);
      return;
    }
    case RRType.HINFO: {
      const h = data as HINFOData;
      writeCharacterString(rr, h.cpu);
      writeCharacterString(rr, h.os);
      return;
    }
    default:
      rdataError(rr, 'no typed RDATA for this type: use OpaqueData ({ raw })');
  }
}

function requireName(rr: ResourceRecord, name: unknown): string {
  if (typeof name !== 'string') rdataError(rr, 'missing domain name in RDATA');
  return name;
}

function writeRR(rr: ResourceRecord): void {
  if (rr.type === RRType.OPT) rdataError(rr, 'put EDNS in msg.edns, not in a section');
  writeName(rr.name, true);
  ensure(10);
  putU16(rr.type);
  putU16(rr.class);
  putU32(clampTtl(rr.ttl));
  const lengthAt = pos;
  pos += 2;
  writeRData(rr);
  const rdlength = pos - lengthAt - 2;
  if (rdlength > 0xffff) rdataError(rr, `RDATA of ${rdlength} octets`);
  out[lengthAt] = rdlength >> 8;
  out[lengthAt + 1] = rdlength & 0xff;
}

function optSize(edns: Edns): number {
  let size = 11;
  for (const o of edns.options) size += 4 + o.data.length;
  return size;
}

function writeOpt(edns: Edns, rcode: number): void {
  ensure(optSize(edns));
  out[pos++] = 0;
  putU16(RRType.OPT);
  putU16(edns.udpSize);
  const ttl = (((rcode >> 4) & 0xff) << 24) | ((edns.version & 0xff) << 16) | (edns.do ? 0x8000 : 0) | (edns.zFlags & 0x7fff);
  putU32(ttl >>> 0);
  const lengthAt = pos;
  pos += 2;
  for (const o of edns.options) {
    putU16(o.code);
    putU16(o.data.length);
    out.set(o.data, pos);
    pos += o.data.length;
  }
  const rdlength = pos - lengthAt - 2;
  if (rdlength > 0xffff) throw new Error(`EDNS options of ${rdlength} octets`);
  out[lengthAt] = rdlength >> 8;
  out[lengthAt + 1] = rdlength & 0xff;
}

/**
 * A query of one question (and an OPT record with `edns`): what encodeMessage makes of such a
 * message, without the compression table or the section walks. `flags` is the header's flags
 * word. Returns the bytes and where the question ends.
 */
export function encodeQuery(id: number, flags: number, qname: string, qtype: number, qclass: number, edns: Edns | undefined): { wire: Buffer; questionEnd: number } {
  compressing = false;
  pos = HEADER;
  writeName(qname, false);
  ensure(4);
  putU16(qtype);
  putU16(qclass);
  const questionEnd = pos;
  if (edns) writeOpt(edns, 0);
  out[0] = (id >> 8) & 0xff;
  out[1] = id & 0xff;
  out[2] = (flags >> 8) & 0xff;
  out[3] = flags & 0xff;
  out[4] = 0;
  out[5] = 1;
  out.fill(0, 6, 10);
  out[10] = 0;
  out[11] = edns ? 1 : 0;
  const wire = Buffer.allocUnsafe(pos);
  out.copy(wire, 0, 0, pos);
  return { wire, questionEnd };
}

function headerFlags(msg: Message, tc: boolean): number {
  return (
    (msg.qr ? 0x8000 : 0) |
    ((msg.opcode & 0xf) << 11) |
    (msg.aa ? 0x0400 : 0) |
    (tc ? 0x0200 : 0) |
    (msg.rd ? 0x0100 : 0) |
    (msg.ra ? 0x0080 : 0) |
    (msg.z ? 0x0040 : 0) |
    (msg.ad ? 0x0020 : 0) |
    (msg.cd ? 0x0010 : 0) |
    (msg.rcode & 0xf)
  );
}

/** Writes records while they fit below `limit`; returns how many did. The first that does not fit is undone. */
function writeSection(records: readonly ResourceRecord[], limit: number): number {
  for (let i = 0; i < records.length; i++) {
    const before = pos;
    writeRR(records[i]);
    if (pos > limit) {
      pos = before;
      return i;
    }
  }
  return records.length;
}

/**
 * Encodes a message (compressing names). Never throws for a well-typed Message except on invalid
 * names/addresses/RDATA, an RCODE above 15 without EDNS, or a maxSize below 12.
 *
 * With maxSize, records that do not fit are dropped from the end (additional, then authority,
 * then answers); the question and the OPT record stay. TC is set when an answer or authority
 * record was dropped, not when only additional records were (RFC 2181 §9). If even the question
 * and OPT do not fit, the result is a bare header (with OPT if that fits) and TC.
 */
export function encodeMessage(msg: Message, opts?: EncodeOptions): Buffer {
  const maxSize = Math.min(opts?.maxSize ?? MAX_MESSAGE, MAX_MESSAGE);
  if (!(maxSize >= HEADER)) throw new Error(`maxSize ${opts?.maxSize} is below the 12-octet header`);
  const rcode = msg.rcode;
  if (!(rcode >= 0 && rcode <= 0xfff)) throw new Error(`RCODE ${rcode} out of range`);
  if (rcode > 15 && !msg.edns) throw new Error(`RCODE ${rcode} needs EDNS (the upper bits travel in the OPT record)`);
  compressing = opts?.compress ?? true;
  caseFold = opts?.exactCase === true ? 0 : 0x20;
  resetTable();
  pos = HEADER;

  for (const q of msg.questions) {
    writeName(q.name, true);
    ensure(4);
    putU16(q.type);
    putU16(q.class);
  }
  let qdcount = msg.questions.length;
  const optLength = msg.edns ? optSize(msg.edns) : 0;
  const limit = maxSize - optLength;

  let an = 0;
  let ns = 0;
  let ar = 0;
  let tc = msg.tc;
  if (pos > limit) {
    // Not even the question fits: a bare header says "retry over TCP".
    pos = HEADER;
    qdcount = 0;
    tc = true;
  } else {
    an = writeSection(msg.answers, limit);
    if (an === msg.answers.length) {
      ns = writeSection(msg.authority, limit);
      if (ns === msg.authority.length) ar = writeSection(msg.additional, limit);
    }
    if (an < msg.answers.length || ns < msg.authority.length) tc = true;
  }
  const withOpt = msg.edns !== undefined && pos + optLength <= maxSize;
  if (withOpt) writeOpt(msg.edns as Edns, rcode);

  out[0] = (msg.id >> 8) & 0xff;
  out[1] = msg.id & 0xff;
  const flags = headerFlags(msg, tc);
  out[2] = flags >> 8;
  out[3] = flags & 0xff;
  out[4] = qdcount >> 8;
  out[5] = qdcount & 0xff;
  out[6] = an >> 8;
  out[7] = an & 0xff;
  out[8] = ns >> 8;
  out[9] = ns & 0xff;
  const arcount = ar + (withOpt ? 1 : 0);
  out[10] = arcount >> 8;
  out[11] = arcount & 0xff;

  const result = Buffer.allocUnsafe(pos);
  out.copy(result, 0, 0, pos);
  return result;
}
