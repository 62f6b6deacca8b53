// loadbalance: shuffles the A/AAAA (and MX) records of every NOERROR answer, as CoreDNS's
// round_robin policy: in the answer and additional sections, CNAMEs first (glibc wants the chain
// before the addresses), then other records, then the addresses shuffled, then MX shuffled;
// `prefer` then moves addresses from the listed subnets to the front.
//
// Most answers (one RRset of addresses, owners compressed alike) are shuffled in the wire bytes:
// records of one owner and one length swap places without moving anything else, so a cache hit
// stays a cache hit. Anything else (MX, mixed A/AAAA, records out of that order) goes through
// the message model.
import { HEADER_SIZE, readU16, scanMessage, Section, type RecordRef } from '../../lib/dns/wire.js';
import { parseIP } from '../../lib/dns/ip.js';
import { RCode, RRType, type AddressData, type ResourceRecord } from '../../lib/dns/types.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import type { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { shuffled } from '../pkg/policy.js';
import { isPromise } from '../../server/promise.js';
import type { Subnet } from '../pkg/subnet.js';
import { preferenceRank, stableByRank } from './prefer.js';

/** CoreDNS's grouping: where a record goes in a balanced section, in this order. */
const Kind = { CNAME: 0, OTHER: 1, ADDRESS: 2, MX: 3 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

function kindOf(type: number): Kind {
  if (type === RRType.CNAME) return Kind.CNAME;
  if (type === RRType.A || type === RRType.AAAA) return Kind.ADDRESS;
  if (type === RRType.MX) return Kind.MX;
  return Kind.OTHER;
}

export type Random = () => number;

/** The order to put addresses in: shuffled, then preferred subnets first. */
function addressOrder<T>(items: readonly T[], random: Random, prefer: readonly Subnet[], addressOf: (t: T) => [Uint8Array, number, number]): T[] {
  const mixed = shuffled(items, random);
  if (prefer.length === 0) return mixed;
  return stableByRank(mixed, (t) => preferenceRank(prefer, ...addressOf(t)));
}

function sameBytes(buf: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (buf[a + i] !== buf[b + i]) return false;
  return true;
}

/**
 * Balances one section in place. 'fallback' when the wire cannot be balanced by swapping equal
 * slots (the caller then uses the message model); 'ok' otherwise (nothing to do counts as ok).
 */
function balanceSectionWire(wire: Buffer, recs: RecordRef[], random: Random, prefer: readonly Subnet[]): 'ok' | 'fallback' {
  if (recs.length < 2) return 'ok';
  let last: Kind = Kind.CNAME;
  let mx = 0;
  const addresses: RecordRef[] = [];
  for (const r of recs) {
    const k = kindOf(r.type);
    if (k < last) return 'fallback'; // not yet in CNAME, other, address, MX order
    last = k;
    if (k === Kind.ADDRESS) addresses.push(r);
    else if (k === Kind.MX) mx++;
  }
  if (mx > 1) return 'fallback';
  if (addresses.length < 2) return 'ok';
  const first = addresses[0] as RecordRef;
  const ownerLen = first.typeAt - first.start;
  const slotLen = first.end - first.typeAt;
  for (const r of addresses) {
    if (r.typeAt - r.start !== ownerLen || r.end - r.typeAt !== slotLen || !sameBytes(wire, first.start, r.start, ownerLen)) return 'fallback';
  }
  const order = addressOrder(addresses, random, prefer, (r) => [wire, r.rdStart, r.end - r.rdStart]);
  // Copy the chosen slots out first: the swaps would otherwise read bytes already overwritten.
  const slots = order.map((r) => Buffer.from(wire.subarray(r.typeAt, r.end)));
  addresses.forEach((r, i) => wire.set(slots[i] as Buffer, r.typeAt));
  return 'ok';
}

/** Balances answer and additional sections of a reply's bytes; false when the message model is needed. */
export function balanceWire(wire: Buffer, random: Random, prefer: readonly Subnet[]): boolean {
  const scan = scanMessage(wire);
  if (!scan) return true; // not ours to repair; leave it as it came
  for (const section of [Section.ANSWER, Section.ADDITIONAL]) {
    const recs = scan.records.filter((r) => r.section === section);
    if (balanceSectionWire(wire, recs, random, prefer) === 'fallback') return false;
  }
  return true;
}

function addressBytes(r: ResourceRecord): [Uint8Array, number, number] {
  const b = parseIP((r.data as AddressData).address) ?? new Uint8Array(0);
  return [b, 0, b.length];
}

/** One section in CoreDNS's balanced order, from the message model. */
export function balanceRecords(records: readonly ResourceRecord[], random: Random, prefer: readonly Subnet[]): ResourceRecord[] {
  const groups: ResourceRecord[][] = [[], [], [], []];
  for (const r of records) (groups[kindOf(r.type)] as ResourceRecord[]).push(r);
  const [cname, other, address, mx] = groups as [ResourceRecord[], ResourceRecord[], ResourceRecord[], ResourceRecord[]];
  return [...cname, ...other, ...addressOrder(address, random, prefer, addressBytes), ...shuffled(mx, random)];
}

export class LoadBalancePlugin implements Plugin {
  readonly name = 'loadbalance';

  constructor(
    readonly prefer: readonly Subnet[],
    private readonly random: Random = Math.random,
  ) {}

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const r = next(req);
    if (isPromise(r)) return r.then((reply) => this.balance(req, reply));
    return this.balance(req, r);
  }

  balance(req: DnsRequest, reply: Reply | undefined): Reply | undefined {
    if (!reply || reply.rcode !== RCode.NOERROR || req.qtype === RRType.AXFR || req.qtype === RRType.IXFR) return reply;
    const wire = reply.wire;
    // One record or none in each section (most answers: one address) leaves nothing to shuffle;
    // the counts say so without walking the records.
    if (wire && wire.length >= HEADER_SIZE && readU16(wire, 6) < 2 && readU16(wire, 10) < 2) return reply;
    if (wire && balanceWire(wire, this.random, this.prefer)) return reply;
    const view = reply.view();
    if (view.answers.length < 2 && view.additional.length < 2) return reply;
    const m = reply.edit();
    m.answers = balanceRecords(m.answers, this.random, this.prefer);
    m.additional = balanceRecords(m.additional, this.random, this.prefer);
    return reply;
  }
}
