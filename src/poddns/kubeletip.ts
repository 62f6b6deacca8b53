// Addresses as the kubelet writes them into a resolv.conf: it parses its flags with Go's
// ParseIPSloppy and prints ip.String(). `kdns resolvconf` and the webhook both write addresses
// through this, so their files agree with the kubelet's byte for byte.
import { formatIPv4, formatIPv6, parseIPv6 } from '../lib/dns/ip.js';
import { isValidLegacyIP } from './validate.js';

/**
 * `text` as the kubelet writes an address it parsed: IPv4 (and IPv4-mapped IPv6) dotted without
 * leading zeros, IPv6 in lower case with the longest run of two or more zero groups as `::`
 * (RFC 5952). Undefined when Go's ParseIPSloppy would not take it.
 */
export function kubeletIPString(text: string): string | undefined {
  if (!isValidLegacyIP(text)) return undefined;
  if (!text.includes(':')) return text.split('.').map((octet) => String(Number(octet))).join('.');
  const bytes = parseIPv6(text);
  if (bytes === undefined) return undefined;
  const mapped = bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? formatIPv4(bytes, 12) : formatIPv6(bytes);
}
