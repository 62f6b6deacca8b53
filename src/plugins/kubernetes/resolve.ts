// What the kubernetes plugin answers, as a pure function of the cluster store and the config:
// the Kubernetes DNS-Based Service Discovery spec 1.1.0, and CoreDNS's kubernetes plugin where
// the spec is silent (which names are NXDOMAIN and which NODATA, SRV weights, PTR targets,
// ExternalName chasing). Lookups use the lower-case name and zone; the answer is spelled as
// CoreDNS spells it: owned by the question as the client wrote it, with the client's spelling of
// the zone in every name built in the zone (SRV targets and their glue, NS, SOA), while names
// that come from the cluster (Service, namespace, endpoint labels, ExternalName targets) and PTR
// targets (in the first forward zone, as configured) keep their own.
//
// Every answer also reports what it depends on (service keys, IPs), so the handler can keep
// it as pre-encoded bytes until one of those changes.

import { reverseNameToIP, isSubdomain, fqdn, lowerName } from '../../lib/dns/name.js';
import * as rr from '../../lib/dns/rr.js';
import { RRType, type ResourceRecord } from '../../lib/dns/types.js';
import { matchesLabels } from '../../lib/cluster/labels.js';
import { canonicalIP, flat } from '../../lib/cluster/keys.js';
import { sourceClusterOf, type EndpointAddressInfo, type EndpointGroup, type ServiceInfo } from '../../lib/cluster/records.js';
import type { ClusterStore } from '../../lib/cluster/store.js';
import { SrvAnswer, addressRecord, srvWeight } from '../pkg/records.js';
import type { KubernetesConfig } from './config.js';

/** The schema version `dns-version.<zone>` reports. */
export const DNS_SCHEMA_VERSION = '1.1.0';
export const DNS_VERSION_TTL = 28800;
/** CoreDNS gives up on CNAME chains longer than this. */
const MAX_CNAME_CHAIN = 7;

/** CoreDNS's three name errors (errNoItems, errNsNotExposed, errInvalidRequest): all NXDOMAIN. */
type NameError = 'noItems' | 'nsNotExposed' | 'invalid';

/** One thing a name stands for, before it becomes records (CoreDNS's msg.Service). */
interface Entry {
  /** An IP, or a domain name for ExternalName services. */
  host: string;
  /** -1 when the service or endpoint declares no ports. */
  port: number;
  /** The name SRV records point at and glue is owned by. */
  target: string;
  isName: boolean;
}

interface Lookup {
  entries: Entry[];
  error?: NameError;
  /**
   * The name exists though it has no entries: a zone-scoped name of a headless service whose
   * zone holds no endpoint. NODATA for every type, TXT included.
   */
  exists?: boolean;
}

export interface UpstreamAnswer {
  answers: ResourceRecord[];
  truncated: boolean;
}

/** Answers fetched from the rest of the chain for out-of-zone CNAME targets; null = lookup failed. */
export type UpstreamAnswers = ReadonlyMap<string, UpstreamAnswer | null>;

/** How the question spells its name and the zone it is in (same text as the lookup's, but for case). */
export interface Spelling {
  /** The question's name as the client wrote it: the owner of the answer's records. */
  qname: string;
  /** The client's spelling of the zone: the zone part of every name built in the zone. */
  zone: string;
}

export function upstreamKey(name: string, qtype: number): string {
  return `${qtype} ${lowerName(name)}`;
}

export interface Resolution {
  /** CoreDNS's IsNameError: NXDOMAIN, or fallthrough, or SERVFAIL before the first sync. */
  nameError: boolean;
  /** Zone transfers are not served here. */
  refused: boolean;
  answers: ResourceRecord[];
  additional: ResourceRecord[];
  truncated: boolean;
  /** What the answer was made from; undefined when it must not be kept. */
  deps: Deps | undefined;
  /** Out-of-zone targets still to look up: resolve again with their answers. */
  needs: Array<{ name: string; qtype: number }>;
}

/**
 * What an answer was made from, in the terms of the store's change deltas: a change to any of
 * these Services (`name.namespace`), addresses (PTR) or pod addresses drops it. Kept as plain
 * keys, per kind, and the store's own key string where the Service exists: with 25,000 answers
 * kept, a prefixed string per dependency ("s:web.demo") cost ~0.5 MiB of heap.
 */
export interface Deps {
  services: string[];
  ips: string[];
  pods: string[];
}

interface ParsedName {
  podOrSvc: '' | 'pod' | 'svc';
  namespace: string;
  service: string;
  endpoint: string;
  /** The clusterset member of an endpoint name in a multicluster zone. */
  cluster: string;
  port: string;
  protocol: string;
  /** The topology zone of a zone-scoped name (`us-west-2a.pin._zone.…`), lower case; "" otherwise. */
  topologyZone: string;
  /** `prefer` rather than `pin`: a zone without endpoints answers with every endpoint. */
  preferZone: boolean;
}

const EMPTY_REQUEST: ParsedName = { podOrSvc: '', namespace: '', service: '', endpoint: '', cluster: '', port: '', protocol: '', topologyZone: '', preferZone: false };

/** The label that anchors a zone-scoped name, and the two ways such a name may ask. */
const ZONE_ANCHOR = '_zone';
const ZONE_PIN = 'pin';
const ZONE_PREFER = 'prefer';

/** `prefix` (labels, no trailing dot) in `zone` ("." included). */
function inZone(prefix: string, zone: string): string {
  return zone === '.' ? `${prefix}.` : `${prefix}.${zone}`;
}

/** The part of `name` left of `zone` ("a.b.zone." → "a.b"); "" for the apex. */
function trimZone(name: string, zone: string): string {
  if (zone === '.') return name === '.' ? '' : name.slice(0, -1);
  if (name.length === zone.length) return '';
  return name.slice(0, name.length - zone.length - 1);
}

function stripUnderscore(label: string): string {
  return label.startsWith('_') ? label.slice(1) : label;
}

/**
 * Splits a query name as CoreDNS does: `[endpoint.|_port._proto.]service.namespace.svc|pod.zone`,
 * and in a multicluster zone also `endpoint.cluster.service.namespace.svc.zone` (two labels
 * without underscores); with `zonal` (and not in a multicluster zone) also
 * `topology-zone.pin|prefer._zone.service.namespace.svc.zone`, where the topology zone is every
 * label left of `pin`/`prefer` (zone names may hold dots). The apex and the bare `svc`/`pod`
 * names are empty requests (NODATA); anything else that does not fit is 'invalid' (NXDOMAIN).
 */
export function parseRequest(name: string, zone: string, multicluster = false, zonal = false): ParsedName | 'invalid' {
  const base = trimZone(name, zone);
  if (base === '' || base === 'svc' || base === 'pod') return EMPTY_REQUEST;
  const segs = base.split('.');
  let last = segs.length - 1;
  const podOrSvc = segs[last] as string;
  if (podOrSvc !== 'svc' && podOrSvc !== 'pod') return 'invalid';
  const r: ParsedName = { ...EMPTY_REQUEST, podOrSvc };
  if (--last < 0) return r;
  r.namespace = segs[last] as string;
  if (--last < 0) return r;
  r.service = segs[last] as string;
  if (--last < 0) return r;
  if (last === 0) r.endpoint = segs[0] as string;
  else if (last === 1) {
    const [left, right] = segs as [string, string];
    if (multicluster && !left.startsWith('_') && !right.startsWith('_')) {
      r.endpoint = left;
      r.cluster = right;
    } else {
      r.port = stripUnderscore(left);
      r.protocol = stripUnderscore(right);
    }
  } else {
    // Three labels or more: only a zone-scoped name; any other shape (an unknown word in place
    // of pin/prefer, a pod name, the option off) stays the name error it always was.
    if (!zonal || multicluster || podOrSvc !== 'svc' || segs[last] !== ZONE_ANCHOR) return 'invalid';
    const how = segs[last - 1];
    if (how !== ZONE_PIN && how !== ZONE_PREFER) return 'invalid';
    r.topologyZone = segs.slice(0, last - 1).join('.');
    r.preferZone = how === ZONE_PREFER;
  }
  return r;
}

function isReverseName(name: string): boolean {
  return name.endsWith('in-addr.arpa.') || name.endsWith('ip6.arpa.');
}

/** Label of an endpoint: its hostname, its pod's name (endpoint_pod_names), or its dashed IP. */
export function endpointHostname(addr: EndpointAddressInfo, podNames: boolean): string {
  if (addr.hostname !== '') return addr.hostname;
  if (podNames && addr.targetRefName !== '') return addr.targetRefName;
  return dashedIP(addr.ip);
}

/**
 * An address as one DNS label: every `.` and `:` a `-` (`10-244-1-11`, `fd00-10-244--5`). A
 * label may not begin or end with a hyphen (RFC 952/1123: Go's resolver drops such names, glibc
 * refuses a first label that begins with one), so an IPv6 address that ends in `::` gets a `0`
 * after it, as CoreDNS does (`2001-db8--0`), and one that begins with `::` a `0` before it
 * (`0--1`; CoreDNS leaves `--1`). Dots go too for an IPv4-mapped address (`::ffff:1.2.3.4`),
 * which would otherwise make several labels.
 */
export function dashedIP(ip: string): string {
  let label = ip.replace(/[.:]/g, '-');
  if (label.startsWith('-')) label = `0${label}`;
  if (label.endsWith('-')) label = `${label}0`;
  return label;
}

function portMatches(want: string, have: string): boolean {
  return want === '' || want === have.toLowerCase();
}

/** The address family record type of an IP host, 0 for a name. */
function hostType(host: string): number {
  if (canonicalIP(host) === undefined) return 0;
  return host.includes(':') ? RRType.AAAA : RRType.A;
}

class Context {
  deps: Deps | undefined = { services: [], ips: [], pods: [] };
  needs: Array<{ name: string; qtype: number }> = [];
  truncated = false;

  constructor(
    /** The zone as names built in it spell it (the question's spelling). */
    readonly zoneName: string,
  ) {}

  uncacheable(): void {
    this.deps = undefined;
  }
}

export class Resolver {
  /** Zones answered from ServiceImports (the `multicluster` option). */
  private readonly multiclusterZones: ReadonlySet<string>;

  constructor(
    private readonly store: ClusterStore,
    private readonly cfg: KubernetesConfig,
    /** The addresses this server answers on (for NS records and ns.dns.<zone>). */
    private readonly localIPs: () => readonly string[],
  ) {
    this.multiclusterZones = new Set(cfg.multiclusterZones ?? []);
  }

  /**
   * The answer for `name` (lower-case) in `zone` (lower-case, the longest of ours it is in),
   * spelled as `spelling` says (default: as `name` and `zone`).
   */
  resolve(name: string, qtype: number, zone: string, upstream?: UpstreamAnswers, spelling?: Spelling): Resolution {
    const ctx = new Context(spelling?.zone ?? zone);
    const owner = spelling?.qname ?? name;
    let answers: ResourceRecord[] = [];
    let additional: ResourceRecord[] = [];
    let error: NameError | undefined;
    let refused = false;
    switch (qtype) {
      case RRType.A:
      case RRType.AAAA: {
        const r = this.address(ctx, name, owner, qtype, zone, [], upstream);
        answers = r.records;
        error = r.error;
        break;
      }
      case RRType.TXT: {
        const r = this.txt(ctx, name, owner, zone);
        answers = r.records;
        error = r.error;
        break;
      }
      case RRType.CNAME: {
        const l = this.services(ctx, name, qtype, zone);
        error = l.error;
        const first = l.entries[0];
        if (!error && first && first.isName) answers = [rr.cname(owner, this.cfg.ttl, first.host)];
        break;
      }
      case RRType.PTR: {
        const r = this.ptr(ctx, name, owner, zone);
        answers = r.records;
        error = r.error;
        break;
      }
      case RRType.SRV: {
        const r = this.srv(ctx, name, owner, zone);
        answers = r.records;
        additional = r.extra;
        error = r.error;
        break;
      }
      case RRType.SOA:
        if (name === zone) answers = [this.soa(ctx.zoneName)];
        break;
      case RRType.AXFR:
      case RRType.IXFR:
        refused = true;
        break;
      case RRType.NS:
        if (name === zone) {
          const r = this.ns(ctx, owner);
          answers = r.records;
          additional = r.extra;
          break;
        }
        error = this.address(ctx, name, owner, RRType.A, zone, [], upstream).error;
        break;
      default:
        // MX and everything else: nothing of these types exists, but the name may (NODATA) or
        // not (NXDOMAIN); CoreDNS decides with an A lookup and so do we.
        error = this.address(ctx, name, owner, RRType.A, zone, [], upstream).error;
    }
    if (error) answers = additional = [];
    return { nameError: error !== undefined, refused, answers, additional, truncated: ctx.truncated, deps: ctx.needs.length > 0 ? undefined : ctx.deps, needs: ctx.needs };
  }

  /** The SOA that goes with every negative answer and an apex SOA query (`zone` as the question spells it). */
  soa(zone: string): ResourceRecord {
    const ttl = this.cfg.ttl;
    return rr.soa(zone, Math.min(ttl, 300), {
      mname: zone === '.' ? 'ns.dns.' : `ns.dns.${zone}`,
      rname: zone === '.' ? 'hostmaster.' : `hostmaster.${zone}`,
      serial: this.store.modified >>> 0,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: ttl,
    });
  }

  /**
   * The records of `zone` for a zone transfer, as CoreDNS's kubernetes plugin offers them: the
   * SOA; the apex NS records and their addresses; for each Service (by name) of an exposed
   * namespace, a ClusterIP service's A/AAAA, an SRV per port at the service's own name (which
   * CoreDNS adds for peer-finder) and one per named port at `_port._proto`; a headless service's
   * published endpoints as A/AAAA at the service's name and at their own, with an SRV per named
   * port; an ExternalName service's CNAME; then the SOA again. Pods, PTR and `dns-version` are
   * answered but not transferred, as in CoreDNS. A multicluster zone is not transferred.
   */
  transferRecords(zone: string): ResourceRecord[] {
    const ttl = this.cfg.ttl;
    const soa = this.soa(zone);
    const out: ResourceRecord[] = [soa];
    const ns = this.ns(new Context(zone), zone);
    out.push(...ns.records, ...ns.extra);
    const seen = new Set<string>();
    const add = (r: ResourceRecord): void => {
      const key = `${r.name} ${r.type} ${JSON.stringify(r.data)}`;
      if (seen.has(key)) return;
      seen.add(key);
      out.push(r);
    };
    const services = [...this.store.allServices()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
    for (const svc of services) {
      if (!this.namespaceExposed(svc.namespace) || !matchesLabels(this.cfg.labels, svc.labels)) continue;
      const svcName = inZone(`${svc.name}.${svc.namespace}.svc`, zone).toLowerCase();
      const portName = (p: { name: string; protocol: string }): string => `_${p.protocol.toLowerCase()}._${p.name.toLowerCase()}.${svcName}`;
      if (svc.kind === 'ExternalName') {
        if (svc.externalName !== '' && canonicalIP(svc.externalName) === undefined) add(rr.cname(svcName, ttl, fqdn(svc.externalName)));
        continue;
      }
      if (svc.kind === 'ClusterIP') {
        for (const ip of svc.clusterIPs) add(addressRecord(svcName, ttl, ip));
        for (const p of svc.ports) {
          if (p.port === -1) continue;
          add(rr.srv(svcName, ttl, 0, 100, p.port, svcName));
          if (p.name !== '') add(rr.srv(portName(p), ttl, 0, 100, p.port, svcName));
        }
        continue;
      }
      for (const g of this.groups(svc)) {
        if (!this.groupVisible(g)) continue;
        const published = g.addresses.filter((a) => this.published(a, svc));
        const weight = srvWeight(published.length);
        for (const a of published) {
          const host = `${endpointHostname(a, this.cfg.endpointPodNames)}.${svcName}`.toLowerCase();
          add(addressRecord(svcName, ttl, a.ip));
          add(addressRecord(host, ttl, a.ip));
          for (const p of g.ports) if (p.name !== '' && p.port !== -1) add(rr.srv(portName(p), ttl, 0, weight, p.port, host));
        }
      }
    }
    out.push(soa);
    return out;
  }

  /** True for a zone answered from ServiceImports (multicluster). */
  isMulticlusterZone(zone: string): boolean {
    return this.multiclusterZones.has(zone);
  }

  // ---- record builders (CoreDNS's plugin.A, SRV, TXT, PTR, NS) ----

  /** A/AAAA of `name`, owned by `owner` (its spelling). */
  private address(ctx: Context, name: string, owner: string, qtype: number, zone: string, previous: ResourceRecord[], upstream?: UpstreamAnswers): { records: ResourceRecord[]; error?: NameError } {
    const l = this.services(ctx, name, qtype, zone);
    if (l.error) return { records: [], error: l.error };
    const records: ResourceRecord[] = [];
    const seen = new Set<string>();
    for (const e of l.entries) {
      if (e.isName) {
        this.chase(ctx, name, owner, qtype, zone, e.host, previous, records, upstream);
        continue;
      }
      if (hostType(e.host) !== qtype || seen.has(e.host)) continue;
      seen.add(e.host);
      records.push(qtype === RRType.A ? rr.a(owner, this.cfg.ttl, e.host) : rr.aaaa(owner, this.cfg.ttl, e.host));
    }
    return { records };
  }

  /**
   * An ExternalName: CNAME, then the target's addresses (from us when in zone, else from
   * upstream). The target's records are owned by the target as the Service spells it.
   */
  private chase(ctx: Context, name: string, owner: string, qtype: number, zone: string, host: string, previous: ResourceRecord[], records: ResourceRecord[], upstream?: UpstreamAnswers): void {
    const target = fqdn(host);
    const targetLower = lowerName(target);
    if (isSubdomain(targetLower, name)) return; // x CNAME x (or below x) is a loop
    if (previous.length > MAX_CNAME_CHAIN) return;
    if (previous.some((p) => p.type === RRType.CNAME && lowerName((p.data as { target: string }).target) === targetLower)) return;
    const link = rr.cname(owner, this.cfg.ttl, target);
    if (isSubdomain(targetLower, zone)) {
      const next = this.address(ctx, targetLower, target, qtype, zone, [...previous, link], upstream);
      if (!next.error && next.records.length > 0) records.push(link, ...next.records);
      return;
    }
    const key = upstreamKey(target, qtype);
    const found = upstream?.get(key);
    if (found === undefined) {
      ctx.needs.push({ name: target, qtype });
      return;
    }
    ctx.uncacheable(); // the upstream's answer is not ours to keep
    if (found === null) return;
    if (found.truncated) ctx.truncated = true;
    records.push(link, ...found.answers);
  }

  private txt(ctx: Context, name: string, owner: string, zone: string): { records: ResourceRecord[]; error?: NameError } {
    if (trimZone(name, zone) === 'dns-version') {
      return { records: [rr.txt(owner, DNS_VERSION_TTL, [DNS_SCHEMA_VERSION])] };
    }
    // No TXT data exists: NODATA where the name has records of another kind, else NXDOMAIN.
    const l = this.records(ctx, name, zone);
    return l.entries.length > 0 || l.exists === true ? { records: [] } : { records: [], error: 'noItems' };
  }

  private srv(ctx: Context, name: string, owner: string, zone: string): { records: ResourceRecord[]; extra: ResourceRecord[]; error?: NameError } {
    const l = this.services(ctx, name, RRType.SRV, zone);
    if (l.error) return { records: [], extra: [], error: l.error };
    const entries = l.entries;
    const weight = srvWeight(entries.length);
    const answer = new SrvAnswer();
    for (const e of entries) {
      if (e.port === -1) continue;
      if (hostType(e.host) === 0) continue;
      answer.srv(owner, this.cfg.ttl, 0, weight, e.port, e.target);
      answer.glueAddress(e.target, this.cfg.ttl, e.host);
    }
    return { records: answer.records, extra: answer.extra };
  }

  private ptr(ctx: Context, name: string, owner: string, zone: string): { records: ResourceRecord[]; error?: NameError } {
    const ip = reverseNameToIP(name);
    if (ip === undefined) {
      // Not an address: the name's existence decides NODATA or NXDOMAIN.
      const l = this.records(ctx, name, zone);
      return { records: [], ...(l.error ? { error: l.error } : {}) };
    }
    ctx.deps?.ips.push(ip);
    const targets = this.reverse(ip);
    if (targets.length === 0) return { records: [], error: 'noItems' };
    return { records: targets.map((t) => rr.ptr(owner, this.cfg.ttl, t)) };
  }

  /** PTR targets for an IP: the service whose ClusterIP it is, else every endpoint with it. */
  private reverse(ip: string): string[] {
    const primary = this.cfg.primaryZone;
    const filterNs = this.cfg.namespaces !== undefined;
    for (const svc of this.store.servicesByIP(ip)) {
      if (filterNs && !this.namespaceExposed(svc.namespace)) continue;
      if (!matchesLabels(this.cfg.labels, svc.labels)) continue;
      return [`${svc.name}.${svc.namespace}.svc.${primary}`];
    }
    if (this.cfg.noEndpoints) return [];
    const out: string[] = [];
    for (const g of this.store.endpointGroupsByIP(ip)) {
      if (filterNs && !this.namespaceExposed(g.namespace)) continue;
      if (!this.groupVisible(g)) continue;
      const svc = this.store.service(g.serviceKey);
      for (const a of g.addresses) {
        if (a.ip !== ip || !this.published(a, svc)) continue;
        const target = `${endpointHostname(a, this.cfg.endpointPodNames)}.${g.serviceKey}.svc.${primary}`;
        if (!out.includes(target)) out.push(target);
      }
    }
    return out;
  }

  /** NS of the apex, owned by `owner`; the name servers' names in the question's spelling of the zone. */
  private ns(ctx: Context, owner: string): { records: ResourceRecord[]; extra: ResourceRecord[] } {
    ctx.uncacheable(); // depends on whichever service fronts our own addresses
    const records: ResourceRecord[] = [];
    const extra: ResourceRecord[] = [];
    const seen = new Set<string>();
    for (const e of this.nsAddresses(ctx.zoneName)) {
      const t = hostType(e.host);
      extra.push(t === RRType.A ? rr.a(e.target, this.cfg.ttl, e.host) : rr.aaaa(e.target, this.cfg.ttl, e.host));
      if (seen.has(e.target)) continue;
      seen.add(e.target);
      records.push(rr.ns(owner, this.cfg.ttl, e.target));
    }
    return { records, extra };
  }

  /**
   * The name servers of the zone: the services whose endpoints are this server's own addresses
   * (the kube-dns Service in a cluster), else `ns.dns.<zone>` at those addresses. `zone` as
   * the names are to spell it.
   */
  private nsAddresses(zone: string): Entry[] {
    const out: Entry[] = [];
    let found = false;
    const local = this.localIPs();
    for (const ip of local) {
      for (const g of this.store.endpointGroupsByIP(ip)) {
        found = true;
        const svc = this.store.service(g.serviceKey);
        if (!svc) continue;
        const svcName = inZone(`${svc.name}.${svc.namespace}.svc`, zone);
        if (svc.kind === 'Headless') {
          for (const a of g.addresses) {
            if (this.published(a, svc)) out.push({ host: a.ip, port: -1, target: `${endpointHostname(a, this.cfg.endpointPodNames)}.${svcName}`, isName: false });
          }
        } else {
          for (const cip of svc.clusterIPs) out.push({ host: cip, port: -1, target: svcName, isName: false });
        }
      }
    }
    if (!found) for (const ip of local) out.push({ host: ip, port: -1, target: inZone('ns.dns', zone), isName: false });
    return out;
  }

  // ---- lookups (CoreDNS's Services, Records, findServices, findPods) ----

  /** Entries for a name and query type, with the special names (ns.dns.<zone>) and the SRV filter. */
  private services(ctx: Context, name: string, qtype: number, zone: string): Lookup {
    if (name === `ns.dns.${zone}`) {
      ctx.uncacheable();
      return { entries: this.nsAddresses(ctx.zoneName).filter((e) => hostType(e.host) === qtype).map((e) => ({ ...e, target: name })) };
    }
    const l = this.records(ctx, name, zone);
    // ExternalName services have no SRV records.
    if (qtype === RRType.SRV) return { entries: l.entries.filter((e) => !e.isName), ...(l.error ? { error: l.error } : {}) };
    return l;
  }

  private records(ctx: Context, name: string, zone: string): Lookup {
    const multicluster = this.multiclusterZones.has(zone);
    const r = parseRequest(name, zone, multicluster, this.cfg.zonal === true);
    if (r === 'invalid') return { entries: [], error: 'invalid' };
    if (r.podOrSvc === '') return { entries: [] };
    if (isReverseName(name)) return { entries: [], error: 'noItems' };
    if (!this.namespaceExposed(r.namespace)) return { entries: [], error: 'nsNotExposed' };
    if (r.podOrSvc === 'pod') return this.findPods(ctx, r);
    return multicluster ? this.findImports(ctx, r) : this.findServices(ctx, r);
  }

  /** Listed in `namespaces` (when given) and existing (matching `namespace_labels`, when given). */
  namespaceExposed(namespace: string): boolean {
    if (this.cfg.namespaces && !this.cfg.namespaces.has(namespace)) return false;
    const ns = this.store.namespace(namespace);
    if (!ns) return false;
    return this.cfg.namespaceLabels ? matchesLabels(this.cfg.namespaceLabels, ns.labels) : true;
  }

  private groupVisible(g: EndpointGroup): boolean {
    return matchesLabels(this.cfg.labels, g.labels);
  }

  private published(a: EndpointAddressInfo, svc: ServiceInfo | undefined): boolean {
    return a.ready || (svc?.publishNotReadyAddresses ?? false);
  }

  private groups(svc: ServiceInfo): readonly EndpointGroup[] {
    return this.cfg.noEndpoints ? [] : this.store.endpointGroups(svc.key);
  }

  private findServices(ctx: Context, r: ParsedName): Lookup {
    if (r.service === '') return { entries: [] };
    const key = `${r.service}.${r.namespace}`;
    const svc = this.store.service(key);
    // A missing service's key is kept for as long as its NXDOMAIN is: flat, not the two slices
    // and the concatenation it was built from (~80 bytes each, 4,000 of them after the auth bench).
    ctx.deps?.services.push(svc?.key ?? flat(key));
    if (!svc || !matchesLabels(this.cfg.labels, svc.labels)) return { entries: [], error: 'noItems' };
    const svcName = inZone(`${svc.name}.${svc.namespace}.svc`, ctx.zoneName);
    if (r.topologyZone !== '') return this.findZoned(svc, svcName, r);

    if (this.cfg.ignoreEmptyService && svc.kind === 'ClusterIP' && !this.hasReadyEndpoint(svc)) {
      return { entries: [], error: 'noItems' };
    }
    if (svc.kind === 'ExternalName') {
      // No endpoints and no port names below an ExternalName; an IP is not a CNAME target.
      if (r.endpoint !== '' || r.port !== '' || r.protocol !== '') return { entries: [], error: 'noItems' };
      if (svc.externalName === '' || canonicalIP(svc.externalName) !== undefined) return { entries: [], error: 'noItems' };
      return { entries: [{ host: fqdn(svc.externalName), port: -1, target: svcName, isName: true }] };
    }
    const entries: Entry[] = [];
    let matched = false;
    if (svc.kind === 'Headless' || r.endpoint !== '') {
      for (const g of this.groups(svc)) {
        if (!this.groupVisible(g)) continue;
        for (const a of g.addresses) {
          if (!this.published(a, svc)) continue;
          const host = endpointHostname(a, this.cfg.endpointPodNames);
          if (r.endpoint !== '' && r.endpoint !== host.toLowerCase()) continue;
          for (const p of g.ports) {
            if (!portMatches(r.port, p.name) || !portMatches(r.protocol, p.protocol)) continue;
            matched = true;
            entries.push({ host: a.ip, port: p.port, target: `${host}.${svcName}`, isName: false });
          }
        }
      }
      return matched ? { entries } : { entries, error: 'noItems' };
    }
    for (const p of svc.ports) {
      if (!portMatches(r.port, p.name) || !portMatches(r.protocol, p.protocol)) continue;
      matched = true;
      for (const ip of svc.clusterIPs) entries.push({ host: ip, port: p.port, target: svcName, isName: false });
    }
    return matched ? { entries } : { entries, error: 'noItems' };
  }

  /**
   * A zone-scoped name (`zonal`): the headless service's published endpoints whose EndpointSlice
   * zone is the one asked for; with `prefer`, every endpoint when none is there. The name exists
   * for any zone (NODATA when empty: a drained zone and a mistyped one look alike, on every
   * replica); a service that is not headless has no zone-scoped names (NXDOMAIN), its ClusterIP
   * being in no zone. Endpoints whose slice gives no zone match no zone.
   */
  private findZoned(svc: ServiceInfo, svcName: string, r: ParsedName): Lookup {
    if (svc.kind !== 'Headless') return { entries: [], error: 'noItems' };
    // A zone-scoped name has no port labels: every port of every endpoint it selects.
    const endpointsIn = (zone: string | undefined): Entry[] => {
      const entries: Entry[] = [];
      for (const g of this.groups(svc)) {
        if (!this.groupVisible(g)) continue;
        for (const a of g.addresses) {
          if (!this.published(a, svc) || (zone !== undefined && a.zone !== zone)) continue;
          const target = `${endpointHostname(a, this.cfg.endpointPodNames)}.${svcName}`;
          for (const p of g.ports) entries.push({ host: a.ip, port: p.port, target, isName: false });
        }
      }
      return entries;
    };
    let entries = endpointsIn(r.topologyZone);
    if (entries.length === 0 && r.preferZone) entries = endpointsIn(undefined);
    return { entries, exists: true };
  }

  /**
   * A multicluster zone's services: ServiceImports of the clusterset (KEP-1645's DNS), with their
   * clusterset IPs, or for a headless import the endpoints of every cluster, each named
   * `<hostname>.<cluster>.<service>.<namespace>.svc.<zone>`.
   */
  private findImports(ctx: Context, r: ParsedName): Lookup {
    if (r.service === '') return { entries: [] };
    const key = `${r.service}.${r.namespace}`;
    const si = this.store.serviceImport(key);
    ctx.deps?.services.push(si?.key ?? flat(key));
    if (!si) return { entries: [], error: 'noItems' };
    const svcName = inZone(`${si.name}.${si.namespace}.svc`, ctx.zoneName);
    const groups = this.cfg.noEndpoints ? [] : this.store.importEndpointGroups(si.key).filter((g) => this.groupVisible(g));
    if (this.cfg.ignoreEmptyService && !si.headless && !groups.some((g) => g.addresses.some((a) => a.ready))) return { entries: [], error: 'noItems' };
    const entries: Entry[] = [];
    if (si.headless || r.endpoint !== '') {
      for (const g of groups) {
        const cluster = sourceClusterOf(g);
        for (const a of g.addresses) {
          if (!a.ready) continue;
          const host = endpointHostname(a, this.cfg.endpointPodNames);
          if (r.endpoint !== '' && (r.cluster !== cluster.toLowerCase() || r.endpoint !== host.toLowerCase())) continue;
          const target = cluster === '' ? `${host}.${svcName}` : `${host}.${cluster}.${svcName}`;
          for (const p of g.ports) {
            if (portMatches(r.port, p.name) && portMatches(r.protocol, p.protocol)) entries.push({ host: a.ip, port: p.port, target, isName: false });
          }
        }
      }
      return entries.length > 0 ? { entries } : { entries, error: 'noItems' };
    }
    let matched = false;
    for (const p of si.ports) {
      if (!portMatches(r.port, p.name) || !portMatches(r.protocol, p.protocol)) continue;
      matched = true;
      for (const ip of si.ips) entries.push({ host: ip, port: p.port, target: svcName, isName: false });
    }
    return matched ? { entries } : { entries, error: 'noItems' };
  }

  private hasReadyEndpoint(svc: ServiceInfo): boolean {
    for (const g of this.groups(svc)) {
      if (!this.groupVisible(g)) continue;
      for (const a of g.addresses) if (this.published(a, svc)) return true;
    }
    return false;
  }

  private findPods(ctx: Context, r: ParsedName): Lookup {
    if (this.cfg.podMode === 'disabled') return { entries: [], error: 'noItems' };
    if (r.service === '') return { entries: [] };
    const label = r.service;
    // "1-2-3-4" is IPv4; anything else dashed is IPv6 with ":" written as "-".
    const dotted = label.split('-').length === 4 && !label.includes('--');
    const ip = canonicalIP(dotted ? label.replaceAll('-', '.') : label.replaceAll('-', ':'));
    if (ip === undefined) return { entries: [], error: 'noItems' };
    if (this.cfg.podMode === 'insecure') return { entries: [{ host: ip, port: -1, target: '', isName: false }] };
    ctx.deps?.pods.push(ip);
    const entries: Entry[] = [];
    for (const pod of this.store.podsByIP(ip)) {
      // Finished and terminating pods are not served (CoreDNS does not even watch them).
      if (pod.namespace !== r.namespace || pod.terminating) continue;
      if (pod.phase === 'Succeeded' || pod.phase === 'Failed' || pod.phase === 'Unknown') continue;
      if (!matchesLabels(this.cfg.labels, pod.labels)) continue;
      entries.push({ host: ip, port: -1, target: '', isName: false });
    }
    return entries.length > 0 ? { entries } : { entries, error: 'noItems' };
  }
}
