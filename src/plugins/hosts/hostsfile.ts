// The hosts(5) format: `IP canonical_name [aliases...]`, `#` starts a comment. Pure functions:
// text in, entries out; reading the file and deciding what to serve happen elsewhere.

import { parseIPv4Into, parseIPv6Into } from '../../lib/dns/ip.js';
import { fqdn, isValidDomainName, lowerName } from '../../lib/dns/name.js';

export interface HostAddress {
  /** 4 (served as A) or 6 (served as AAAA). */
  family: 4 | 6;
  /** 4 or 16 bytes, as they go on the wire. */
  bytes: Uint8Array;
}

export interface HostsLine {
  address: HostAddress;
  /** Absolute, lower-case names, in the order written. */
  names: string[];
  /** 1-based line in its source, for messages. */
  line: number;
}

/** What a hosts text held, and what it could not use (so the caller can say so once). */
export interface ParsedHosts {
  lines: HostsLine[];
  /** Lines with an unparsable address or name, as "line N: why". */
  skipped: string[];
}

const MAPPED_V4 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/**
 * Parses the address column. An IPv6 zone ("fe80::1%eth0") is dropped: it is local routing
 * detail, not part of the address. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is an IPv4
 * host, so it is served as A (CoreDNS does the same).
 */
export function parseHostAddress(text: string): HostAddress | undefined {
  const bare = text.split('%')[0] as string;
  if (!bare.includes(':')) {
    const v4 = new Uint8Array(4);
    return parseIPv4Into(bare, v4, 0) ? { family: 4, bytes: v4 } : undefined;
  }
  const v6 = new Uint8Array(16);
  if (!parseIPv6Into(bare, v6, 0)) return undefined;
  if (MAPPED_V4.every((b, i) => v6[i] === b)) return { family: 4, bytes: v6.slice(12) };
  return { family: 6, bytes: v6 };
}

/**
 * A host name as the lookup key: lower-case and absolute. Undefined for what cannot be a
 * DNS name, or contains a backslash (hosts files have no escapes, so one is a typo).
 */
export function normalizeHostName(text: string): string | undefined {
  if (text.includes('\\') || !isValidDomainName(text)) return undefined;
  return lowerName(fqdn(text));
}

/** One line's fields, comments removed. */
export function hostsFields(line: string): string[] {
  const hash = line.indexOf('#');
  const content = hash >= 0 ? line.slice(0, hash) : line;
  return content.split(/[ \t\r]+/).filter((f) => f !== '');
}

/** Parses one entry from its fields; a string says why it cannot be used. */
export function parseHostsEntry(fields: readonly string[], line: number): HostsLine | string {
  const [addrText, ...nameTexts] = fields;
  if (addrText === undefined) return 'empty entry';
  const address = parseHostAddress(addrText);
  if (!address) return `"${addrText}" is not an IP address`;
  if (nameTexts.length === 0) return `no host name after ${addrText}`;
  const names: string[] = [];
  for (const t of nameTexts) {
    const n = normalizeHostName(t);
    if (n === undefined) return `"${t}" is not a valid host name`;
    names.push(n);
  }
  return { address, names, line };
}

/** Parses a whole hosts file. Blank and comment-only lines are not "skipped"; bad ones are. */
export function parseHostsText(text: string): ParsedHosts {
  const out: ParsedHosts = { lines: [], skipped: [] };
  const rows = text.split('\n');
  for (let i = 0; i < rows.length; i++) {
    const fields = hostsFields(rows[i] as string);
    if (fields.length === 0) continue;
    const entry = parseHostsEntry(fields, i + 1);
    if (typeof entry === 'string') out.skipped.push(`line ${i + 1}: ${entry}`);
    else out.lines.push(entry);
  }
  return out;
}
