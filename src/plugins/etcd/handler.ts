// The etcd plugin at query time: SkyDNS services read from etcd on every query (etcd is not
// watched; put a *cache* in front), turned into records as CoreDNS's backend lookup does —
// A/AAAA with CNAME chains (followed in the zone from etcd, outside it through the rest of the
// chain), SRV and MX with glue, TXT, CNAME, PTR, NS and SOA at the apex, SkyDNS groups and
// `*`/`any` wildcard labels.

import { canonicalIP } from '../../lib/cluster/keys.js';
import { fqdn, isSubdomain, lowerName } from '../../lib/dns/name.js';
import * as rr from '../../lib/dns/rr.js';
import { DnsClass, RCode, RRType, type Message, type ResourceRecord } from '../../lib/dns/types.js';
import type { Logger } from '../../server/log.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { fallsThrough } from '../pkg/fallthrough.js';
import { addressRecord, SrvAnswer } from '../pkg/records.js';
import { EtcdClient, type EtcdClientOptions, type KeyValue } from './client.js';
import { domainOf, group, parseService, pathOf, pathWithWildcard, split255, targetStrip, type SkyService } from './msg.js';

export const DEFAULT_PATH = 'skydns';
export const DEFAULT_ENDPOINT = 'http://localhost:2379';
export const DEFAULT_TTL = 300;
/** The SOA's minimum and (capped at 300) TTL, as CoreDNS's etcd. */
export const SOA_MIN_TTL = 30;
export const DEFAULT_MIN_LEASE_TTL = 30;
export const DEFAULT_MAX_LEASE_TTL = 86400;
const MAX_CNAME_CHAIN = 10;

export interface EtcdConfig {
  zones: string[];
  /** Key prefix (without slashes is fine: `skydns` → `/skydns/...`). */
  path: string;
  client: EtcdClientOptions;
  /** Zones where a name error goes to the next plugin; undefined = off; [] = every zone. */
  fallthrough?: string[];
  minLeaseTtl: number;
  maxLeaseTtl: number;
}

/** What the store of services answers: the services of a name, or why there are none. */
export interface ServiceSource {
  /** Keys under `path` (prefix) or the key itself (exact); [] when there is none. */
  range(path: string, prefix: boolean): Promise<KeyValue[]>;
  leaseTtl(id: string): Promise<number>;
}

/** No key at all for the name: NXDOMAIN (CoreDNS's errKeyNotFound). */
class KeyNotFound extends Error {}

type HostKind = 'A' | 'AAAA' | 'CNAME' | 'TXT';

function hostKind(s: SkyService): { kind: HostKind; ip: string } {
  const ip = canonicalIP(s.host);
  if (ip === undefined) return { kind: s.text === '' ? 'CNAME' : 'TXT', ip: '' };
  // An IPv4-mapped IPv6 address is IPv4, as Go's To4 says.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (mapped) return { kind: 'A', ip: mapped[1] as string };
  return { kind: ip.includes(':') ? 'AAAA' : 'A', ip };
}

interface Lookup {
  records: ResourceRecord[];
  extra: ResourceRecord[];
  truncated: boolean;
}

const NONE: Lookup = { records: [], extra: [], truncated: false };

export class EtcdPlugin implements Plugin {
  readonly name = 'etcd';
  private readonly zonesBySpecificity: string[];

  constructor(
    readonly config: EtcdConfig,
    private readonly source: ServiceSource & { close?(): void },
    private readonly log?: Logger,
  ) {
    this.zonesBySpecificity = [...config.zones].sort((a, b) => b.length - a.length);
  }

  static connect(config: EtcdConfig, log?: Logger): EtcdPlugin {
    return new EtcdPlugin(config, new EtcdClient(config.client), log);
  }

  stop(): void {
    this.source.close?.();
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    if (req.qclass !== DnsClass.IN) return next(req);
    const zone = this.zonesBySpecificity.find((z) => z === '.' || req.name === z || req.name.endsWith(`.${z}`));
    if (zone === undefined) return next(req);
    return this.answer(req, next, zone);
  }

  private async answer(req: DnsRequest, next: Next, zone: string): Promise<Reply | undefined> {
    let found: Lookup;
    try {
      found = await this.lookup(req, next, zone);
    } catch (e) {
      if (e instanceof KeyNotFound) {
        if (fallsThrough(this.config.fallthrough, req.name)) return next(req);
        return this.reply(req, zone, RCode.NXDOMAIN, NONE);
      }
      this.log?.error(`${req.name} ${rr.typeName(req.qtype)}: ${(e as Error).message}`);
      return this.reply(req, zone, RCode.SERVFAIL, NONE);
    }
    return this.reply(req, zone, RCode.NOERROR, found);
  }

  private reply(req: DnsRequest, zone: string, rcode: number, l: Lookup): Reply {
    const positive = l.records.length > 0;
    const msg: Message = {
      ...responseFor(req, rcode, true),
      tc: l.truncated,
      answers: l.records,
      authority: positive ? [] : [this.soa(zone)],
      additional: positive ? l.extra : [],
    };
    return Reply.of(msg);
  }

  soa(zone: string): ResourceRecord {
    return rr.soa(zone, Math.min(SOA_MIN_TTL, 300), {
      mname: zone === '.' ? 'ns.dns.' : `ns.dns.${zone}`,
      rname: zone === '.' ? 'hostmaster.' : `hostmaster.${zone}`,
      serial: Math.floor(Date.now() / 1000) >>> 0,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: SOA_MIN_TTL,
    });
  }

  private async lookup(req: DnsRequest, next: Next, zone: string): Promise<Lookup> {
    const name = req.name;
    const owner = req.qname;
    const ctx: Ctx = { req, next, zone };
    switch (req.qtype) {
      case RRType.A:
      case RRType.AAAA:
      case RRType.TXT:
        return this.chained(ctx, name, owner, req.qtype, []);
      case RRType.CNAME: {
        const [first] = await this.services(name, req.qtype, true);
        if (first && canonicalIP(first.host) === undefined) return { ...NONE, records: [rr.cname(owner, first.ttl, fqdn(first.host))] };
        return NONE;
      }
      case RRType.PTR: {
        const records: ResourceRecord[] = [];
        const seen = new Set<string>();
        for (const s of await this.services(name, req.qtype, true)) {
          if (canonicalIP(s.host) !== undefined || seen.has(s.host)) continue;
          seen.add(s.host);
          records.push(rr.ptr(owner, s.ttl, fqdn(s.host)));
        }
        return { ...NONE, records };
      }
      case RRType.SRV:
        return this.srvOrMx(ctx, name, owner, 'SRV');
      case RRType.MX:
        return this.srvOrMx(ctx, name, owner, 'MX');
      case RRType.SOA:
        return name === zone ? { ...NONE, records: [this.soa(zone)] } : this.existence(ctx, name);
      case RRType.NS:
        if (name === zone) return this.ns(zone, owner);
        return this.existence(ctx, name);
      default:
        return this.existence(ctx, name);
    }
  }

  /** NODATA when the name has services, NXDOMAIN (KeyNotFound) when not. */
  private async existence(ctx: Ctx, name: string): Promise<Lookup> {
    await this.apexAware(ctx, name, RRType.A);
    return NONE;
  }

  // ---- reading services ----

  /** CoreDNS's Records + Group: the services of a name (its subtree unless exact). */
  async services(name: string, qtype: number, exact: boolean): Promise<SkyService[]> {
    const { path, star } = pathWithWildcard(name, this.config.path);
    const kvs = await this.get(path, !exact);
    const nameParts = pathOf(name, this.config.path).split('/');
    const out: SkyService[] = [];
    for (const kv of kvs) {
      if (star && !wildcardMatches(kv.key.split('/'), nameParts)) continue;
      const parsed = parseService(kv.key, kv.value);
      if (typeof parsed === 'string') throw new Error(`bad SkyDNS service at ${parsed}`);
      const s = { ...parsed, ttl: await this.ttl(kv, parsed) };
      if ((qtype === RRType.TXT && s.text !== '') || s.host !== '') out.push(s);
    }
    return [...group(out)];
  }

  private async get(path: string, recursive: boolean): Promise<KeyValue[]> {
    if (recursive) {
      const dir = path.endsWith('/') ? path : `${path}/`;
      const below = await this.source.range(dir, true);
      if (below.length > 0) return below;
      const exact = await this.source.range(dir.slice(0, -1), false);
      if (exact.length === 0) throw new KeyNotFound();
      return exact;
    }
    const exact = await this.source.range(path, false);
    if (exact.length === 0) throw new KeyNotFound();
    return exact;
  }

  /** The service's TTL, lowered to its key's lease (clamped to the lease bounds) when it has one. */
  private async ttl(kv: KeyValue, s: SkyService): Promise<number> {
    let leaseTtl = 0;
    if (kv.lease !== '' && kv.lease !== '0') {
      try {
        const left = await this.source.leaseTtl(kv.lease);
        if (left > 0) leaseTtl = Math.min(Math.max(left, this.config.minLeaseTtl), this.config.maxLeaseTtl);
      } catch {
        // No lease TTL: the service's own TTL stands.
      }
    }
    if (leaseTtl === 0) return s.ttl === 0 ? DEFAULT_TTL : s.ttl;
    return s.ttl === 0 ? leaseTtl : Math.min(leaseTtl, s.ttl);
  }

  /** The zone's own name: `apex.dns.<zone>` when that exists, else the whole zone (CoreDNS's checkForApex). */
  private async apexAware(ctx: Ctx, name: string, qtype: number): Promise<SkyService[]> {
    if (name !== ctx.zone) return this.services(name, qtype, false);
    try {
      return await this.services(`apex.dns.${ctx.zone === '.' ? '' : ctx.zone}`, qtype, false);
    } catch (e) {
      if (!(e instanceof KeyNotFound)) throw e;
      return this.services(name, qtype, false);
    }
  }

  // ---- record builders ----

  /** A, AAAA or TXT, following CNAMEs: in the zone from etcd, outside it through the chain. */
  private async chained(ctx: Ctx, name: string, owner: string, qtype: number, previous: readonly ResourceRecord[]): Promise<Lookup> {
    const services = qtype === RRType.TXT ? await this.services(name, qtype, false) : await this.apexAware(ctx, name, qtype);
    const records: ResourceRecord[] = [];
    const seen = new Set<string>();
    let truncated = false;
    for (const s of services) {
      const { kind, ip } = hostKind(s);
      if (kind === 'CNAME') {
        const target = fqdn(s.host);
        const targetLower = lowerName(target);
        if (targetLower === name) continue;
        if (previous.length > MAX_CNAME_CHAIN) continue;
        const link = rr.cname(owner, s.ttl, target);
        if (previous.some((p) => p.type === RRType.CNAME && lowerName((p.data as { target: string }).target) === targetLower)) continue;
        if (isSubdomain(targetLower, ctx.zone)) {
          try {
            const more = await this.chained(ctx, targetLower, target, qtype, [...previous, link]);
            if (more.records.length > 0) records.push(link, ...more.records);
            truncated ||= more.truncated;
          } catch (e) {
            if (!(e instanceof KeyNotFound)) throw e;
          }
          continue;
        }
        const up = await upstream(ctx, target, qtype);
        if (up === undefined) continue;
        truncated ||= up.truncated;
        records.push(link, ...up.answers);
        continue;
      }
      if (qtype === RRType.TXT) {
        if (kind !== 'TXT' || seen.has(s.text)) continue;
        seen.add(s.text);
        records.push(rr.txt(owner, s.ttl, split255(s.text)));
        continue;
      }
      const want = qtype === RRType.A ? 'A' : 'AAAA';
      if (kind !== want || seen.has(ip)) continue;
      seen.add(ip);
      records.push(addressRecord(owner, s.ttl, ip));
    }
    return { records, extra: [], truncated };
  }

  /** SRV or MX: targets named by host, or (for an address) by the key, with their addresses as glue. */
  private async srvOrMx(ctx: Ctx, name: string, owner: string, type: 'SRV' | 'MX'): Promise<Lookup> {
    const services = (await this.services(name, type === 'SRV' ? RRType.SRV : RRType.MX, false)).filter((s) => type === 'SRV' || s.mail);
    const weights = new Map<number, number>();
    for (const s of services) weights.set(s.priority, (weights.get(s.priority) ?? 0) + (s.weight === 0 ? 100 : s.weight));
    const answer = new SrvAnswer();
    const looked = new Set<string>();
    for (const s of services) {
      if (s.port === -1) continue;
      const share = (100 / (weights.get(s.priority) as number)) * (s.weight === 0 ? 100 : s.weight);
      const weight = Math.max(1, Math.floor(share));
      const { kind, ip } = hostKind(s);
      if (kind === 'CNAME' || kind === 'TXT') {
        const target = targetStrip(fqdn(s.host), s.targetStrip);
        answer.add(type === 'SRV' ? rr.srv(owner, s.ttl, s.priority, weight, s.port, target) : rr.mx(owner, s.ttl, s.priority, target));
        if (looked.has(target)) continue;
        looked.add(target);
        answer.extra.push(...(await this.glueOf(ctx, target)));
        continue;
      }
      const target = targetStrip(domainOf(s.key), s.targetStrip);
      if (type === 'SRV') answer.srv(owner, s.ttl, s.priority, weight, s.port, target);
      else answer.add(rr.mx(owner, s.ttl, s.priority, target), `${target} ${s.priority}`);
      // MX glue is owned by the untrimmed key name, as CoreDNS does.
      answer.glueAddress(type === 'SRV' ? target : domainOf(s.key), s.ttl, ip);
    }
    return { records: answer.records, extra: answer.extra, truncated: false };
  }

  /** Addresses of an SRV/MX target: from etcd in the zone (CNAMEs followed), else through the chain. */
  private async glueOf(ctx: Ctx, target: string): Promise<ResourceRecord[]> {
    const lower = lowerName(target);
    if (!isSubdomain(lower, ctx.zone)) {
      const out: ResourceRecord[] = [];
      const a = await upstream(ctx, target, RRType.A);
      if (a) out.push(...a.answers);
      const aaaa = await upstream(ctx, target, RRType.AAAA);
      if (aaaa) out.push(...aaaa.answers.filter((r) => r.type !== RRType.CNAME));
      return out;
    }
    try {
      return (await this.chained(ctx, lower, target, RRType.A, [])).records;
    } catch (e) {
      if (e instanceof KeyNotFound) return [];
      throw e;
    }
  }

  /** NS at the apex: the services under `ns.dns.<zone>`, named by their keys. */
  private async ns(zone: string, owner: string): Promise<Lookup> {
    const services = await this.services(zone === '.' ? 'ns.dns.' : `ns.dns.${zone}`, RRType.NS, false);
    const records: ResourceRecord[] = [];
    const extra: ResourceRecord[] = [];
    const seen = new Set<string>();
    for (const s of services) {
      const { kind, ip } = hostKind(s);
      if (kind !== 'A' && kind !== 'AAAA') throw new Error(`NS record must be an IP address: ${s.host}`);
      const target = targetStrip(domainOf(s.key), s.targetStrip);
      extra.push(addressRecord(target, s.ttl, ip));
      if (seen.has(target)) continue;
      seen.add(target);
      records.push(rr.ns(owner, s.ttl, target));
    }
    return { records, extra, truncated: false };
  }
}

interface Ctx {
  req: DnsRequest;
  next: Next;
  zone: string;
}

/** A name outside the zone, asked of the rest of the chain; undefined when that failed. */
async function upstream(ctx: Ctx, name: string, qtype: number): Promise<{ answers: ResourceRecord[]; truncated: boolean } | undefined> {
  try {
    const reply = await ctx.next(ctx.req.derive(name, qtype));
    if (!reply) return undefined;
    const view = reply.view();
    return { answers: view.answers, truncated: view.tc };
  } catch {
    return undefined;
  }
}

/** A key below a wildcard's prefix matches when every non-wildcard label of the name matches. */
function wildcardMatches(keyParts: readonly string[], nameParts: readonly string[]): boolean {
  for (let i = 0; i < nameParts.length; i++) {
    if (i > keyParts.length - 1) return false;
    const n = nameParts[i];
    if (n === '*' || n === 'any') continue;
    if (keyParts[i] !== n) return false;
  }
  return true;
}
