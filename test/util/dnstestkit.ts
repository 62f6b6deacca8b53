// Builders for hand-made wire messages in tests (this folder's, and testutil/request.ts's). Not
// used by the library.

import { nameToWire } from '../../src/lib/dns/name.js';
import type { Message } from '../../src/lib/dns/types.js';

export type Bytes = number[];

/** Bytes from hex text; whitespace is ignored ("c0 0c" → [0xc0, 0x0c]). */
export function hex(text: string): Bytes {
  const clean = text.replace(/\s+/g, '');
  if (clean.length % 2 !== 0) throw new Error(`odd hex length: ${text}`);
  const out: Bytes = [];
  for (let i = 0; i < clean.length; i += 2) out.push(parseInt(clean.slice(i, i + 2), 16));
  return out;
}

export function u16(n: number): Bytes {
  return [(n >> 8) & 0xff, n & 0xff];
}

export function u32(n: number): Bytes {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

/** A name's uncompressed wire form from presentation text. */
export function wname(name: string): Bytes {
  return Array.from(nameToWire(name));
}

/** Bytes of a label sequence given as raw label byte arrays (for names text cannot spell). */
export function labels(...ls: Bytes[]): Bytes {
  const out: Bytes = [];
  for (const l of ls) out.push(l.length, ...l);
  out.push(0);
  return out;
}

export function ascii(s: string): Bytes {
  return Array.from(Buffer.from(s, 'latin1'));
}

export interface HeaderFields {
  id?: number;
  flags?: number;
  qd?: number;
  an?: number;
  ns?: number;
  ar?: number;
}

export function header(h: HeaderFields): Bytes {
  return [...u16(h.id ?? 0x1234), ...u16(h.flags ?? 0), ...u16(h.qd ?? 0), ...u16(h.an ?? 0), ...u16(h.ns ?? 0), ...u16(h.ar ?? 0)];
}

export function question(name: string | Bytes, type: number, cls = 1): Bytes {
  return [...(typeof name === 'string' ? wname(name) : name), ...u16(type), ...u16(cls)];
}

export function rr(name: string | Bytes, type: number, cls: number, ttl: number, rdata: Bytes, rdlength = rdata.length): Bytes {
  return [...(typeof name === 'string' ? wname(name) : name), ...u16(type), ...u16(cls), ...u32(ttl), ...u16(rdlength), ...rdata];
}

/** An OPT record: CLASS is the UDP size, TTL carries extended RCODE, version and flags. */
export function opt(udpSize: number, ttl: number, rdata: Bytes = []): Bytes {
  return rr([0], 41, udpSize, ttl, rdata);
}

export function wire(...parts: Bytes[]): Uint8Array {
  return Uint8Array.from(parts.flat());
}

/** An empty response message; override what the test cares about. */
export function message(over: Partial<Message> = {}): Message {
  return {
    id: 0x1234,
    qr: true,
    opcode: 0,
    aa: false,
    tc: false,
    rd: true,
    ra: false,
    z: false,
    ad: false,
    cd: false,
    rcode: 0,
    questions: [],
    answers: [],
    authority: [],
    additional: [],
    ...over,
  };
}

/** Seeded PRNG (mulberry32): the same seed gives the same sequence on every run. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const int = (rand: Rand, n: number) => Math.floor(rand() * n);

/**
 * One random mutation of a valid message (bit flips, special byte values, truncation, a count
 * changed, a slice duplicated, or noise after a plausible header): the fuzz tests' input.
 */
export function mutate(seed: Uint8Array, rand: Rand): Uint8Array {
  const b = Uint8Array.from(seed);
  switch (int(rand, 7)) {
    case 0: {
      // bit flips
      const flips = 1 + int(rand, 4);
      for (let k = 0; k < flips; k++) b[int(rand, b.length)] ^= 1 << int(rand, 8);
      return b;
    }
    case 1: {
      // byte overwrites, biased towards values that matter in names and counts
      const special = [0x00, 0x3f, 0x40, 0x80, 0xc0, 0xc0, 0xff, 0x29, 0x01];
      const n = 1 + int(rand, 3);
      for (let k = 0; k < n; k++) b[int(rand, b.length)] = rand() < 0.5 ? special[int(rand, special.length)] : int(rand, 256);
      return b;
    }
    case 2:
      return b.subarray(0, int(rand, b.length));
    case 3: {
      // a count field changed
      const at = 4 + 2 * int(rand, 4);
      b[at] = 0;
      b[at + 1] = int(rand, 6);
      return b;
    }
    case 4: {
      // a slice of the packet duplicated somewhere else
      const from = int(rand, b.length);
      const len = int(rand, Math.min(32, b.length - from));
      const to = int(rand, b.length);
      return Uint8Array.from([...b.subarray(0, to), ...b.subarray(from, from + len), ...b.subarray(to)]);
    }
    case 5: {
      // a compression pointer written somewhere, to an earlier offset (often into the header)
      const at = 12 + int(rand, Math.max(1, b.length - 13));
      const to = int(rand, at);
      b[at] = 0xc0 | (to >> 8);
      b[at + 1] = to & 0xff;
      return b;
    }
    default: {
      // noise after a plausible header
      const noise = new Uint8Array(12 + int(rand, 64));
      for (let k = 0; k < noise.length; k++) noise[k] = int(rand, 256);
      noise[4] = 0;
      noise[5] = 1;
      for (const k of [6, 8, 10]) noise[k] = 0;
      return noise;
    }
  }
}
