// One authoritative zone in memory and the RFC 1034 §4.3.2 lookup over it: referrals at zone
// cuts (with glue), DNAME substitution, CNAME chains inside the zone, wildcards (RFC 4592),
// empty non-terminals, NODATA and NXDOMAIN with the SOA (RFC 2308).
//
// Every name is a key of a Map (lower-case, canonical), and the lookup walks the labels of the
// query name once: O(labels), never a scan of the zone.
// Used by the file and auto plugins (through zonesource.ts and zoneanswer.ts).

import { isSubdomain, lowerName, parseNameLabels, splitLabels } from '../../lib/dns/name.js';
import { rdataToString } from '../../lib/dns/rr.js';
import type { MXData, NameData, ResourceRecord, SOAData, SRVData } from '../../lib/dns/types.js';
import { RCode, RRType } from '../../lib/dns/types.js';
import { ZoneFileError, type ZoneEntry } from '../../lib/dns/zonefile.js';

type RRsets = Map<number, ResourceRecord[]>;

/** How many CNAME/DNAME steps a lookup follows before it gives up (CoreDNS stops at 8 too). */
export const MAX_CHAIN = 8;

export interface Answer {
  rcode: number;
  /** AA: false only for a bare referral. */
  authoritative: boolean;
  answers: ResourceRecord[];
  authority: ResourceRecord[];
  additional: ResourceRecord[];
  /** A CNAME chain left the zone here: the rest is for whoever resolves `target`. */
  outOfZone?: string;
  /** True when the name does not exist and no record at all was given (fallthrough may apply). */
  nameError: boolean;
}

export class Zone {
  readonly origin: string;
  readonly soa: ResourceRecord;
  private readonly nodes: Map<string, RRsets>;
  /** Names that exist only because a name below them does (empty non-terminals). */
  private readonly ents: Set<string>;
  /** Names below the apex that own NS records: delegations. */
  private readonly cuts: Set<string>;
  readonly records: number;
  private readonly originLabels: number;

  private constructor(origin: string, soa: ResourceRecord, nodes: Map<string, RRsets>, ents: Set<string>, cuts: Set<string>, records: number) {
    this.origin = origin;
    this.soa = soa;
    this.nodes = nodes;
    this.ents = ents;
    this.cuts = cuts;
    this.records = records;
    this.originLabels = labelStarts(origin).length;
  }

  get serial(): number {
    return (this.soa.data as SOAData).serial;
  }

  /**
   * Builds the zone from parsed entries. Errors, naming the line: no SOA, an SOA away from the
   * origin, a second SOA. What CoreDNS loads and BIND refuses is loaded and reported in
   * `warnings` instead: records outside the zone are left out (they could never be asked
   * for), and beside a CNAME other data is kept but never answered (the CNAME wins, as in
   * CoreDNS); of several CNAMEs the first is kept.
   */
  static build(origin: string, entries: readonly ZoneEntry[], file: string, warnings: string[] = []): Zone {
    const nodes = new Map<string, RRsets>();
    const seen = new Set<string>();
    let soa: ResourceRecord | undefined;
    const warn = (at: string, line: number, why: string): void => {
      warnings.push(`${at}:${line}: ${why}`);
    };
    for (const { rr, file: at, line } of entries) {
      // Flat strings: names made by concatenation are ropes, slow as Map keys.
      const name = flat(lowerName(rr.name));
      if (!isSubdomain(name, origin)) {
        warn(at, line, `${rr.name} is outside the zone ${origin}: ignored`);
        continue;
      }
      if (rr.type === RRType.SOA) {
        if (name !== origin) {
          throw new ZoneFileError(at, line, `SOA record for ${rr.name}, not at the zone apex ${origin} (is the file for zone ${name}? name it after the file: file FILE ${name})`);
        }
        if (soa) throw new ZoneFileError(at, line, `second SOA record for ${origin}`);
        soa = { ...rr, name };
      }
      let sets = nodes.get(name);
      if (!sets) nodes.set(name, (sets = new Map()));
      const cname = sets.get(RRType.CNAME);
      if (rr.type === RRType.CNAME && cname) {
        warn(at, line, `${rr.name} has more than one CNAME: only the first is served`);
        continue;
      }
      if ((rr.type === RRType.CNAME && sets.size > 0) || (rr.type !== RRType.CNAME && cname)) {
        warn(at, line, `${rr.name} has a CNAME and other data (RFC 1034 §3.6.2): only the CNAME is served`);
      }
      let set = sets.get(rr.type);
      if (!set) sets.set(rr.type, (set = []));
      // An RRset holds each record once (RFC 2181 §5); the TTLs of a set are the first's.
      const key = `${name}\t${rr.type}\t${rdataToString(rr)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      set.push({ ...rr, name, ttl: set[0]?.ttl ?? rr.ttl });
    }
    if (!soa) throw new ZoneFileError(file, 0, `no SOA record for the zone ${origin}`);
    const ents = new Set<string>();
    const cuts = new Set<string>();
    let records = 0;
    for (const [name, sets] of nodes) {
      for (const set of sets.values()) records += set.length;
      if (name !== origin && sets.has(RRType.NS)) cuts.add(name);
      // Each node adds its missing ancestors; an ancestor already known has done the rest.
      for (let up = parent(name); up !== undefined && up !== origin && !nodes.has(up) && !ents.has(up); up = parent(up)) ents.add(up);
    }
    return new Zone(origin, soa, nodes, ents, cuts, records);
  }

  /**
   * Every record of the zone in transfer order (RFC 5936 §2.2): the SOA, the rest of the apex,
   * the other names in the order they were read, and the SOA again.
   */
  *transferRecords(): Generator<ResourceRecord> {
    yield this.soa;
    const apex = this.nodes.get(this.origin);
    for (const [type, set] of apex ?? []) if (type !== RRType.SOA) yield* set;
    for (const [name, sets] of this.nodes) {
      if (name === this.origin) continue;
      for (const set of sets.values()) yield* set;
    }
    yield this.soa;
  }

  /** The records of `type` at `name` (lower-case), if any. */
  rrset(name: string, type: number): ResourceRecord[] | undefined {
    return this.nodes.get(name)?.get(type);
  }

  private exists(name: string): boolean {
    return this.nodes.has(name) || this.ents.has(name);
  }

  /** The apex NS RRset, which CoreDNS sends in the authority section of every positive answer. */
  private apexNs(): ResourceRecord[] {
    return this.rrset(this.origin, RRType.NS) ?? [];
  }

  /** The SOA for a negative answer: its TTL is the lower of its own and MINIMUM (RFC 2308 §3). */
  negativeSoa(): ResourceRecord {
    const min = (this.soa.data as SOAData).minimum;
    return this.soa.ttl <= min ? this.soa : { ...this.soa, ttl: min };
  }

  /** Answers `qname` (lower-case, inside the zone) for `qtype`. */
  lookup(qname: string, qtype: number): Answer {
    const answers: ResourceRecord[] = [];
    const seen: string[] = [];
    let name = qname;
    for (let step = 0; ; step++) {
      if (step > MAX_CHAIN || seen.includes(name)) {
        // A loop or an endless chain: what we have, and no more (as CoreDNS after 8 steps).
        return this.positive(answers, qtype);
      }
      seen.push(name);
      const r = this.step(name, qtype);
      answers.push(...r.records);
      if (r.kind === 'referral') {
        return { rcode: RCode.NOERROR, authoritative: answers.length > 0, answers, authority: r.ns, additional: this.glue(r.ns), nameError: false };
      }
      if (r.kind === 'alias') {
        if (!isSubdomain(r.target, this.origin)) return { ...this.positive(answers, qtype), outOfZone: r.target };
        name = r.target;
        continue;
      }
      if (r.kind === 'data') return this.positive(answers, qtype);
      const negative = { authoritative: true, answers, authority: [this.negativeSoa()], additional: [] };
      if (r.kind === 'nodata') return { ...negative, rcode: RCode.NOERROR, nameError: answers.length === 0 && r.ent };
      // RFC 6672 §2.2: a substitution longer than a name can be is YXDOMAIN.
      if (r.kind === 'yxdomain') return { ...negative, authority: [], rcode: RCode.YXDOMAIN, nameError: false };
      return { ...negative, rcode: RCode.NXDOMAIN, nameError: answers.length === 0 };
    }
  }

  private positive(answers: ResourceRecord[], qtype: number): Answer {
    // The apex NS set in the answer is not repeated in the authority section.
    const apexNsAnswer = qtype === RRType.NS && answers.at(-1)?.name === this.origin;
    return { rcode: RCode.NOERROR, authoritative: true, answers, authority: apexNsAnswer ? [] : this.apexNs(), additional: this.additional(answers, qtype), nameError: false };
  }

  /** One name of a chain: what the zone holds for it. */
  private step(name: string, qtype: number): Step {
    const starts = labelStarts(name);
    const depth = starts.length - this.originLabels;
    // Down from the apex: the first zone cut or DNAME above (or at) the name decides.
    let closest = this.origin;
    for (let i = 0; i <= depth; i++) {
      const here = i === 0 ? this.origin : name.slice(starts[depth - i]);
      if (i > 0 && !this.exists(here)) break;
      closest = here;
      if (this.cuts.has(here) && !(qtype === RRType.DS && here === name)) {
        return { kind: 'referral', records: [], ns: this.rrset(here, RRType.NS) as ResourceRecord[] };
      }
      const dname = here !== name ? this.rrset(here, RRType.DNAME)?.[0] : undefined;
      if (dname) {
        const target = substitute(name, here, (dname.data as NameData).target);
        if (target === undefined) return { kind: 'yxdomain', records: [dname] };
        const cname: ResourceRecord = { name, type: RRType.CNAME, class: dname.class, ttl: dname.ttl, data: { target } };
        if (qtype === RRType.CNAME) return { kind: 'data', records: [dname, cname] };
        return { kind: 'alias', records: [dname, cname], target };
      }
    }
    if (closest === name) {
      const sets = this.nodes.get(name);
      if (!sets) return { kind: 'nodata', records: [], ent: true };
      return fromNode(sets, name, qtype);
    }
    // The name does not exist: `closest` is its closest encloser, whose wildcard may stand in.
    const wildcard = `*.${closest}`;
    const sets = this.nodes.get(wildcard);
    if (sets) return fromNode(sets, name, qtype);
    if (this.ents.has(wildcard)) return { kind: 'nodata', records: [], ent: false };
    return { kind: 'nxdomain', records: [] };
  }

  /** A and AAAA of names the answer points at inside the zone (MX, SRV, and NS targets below their owner). */
  private additional(answers: readonly ResourceRecord[], qtype: number): ResourceRecord[] {
    const targets: string[] = [];
    for (const rr of answers) {
      if (rr.type !== qtype) continue;
      if (rr.type === RRType.MX) targets.push((rr.data as MXData).exchange);
      else if (rr.type === RRType.SRV) targets.push((rr.data as SRVData).target);
      else if (rr.type === RRType.NS && isSubdomain((rr.data as NameData).target, rr.name)) targets.push((rr.data as NameData).target);
    }
    return this.addresses(targets.filter((t) => isSubdomain(t, this.origin)));
  }

  /** Glue for a referral: addresses of name servers below the cut they serve. */
  private glue(ns: readonly ResourceRecord[]): ResourceRecord[] {
    return this.addresses(ns.map((rr) => (rr.data as NameData).target).filter((t, i) => isSubdomain(t, (ns[i] as ResourceRecord).name)));
  }

  private addresses(names: readonly string[]): ResourceRecord[] {
    const out: ResourceRecord[] = [];
    const done = new Set<string>();
    for (const n of names) {
      const key = lowerName(n);
      if (done.has(key)) continue;
      done.add(key);
      out.push(...(this.rrset(key, RRType.A) ?? []), ...(this.rrset(key, RRType.AAAA) ?? []));
    }
    return out;
  }
}

type Step =
  | { kind: 'referral'; records: ResourceRecord[]; ns: ResourceRecord[] }
  | { kind: 'alias'; records: ResourceRecord[]; target: string }
  | { kind: 'data'; records: ResourceRecord[] }
  | { kind: 'nodata'; records: ResourceRecord[]; ent: boolean }
  | { kind: 'nxdomain'; records: ResourceRecord[] }
  | { kind: 'yxdomain'; records: ResourceRecord[] };

/** The records of an existing node (or a wildcard standing in for `name`). */
function fromNode(sets: RRsets, name: string, qtype: number): Step {
  const cname = sets.get(RRType.CNAME)?.[0];
  if (cname && qtype !== RRType.CNAME) return { kind: 'alias', records: [owned(cname, name)], target: lowerName((cname.data as NameData).target) };
  const set = sets.get(qtype);
  if (!set) return { kind: 'nodata', records: [], ent: false };
  return { kind: 'data', records: set.map((rr) => owned(rr, name)) };
}

/** The record as an answer for `name` (a wildcard's records take the name they answer). */
function owned(rr: ResourceRecord, name: string): ResourceRecord {
  return rr.name === name ? rr : { ...rr, name };
}

/** DNAME substitution (RFC 6672 §2.2): `owner` in `name` replaced by `target`; undefined when the result is too long. */
function substitute(name: string, owner: string, target: string): string | undefined {
  const prefix = name.slice(0, name.length - owner.length);
  const result = lowerName(prefix + (target === '.' ? '' : target)) || '.';
  return typeof parseNameLabels(result) === 'string' ? undefined : result;
}

/** Offsets where each label of an absolute name starts, escape-aware; none for the root. */
function labelStarts(name: string): number[] {
  const starts: number[] = [];
  if (name === '.') return starts;
  let atStart = true;
  for (let i = 0; i < name.length; i++) {
    if (atStart) starts.push(i);
    const c = name.charCodeAt(i);
    atStart = c === 0x2e;
    if (c === 0x5c) i++;
  }
  return starts;
}

function flat(s: string): string {
  return Buffer.from(s, 'latin1').toString('latin1');
}

function parent(name: string): string | undefined {
  const labels = splitLabels(name);
  if (labels.length === 0) return undefined;
  return labels.length === 1 ? '.' : labels.slice(1).join('.') + '.';
}
