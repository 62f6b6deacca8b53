// The kubernetes plugin at query time. The first query for a name and type is resolved from the
// store (./resolve.ts) and encoded once into reply bytes; later queries copy those bytes, put
// the client's ID and spelling of the question in, and go. When the store says a service or IP
// changed, only the answers that depended on it are dropped.

import { encodeMessage } from '../../dns/codec.js';
import { DnsClass, RCode, RRType, type Message, type SOAData } from '../../dns/types.js';
import type { Logger } from '../../server/log.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import { Reply, errorReply, responseFor, type TtlRange } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { StoreDelta } from '../../cluster/store.js';
import type { KubernetesConfig } from './config.js';
import { Arena } from '../../server/arena.js';
import { Resolver, depIP, depPod, depService, upstreamKey, type Resolution, type UpstreamAnswer } from './resolve.js';
import type { SourceHandle } from './sources.js';

/** Past this many cached names the cache starts over (a flood of random names must not grow it forever). */
export const MAX_CACHED_NAMES = 200_000;

/**
 * A whole reply for one (name, type), question in lower case; patched per query. The templates
 * of one name form a short list (most names are asked for one or two types): lighter than a Map
 * per name when 100,000 names are cached.
 */
interface Template {
  qtype: number;
  bytes: Buffer;
  rcode: number;
  /** Where the question ends: a query whose question ends elsewhere is not the same name. */
  questionEnd: number;
  /** The TTLs in the answer, for a cache in front (Reply.kept); shared by templates alike. */
  ttls: TtlRange;
  next: Template | undefined;
}

function findType(t: Template | undefined, qtype: number): Template | undefined {
  while (t !== undefined && t.qtype !== qtype) t = t.next;
  return t;
}

// Header bits taken from the query (RD, CD); QR and AA are set in every kubernetes reply.
const FROM_QUERY = 0x0100 | 0x0010;
const QR_AA = 0x8000 | 0x0400;
const SMALL = 96;

export interface KubernetesDeps {
  log: Logger;
  /** This block's listen addresses (bind), read at query time because bind may set up later. */
  localIPs: () => readonly string[];
}

export class KubernetesPlugin implements Plugin {
  readonly name = 'kubernetes';
  readonly resolver: Resolver;
  private readonly cache = new Map<string, Template>();
  /** The templates' bytes (see arena.ts for why they are not Buffers of their own). */
  private readonly arena = new Arena();
  /** One TtlRange object per distinct range: nearly every answer has the plugin's one TTL. */
  private readonly ttlRanges = new Map<number, TtlRange>();
  /** Dependency → the cached names built from it (one name, or several). */
  private readonly byDep = new Map<string, string | string[]>();
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
    const q = req.query;
    if (q.qclass !== DnsClass.IN) return next(req);
    const name = q.name;
    const zone = matchZone(this.zoneSuffixes, name);
    if (zone === undefined) return next(req);
    const t = findType(this.cache.get(name), q.qtype);
    if (t !== undefined && t.questionEnd === q.questionEnd) return fromTemplate(req, t);
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

  /** Number of (name) entries holding pre-encoded answers. */
  get cachedNames(): number {
    return this.cache.size;
  }

  private answer(req: DnsRequest, next: Next, name: string, zone: string): MaybePromise<Reply | undefined> {
    const res = this.resolver.resolve(name, req.qtype, zone);
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
    return this.finish(req, next, name, zone, this.resolver.resolve(name, req.qtype, zone, found));
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
    const positive = !res.nameError && res.answers.length > 0;
    const msg: Message = {
      ...responseFor(req, rcode, true),
      tc: res.truncated,
      answers: positive ? res.answers : [],
      authority: positive ? [] : [this.resolver.soa(zone)],
      additional: positive ? res.additional : [],
    };
    if (synced && res.deps !== undefined && !name.includes('\\')) {
      const t = this.remember(req, name, res.deps, msg);
      if (t !== undefined) return fromTemplate(req, t);
    }
    return Reply.of(msg);
  }

  /** Encodes the reply with the lower-case question and keeps it; undefined if it cannot be a template. */
  private remember(req: DnsRequest, name: string, deps: readonly string[], msg: Message): Template | undefined {
    const wire = encodeMessage({ ...msg, id: 0, rd: false, cd: false, questions: [{ name, type: req.qtype, class: DnsClass.IN }] });
    const qEnd = req.query.questionEnd;
    if (wire.readUInt16BE(4) !== 1 || !sameQuestion(req.raw, wire, qEnd)) return undefined;
    if (this.cache.size >= MAX_CACHED_NAMES) this.forgetAll();
    const first = this.cache.get(name);
    const t: Template = { qtype: req.qtype, bytes: this.arena.keep(wire), rcode: msg.rcode, questionEnd: qEnd, ttls: this.ttlRangeOf(msg), next: first };
    this.cache.set(name, t);
    for (const d of deps) {
      const names = this.byDep.get(d);
      if (names === undefined) this.byDep.set(d, name);
      else if (typeof names === 'string') {
        if (names !== name) this.byDep.set(d, [names, name]);
      } else if (!names.includes(name)) names.push(name);
    }
    return t;
  }

  private ttlRangeOf(msg: Message): TtlRange {
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
    if (min === Infinity) min = 0;
    const key = min * 2 ** 32 + max;
    let range = this.ttlRanges.get(key);
    if (range === undefined) {
      range = { min, max };
      this.ttlRanges.set(key, range);
    }
    return range;
  }

  private forgetAll(): void {
    this.cache.clear();
    this.byDep.clear();
    this.arena.reset();
  }

  private forget(dep: string): void {
    const names = this.byDep.get(dep);
    if (names === undefined) return;
    this.byDep.delete(dep);
    if (typeof names === 'string') this.forgetName(names);
    else for (const n of names) this.forgetName(n);
  }

  private forgetName(name: string): void {
    for (let t = this.cache.get(name); t !== undefined; t = t.next) this.arena.drop(t.bytes);
    this.cache.delete(name);
  }

  /** Drops the answers a store change makes stale. */
  invalidate(d: StoreDelta): void {
    if (d.namespaces) {
      // Namespace existence and labels decide every name below them: rare, so start over.
      this.forgetAll();
      return;
    }
    for (const key of d.services) this.forget(depService(key));
    for (const ip of d.ips) this.forget(depIP(ip));
    for (const ip of d.podIPs) this.forget(depPod(ip));
    // Dropped answers' bytes go once they are half of what the arena holds.
    this.arena.compactIfWasteful((keep) => {
      for (const first of this.cache.values()) {
        for (let t: Template | undefined = first; t !== undefined; t = t.next) t.bytes = keep(t.bytes);
      }
    });
  }
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

/** Whether the query's question bytes are the template's, but for letter case. */
function sameQuestion(raw: Buffer, wire: Buffer, qEnd: number): boolean {
  if (wire.length < qEnd) return false;
  const nameEnd = qEnd - 4; // type and class follow the name and are compared as they are
  for (let i = 12; i < qEnd; i++) {
    let c = raw[i] as number;
    if (i < nameEnd && c >= 65 && c <= 90) c += 32;
    if (c !== wire[i]) return false;
  }
  return true;
}

/** The template with this query's ID, flags and question spelling. */
function fromTemplate(req: DnsRequest, t: Template): Reply {
  const raw = req.raw;
  const src = t.bytes;
  const qEnd = t.questionEnd;
  const out = Buffer.allocUnsafe(src.length);
  if (src.length <= SMALL) {
    for (let i = 0; i < src.length; i++) out[i] = src[i] as number;
  } else {
    src.copy(out);
  }
  // ID and the question as the client wrote it (case included); counts and records stay ours.
  out[0] = raw[0] as number;
  out[1] = raw[1] as number;
  for (let i = 12; i < qEnd; i++) out[i] = raw[i] as number;
  out.writeUInt16BE((req.query.flags & FROM_QUERY) | QR_AA | (src.readUInt16BE(2) & 0x020f), 2);
  const reply = Reply.fromWire(out, t.rcode);
  reply.kept = t.ttls;
  return reply;
}
