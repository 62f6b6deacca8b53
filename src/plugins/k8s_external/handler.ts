// k8s_external: the Services of the cluster under an outside zone, at the addresses clients
// outside the cluster can reach (spec.externalIPs and load-balancer ingress), as CoreDNS's
// k8s_external answers them: `<service>.<namespace>.<zone>` A/AAAA/SRV, PTR for those
// addresses, optionally headless services' endpoints, and an apex with SOA and NS whose name
// server lives at `ns1.<apex>.<zone>`. It reads the store of the kubernetes plugin of the same
// server block; answers are built per query (this is not the cluster's hot path).

import { canonicalIP } from '../../lib/cluster/keys.js';
import type { ClusterStore } from '../../lib/cluster/store.js';
import { matchesLabels } from '../../lib/cluster/labels.js';
import { fqdn, reverseNameToIP } from '../../lib/dns/name.js';
import * as rr from '../../lib/dns/rr.js';
import { DnsClass, RCode, RRType, type Message, type ResourceRecord } from '../../lib/dns/types.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import { Reply, errorReply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { endpointHostname, type KubernetesPlugin } from '../kubernetes/index.js';
import { fallsThrough } from '../pkg/fallthrough.js';
import { addressRecord, SrvAnswer, srvWeight } from '../pkg/records.js';

export const DEFAULT_APEX = 'dns';
export const DEFAULT_TTL = 5;
export const MAX_TTL = 3600;

export interface ExternalConfig {
  /** Zones answered for: absolute, lower-case. The first names PTR targets. */
  zones: string[];
  /** The label under each zone where its name server lives (`ns1.<apex>.<zone>`). */
  apex: string;
  ttl: number;
  /** Headless services (and endpoint names) answer with their endpoints' addresses. */
  headless: boolean;
  /** Zones where a name error goes to the next plugin; undefined = off; [] = every zone. */
  fallthrough?: string[];
}

/** What a name stands for before it becomes records (CoreDNS's msg.Service). */
export interface ExternalEntry {
  /** An IP, or a load balancer's hostname. */
  readonly host: string;
  /** -1 when the service or endpoint declares no ports. */
  readonly port: number;
  /** The in-zone name SRV records point at and glue is owned by. */
  readonly target: string;
}

export interface ExternalLookup {
  entries: ExternalEntry[];
  /** NOERROR or NXDOMAIN: whether the name exists, whatever its records. */
  rcode: number;
}

/** The parts of the kubernetes plugin an external lookup reads. */
export interface ClusterView {
  readonly store: ClusterStore;
  namespaceExposed(namespace: string): boolean;
  /** The kubernetes plugin's `labels` selector (undefined = every object). */
  readonly labels: Parameters<typeof matchesLabels>[0];
  readonly endpointPodNames: boolean;
  /** Whether `namespaces` restricts what is served (PTR then checks the namespace, as CoreDNS). */
  readonly namespacesListed: boolean;
}

export function clusterViewOf(k: KubernetesPlugin): ClusterView {
  return {
    store: k.source.store,
    namespaceExposed: (ns) => k.resolver.namespaceExposed(ns),
    labels: k.config.labels,
    endpointPodNames: k.config.endpointPodNames,
    namespacesListed: k.config.namespaces !== undefined,
  };
}

function join(label: string, zone: string): string {
  return zone === '.' ? `${label}.` : `${label}.${zone}`;
}

/** The part of `name` left of `zone`; "" for the apex. */
function trimZone(name: string, zone: string): string {
  if (name === zone) return '';
  return zone === '.' ? name.slice(0, -1) : name.slice(0, name.length - zone.length - 1);
}

function stripUnderscore(label: string): string {
  return label.startsWith('_') ? label.slice(1) : label;
}

/** An unset port or protocol in the query matches any. */
function matches(want: string, have: string): boolean {
  return want === '' || want === have.toLowerCase();
}

function isIP(host: string): boolean {
  return canonicalIP(host) !== undefined;
}

/**
 * What `name` (lower-case, below `zone`, not the apex) stands for: `service.namespace`,
 * `endpoint.service.namespace` or `_port._proto.service.namespace` under the zone.
 */
export function lookupExternal(view: ClusterView, name: string, zone: string, headless: boolean): ExternalLookup {
  const none = (rcode: number): ExternalLookup => ({ entries: [], rcode });
  const segs = trimZone(name, zone).split('.');
  let last = segs.length - 1;
  const namespace = segs[last] as string;
  if (!view.namespaceExposed(namespace)) return none(RCode.NXDOMAIN);
  if (--last < 0) return none(RCode.NOERROR); // the namespace itself: exists, holds no records
  const service = segs[last] as string;
  let endpoint = '';
  let port = '';
  let protocol = '';
  last--;
  if (last === 0) {
    endpoint = stripUnderscore(segs[0] as string);
    last--;
  } else if (last === 1) {
    port = stripUnderscore(segs[0] as string);
    protocol = stripUnderscore(segs[1] as string);
    last -= 2;
  }
  if (last !== -1) return none(RCode.NXDOMAIN);
  const svc = view.store.service(`${service}.${namespace}`);
  if (!svc || !matchesLabels(view.labels, svc.labels)) return none(RCode.NXDOMAIN);
  const svcName = join(`${svc.name}.${svc.namespace}`, zone);
  const external = view.store.externalAddresses(svc.key);
  const entries: ExternalEntry[] = [];
  if (headless && external.length === 0 && (svc.kind === 'Headless' || endpoint !== '')) {
    for (const g of view.store.endpointGroups(svc.key)) {
      if (!matchesLabels(view.labels, g.labels)) continue;
      for (const a of g.addresses) {
        if (!a.ready && !svc.publishNotReadyAddresses) continue;
        const host = endpointHostname(a, view.endpointPodNames);
        if (endpoint !== '' && endpoint !== host.toLowerCase()) continue;
        for (const p of g.ports) {
          if (matches(port, p.name) && matches(protocol, p.protocol)) entries.push({ host: a.ip, port: p.port, target: `${host}.${svcName}` });
        }
      }
    }
  } else {
    // As CoreDNS: an endpoint label below a service with external addresses is not checked.
    for (const host of external) {
      for (const p of svc.ports) {
        if (matches(port, p.name) && matches(protocol, p.protocol)) entries.push({ host, port: p.port, target: svcName });
      }
    }
  }
  return { entries, rcode: entries.length > 0 ? RCode.NOERROR : RCode.NXDOMAIN };
}

/** PTR targets for an external address: `service.namespace.<first zone>`. */
export function reverseExternal(view: ClusterView, ip: string, firstZone: string): string[] {
  const out: string[] = [];
  for (const svc of view.store.servicesByExternalIP(ip)) {
    if (view.namespacesListed && !view.namespaceExposed(svc.namespace)) continue;
    if (!matchesLabels(view.labels, svc.labels)) continue;
    const target = join(`${svc.name}.${svc.namespace}`, firstZone);
    if (!out.includes(target)) out.push(target);
  }
  return out;
}

/**
 * The name server's addresses: the external addresses of the Services in front of this server
 * (with `headless`, a headless one's endpoints), else the addresses it answers on.
 */
export function nameServerAddresses(view: ClusterView, localIPs: readonly string[], headless: boolean): string[] {
  const out: string[] = [];
  let fronted = false;
  const add = (ip: string): void => {
    if (isIP(ip) && !out.includes(ip)) out.push(ip);
  };
  for (const local of localIPs) {
    for (const g of view.store.endpointGroupsByIP(local)) {
      fronted = true;
      const svc = view.store.service(g.serviceKey);
      if (!svc) continue;
      if (headless && svc.kind === 'Headless') for (const a of g.addresses) add(a.ip);
      else for (const x of view.store.externalAddresses(svc.key)) add(x);
    }
  }
  if (!fronted) for (const ip of localIPs) add(ip);
  return out;
}

function typeOf(ip: string): number {
  return ip.includes(':') ? RRType.AAAA : RRType.A;
}

export class ExternalPlugin implements Plugin {
  readonly name = 'k8s_external';
  /** Zones longest first, so a query lands in the most specific one. */
  private readonly zonesBySpecificity: string[];

  constructor(
    readonly config: ExternalConfig,
    private readonly kubernetes: () => KubernetesPlugin | undefined,
  ) {
    this.zonesBySpecificity = [...config.zones].sort((a, b) => b.length - a.length);
  }

  start(): void {
    if (!this.kubernetes()) throw new Error('plugin/k8s_external: kubernetes plugin not loaded');
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    if (req.qclass !== DnsClass.IN) return next(req);
    const name = req.name;
    const zone = this.zoneOf(name);
    if (zone === undefined) return next(req);
    const k = this.kubernetes();
    if (!k) return errorReply(req, RCode.SERVFAIL);
    const view = clusterViewOf(k);
    if (name === zone) return this.apex(req, view, k, zone);
    const apexName = join(this.config.apex, zone);
    if (name === apexName || name.endsWith(`.${apexName}`)) return this.subApex(req, view, k, zone, trimZone(name, apexName));
    return this.answer(req, next, view, zone);
  }

  private zoneOf(name: string): string | undefined {
    return this.zonesBySpecificity.find((z) => z === '.' || name === z || name.endsWith(`.${z}`));
  }

  soa(zone: string, serial: number): ResourceRecord {
    const { apex, ttl } = this.config;
    return rr.soa(zone, ttl, {
      mname: join(`ns1.${apex}`, zone),
      rname: join(`hostmaster.${apex}`, zone),
      serial: serial >>> 0,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: ttl,
    });
  }

  private reply(req: DnsRequest, view: ClusterView, zone: string, rcode: number, answers: ResourceRecord[], additional: ResourceRecord[] = [], tc = false): Reply {
    const msg: Message = {
      ...responseFor(req, rcode, true),
      tc,
      answers,
      authority: answers.length === 0 ? [this.soa(zone, view.store.modified)] : [],
      additional,
    };
    return Reply.of(msg);
  }

  private apex(req: DnsRequest, view: ClusterView, k: KubernetesPlugin, zone: string): Reply {
    const ttl = this.config.ttl;
    if (req.qtype === RRType.SOA) return this.reply(req, view, zone, RCode.NOERROR, [this.soa(zone, view.store.modified)]);
    if (req.qtype !== RRType.NS) return this.reply(req, view, zone, RCode.NOERROR, []);
    const ns = join(`ns1.${this.config.apex}`, zone);
    const glue = nameServerAddresses(view, k.localIPs(), this.config.headless).map((ip) => addressRecord(ns, ttl, ip));
    return this.reply(req, view, zone, RCode.NOERROR, [rr.ns(req.qname, ttl, ns)], glue);
  }

  /** `<apex>.<zone>` is an empty non-terminal; `ns1.<apex>.<zone>` has the name server's addresses. */
  private subApex(req: DnsRequest, view: ClusterView, k: KubernetesPlugin, zone: string, below: string): Reply {
    if (below === '') return this.reply(req, view, zone, RCode.NOERROR, []);
    if (below !== 'ns1') return this.reply(req, view, zone, RCode.NXDOMAIN, []);
    const answers = nameServerAddresses(view, k.localIPs(), this.config.headless)
      .filter((ip) => typeOf(ip) === req.qtype)
      .map((ip) => addressRecord(req.qname, this.config.ttl, ip));
    return this.reply(req, view, zone, RCode.NOERROR, answers);
  }

  private async answer(req: DnsRequest, next: Next, view: ClusterView, zone: string): Promise<Reply | undefined> {
    const ttl = this.config.ttl;
    if (req.qtype === RRType.PTR) {
      const ip = reverseNameToIP(req.name);
      if (ip !== undefined) {
        const targets = reverseExternal(view, ip, this.config.zones[0] ?? zone);
        if (targets.length === 0) return this.negative(req, next, view, zone, RCode.NXDOMAIN);
        return this.reply(req, view, zone, RCode.NOERROR, targets.map((t) => rr.ptr(req.qname, ttl, t)));
      }
    }
    const found = lookupExternal(view, req.name, zone, this.config.headless);
    if (found.entries.length === 0) return this.negative(req, next, view, zone, found.rcode);
    const upstream = new Upstream(req, next);
    switch (req.qtype) {
      case RRType.A:
      case RRType.AAAA: {
        const { records, truncated } = await this.addresses(found.entries, req, upstream);
        return this.reply(req, view, zone, RCode.NOERROR, records, [], truncated);
      }
      case RRType.SRV: {
        const { records, extra } = await this.srv(found.entries, req, upstream);
        return this.reply(req, view, zone, RCode.NOERROR, records, extra);
      }
      default:
        return this.reply(req, view, zone, RCode.NOERROR, []);
    }
  }

  private negative(req: DnsRequest, next: Next, view: ClusterView, zone: string, rcode: number): MaybePromise<Reply | undefined> {
    if (rcode === RCode.NXDOMAIN && fallsThrough(this.config.fallthrough, req.name)) return next(req);
    return this.reply(req, view, zone, rcode, []);
  }

  /** A/AAAA: the addresses of the asked family; a load balancer's hostname as a CNAME plus its addresses. */
  private async addresses(entries: readonly ExternalEntry[], req: DnsRequest, upstream: Upstream): Promise<{ records: ResourceRecord[]; truncated: boolean }> {
    const records: ResourceRecord[] = [];
    const seen = new Set<string>();
    let truncated = false;
    for (const e of entries) {
      if (seen.has(e.host)) continue;
      seen.add(e.host);
      if (isIP(e.host)) {
        if (typeOf(e.host) === req.qtype) records.push(addressRecord(req.qname, this.config.ttl, e.host));
        continue;
      }
      const target = fqdn(e.host);
      records.push(rr.cname(req.qname, this.config.ttl, target));
      const found = await upstream.lookup(target, req.qtype);
      records.push(...found.answers);
      truncated ||= found.truncated;
    }
    return { records, truncated };
  }

  /** SRV, weighted as CoreDNS does (every entry counts, port-less ones too), with glue. */
  private async srv(entries: readonly ExternalEntry[], req: DnsRequest, upstream: Upstream): Promise<{ records: ResourceRecord[]; extra: ResourceRecord[] }> {
    const ttl = this.config.ttl;
    const weight = srvWeight(entries.length);
    const answer = new SrvAnswer();
    for (const e of entries) {
      if (e.port === -1) continue;
      const ip = isIP(e.host);
      const target = ip ? e.target : fqdn(e.host);
      answer.srv(req.qname, ttl, 0, weight, e.port, target);
      if (!answer.firstGlue(target, e.host)) continue;
      if (ip) answer.extra.push(addressRecord(target, ttl, e.host));
      else for (const type of [RRType.A, RRType.AAAA]) answer.extra.push(...(await upstream.lookup(target, type)).answers);
    }
    return { records: answer.records, extra: answer.extra };
  }
}

/**
 * Looks up a load balancer's hostname through the rest of the chain (forward, file, …), as
 * CoreDNS's upstream does; a failed lookup adds nothing, the CNAME still goes out.
 */
class Upstream {
  constructor(
    private readonly req: DnsRequest,
    private readonly next: Next,
  ) {}

  async lookup(name: string, qtype: number): Promise<{ answers: ResourceRecord[]; truncated: boolean }> {
    try {
      const reply = await this.next(this.req.derive(name, qtype));
      if (!reply) return { answers: [], truncated: false };
      const view = reply.view();
      return { answers: view.answers, truncated: view.tc };
    } catch {
      return { answers: [], truncated: false };
    }
  }
}
