// Domain-name helpers over presentation-format strings (see ./types.ts).
//
// Escapes: the decoder writes a label byte as itself when it is printable ASCII (0x21-0x7E)
// other than "." and "\", as `\.` or `\\` for those two, and as `\DDD` (decimal) otherwise,
// space included. That is the canonical form. Input names may also use `\X` for any other
// character X; helpers that compare names canonicalize such names first (slow path only
// when a backslash is present).

import { formatIPv4, formatIPv6, parseIPv4Into, parseIPv6Into } from './ip.js';

const DOT = 46;
const BACKSLASH = 92;

/** Lower-cases ASCII letters only (DNS case-insensitivity is ASCII-only). */
export function lowerName(name: string): string {
  // Most names are already lower-case: return the same string without allocating.
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 65 && c <= 90) return lowerFrom(name, i);
  }
  return name;
}

function lowerFrom(name: string, first: number): string {
  let out = name.slice(0, first);
  for (let i = first; i < name.length; i++) {
    const c = name.charCodeAt(i);
    out += c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : name[i];
  }
  return out;
}

/** True when the last character is a "." that ends a label (not an escaped `\.`). */
function endsWithLabelDot(name: string): boolean {
  const n = name.length;
  if (n === 0 || name.charCodeAt(n - 1) !== DOT) return false;
  let slashes = 0;
  for (let i = n - 2; i >= 0 && name.charCodeAt(i) === BACKSLASH; i--) slashes++;
  return slashes % 2 === 0;
}

/** Makes a name absolute ("a.b" → "a.b.", "" → "."). Does not change case. */
export function fqdn(name: string): string {
  if (name === '') return '.';
  return endsWithLabelDot(name) ? name : name + '.';
}

/** Case-insensitive equality of two absolute names. */
export function nameEquals(a: string, b: string): boolean {
  if (a === b) return true;
  if (a.length === b.length && lowerName(a) === lowerName(b)) return true;
  if (!a.includes('\\') && !b.includes('\\')) return false;
  return lowerName(canonicalName(a)) === lowerName(canonicalName(b));
}

/** Offsets where each label starts, escape-aware ("a\.b.c." → [0, 5]). The root has none. */
function labelStarts(name: string): number[] {
  const starts: number[] = [];
  if (name === '.' || name === '') return starts;
  let atStart = true;
  for (let i = 0; i < name.length; i++) {
    if (atStart) {
      starts.push(i);
      atStart = false;
    }
    const c = name.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === DOT) atStart = true;
  }
  return starts;
}

/** True when `name` is `zone` or below it (case-insensitive; both absolute). */
export function isSubdomain(name: string, zone: string): boolean {
  let n = lowerName(fqdn(name));
  let z = lowerName(fqdn(zone));
  if (z === '.') return true;
  if (n.includes('\\') || z.includes('\\')) {
    n = lowerName(canonicalName(n));
    z = lowerName(canonicalName(z));
  }
  if (n.length < z.length || !n.endsWith(z)) return false;
  const cut = n.length - z.length;
  if (cut === 0) return true;
  if (n.charCodeAt(cut - 1) !== DOT) return false;
  // "a\.foo.com." ends with ".foo.com." but its labels are "a.foo" and "com".
  return !n.includes('\\') || labelStarts(n).includes(cut);
}

/** Presentation labels, escapes kept as written ("a\.b.c." → ["a\.b", "c"]); the root has none. */
export function splitLabels(name: string): string[] {
  const abs = fqdn(name);
  if (abs === '.') return [];
  if (!abs.includes('\\')) return abs.slice(0, -1).split('.');
  const starts = labelStarts(abs);
  return starts.map((s, k) => abs.slice(s, (k + 1 < starts.length ? starts[k + 1] : abs.length) - 1));
}

export function labelCount(name: string): number {
  return splitLabels(name).length;
}

/**
 * Index of the dot that ends the first label of a presentation name (of the part that starts at
 * `from`, a label's start), skipping escaped dots
 * (`\.` belongs to its label); -1 when there is none. A loop over char codes, no allocation:
 * it runs on every query's zone lookup.
 */
export function firstLabelEnd(name: string, from = 0): number {
  let i = from;
  while (i < name.length) {
    const c = name.charCodeAt(i);
    if (c === 92 /* \ */) {
      i += 2;
      continue;
    }
    if (c === 46 /* . */) return i;
    i++;
  }
  return -1;
}

/** The name one label up ("a.b." → "b.", "b." → "."); undefined for the root. */
export function parentName(name: string): string | undefined {
  const abs = fqdn(name);
  if (abs === '.') return undefined;
  const starts = labelStarts(abs);
  return starts.length > 1 ? abs.slice(starts[1]) : '.';
}

/** The bytes of each label of a presentation name, or an error text. Relative names allowed. */
export function parseNameLabels(name: string): Uint8Array[] | string {
  if (name === '.') return [];
  if (name === '') return 'empty name';
  const labels: Uint8Array[] = [];
  const cur: number[] = [];
  let wire = 1;
  const n = name.length;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? name.charCodeAt(i) : DOT;
    if (c === DOT) {
      if (cur.length === 0) return `empty label at offset ${i}`;
      if (cur.length > 63) return `label longer than 63 octets at offset ${i - 1}`;
      wire += cur.length + 1;
      labels.push(Uint8Array.from(cur));
      cur.length = 0;
      if (i === n - 1) break;
      continue;
    }
    if (c === BACKSLASH) {
      if (i + 1 >= n) return 'dangling backslash';
      const d = name.charCodeAt(i + 1);
      if (d >= 48 && d <= 57) {
        const v = decimalEscape(name, i + 1);
        if (v < 0) return `bad \\DDD escape at offset ${i}`;
        cur.push(v);
        i += 3;
      } else {
        if (d < 0x20 || d > 0x7e) return `invalid character at offset ${i + 1}`;
        cur.push(d);
        i += 1;
      }
      continue;
    }
    if (c < 0x20 || c > 0x7e) return `invalid character at offset ${i}`;
    cur.push(c);
  }
  if (wire > 255) return `name longer than 255 octets (${wire})`;
  return labels;
}

/** The value of the three digits at s[i..i+3), or -1. */
export function decimalEscape(s: string, i: number): number {
  if (i + 3 > s.length) return -1;
  let v = 0;
  for (let k = i; k < i + 3; k++) {
    const d = s.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v <= 255 ? v : -1;
}

/** One label's bytes in canonical presentation form. */
export function labelText(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let out = '';
  for (let i = start; i < end; i++) out += byteText(bytes[i]);
  return out;
}

function byteText(b: number): string {
  if (b === DOT) return '\\.';
  if (b === BACKSLASH) return '\\\\';
  if (b > 0x20 && b < 0x7f) return String.fromCharCode(b);
  return '\\' + (b < 10 ? '00' : b < 100 ? '0' : '') + b;
}

/**
 * The canonical spelling of a name (absolute; escapes as the decoder writes them). Throws on
 * names that are not valid (see isValidDomainName).
 */
export function canonicalName(name: string): string {
  const labels = parseNameLabels(name);
  if (typeof labels === 'string') throw new Error(`invalid domain name ${JSON.stringify(name)}: ${labels}`);
  if (labels.length === 0) return '.';
  let out = '';
  for (const l of labels) out += labelText(l) + '.';
  return out;
}

/**
 * True for a syntactically valid presentation name, absolute or relative: labels of 1-63
 * octets, at most 255 octets on the wire, well-formed escapes, printable characters. This is
 * the DNS rule, not the stricter hostname (RFC 1123) rule.
 */
export function isValidDomainName(s: string): boolean {
  return typeof parseNameLabels(s) !== 'string';
}

/** Uncompressed wire form of a name. Throws on invalid names. */
export function nameToWire(name: string): Uint8Array {
  const labels = parseNameLabels(name);
  if (typeof labels === 'string') throw new Error(`invalid domain name ${JSON.stringify(name)}: ${labels}`);
  let size = 1;
  for (const l of labels) size += l.length + 1;
  const out = new Uint8Array(size);
  let p = 0;
  for (const l of labels) {
    out[p++] = l.length;
    out.set(l, p);
    p += l.length;
  }
  return out;
}

// ---- reverse names ----------------------------------------------------------------------

const HEX = '0123456789abcdef';

function ipBytes(ip: string): Uint8Array | undefined {
  if (ip.includes(':')) {
    const b = new Uint8Array(16);
    return parseIPv6Into(ip, b, 0) ? b : undefined;
  }
  const b = new Uint8Array(4);
  return parseIPv4Into(ip, b, 0) ? b : undefined;
}

/** "10.0.0.1" → "1.0.0.10.in-addr.arpa."; IPv6 → nibbles under "ip6.arpa.". Throws on a bad address. */
export function ipToReverseName(ip: string): string {
  const b = ipBytes(ip);
  if (!b) throw new Error(`invalid IP address ${JSON.stringify(ip)}`);
  return reverseLabels(b, b.length === 4 ? 32 : 128);
}

/** The reverse name of the first `bits` bits of an address (bits on an octet/nibble boundary). */
function reverseLabels(b: Uint8Array, bits: number): string {
  let out = '';
  if (b.length === 4) {
    for (let k = bits / 8 - 1; k >= 0; k--) out += `${b[k]}.`;
    return out + 'in-addr.arpa.';
  }
  for (let k = bits / 4 - 1; k >= 0; k--) {
    const byte = b[k >> 1];
    out += HEX[k & 1 ? byte & 0xf : byte >> 4] + '.';
  }
  return out + 'ip6.arpa.';
}

/**
 * The address a complete reverse name stands for ("1.0.0.10.in-addr.arpa." → "10.0.0.1"),
 * or undefined when the name is not exactly 4 octet labels / 32 nibble labels under the arpa zones.
 */
export function reverseNameToIP(name: string): string | undefined {
  const n = lowerName(fqdn(name));
  if (n.endsWith('.in-addr.arpa.')) {
    const parts = n.slice(0, -'.in-addr.arpa.'.length).split('.');
    if (parts.length !== 4) return undefined;
    const b = new Uint8Array(4);
    return parseIPv4Into(parts.reverse().join('.'), b, 0) ? formatIPv4(b) : undefined;
  }
  if (n.endsWith('.ip6.arpa.')) {
    const parts = n.slice(0, -'.ip6.arpa.'.length).split('.');
    if (parts.length !== 32) return undefined;
    const b = new Uint8Array(16);
    for (let k = 0; k < 32; k++) {
      const label = parts[31 - k];
      const v = label.length === 1 ? HEX.indexOf(label) : -1;
      if (v < 0) return undefined;
      b[k >> 1] |= k & 1 ? v : v << 4;
    }
    return formatIPv6(b);
  }
  return undefined;
}

/**
 * The reverse zones a CIDR server-block key stands for, as CoreDNS computes them: a prefix on an
 * octet (IPv4) or nibble (IPv6) boundary is one zone; any other prefix is widened to the next
 * boundary and expands to every zone it covers (10.0.0.0/23 → 0.0.10 and 1.0.10.in-addr.arpa.).
 * Host bits are ignored (10.0.0.9/24 is 10.0.0.0/24). Throws on a malformed CIDR.
 */
export function cidrToReverseZones(cidr: string): string[] {
  const slash = cidr.indexOf('/');
  const b = slash > 0 ? ipBytes(cidr.slice(0, slash)) : undefined;
  const lenText = slash > 0 ? cidr.slice(slash + 1) : '';
  if (!b || !/^(0|[1-9][0-9]{0,2})$/.test(lenText)) throw new Error(`invalid CIDR ${JSON.stringify(cidr)}`);
  const prefix = Number(lenText);
  const totalBits = b.length * 8;
  if (prefix > totalBits) throw new Error(`invalid CIDR ${JSON.stringify(cidr)}: prefix longer than ${totalBits}`);
  maskBits(b, prefix);
  const unit = b.length === 4 ? 8 : 4;
  const bits = Math.ceil(prefix / unit) * unit;
  const zones: string[] = [];
  const count = 1 << (bits - prefix);
  for (let k = 0; k < count; k++) {
    zones.push(reverseLabels(b, bits));
    addAtBit(b, bits, 1);
  }
  return zones;
}

function maskBits(b: Uint8Array, prefix: number): void {
  for (let i = 0; i < b.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    b[i] &= (0xff00 >> keep) & 0xff;
  }
}

/** Adds `v` to the address at the unit ending at bit `bits` (the last bit of the prefix). */
function addAtBit(b: Uint8Array, bits: number, v: number): void {
  if (bits === 0) return;
  const byteIndex = (bits - 1) >> 3;
  const shift = 8 - (bits - byteIndex * 8);
  b[byteIndex] = (b[byteIndex] + (v << shift)) & 0xff;
}
