// autopath at query time: walks a client's search list on the server, so the client's first
// query gets the answer its search would have ended with, as a CNAME from the name it asked to
// the name that exists, plus that name's records.
//
// Two ways in:
//  - `ap.k8s.io` names (kdns): `NAME.search.<ns>.<zone>.ap.k8s.io` carries who asks, so no pod
//    lookup is needed; the search paths come from the EDNS0 option the node cache adds, else
//    from the name and the host search paths of the config. Nothing found: NXDOMAIN.
//  - classic (CoreDNS): a query under the first path of the client's search list (a resolv.conf,
//    or the client's pod via @kubernetes) is expanded over the rest. Nothing found: the reply to
//    the query as asked, and the client goes on with its own search.
//
// A candidate whose lookup fails is skipped, not reported: musl abandons its whole search on a
// SERVFAIL, so one unreachable search domain must not hide a name found further on.

import { isSubdomain } from '../../lib/dns/name.js';
import * as rr from '../../lib/dns/rr.js';
import { DnsClass, RCode, RRType, type Edns, type Message, type ResourceRecord, type SOAData } from '../../lib/dns/types.js';
import { canonicalIP } from '../../lib/cluster/keys.js';
import type { PodInfo } from '../../lib/cluster/records.js';
import type { Logger } from '../../server/log.js';
import { PluginError, type MaybePromise, type Next, type Plugin } from '../../server/plugin.js';
import { Reply, errorReply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { AP_ZONE, candidateNames, clusterSearchPaths, isApName, parseApName } from '../pkg/apnames.js';
import { decodeSearchPaths, findOption, withoutOption } from '../pkg/searchoption.js';
import type { AutopathConfig } from './config.js';
import type { AutopathMetrics } from './metrics.js';

/** TTL for what autopath makes up (CNAME of a NODATA, the ap.k8s.io SOA) when no candidate says better: the kubernetes default. */
export const DEFAULT_TTL = 5;

/** What autopath needs of the block's kubernetes plugin (the real one satisfies it). */
export interface KubernetesView {
  readonly config: { readonly zones: readonly string[]; readonly podMode: string };
  readonly source: { readonly store: { podsByIP(ip: string): readonly PodInfo[] } };
}

export interface AutopathDeps {
  metrics: AutopathMetrics;
  log: Logger;
  /** The kubernetes plugin of the same block, looked up once everything is set up. */
  findKubernetes: () => KubernetesView | undefined;
  /** Raised as a Corefile error at start (e.g. @kubernetes without a kubernetes plugin). */
  configError: (message: string) => Error;
}

type Verdict = 'positive' | 'negative' | 'failed';

interface Walk {
  /** The candidate that exists and its reply. */
  found?: { name: string; reply: Reply };
  /** The reply to the first candidate (classic mode returns it when nothing is found). */
  first?: Reply;
  /** The NXDOMAIN replies, read for their TTLs only if nothing is found (most lookups find something). */
  denials: Reply[];
}

function verdictOf(reply: Reply | undefined): Verdict {
  // A reply with an error is kdns's own failure (no upstream answered), not the name's status.
  // One acl drops (it refuses this client the candidate) says nothing of the name either, and
  // must not become an answer: like a REFUSED, it is skipped.
  if (!reply || reply.error || reply.dropped) return 'failed';
  if (reply.rcode === RCode.NOERROR) return 'positive';
  if (reply.rcode === RCode.NXDOMAIN) return 'negative';
  return 'failed';
}

/** RFC 2308: a denial is cached for the lesser of the SOA's TTL and its MINIMUM. */
function negativeTtl(msg: Message): number | undefined {
  const soa = msg.authority.find((r) => r.type === RRType.SOA);
  if (!soa) return undefined;
  return Math.min(soa.ttl, (soa.data as SOAData).minimum);
}

/** The shortest time any of these denials may be cached (a denial without SOA counts as DEFAULT_TTL). */
function smallestNegativeTtl(denials: readonly Reply[]): number | undefined {
  let min: number | undefined;
  for (const d of denials) {
    const ttl = negativeTtl(d.view()) ?? DEFAULT_TTL;
    if (min === undefined || ttl < min) min = ttl;
  }
  return min;
}

function minTtl(records: readonly ResourceRecord[]): number | undefined {
  let min: number | undefined;
  for (const r of records) if (min === undefined || r.ttl < min) min = r.ttl;
  return min;
}

/** Longest of `zones` that holds `name` (both lower-case and absolute). */
function zoneOf(name: string, zones: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const z of zones) if (isSubdomain(name, z) && (best === undefined || z.length > best.length)) best = z;
  return best;
}

function isReverseZone(zone: string): boolean {
  return zone.endsWith('in-addr.arpa.') || zone.endsWith('ip6.arpa.');
}

export class AutopathPlugin implements Plugin {
  readonly name = 'autopath';
  private kubernetes?: KubernetesView;
  /** Cluster zones of the kubernetes plugin: anchors for splitting ap.k8s.io names. */
  private knownZones: readonly string[] = [];
  private readonly serial = Math.floor(Date.now() / 1000) >>> 0;

  constructor(
    readonly config: AutopathConfig,
    private readonly deps: AutopathDeps,
  ) {}

  start(): void {
    this.kubernetes = this.deps.findKubernetes();
    this.knownZones = this.kubernetes?.config.zones.filter((z) => !isReverseZone(z)) ?? [];
    if (this.config.source.kind !== 'kubernetes') return;
    if (!this.kubernetes) throw this.deps.configError('autopath @kubernetes: this server block has no kubernetes plugin');
    if (this.kubernetes.config.podMode !== 'verified') {
      // CoreDNS loads such a Corefile and silently does nothing; say so once instead.
      this.deps.log.warn('@kubernetes finds a client by its pod IP only with "pods verified" in the kubernetes block; classic autopath is off (ap.k8s.io names are still expanded)');
    }
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    if (req.qclass === DnsClass.IN && isApName(req.name)) return this.expandApName(req, next);
    // The option is ours to read: nothing beyond this server should see a pod's search list.
    const clean = findOption(req.edns, this.config.optionCode) ? req.derive(req.qname, req.qtype, withoutOption(req.edns, this.config.optionCode)) : req;
    const search = this.classicSearch(clean);
    if (search === undefined) return next(clean);
    return this.expandClassic(clean, next, search);
  }

  // ---- ap.k8s.io ----

  /** The search paths for an ap.k8s.io name: from the option when it is usable, else from the name. */
  apSearchPaths(req: DnsRequest, namespace: string, zone: string): string[] {
    const opt = findOption(req.edns, this.config.optionCode);
    if (opt) {
      const decoded = decodeSearchPaths(opt.data);
      if (Array.isArray(decoded)) return decoded;
      this.deps.log.debug(`${req.qname}: search-path option ignored: ${decoded.error}`);
    }
    return [...clusterSearchPaths(namespace, zone), ...this.config.hostSearch];
  }

  private async expandApName(req: DnsRequest, next: Next): Promise<Reply | undefined> {
    const ap = parseApName(req.qname, this.knownZones);
    // Under ap.k8s.io but no search name: nothing else can exist there, and it must not go upstream.
    if (!ap) return this.nameError(req, undefined);
    const candidates = candidateNames(ap.base, this.apSearchPaths(req, ap.namespace, ap.zone));
    const walk = await this.walk(req, next, candidates, withoutOption(req.edns, this.config.optionCode), false);
    if (walk.found) return this.answerWith(req, walk.found.name, walk.found.reply);
    if (walk.denials.length === 0) {
      // Every candidate failed: an outage, not a name that does not exist.
      return errorReply(req, RCode.SERVFAIL, new PluginError('autopath', RCode.SERVFAIL, `${req.qname}: no search-path candidate could be looked up`));
    }
    return this.nameError(req, smallestNegativeTtl(walk.denials));
  }

  /** NXDOMAIN for an ap.k8s.io name, with an SOA of that zone made as the kubernetes plugin makes its own. */
  private nameError(req: DnsRequest, ttl: number | undefined): Reply {
    const t = Math.min(ttl ?? DEFAULT_TTL, 300);
    const msg = responseFor(req, RCode.NXDOMAIN, true);
    msg.authority = [
      rr.soa(AP_ZONE, t, { mname: `ns.dns.${AP_ZONE}`, rname: `hostmaster.${AP_ZONE}`, serial: this.serial, refresh: 7200, retry: 1800, expire: 86400, minimum: t }),
    ];
    return Reply.of(msg);
  }

  // ---- classic ----

  /** The client's search list when classic autopath applies to this query, else undefined. */
  private classicSearch(req: DnsRequest): string[] | undefined {
    const name = req.name;
    if (zoneOf(name, this.config.zones) === undefined || name.includes('\\')) return undefined;
    const search = this.config.source.kind === 'file' ? this.config.source.search : this.podSearch(req);
    const first = search?.[0];
    // Only a query for a name under the first search path is the start of a client's search.
    if (first === undefined || name === first || !isSubdomain(name, first)) return undefined;
    return search;
  }

  /** CoreDNS's kubernetes AutoPath: the search list of the Running pod that has the client's IP. */
  private podSearch(req: DnsRequest): string[] | undefined {
    const k = this.kubernetes;
    if (!k || k.config.podMode !== 'verified') return undefined;
    const zone = zoneOf(req.name, k.config.zones);
    if (zone === undefined) return undefined;
    const ip = canonicalIP(req.client.remoteAddress);
    if (ip === undefined) return undefined;
    const pod = k.source.store.podsByIP(ip).find((p) => p.phase === 'Running' && !p.terminating);
    if (!pod) return undefined;
    const cluster = zone === '.' ? [`${pod.namespace}.svc.`, 'svc.'] : clusterSearchPaths(pod.namespace, zone);
    return [...cluster, ...this.config.hostSearch];
  }

  private async expandClassic(req: DnsRequest, next: Next, search: readonly string[]): Promise<Reply | undefined> {
    const first = search[0] as string;
    const base = req.qname.slice(0, req.qname.length - first.length - 1);
    const candidates = candidateNames(base, search);
    const walk = await this.walk(req, next, candidates, req.edns, true);
    if (!walk.found) return walk.first;
    if (walk.found.name !== candidates[0]) return this.answerWith(req, walk.found.name, walk.found.reply);
    // The name as asked exists: its reply goes out untouched (CoreDNS counts it as a success too).
    this.deps.metrics.success.inc();
    return walk.found.reply;
  }

  // ---- shared ----

  /**
   * Asks the rest of the chain for each candidate in turn until one exists. With
   * `firstIsQuery`, the first candidate is the query itself (classic mode) and is asked as is.
   */
  private async walk(req: DnsRequest, next: Next, candidates: readonly string[], edns: Edns | undefined, firstIsQuery: boolean): Promise<Walk> {
    const out: Walk = { denials: [] };
    let tried = 0;
    for (let i = 0; i < candidates.length; i++) {
      const name = candidates[i] as string;
      const sub = i === 0 && firstIsQuery ? req : req.derive(name, req.qtype, edns);
      tried++;
      let reply: Reply | undefined;
      try {
        reply = await next(sub);
      } catch {
        reply = undefined;
      }
      if (i === 0) out.first = reply;
      const verdict = verdictOf(reply);
      if (verdict === 'positive') {
        out.found = { name, reply: reply as Reply };
        break;
      }
      if (verdict === 'negative') out.denials.push(reply as Reply);
    }
    this.deps.metrics.candidates.observe(tried);
    return out;
  }

  /** The question as asked, a CNAME from it to `target`, then everything `target`'s reply said. */
  private answerWith(req: DnsRequest, target: string, reply: Reply): Reply {
    this.deps.metrics.success.inc();
    const sub = reply.view();
    const msg = responseFor(req, RCode.NOERROR, sub.aa);
    msg.ra = sub.ra;
    msg.tc = sub.tc;
    // The CNAME lives as long as what it points at; for NODATA, as long as the denial.
    const ttl = minTtl(sub.answers) ?? negativeTtl(sub) ?? DEFAULT_TTL;
    msg.answers = [rr.cname(req.qname, ttl, target), ...sub.answers];
    // NODATA keeps its SOA (negative caching of the type); a positive answer needs no NS records.
    msg.authority = sub.answers.length === 0 ? sub.authority : [];
    // Glue last: the encoder drops additional records first when the answer must fit 512 bytes.
    msg.additional = sub.additional;
    return Reply.of(msg);
  }
}
