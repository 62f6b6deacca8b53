// RFC 1035 §5 master files ("zone files") to resource records: $ORIGIN, $TTL (RFC 2308),
// $INCLUDE, `@`, relative names, owner/TTL/class carried over from the previous record,
// parentheses spanning lines, comments, quoted character-strings with \X and \DDD escapes,
// TTLs with BIND's units (1h30m, 2W), and RFC 3597 `\# len hex` RDATA.
//
// Pure: the text comes in as a (latin1) string so every byte of a TXT string survives, and
// $INCLUDE reads through a callback the caller provides. Every error names `file:line`.

import { formatIPv6, parseIPv4, parseIPv6 } from './ip.js';
import { canonicalName, decimalEscape, lowerName } from './name.js';
import { classFromName, typeFromName, typeName } from './rr.js';
import type { RData, ResourceRecord } from './types.js';
import { DnsClass, RRType } from './types.js';

export class ZoneFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly detail: string,
  ) {
    super(line > 0 ? `${file}:${line}: ${detail}` : `${file}: ${detail}`);
    this.name = 'ZoneFileError';
  }
}

/** A record and where it was written. */
export interface ZoneEntry {
  rr: ResourceRecord;
  file: string;
  line: number;
}

export interface ZoneFileOptions {
  /** Absolute origin names are relative to until a $ORIGIN says otherwise. */
  origin: string;
  /** Name shown in errors (and base for $INCLUDE paths, through readInclude). */
  file: string;
  /**
   * Reads an $INCLUDE'd file: `path` as written, `from` the file that includes it. Returns
   * the text (latin1) and the name to show in errors. Without it, $INCLUDE is an error.
   */
  readInclude?: (path: string, from: string) => { text: string; file: string };
  /**
   * Types to pass over without reading their RDATA (a server that does not sign answers
   * skips a signed zone's RRSIG and NSEC records); each is reported here.
   */
  skip?: { types: ReadonlySet<number>; found: (type: number, file: string, line: number) => void };
}

/** TTL used when neither the record, $TTL nor an earlier record gives one (as miekg/dns). */
export const DEFAULT_ZONE_TTL = 3600;
const MAX_TTL = 0x7fffffff;
const MAX_INCLUDE_DEPTH = 8;

// ---- tokens ------------------------------------------------------------------------------

interface Token {
  /** Raw text, escapes kept as written; for a quoted token, what is between the quotes. */
  text: string;
  quoted: boolean;
  line: number;
}

/** One logical line: its tokens, and whether it began with blank space (owner omitted). */
interface Entry {
  tokens: Token[];
  line: number;
  blankOwner: boolean;
}

const isBlank = (c: string): boolean => c === ' ' || c === '\t' || c === '\r';

/** Splits master-file text into entries; parentheses join lines, `;` starts a comment. */
function tokenize(input: string, file: string): Entry[] {
  // A UTF-8 byte order mark, read as latin1, is not part of the first owner name.
  const text = input.startsWith('\xef\xbb\xbf') || input.startsWith('\ufeff') ? input.replace(/^(\xef\xbb\xbf|\ufeff)/, '') : input;
  const entries: Entry[] = [];
  let line = 1;
  let depth = 0;
  let openedAt = 0;
  let current: Entry | undefined;
  let atLineStart = true;
  const n = text.length;
  const push = (tok: Token, blankOwner: boolean): void => {
    current ??= { tokens: [], line: tok.line, blankOwner };
    current.tokens.push(tok);
  };
  let lineStartsBlank = false;
  for (let i = 0; i < n; ) {
    const c = text[i] as string;
    if (atLineStart) {
      lineStartsBlank = isBlank(c);
      atLineStart = false;
    }
    if (c === '\n') {
      line++;
      i++;
      atLineStart = true;
      if (depth === 0 && current) {
        entries.push(current);
        current = undefined;
      }
      continue;
    }
    if (isBlank(c)) {
      i++;
      continue;
    }
    if (c === ';') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '(') {
      if (depth === 0) openedAt = line;
      depth++;
      i++;
      continue;
    }
    if (c === ')') {
      if (depth === 0) throw new ZoneFileError(file, line, 'unbalanced ")"');
      depth--;
      i++;
      continue;
    }
    const blankOwner = current === undefined && lineStartsBlank;
    if (c === '"') {
      const start = line;
      let j = i + 1;
      for (;;) {
        if (j >= n) throw new ZoneFileError(file, start, 'unterminated quoted string');
        const d = text.charCodeAt(j);
        if (d === 0x22) break;
        if (d === 0x0a) throw new ZoneFileError(file, start, 'unterminated quoted string (newline inside quotes)');
        if (d === 0x5c && text.charCodeAt(j + 1) === 0x0a) line++;
        j += d === 0x5c && j + 1 < n ? 2 : 1;
      }
      // Escapes stay as written: names and strings decode them when they are read.
      push({ text: text.slice(i + 1, j), quoted: true, line: start }, blankOwner);
      i = j + 1;
      continue;
    }
    let j = i;
    while (j < n) {
      const d = text[j] as string;
      if (d === '\\' && j + 1 < n && text[j + 1] !== '\n') {
        j += 2;
        continue;
      }
      if (isBlank(d) || d === '\n' || d === ';' || d === '(' || d === ')' || d === '"') break;
      j++;
    }
    const out = text.slice(i, j);
    push({ text: out, quoted: false, line }, blankOwner);
    i = j;
  }
  if (depth > 0) throw new ZoneFileError(file, openedAt, 'unbalanced "(": no closing ")"');
  if (current) entries.push(current);
  return entries;
}

// ---- values ------------------------------------------------------------------------------

const TTL_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** A TTL: seconds, or BIND's unit form ("1h30m", "2W"); undefined when the text is not one. */
export function parseTtlText(text: string): number | undefined {
  let total: number;
  if (/^[0-9]+$/.test(text)) total = Number(text);
  else if (/^([0-9]+[smhdwSMHDW])+$/.test(text)) {
    total = 0;
    for (const m of text.matchAll(/([0-9]+)([smhdwSMHDW])/g)) total += Number(m[1]) * (TTL_UNITS[(m[2] as string).toLowerCase()] as number);
  } else return undefined;
  return total;
}

/** The bytes a token stands for, \X and \DDD escapes decoded. */
function decodeCharacters(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = s.charCodeAt(i + 1);
    if (next >= 48 && next <= 57) {
      const v = decimalEscape(s, i + 1);
      if (v < 0) throw new Error(`bad \\DDD escape in "${s}"`);
      out += String.fromCharCode(v);
      i += 3;
    } else {
      out += s[i + 1] ?? '';
      i += 1;
    }
  }
  return out;
}

/** A character-string (RFC 1035 §3.3): at most 255 octets. */
function characterString(tok: Token): string {
  const out = decodeCharacters(tok.text);
  if (out.length > 255) throw new Error(`character-string of ${out.length} octets (at most 255)`);
  return out;
}

/** A name token as a canonical absolute name: `@` is the origin, relative names get it appended. */
function absoluteName(text: string, origin: string): string {
  if (text === '@') return origin;
  const full = endsWithUnescapedDot(text) ? text : origin === '.' ? `${text}.` : `${text}.${origin}`;
  if (PLAIN_NAME.test(full) && plainNameFits(full)) return full;
  // Bytes outside printable ASCII are written as \DDD so the name helpers accept them.
  let escaped = '';
  for (let i = 0; i < full.length; i++) {
    const c = full.charCodeAt(i);
    escaped += c > 0x20 && c < 0x7f ? full[i] : `\\${String(c).padStart(3, '0')}`;
  }
  try {
    return canonicalName(escaped);
  } catch (e) {
    throw new Error(`invalid domain name "${text}": ${(e as Error).message.replace(/^invalid domain name "[^"]*": /, '')}`);
  }
}

/** Names without escapes or unusual bytes, already in canonical form when their labels fit. */
const PLAIN_NAME = /^[A-Za-z0-9_*-]+(\.[A-Za-z0-9_*-]+)*\.$/;

function plainNameFits(name: string): boolean {
  if (name.length > 254) return false;
  let start = 0;
  for (let i = 0; i < name.length; i++) {
    if (name.charCodeAt(i) !== 0x2e) continue;
    if (i - start > 63) return false;
    start = i + 1;
  }
  return true;
}

function endsWithUnescapedDot(s: string): boolean {
  if (!s.endsWith('.')) return false;
  let slashes = 0;
  for (let i = s.length - 2; i >= 0 && s[i] === '\\'; i--) slashes++;
  return slashes % 2 === 0;
}

function uint(text: string, bits: 8 | 16 | 32, what: string): number {
  const max = bits === 32 ? 0xffffffff : (1 << bits) - 1;
  const v = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(v <= max)) throw new Error(`invalid ${what} "${text}" (an integer from 0 to ${max})`);
  return v;
}

/** A time field of the SOA: seconds or BIND units. */
function soaTime(text: string, what: string): number {
  const v = parseTtlText(text);
  if (v === undefined || v > 0xffffffff) throw new Error(`invalid SOA ${what} "${text}"`);
  return v;
}

function hexBytes(text: string, what: string): number[] {
  if (!/^([0-9a-fA-F]{2})*$/.test(text) || text.length === 0) throw new Error(`invalid ${what}: "${text}" is not an even number of hex digits`);
  const out: number[] = [];
  for (let i = 0; i < text.length; i += 2) out.push(parseInt(text.slice(i, i + 2), 16));
  return out;
}

function base64Bytes(text: string, what: string): number[] {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) throw new Error(`invalid ${what}: not base64`);
  return [...Buffer.from(text, 'base64')];
}

const u16 = (v: number): number[] => [v >> 8, v & 0xff];

// ---- RDATA -------------------------------------------------------------------------------

/** The RDATA of a record of `type` from its tokens. */
function rdata(type: number, toks: Token[], origin: string): RData {
  const texts = toks.map((t) => t.text);
  const want = (n: number, shape: string): void => {
    if (toks.length !== n) throw new Error(`${typeName(type)} needs ${shape}, got ${toks.length} field(s)`);
  };
  const name = (i: number): string => absoluteName(texts[i] as string, origin);
  if (texts[0] === '\\#' && toks[0]?.quoted === false) return genericRData(type, texts.slice(1));
  switch (type) {
    case RRType.A: {
      want(1, 'an IPv4 address');
      if (!parseIPv4(texts[0] as string)) throw new Error(`invalid IPv4 address "${texts[0]}"`);
      return { address: texts[0] as string };
    }
    case RRType.AAAA: {
      want(1, 'an IPv6 address');
      const b = parseIPv6(texts[0] as string);
      if (!b) throw new Error(`invalid IPv6 address "${texts[0]}"`);
      return { address: formatIPv6(b) };
    }
    case RRType.NS:
    case RRType.CNAME:
    case RRType.PTR:
    case RRType.DNAME:
      want(1, 'one domain name');
      return { target: name(0) };
    case RRType.SOA:
      want(7, 'MNAME RNAME SERIAL REFRESH RETRY EXPIRE MINIMUM');
      return {
        mname: name(0),
        rname: name(1),
        serial: uint(texts[2] as string, 32, 'SOA serial'),
        refresh: soaTime(texts[3] as string, 'refresh'),
        retry: soaTime(texts[4] as string, 'retry'),
        expire: soaTime(texts[5] as string, 'expire'),
        minimum: soaTime(texts[6] as string, 'minimum'),
      };
    case RRType.MX:
      want(2, 'PREFERENCE EXCHANGE');
      return { preference: uint(texts[0] as string, 16, 'MX preference'), exchange: name(1) };
    case RRType.SRV:
      want(4, 'PRIORITY WEIGHT PORT TARGET');
      return {
        priority: uint(texts[0] as string, 16, 'SRV priority'),
        weight: uint(texts[1] as string, 16, 'SRV weight'),
        port: uint(texts[2] as string, 16, 'SRV port'),
        target: name(3),
      };
    case RRType.TXT:
      if (toks.length === 0) throw new Error('TXT needs at least one character-string');
      return { strings: toks.map(characterString) };
    case RRType.HINFO:
      want(2, 'CPU OS');
      return { cpu: characterString(toks[0] as Token), os: characterString(toks[1] as Token) };
    default:
      return { raw: Uint8Array.from(opaqueRData(type, toks, texts)) };
  }
}

const SPF = 99;
const CAA = 257;
const SSHFP = 44;
const TLSA = 52;
const DNSKEY = 48;
const CDS = 59;
const CDNSKEY = 60;

/** Types kdns keeps as opaque RDATA but can still read from their presentation form. */
function opaqueRData(type: number, toks: Token[], texts: string[]): number[] {
  const fixed = (n: number, shape: string): void => {
    if (toks.length < n) throw new Error(`${typeName(type)} needs ${shape}`);
  };
  switch (type) {
    case SPF: {
      if (toks.length === 0) throw new Error('SPF needs at least one character-string');
      return toks.flatMap((t) => {
        const s = characterString(t);
        return [s.length, ...Buffer.from(s, 'latin1')];
      });
    }
    case CAA: {
      if (toks.length !== 3) throw new Error('CAA needs FLAGS TAG VALUE');
      const tag = texts[1] as string;
      if (!/^[A-Za-z0-9]{1,255}$/.test(tag)) throw new Error(`invalid CAA tag "${tag}"`);
      // The value is not a character-string: it runs to the end of the RDATA, unbounded.
      const value = decodeCharacters((toks[2] as Token).text);
      return [uint(texts[0] as string, 8, 'CAA flags'), tag.length, ...Buffer.from(tag, 'latin1'), ...Buffer.from(value, 'latin1')];
    }
    case RRType.DS:
    case CDS:
      fixed(4, 'KEYTAG ALGORITHM DIGESTTYPE DIGEST');
      return [...u16(uint(texts[0] as string, 16, 'DS key tag')), uint(texts[1] as string, 8, 'DS algorithm'), uint(texts[2] as string, 8, 'DS digest type'), ...hexBytes(texts.slice(3).join(''), 'DS digest')];
    case SSHFP:
      fixed(3, 'ALGORITHM TYPE FINGERPRINT');
      return [uint(texts[0] as string, 8, 'SSHFP algorithm'), uint(texts[1] as string, 8, 'SSHFP type'), ...hexBytes(texts.slice(2).join(''), 'SSHFP fingerprint')];
    case TLSA:
      fixed(4, 'USAGE SELECTOR MATCHING-TYPE DATA');
      return [uint(texts[0] as string, 8, 'TLSA usage'), uint(texts[1] as string, 8, 'TLSA selector'), uint(texts[2] as string, 8, 'TLSA matching type'), ...hexBytes(texts.slice(3).join(''), 'TLSA data')];
    case DNSKEY:
    case CDNSKEY:
      fixed(4, 'FLAGS PROTOCOL ALGORITHM KEY');
      return [...u16(uint(texts[0] as string, 16, 'DNSKEY flags')), uint(texts[1] as string, 8, 'DNSKEY protocol'), uint(texts[2] as string, 8, 'DNSKEY algorithm'), ...base64Bytes(texts.slice(3).join(''), 'DNSKEY key')];
    default:
      throw new Error(`record type ${typeName(type)} is not supported in zone files by kdns (write its RDATA in the RFC 3597 form "\\# LENGTH HEX")`);
  }
}

/** RFC 3597 `\# LENGTH HEX...`. Types kdns keeps as structured data need their own syntax. */
function genericRData(type: number, parts: string[]): RData {
  const [lengthText, ...hexParts] = parts;
  const length = uint(lengthText ?? '', 16, 'RFC 3597 RDATA length');
  const bytes = length === 0 && hexParts.length === 0 ? [] : hexBytes(hexParts.join(''), 'RFC 3597 RDATA');
  if (bytes.length !== length) throw new Error(`RFC 3597 RDATA says ${length} octets but has ${bytes.length}`);
  if (STRUCTURED.has(type)) throw new Error(`write ${typeName(type)} RDATA in its own syntax, not "\\#"`);
  return { raw: Uint8Array.from(bytes) };
}

const STRUCTURED = new Set<number>([RRType.A, RRType.AAAA, RRType.NS, RRType.CNAME, RRType.PTR, RRType.DNAME, RRType.SOA, RRType.MX, RRType.SRV, RRType.TXT, RRType.HINFO]);

/** Types that only mean something in a message, never in a zone. */
const META_TYPES = new Set<number>([RRType.OPT, RRType.IXFR, RRType.AXFR, RRType.ANY, 249, 250, 253, 254]);

// ---- entries -----------------------------------------------------------------------------

interface ParseState {
  origin: string;
  /** $TTL, once set. */
  defaultTtl?: number;
  /** The TTL of the previous record (RFC 1035's rule when there is no $TTL). */
  lastTtl?: number;
  lastOwner?: string;
  file: string;
  depth: number;
  out: ZoneEntry[];
  readInclude?: ZoneFileOptions['readInclude'];
  skip?: ZoneFileOptions['skip'];
}

/** Parses a master file. Throws ZoneFileError naming the file and line of the first problem. */
export function parseZoneFile(text: string, opts: ZoneFileOptions): ZoneEntry[] {
  let origin: string;
  try {
    origin = lowerName(canonicalName(opts.origin.endsWith('.') ? opts.origin : `${opts.origin}.`));
  } catch (e) {
    throw new ZoneFileError(opts.file, 0, `invalid origin "${opts.origin}": ${(e as Error).message}`);
  }
  const state: ParseState = { origin, file: opts.file, depth: 0, out: [], readInclude: opts.readInclude, skip: opts.skip };
  parseInto(text, state);
  return state.out;
}

function parseInto(text: string, state: ParseState): void {
  for (const entry of tokenize(text, state.file)) {
    try {
      parseEntry(entry, state);
    } catch (e) {
      if (e instanceof ZoneFileError) throw e;
      throw new ZoneFileError(state.file, entry.line, (e as Error).message);
    }
  }
}

function parseEntry(entry: Entry, state: ParseState): void {
  const toks = entry.tokens;
  const first = toks[0] as Token;
  if (!entry.blankOwner && !first.quoted && first.text.startsWith('$')) return directive(entry, state);
  let i = 0;
  let owner: string;
  if (entry.blankOwner) {
    if (state.lastOwner === undefined) throw new Error('record without an owner name, and no earlier record to take it from');
    owner = state.lastOwner;
  } else {
    owner = absoluteName(first.text, state.origin);
    i = 1;
  }
  let ttl: number | undefined;
  let cls: number | undefined;
  // [TTL] [CLASS] or [CLASS] [TTL], both optional (RFC 1035 §5.1).
  for (let k = 0; k < 2 && i < toks.length; k++) {
    const t = (toks[i] as Token).text;
    const asTtl = ttl === undefined ? parseTtlText(t) : undefined;
    if (asTtl !== undefined) {
      if (asTtl > MAX_TTL) throw new Error(`TTL ${t} is above 2147483647 (RFC 2181)`);
      ttl = asTtl;
      i++;
      continue;
    }
    const asClass = cls === undefined && typeFromName(t) === undefined ? classFromName(t) : undefined;
    if (asClass !== undefined) {
      if (asClass !== DnsClass.IN) throw new Error(`class ${t.toUpperCase()} is not supported (only IN)`);
      cls = asClass;
      i++;
      continue;
    }
    break;
  }
  const typeTok = toks[i];
  if (!typeTok) throw new Error('record without a type');
  const type = typeFromName(typeTok.text);
  if (type === undefined) throw new Error(`unknown record type "${typeTok.text}"`);
  if (META_TYPES.has(type)) throw new Error(`${typeName(type)} cannot appear in a zone file`);
  if (state.skip?.types.has(type)) {
    state.skip.found(type, state.file, entry.line);
    state.lastOwner = owner;
    return;
  }
  const data = rdata(type, toks.slice(i + 1), state.origin);
  ttl ??= state.defaultTtl ?? state.lastTtl ?? (type === RRType.SOA ? Math.min((data as { minimum: number }).minimum, MAX_TTL) : DEFAULT_ZONE_TTL);
  if (state.defaultTtl === undefined) state.lastTtl = ttl;
  state.lastOwner = owner;
  state.out.push({ rr: { name: owner, type, class: DnsClass.IN, ttl, data }, file: state.file, line: entry.line });
}

function directive(entry: Entry, state: ParseState): void {
  const [head, ...args] = entry.tokens.map((t) => t.text);
  switch ((head as string).toUpperCase()) {
    case '$ORIGIN':
      if (args.length !== 1) throw new Error('$ORIGIN needs one domain name');
      state.origin = lowerName(absoluteName(args[0] as string, state.origin));
      return;
    case '$TTL': {
      if (args.length !== 1) throw new Error('$TTL needs one TTL');
      const ttl = parseTtlText(args[0] as string);
      if (ttl === undefined) throw new Error(`invalid $TTL "${args[0]}"`);
      if (ttl > MAX_TTL) throw new Error(`$TTL ${args[0]} is above 2147483647 (RFC 2181)`);
      state.defaultTtl = ttl;
      return;
    }
    case '$INCLUDE': {
      if (args.length < 1 || args.length > 2) throw new Error('$INCLUDE needs a file name and an optional origin');
      if (!state.readInclude) throw new Error('$INCLUDE is not allowed here');
      if (state.depth >= MAX_INCLUDE_DEPTH) throw new Error(`$INCLUDE nested more than ${MAX_INCLUDE_DEPTH} deep`);
      let included: { text: string; file: string };
      try {
        included = state.readInclude(args[0] as string, state.file);
      } catch (e) {
        throw new Error(`$INCLUDE ${args[0]}: ${(e as Error).message}`);
      }
      // The included file starts with the including origin (or the one given) and returns to ours after (RFC 1035 §5.1).
      const sub: ParseState = {
        ...state,
        origin: args[1] !== undefined ? lowerName(absoluteName(args[1], state.origin)) : state.origin,
        file: included.file,
        depth: state.depth + 1,
      };
      parseInto(included.text, sub);
      state.lastOwner = sub.lastOwner;
      state.lastTtl = sub.lastTtl;
      return;
    }
    case '$GENERATE':
      throw new Error('$GENERATE is not supported by kdns');
    default:
      throw new Error(`unknown directive "${head}"`);
  }
}
