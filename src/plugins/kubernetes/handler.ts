// The kubernetes plugin at query time. The first query for a name and type is resolved from the
// store (./resolve.ts) and encoded once into reply bytes; later queries copy those bytes, put
// the client's ID and spelling of the question in, and go. When the store says a service or IP
// changed, only the answers that depended on it are dropped.
//
// Spelling: answers are spelled as CoreDNS spells them (see resolve.ts), so they depend on how
// the client wrote the question. The kept bytes are made for the question in upper case, with
// compression that never joins names of different case: the only pointers into the question are
// then those from names spelled like it (owners, and the zone in names built in it), since what
// comes from the cluster is lower-case. A client's question copied over it gives every such name
// the client's spelling and leaves the rest alone; SRV targets, written out in full, get the
// client's zone copied in (templates.ts).

import { encodeMessage } from '../../lib/dns/codec.js';
import { DnsClass, RCode, RRType, type Message, type ResourceRecord, type SOAData } from '../../lib/dns/types.js';
import { serialAtOrAfter } from '../pkg/xfr.js';
import type { Logger } from '../../server/log.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import { Reply, errorReply, responseFor, type TtlRange } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { StoreDelta } from '../../lib/cluster/store.js';
import type { KubernetesConfig } from './config.js';
import { NONE, Templates, zoneSpansOf } from './templates.js';
import { Resolver, upstreamKey, type Deps, type Resolution, type Spelling, type UpstreamAnswer } from './resolve.js';
import type { SourceHandle } from './sources.js';

/** Past this many cached names the cache starts over (a flood of random names must not grow it forever). */
export const MAX_CACHED_NAMES = 200_000;
/**
 * At most this many NXDOMAIN answers are kept (as many as a cache's denial store): past it, a
 * name that does not exist is answered without being kept, so a flood of random names under
 * the zone costs CPU but no memory, and the answers for names that exist stay.
 */
export const MAX_KEPT_NAME_ERRORS = 10_000;

export interface KubernetesDeps {
  log: Logger;
  /** This block's listen addresses (bind), read at query time because bind may set up later. */
  localIPs: () => readonly string[];
}

export class KubernetesPlugin implements Plugin {
  readonly name = 'kubernetes';
  readonly resolver: Resolver;
  /** Every answer given so far, pre-encoded, until what it was made from changes. */
  private readonly templates = new Templates();
  /** Service key, address, pod address → the names whose answers were built from it. */
  private readonly byService: NamesBy = new Map();
  private readonly byIP: NamesBy = new Map();
  private readonly byPod: NamesBy = new Map();
  /** Zones longest first, each with its ".zone" suffix for the subdomain test. */
  private readonly zoneSuffixes: Array<[zone: string, suffix: string]>;
  private readonly fallthrough: Array<[zone: string, suffix: string]> | undefined;
  private unsubscribe?: () => void;

  constructor(
    readonly config: KubernetesConfig,
    readonly source: SourceHandle,
    private readonly deps: KubernetesDeps,
  ) {
    this.resolver = new Resolver(source.store, config, deps.localIPs);
    this.zoneSuffixes = suffixes(config.zones);
    this.fallthrough = config.fallthrough ? suffixes(config.fallthrough.length > 0 ? config.fallthrough : ['.']) : undefined;
    this.unsubscribe = source.store.subscribe((d) => this.invalidate(d));
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    // Any class is answered from the cluster's (IN) data, as CoreDNS does; the server refuses
    // other classes before they get here unless chaos or forward opened it to them.
    const q = req.query;
    const name = q.name;
    const zone = matchZone(this.zoneSuffixes, name);
    if (zone === undefined) return next(req);
    const slot = this.templates.find(name, q.qtype, q.questionEnd);
    if (slot !== NONE) return this.templates.reply(slot, req);
    return this.answer(req, next, name, zone);
  }

  async start(): Promise<void> {
    const started = this.source.start();
    const timeout = this.config.startupTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      started.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeout);
      }),
    ]);
    if (timer) clearTimeout(timer);
    if (!waited) this.deps.log.warn(`starting server with unsynced ${this.source.description}`);
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.forgetAll();
    await this.source.release();
  }

  ready(): true | string {
    return this.source.store.synced ? true : `${this.source.description} has not synced yet`;
  }

  /**
   * Records of `zone` for the `transfer` plugin (CoreDNS's Transferer): one of this plugin's
   * zones exactly, not a multicluster or reverse one (whose names are made from addresses asked
   * for, not listed). IXFR with the current serial or a newer one gets the
   * SOA alone. The serial is the time of the store's last change, as in the SOA answered.
   */
  transfer(zone: string, serial: number | undefined): ResourceRecord[] | undefined {
    if (!this.config.zones.includes(zone) || this.resolver.isMulticlusterZone(zone) || zone.endsWith('.arpa.')) return undefined;
    const soa = this.resolver.soa(zone);
    if (serial !== undefined && serialAtOrAfter(serial, (soa.data as SOAData).serial)) return [soa];
    return this.resolver.transferRecords(zone);
  }

  /** The addresses this server answers on (k8s_external's name server addresses). */
  localIPs(): readonly string[] {
    return this.deps.localIPs();
  }

  /** Number of (name) entries holding pre-encoded answers. */
  get cachedNames(): number {
    return this.templates.names;
  }

  private answer(req: DnsRequest, next: Next, name: string, zone: string): MaybePromise<Reply | undefined> {
    const res = this.resolver.resolve(name, req.qtype, zone, undefined, spellingOf(req.qname, zone));
    if (res.needs.length > 0) return this.chase(req, next, name, zone, res);
    return this.finish(req, next, name, zone, res);
  }

  /** ExternalName targets outside our zones: ask the rest of the chain, then answer. */
  private async chase(req: DnsRequest, next: Next, name: string, zone: string, first: Resolution): Promise<Reply | undefined> {
    const found = new Map<string, UpstreamAnswer | null>();
    for (const need of first.needs) {
      let answer: UpstreamAnswer | null;
      try {
        const reply = await next(req.derive(need.name, need.qtype));
        // Nobody after us answering is an empty answer, as CoreDNS's upstream sees its own
        // SERVFAIL: the CNAME still goes out. Only a failure to ask drops it.
        answer = reply ? { answers: reply.view().answers, truncated: reply.view().tc } : { answers: [], truncated: false };
      } catch {
        answer = null;
      }
      found.set(upstreamKey(need.name, need.qtype), answer);
    }
    return this.finish(req, next, name, zone, this.resolver.resolve(name, req.qtype, zone, found, spellingOf(req.qname, zone)));
  }

  private finish(req: DnsRequest, next: Next, name: string, zone: string, res: Resolution): MaybePromise<Reply | undefined> {
    if (res.refused) return errorReply(req, RCode.REFUSED);
    const synced = this.source.store.synced;
    let rcode: number = RCode.NOERROR;
    if (res.nameError) {
      if (this.fallthrough && matchZone(this.fallthrough, name) !== undefined) return next(req);
      // Until the first sync we cannot know a name is missing.
      rcode = synced ? RCode.NXDOMAIN : RCode.SERVFAIL;
    }
    if (synced && res.deps !== undefined && !name.includes('\\')) {
      const slot = this.remember(req, name, zone, res.deps, rcode);
      if (slot !== NONE) return this.templates.reply(slot, req);
    }
    // Not kept: encoded for this client, every name in its own spelling.
    const msg = this.message(req, res, rcode, spellingOf(req.qname, zone));
    return Reply.fromWire(encodeMessage(msg, { exactCase: true }), rcode);
  }

  /** The reply to `req` carrying `res`; its SOA spelled as `spelling` says. */
  private message(req: DnsRequest, res: Resolution, rcode: number, spelling: Spelling): Message {
    const positive = !res.nameError && res.answers.length > 0;
    return {
      ...responseFor(req, rcode, true),
      tc: res.truncated,
      answers: positive ? res.answers : [],
      authority: positive ? [] : [this.resolver.soa(spelling.zone)],
      additional: positive ? res.additional : [],
    };
  }

  /**
   * Resolves and encodes the answer for the question in upper case (see the top of this file)
   * and keeps it; its slot, or NONE if it cannot be kept.
   */
  private remember(req: DnsRequest, name: string, zone: string, deps: Deps, rcode: number): number {
    if (rcode === RCode.NXDOMAIN && this.templates.nameErrors >= MAX_KEPT_NAME_ERRORS) return NONE;
    const upper = spellingOf(upperCase(name), zone);
    const res = this.resolver.resolve(name, req.qtype, zone, undefined, upper);
    const msg = this.message(req, res, rcode, upper);
    const wire = encodeMessage({ ...msg, id: 0, rd: false, cd: false, questions: [{ name: upper.qname, type: req.qtype, class: DnsClass.IN }] }, { exactCase: true });
    const qEnd = req.query.questionEnd;
    if (wire.readUInt16BE(4) !== 1 || !sameQuestion(req.raw, wire, qEnd)) return NONE;
    if (this.templates.names >= MAX_CACHED_NAMES) this.forgetAll();
    const zoneLength = zone === '.' ? 0 : zone.length;
    const slot = this.templates.add(name, req.qtype, wire, msg.rcode, qEnd, ttlRangeOf(msg), zoneSpansOf(wire, qEnd, zoneLength));
    if (slot === NONE) return NONE;
    link(this.byService, deps.services, name);
    link(this.byIP, deps.ips, name);
    link(this.byPod, deps.pods, name);
    return slot;
  }

  private forgetAll(): void {
    this.templates.clear();
    this.byService.clear();
    this.byIP.clear();
    this.byPod.clear();
  }

  private forget(index: NamesBy, key: string): void {
    const names = index.get(key);
    if (names === undefined) return;
    index.delete(key);
    if (typeof names === 'string') this.templates.forget(names);
    else for (const n of names) this.templates.forget(n);
  }

  /** Drops the answers a store change makes stale. */
  invalidate(d: StoreDelta): void {
    if (d.namespaces) {
      // Namespace existence and labels decide every name below them: rare, so start over.
      this.forgetAll();
      return;
    }
    for (const key of d.services) this.forget(this.byService, key);
    for (const ip of d.ips) this.forget(this.byIP, ip);
    for (const ip of d.podIPs) this.forget(this.byPod, ip);
    // Dropped answers' bytes go once they are half of what the arena holds.
    this.templates.compactIfWasteful();
  }
}

/** Dependency → the kept names built from it: one name (most often), or several. */
type NamesBy = Map<string, string | string[]>;

function link(index: NamesBy, keys: readonly string[], name: string): void {
  for (const key of keys) {
    const names = index.get(key);
    if (names === undefined) index.set(key, name);
    else if (typeof names === 'string') {
      if (names !== name) index.set(key, [names, name]);
    } else if (!names.includes(name)) names.push(name);
  }
}

/** The TTLs of a reply, for a cache in front (Reply.kept). */
function ttlRangeOf(msg: Message): TtlRange {
  let min = Infinity;
  let max = 0;
  for (const section of [msg.answers, msg.authority, msg.additional]) {
    for (const r of section) {
      // A negative answer lives as long as its SOA's TTL and MINIMUM allow (RFC 2308).
      const ttl = r.type === RRType.SOA ? Math.min(r.ttl, (r.data as SOAData).minimum) : r.ttl;
      min = Math.min(min, ttl);
      max = Math.max(max, r.ttl);
    }
  }
  return { min: min === Infinity ? 0 : min, max };
}

function suffixes(zones: readonly string[]): Array<[string, string]> {
  return [...zones].sort((a, b) => b.length - a.length).map((z) => [z, z === '.' ? '' : `.${z}`]);
}

/** The longest zone `name` is in (names are lower-case and absolute). */
function matchZone(zones: ReadonlyArray<[string, string]>, name: string): string | undefined {
  for (const [zone, suffix] of zones) {
    if (suffix === '' || name === zone || name.endsWith(suffix)) return zone;
  }
  return undefined;
}

/** Whether the query's question bytes are the template's (upper case), but for letter case. */
function sameQuestion(raw: Buffer, wire: Buffer, qEnd: number): boolean {
  if (wire.length < qEnd) return false;
  const nameEnd = qEnd - 4; // type and class follow the name and are compared as they are
  for (let i = 12; i < qEnd; i++) {
    let c = raw[i] as number;
    if (i < nameEnd && c >= 97 && c <= 122) c -= 32;
    if (c !== wire[i]) return false;
  }
  return true;
}

/** How `qname` spells itself and `zone` (its suffix of the zone's length; zone names are ASCII, as is qname). */
function spellingOf(qname: string, zone: string): Spelling {
  return { qname, zone: zone === '.' ? '.' : qname.slice(qname.length - zone.length) };
}

/** ASCII letters to upper case, nothing else (a name's length must not change). */
function upperCase(name: string): string {
  return name.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
}
