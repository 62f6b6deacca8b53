// Query-log formats with CoreDNS's placeholders ({remote}, {>id}, {rcode}, {/metadata}, ...).
// A format is compiled once at setup into literal and value parts, so a query only appends strings.

import { className, rcodeName, typeName } from '../../lib/dns/rr.js';
import type { DnsRequest } from '../../server/request.js';

/** What the placeholders read: the query, and the response as the client gets it. */
export interface LogEntry {
  req: DnsRequest;
  /** Response code sent. */
  rcode: number;
  /** The response bytes sent (size and header flags are read from them), if any. */
  wire: Buffer | undefined;
  /** Nanoseconds from receiving the query to having the response. */
  durationNs: number;
}

/** CoreDNS's empty value, for placeholders without a value (no response, unknown metadata). */
export const EMPTY = '-';

export const COMMON_FORMAT = '{remote}:{port} - {>id} "{type} {class} {name} {proto} {size} {>do} {>bufsize}" {rcode} {>rflags} {rsize} {duration}';
export const COMBINED_FORMAT = `${COMMON_FORMAT} "{>opcode}"`;

type Value = (e: LogEntry) => string;

/** IPv6 addresses in brackets, so `{remote}:{port}` stays readable (RFC 3986 style). */
function bracketed(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

/** Go's strconv.FormatFloat(seconds, 'f', -1) + "s": "0.000123456s", "1.5s", "2s". */
export function formatSeconds(ns: number): string {
  const whole = Math.floor(ns / 1e9);
  let frac = Math.round(ns - whole * 1e9);
  if (frac === 0) return `${whole}s`;
  // Drop trailing zeros arithmetically: cheaper than padding and a regular expression per line.
  let digits = 9;
  while (frac % 10 === 0) {
    frac /= 10;
    digits--;
  }
  const text = String(frac);
  return `${whole}.${'00000000'.slice(0, digits - text.length)}${text}s`;
}

/** Flag texts by the flag bits of header bytes 2 and 3, made on first use (a few dozen in practice). */
const flagTexts: string[] = [];

/** Response header flags that are set, CoreDNS's order: "qr,aa,rd,ra". */
export function flagsOf(wire: Buffer): string {
  if (wire.length < 4) return EMPTY;
  const hi = (wire[2] as number) & 0x87;
  const lo = (wire[3] as number) & 0xf0;
  const key = (hi << 8) | lo;
  return (flagTexts[key] ??= flagText(hi, lo));
}

function flagText(hi: number, lo: number): string {
  const set: string[] = [];
  if (hi & 0x80) set.push('qr');
  if (hi & 0x04) set.push('aa');
  if (hi & 0x02) set.push('tc');
  if (hi & 0x01) set.push('rd');
  if (lo & 0x80) set.push('ra');
  if (lo & 0x40) set.push('z');
  if (lo & 0x20) set.push('ad');
  if (lo & 0x10) set.push('cd');
  return set.join(',');
}

/** Decimal text of 16-bit numbers (IDs, ports, sizes), made once each: number → string costs ~0.1 µs. */
const smallInts: string[] = [];

function decimal(n: number): string {
  if (n >= 0 && n < 65536) return (smallInts[n] ??= String(n));
  return String(n);
}

/** The mnemonic, or the bare number for codes without one (as Go's dns.RcodeToString). */
function rcodeText(rcode: number): string {
  return (rcodeTexts[rcode] ??= rcodeName(rcode).startsWith('RCODE') ? String(rcode) : rcodeName(rcode));
}
const rcodeTexts: string[] = [];

/** The EDNS0 buffer size of the query, normalized as CoreDNS does: 64 KiB over TCP, at least 512. */
function bufsizeOf(req: DnsRequest): number {
  return req.transport === 'tcp' ? 65535 : req.maxUdpSize;
}

const VALUES: ReadonlyMap<string, Value> = new Map<string, Value>([
  ['{type}', (e) => typeName(e.req.qtype)],
  ['{name}', (e) => e.req.name],
  ['{class}', (e) => className(e.req.qclass)],
  ['{proto}', (e) => e.req.transport],
  ['{size}', (e) => decimal(e.req.raw.length)],
  ['{remote}', (e) => bracketed(e.req.client.remoteAddress)],
  ['{port}', (e) => decimal(e.req.client.remotePort)],
  ['{local}', (e) => bracketed(e.req.client.localAddress)],
  ['{>id}', (e) => decimal(e.req.id)],
  ['{>opcode}', (e) => decimal(e.req.query.opcode)],
  ['{>do}', (e) => (e.req.do ? 'true' : 'false')],
  ['{>bufsize}', (e) => decimal(bufsizeOf(e.req))],
  ['{rcode}', (e) => rcodeText(e.rcode)],
  ['{rsize}', (e) => (e.wire ? decimal(e.wire.length) : EMPTY)],
  ['{duration}', (e) => formatSeconds(e.durationNs)],
  ['{>rflags}', (e) => (e.wire ? flagsOf(e.wire) : EMPTY)],
]);

export type FormatPart = string | Value;

/**
 * Splits a format into literal text and placeholders. Like CoreDNS it looks for each `}` and the
 * nearest `{` before it, so `{ {type} }` works; an unknown `{word}` stays literal text.
 */
export function compileFormat(format: string): FormatPart[] {
  const parts: FormatPart[] = [];
  let literal = '';
  let rest = format;
  for (;;) {
    const close = rest.indexOf('}');
    if (close < 0) break;
    const open = rest.lastIndexOf('{', close);
    const token = open < 0 ? '' : rest.slice(open, close + 1);
    const value = VALUES.get(token) ?? (token.startsWith('{/') ? metadataValue(token.slice(2, -1)) : undefined);
    if (value === undefined) {
      literal += rest.slice(0, close + 1);
    } else {
      literal += rest.slice(0, open);
      if (literal !== '') parts.push(literal);
      literal = '';
      parts.push(value);
    }
    rest = rest.slice(close + 1);
  }
  literal += rest;
  if (literal !== '') parts.push(literal);
  return parts;
}

function metadataValue(label: string): Value {
  return (e) => e.req.metadata.get(label) ?? EMPTY;
}

export function render(parts: readonly FormatPart[], entry: LogEntry): string {
  let out = '';
  for (const p of parts) out += typeof p === 'string' ? p : p(entry);
  return out;
}
