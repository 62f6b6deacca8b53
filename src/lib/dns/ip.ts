// IP address text <-> bytes, shared by the A/AAAA codec and the reverse-name helpers.
// Written by hand (not node:net) so the codec can parse straight into its scratch buffer
// and so the accepted forms are exactly the ones below.

/**
 * Parses dotted-quad IPv4 ("10.0.0.1") into out[off..off+4). Rejects leading zeros
 * ("010.0.0.1"), as Go's net.ParseIP does, so "010" never silently means octal or decimal.
 */
export function parseIPv4Into(s: string, out: Uint8Array, off: number): boolean {
  const n = s.length;
  let i = 0;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (i >= n || s.charCodeAt(i) !== 46) return false;
      i++;
    }
    const start = i;
    let value = 0;
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      value = value * 10 + (c - 48);
      i++;
      if (i - start > 3) return false;
    }
    const digits = i - start;
    if (digits === 0 || value > 255 || (digits > 1 && s.charCodeAt(start) === 48)) return false;
    out[off + part] = value;
  }
  return i === n;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

const groupScratch = new Uint16Array(8);
const v4Scratch = new Uint8Array(4);

/** Parses IPv6 text (with "::" and an optional dotted-quad tail) into out[off..off+16). No zone IDs. */
export function parseIPv6Into(s: string, out: Uint8Array, off: number): boolean {
  const n = s.length;
  const groups = groupScratch;
  let count = 0;
  let gap = -1; // index in `groups` where "::" stands
  let i = 0;
  if (n < 2) return false;
  if (s.charCodeAt(0) === 58) {
    if (s.charCodeAt(1) !== 58) return false;
    gap = 0;
    i = 2;
  }
  while (i < n) {
    if (count === 8) return false;
    const start = i;
    let value = 0;
    while (i < n && i - start < 5) {
      const h = hexValue(s.charCodeAt(i));
      if (h < 0) break;
      value = value * 16 + h;
      i++;
    }
    if (i < n && s.charCodeAt(i) === 46) {
      // Dotted-quad tail: takes the last two groups.
      if (count > 6 || !parseIPv4Into(s.slice(start), v4Scratch, 0)) return false;
      groups[count++] = (v4Scratch[0] << 8) | v4Scratch[1];
      groups[count++] = (v4Scratch[2] << 8) | v4Scratch[3];
      i = n;
      break;
    }
    const digits = i - start;
    if (digits === 0 || digits > 4) return false;
    groups[count++] = value;
    if (i === n) break;
    if (s.charCodeAt(i) !== 58) return false;
    i++;
    if (i < n && s.charCodeAt(i) === 58) {
      if (gap >= 0) return false;
      gap = count;
      i++;
    } else if (i === n) {
      return false;
    }
  }
  if (gap < 0 ? count !== 8 : count > 7) return false;
  const zeros = 8 - count;
  let g = 0;
  for (let k = 0; k < 8; k++) {
    let v = 0;
    if (gap >= 0 && k >= gap && k < gap + zeros) v = 0;
    else v = groups[g++];
    out[off + 2 * k] = v >> 8;
    out[off + 2 * k + 1] = v & 0xff;
  }
  return true;
}

export function parseIPv4(s: string): Uint8Array | undefined {
  const out = new Uint8Array(4);
  return parseIPv4Into(s, out, 0) ? out : undefined;
}

export function parseIPv6(s: string): Uint8Array | undefined {
  const out = new Uint8Array(16);
  return parseIPv6Into(s, out, 0) ? out : undefined;
}

/** 4 or 16 bytes, or undefined when `s` is neither form. */
export function parseIP(s: string): Uint8Array | undefined {
  return s.includes(':') ? parseIPv6(s) : parseIPv4(s);
}

export function formatIPv4(b: Uint8Array, off = 0): string {
  return `${b[off]}.${b[off + 1]}.${b[off + 2]}.${b[off + 3]}`;
}

/**
 * RFC 5952 text: lower-case hex, no leading zeros, the longest run (first on a tie) of two or
 * more zero groups as "::"; IPv4-mapped addresses as "::ffff:a.b.c.d", as dig prints them.
 */
export function formatIPv6(b: Uint8Array, off = 0): string {
  const g = groupScratch;
  for (let k = 0; k < 8; k++) g[k] = (b[off + 2 * k] << 8) | b[off + 2 * k + 1];
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    return '::ffff:' + formatIPv4(b, off + 12);
  }
  let bestStart = -1;
  let bestLen = 1;
  for (let k = 0; k < 8; ) {
    if (g[k] !== 0) {
      k++;
      continue;
    }
    let e = k;
    while (e < 8 && g[e] === 0) e++;
    if (e - k > bestLen) {
      bestStart = k;
      bestLen = e - k;
    }
    k = e;
  }
  let out = '';
  for (let k = 0; k < 8; k++) {
    if (k === bestStart) {
      out += '::';
      k += bestLen - 1;
      continue;
    }
    if (out !== '' && !out.endsWith(':')) out += ':';
    out += g[k].toString(16);
  }
  return out;
}
