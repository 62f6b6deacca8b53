// Subnets as Corefiles write them ("10.0.0.0/8", "2001:db8::/32", a bare address) and the test of
// an address against one, on the address's bytes so the per-query check makes no string.
// Used by acl (client networks) and loadbalance (`prefer`).
import { parseIP } from '../../lib/dns/ip.js';

export interface Subnet {
  /** As written, for messages. */
  text: string;
  bytes: Uint8Array;
  prefix: number;
}

/** "10.0.0.0/8", "2001:db8::/32", or a bare address (a /32 or /128). Undefined when invalid. */
export function parseSubnet(text: string): Subnet | undefined {
  const slash = text.indexOf('/');
  const bytes = parseIP(slash < 0 ? text : text.slice(0, slash));
  if (!bytes) return undefined;
  const max = bytes.length * 8;
  if (slash < 0) return { text, bytes, prefix: max };
  const lenText = text.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(lenText) || Number(lenText) > max) return undefined;
  return { text, bytes, prefix: Number(lenText) };
}

/** True when `addr` (4 or 16 bytes, from offset `off` of `buf`) lies in `s`. */
export function inSubnet(s: Subnet, buf: Uint8Array, off: number, length: number): boolean {
  if (length !== s.bytes.length) return false;
  let bits = s.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff00 >> bits) & 0xff;
    if ((((buf[off + i] as number) ^ (s.bytes[i] as number)) & mask) !== 0) return false;
  }
  return true;
}
