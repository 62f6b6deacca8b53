// The kubernetes plugin's pre-encoded answers: one reply per (name, type), patched per query
// with the client's ID, flags and question (its own spelling of the name).
//
// Kept as columns of numbers over an arena rather than as an object and a Buffer per answer:
// after the auth bench (25,000 names asked over the 10,000-Service fixture) those objects and
// Buffers were ~4 MiB of heap for ~3 MiB of answer bytes, a third of which were questions (not
// kept now: every query brings its own). A slot is 18 bytes of columns; the answers of one name
// are chained through `next` (most names are asked for one or two types).
//
// The client's spelling reaches every name that CoreDNS spells as the question does: owners and
// names in the zone point (compression) into the question, which is the client's own bytes. The
// one exception is an SRV target, written out in full (RFC 2782): its zone part is copied from
// the client's question at the offsets kept for it (`zoneSpans`).
import type { DnsRequest } from '../../server/request.js';
import { Reply, type TtlRange } from '../../server/reply.js';
import { Arena } from '../../server/arena.js';
import { HEADER_SIZE as HEADER, readU16, skipName } from '../../lib/dns/wire.js';
import { RCode, RRType } from '../../lib/dns/types.js';

/** No slot: the end of a chain, or an empty free list. */
export const NONE = -1;

// Header bits taken from the query (RD, CD); QR and AA are set in every kubernetes reply.
const FROM_QUERY = 0x0100 | 0x0010;
const QR_AA = 0x8000 | 0x0400;
/** Up to this length a byte loop copies faster than Buffer#copy with its argument checks. */
const SMALL = 96;
const FIRST_CAPACITY = 1024;
/**
 * A name's answers are a chain walked on every query: past this many types (real clients ask
 * for two or three), further types are answered without being kept, so asking one name for
 * every type cannot make its lookups slow.
 */
export const MAX_TYPES_PER_NAME = 16;

export class Templates {
  /** Name → its first slot. */
  private readonly heads = new Map<string, number>();
  private readonly arena = new Arena();
  private capacity = 0;
  private qtype = new Uint16Array(0);
  private location = new Uint32Array(0);
  private length = new Uint16Array(0);
  private rcode = new Uint16Array(0);
  /** Where the question ends: a query whose question ends elsewhere is not the same name. */
  private questionEnd = new Uint16Array(0);
  /** Index into `ranges`: nearly every answer has the plugin's one TTL. */
  private ttlRange = new Uint16Array(0);
  private next = new Int32Array(0);
  /** 1 where the answer has SRV targets whose zone is copied from the question (see `spans`). */
  private respelled = new Uint8Array(0);
  /** Slot → [zone length, offset…] of the zone in each SRV target (few slots have any). */
  private readonly spans = new Map<number, Uint16Array>();
  /** Slots below this have been used; freed ones are chained from `free` through `next`. */
  private top = 0;
  private free = NONE;
  private nameErrorCount = 0;
  private readonly ranges: TtlRange[] = [];
  private readonly rangeIds = new Map<number, number>();

  /** Names with at least one answer. */
  get names(): number {
    return this.heads.size;
  }

  /** Answers kept that say NXDOMAIN. */
  get nameErrors(): number {
    return this.nameErrorCount;
  }

  /** The slot of the answer for (name, type) when the question is `questionEnd` long, or NONE. */
  find(name: string, qtype: number, questionEnd: number): number {
    let slot = this.heads.get(name) ?? NONE;
    while (slot !== NONE && (this.qtype[slot] !== qtype || this.questionEnd[slot] !== questionEnd)) slot = this.next[slot] as number;
    return slot;
  }

  /**
   * Keeps `wire`, the reply for (name, type), but for its question: every query brings its own,
   * and the reply carries the client's spelling anyway (a third of a typical answer's bytes).
   * `zoneSpans` (from zoneSpansOf) says where the zone is to be respelled per query.
   * Returns the slot, or NONE when the name already has MAX_TYPES_PER_NAME answers.
   */
  add(name: string, qtype: number, wire: Uint8Array, rcode: number, questionEnd: number, ttls: TtlRange, zoneSpans?: Uint16Array): number {
    const head = this.heads.get(name) ?? NONE;
    let types = 0;
    for (let s = head; s !== NONE; s = this.next[s] as number) types++;
    // Locations are kept in 32 bits; the bound on names makes 4 GiB of answers unreachable, but
    // a wrapped location would answer with another name's bytes.
    if (types >= MAX_TYPES_PER_NAME || !this.arena.roomForLocations) return NONE;
    const slot = this.allocate();
    this.qtype[slot] = qtype;
    this.location[slot] = this.arena.put(wire.subarray(0, HEADER), wire.subarray(questionEnd));
    this.length[slot] = wire.length - (questionEnd - HEADER);
    this.rcode[slot] = rcode;
    if (rcode === RCode.NXDOMAIN) this.nameErrorCount++;
    this.questionEnd[slot] = questionEnd;
    this.ttlRange[slot] = this.rangeId(ttls);
    this.next[slot] = head;
    if (zoneSpans !== undefined && zoneSpans.length > 1) {
      this.respelled[slot] = 1;
      this.spans.set(slot, zoneSpans);
    } else {
      this.respelled[slot] = 0;
    }
    this.heads.set(name, slot);
    return slot;
  }

  /** Drops every answer for `name`. */
  forget(name: string): void {
    let slot = this.heads.get(name);
    if (slot === undefined) return;
    this.heads.delete(name);
    while (slot !== NONE) {
      const after = this.next[slot] as number;
      this.arena.release(this.length[slot] as number);
      if (this.rcode[slot] === RCode.NXDOMAIN) this.nameErrorCount--;
      if (this.respelled[slot] === 1) {
        this.respelled[slot] = 0;
        this.spans.delete(slot);
      }
      this.next[slot] = this.free;
      this.free = slot;
      slot = after;
    }
  }

  clear(): void {
    this.heads.clear();
    this.spans.clear();
    this.arena.reset();
    this.resize(0);
    this.top = 0;
    this.free = NONE;
    this.nameErrorCount = 0;
  }

  /** Once dropped answers are half the arena, copies the rest into fresh chunks. */
  compactIfWasteful(): void {
    this.arena.compactLocationsIfWasteful((relocate) => {
      for (const head of this.heads.values()) {
        for (let slot = head; slot !== NONE; slot = this.next[slot] as number) {
          this.location[slot] = relocate(this.location[slot] as number, this.length[slot] as number);
        }
      }
    });
  }

  /** The answer in `slot` with this query's ID, flags and question spelling. */
  reply(slot: number, req: DnsRequest): Reply {
    const location = this.location[slot] as number;
    const chunk = this.arena.chunkAt(location);
    const from = this.arena.offsetAt(location);
    const n = this.length[slot] as number;
    const qEnd = this.questionEnd[slot] as number;
    const raw = req.raw;
    const out = Buffer.allocUnsafe(n + qEnd - HEADER);
    // Header (ID, then flags, patched below), the question as the client wrote it (case
    // included: compression pointers to it still hold), then our records.
    out[0] = raw[0] as number;
    out[1] = raw[1] as number;
    for (let i = 2; i < HEADER; i++) out[i] = chunk[from + i] as number;
    for (let i = HEADER; i < qEnd; i++) out[i] = raw[i] as number;
    const shift = qEnd - HEADER;
    if (n - HEADER <= SMALL) {
      for (let i = HEADER; i < n; i++) out[i + shift] = chunk[from + i] as number;
    } else {
      chunk.copy(out, qEnd, from + HEADER, from + n);
    }
    if (this.respelled[slot] === 1) respell(out, this.spans.get(slot) as Uint16Array, qEnd);
    out.writeUInt16BE((req.query.flags & FROM_QUERY) | QR_AA | (out.readUInt16BE(2) & 0x020f), 2);
    const reply = Reply.fromWire(out, this.rcode[slot] as number);
    reply.kept = this.ranges[this.ttlRange[slot] as number];
    return reply;
  }

  private rangeId(ttls: TtlRange): number {
    const key = ttls.min * 2 ** 32 + ttls.max;
    let id = this.rangeIds.get(key);
    if (id === undefined) {
      id = this.ranges.length;
      this.ranges.push({ min: ttls.min, max: ttls.max });
      this.rangeIds.set(key, id);
    }
    return id;
  }

  private allocate(): number {
    if (this.free !== NONE) {
      const slot = this.free;
      this.free = this.next[slot] as number;
      return slot;
    }
    if (this.top === this.capacity) this.resize(Math.max(FIRST_CAPACITY, this.capacity * 2));
    return this.top++;
  }

  private resize(capacity: number): void {
    const grow = <T extends Uint8Array | Uint16Array | Uint32Array | Int32Array>(old: T, make: (n: number) => T): T => {
      const out = make(capacity);
      out.set(old.subarray(0, Math.min(old.length, capacity)));
      return out;
    };
    this.qtype = grow(this.qtype, (n) => new Uint16Array(n));
    this.location = grow(this.location, (n) => new Uint32Array(n));
    this.length = grow(this.length, (n) => new Uint16Array(n));
    this.rcode = grow(this.rcode, (n) => new Uint16Array(n));
    this.questionEnd = grow(this.questionEnd, (n) => new Uint16Array(n));
    this.ttlRange = grow(this.ttlRange, (n) => new Uint16Array(n));
    this.next = grow(this.next, (n) => new Int32Array(n));
    this.respelled = grow(this.respelled, (n) => new Uint8Array(n));
    this.capacity = capacity;
  }
}

/**
 * Where the zone sits in the SRV targets of `wire` (a reply whose question ends at
 * `questionEnd` and spells the zone as its last `zoneLength` octets before the root): [zoneLength,
 * offset…], offsets of targets whose zone part has the question's octets exactly. Other names
 * need nothing: they are compressed into the question. Undefined when there is nothing to respell.
 */
export function zoneSpansOf(wire: Uint8Array, questionEnd: number, zoneLength: number): Uint16Array | undefined {
  if (zoneLength === 0) return undefined;
  const zoneAt = questionEnd - 5 - zoneLength;
  const offsets: number[] = [];
  const records = readU16(wire, 6) + readU16(wire, 8) + readU16(wire, 10);
  let p = questionEnd;
  for (let i = 0; i < records; i++) {
    p = skipName(wire, p);
    if (p < 0 || p + 10 > wire.length) return undefined;
    const type = readU16(wire, p);
    const rdata = p + 10;
    p = rdata + readU16(wire, p + 8);
    if (type !== RRType.SRV) continue;
    // The target (after priority, weight, port), label by label to the one where the zone would start.
    let at = rdata + 6;
    while (at < p && wire[at] !== 0 && p - 1 - at > zoneLength) at += (wire[at] as number) + 1;
    if (p - 1 - at !== zoneLength || wire[p - 1] !== 0) continue;
    let same = true;
    for (let k = 0; k < zoneLength && same; k++) same = wire[at + k] === wire[zoneAt + k];
    if (same) offsets.push(at);
  }
  return offsets.length > 0 ? Uint16Array.from([zoneLength, ...offsets]) : undefined;
}

/** Copies the zone of the client's question (in `out`, ending at `questionEnd`) to each span. */
function respell(out: Buffer, spans: Uint16Array, questionEnd: number): void {
  const zoneLength = spans[0] as number;
  const from = questionEnd - 5 - zoneLength;
  for (let i = 1; i < spans.length; i++) {
    const to = spans[i] as number;
    for (let k = 0; k < zoneLength; k++) out[to + k] = out[from + k] as number;
  }
}
