// Per-workload query accounting: which pod (and so which workload) sent a query, and whether the
// query is one more candidate of a search-list walk that the previous candidate's denial caused.
// Everything here runs once per query, so it allocates only when a new lookup starts (the base
// name) or a new client or workload is first seen.

import { canonicalIP, flat } from '../../lib/cluster/keys.js';
import { HOST_NETWORK_OWNER, type PodInfo } from '../../lib/cluster/records.js';
import { RCode, RRType } from '../../lib/dns/types.js';

/** What the accounting needs of the cluster store: the pods that hold an IP. */
export interface PodIndex {
  podsByIP(ip: string): readonly PodInfo[];
}

/** Counter slots of a workload: one per reported rcode, then the search expansions. */
export const RCODE_LABELS = ['NOERROR', 'NXDOMAIN', 'SERVFAIL', 'REFUSED', 'other'] as const;
const SLOT_EXPANSIONS = RCODE_LABELS.length;
const SLOTS = SLOT_EXPANSIONS + 1;
export const FAMILIES = ['A', 'AAAA'] as const;
export type FamilyName = (typeof FAMILIES)[number];

function rcodeSlot(rcode: number): number {
  switch (rcode) {
    case RCode.NOERROR:
      return 0;
    case RCode.NXDOMAIN:
      return 1;
    case RCode.SERVFAIL:
      return 2;
    case RCode.REFUSED:
      return 3;
    default:
      return 4;
  }
}

/** Names of the groups that are not a workload. */
export const UNKNOWN_WORKLOAD = '_unknown';
export const HOST_NETWORK_WORKLOAD = '_hostNetwork';
export const OTHER_WORKLOAD = '_other';

export interface WorkloadId {
  readonly namespace: string;
  readonly kind: string;
  readonly workload: string;
}

/** Cumulative counts of one workload since kdns started (or since it was first seen). */
export class WorkloadStats implements WorkloadId {
  /** Queries by rcode slot, then search expansions. */
  readonly total = new Float64Array(SLOTS);
  /** Per family (A, AAAA): lookups (names the application asked for) and the queries they took. */
  readonly lookups = new Float64Array(2);
  readonly familyQueries = new Float64Array(2);
  /** Prometheus export: whether this workload has its own series, and the counts at the last change. */
  labelled = false;
  readonly mark = new Float64Array(SLOTS);
  /** While without a series: the counts a scrape has already shown under `_other` (they stay there). */
  readonly shown = new Float64Array(SLOTS);
  /** Tick of the last query, for dropping workloads whose pods are gone. */
  lastSeenTick = 0;
  /** The last name whose lookup walked the search list (for the suggestion's `kdns explain`). */
  lastExpanded = '';
  /**
   * Of its lookups that used a search list, the last was an autopath name
   * (`NAME.search.<ns>.<zone>.ap.k8s.io`): its pods run ClusterFirstWithAutopath, however they
   * asked for it (annotation, namespace label, literal dnsPolicy) and whatever their spec says
   * now (the webhook's `None` + dnsConfig sends the same names). Lookups of a name as given
   * (an FQDN, enough dots) say nothing either way.
   */
  autopath = false;
  /** Samples of the cumulative counts at the last ticks (oldest first), for rates. */
  readonly samples: Sample[] = [];
  /**
   * A time its counts were all zero: the accounting's last tick before it appeared, or the
   * accounting's start (undefined when not known). The queries it made before its first sample
   * came after it, so a window reaching back to it still counts them.
   */
  zeroAt: number | undefined = undefined;

  constructor(
    readonly namespace: string,
    readonly kind: string,
    readonly workload: string,
  ) {}

  get queries(): number {
    let n = 0;
    for (let i = 0; i < SLOT_EXPANSIONS; i++) n += this.total[i] as number;
    return n;
  }
  get nxdomain(): number {
    return this.total[1] as number;
  }
  get expansions(): number {
    return this.total[SLOT_EXPANSIONS] as number;
  }
}

export interface Sample {
  /** ms since the epoch. */
  readonly at: number;
  readonly queries: number;
  readonly nxdomain: number;
  readonly lookups: readonly [number, number];
  readonly familyQueries: readonly [number, number];
}

/** `NAME.search.<ns>.<zone>.ap.k8s.io.`: the search path kdns gives ClusterFirstWithAutopath pods. */
const AUTOPATH_TAIL = '.ap.k8s.io.';
const AUTOPATH_MARKER = '.search.';

/**
 * One client's walk through its search list for one address family: the name it looks up (`base`,
 * without the trailing dot) and the first candidate it has not tried yet. glibc and musl send A
 * and AAAA side by side, so each family walks on its own.
 */
export class SearchWalk {
  base = '';
  /** Index in the search list of the next candidate; -1 when no walk is under way. */
  next = -1;
  /** The name as given (base + ".") is still to come. */
  asIsPending = false;

  /** True when `name` is a later candidate of the walk under way (an expansion), and moves past it. */
  continues(name: string, search: readonly string[]): boolean {
    if (this.next < 0) return false;
    const baseLength = this.base.length;
    // Lengths first: most queries are no candidate of the walk, and a length says so for free.
    for (let j = this.next; j < search.length; j++) {
      const suffix = search[j] as string;
      if (name.length === baseLength + 1 + suffix.length && name.charCodeAt(baseLength) === 46 && name.endsWith(suffix) && name.startsWith(this.base)) {
        this.next = j + 1;
        return true;
      }
    }
    if (this.asIsPending && name.length === baseLength + 1 && name.startsWith(this.base)) {
      this.asIsPending = false;
      this.next = search.length;
      return true;
    }
    return false;
  }

  /**
   * Starts a new walk at `name`: a first search candidate (name below search[0]), an autopath
   * name, or the name as given. Says which.
   */
  start(name: string, search: readonly string[]): 'search' | 'autopath' | 'as-is' {
    const first = search[0];
    if (first !== undefined && name.length > first.length + 1 && name.endsWith(first) && name.charCodeAt(name.length - first.length - 1) === 46) {
      this.base = name.slice(0, name.length - first.length - 1);
      this.next = 1;
      this.asIsPending = true;
      return 'search';
    }
    // A ClusterFirstWithAutopath pod's one search path: the server walks the list; after its
    // NXDOMAIN only the name as given can follow.
    const ap = name.endsWith(AUTOPATH_TAIL) ? name.lastIndexOf(AUTOPATH_MARKER, name.length - AUTOPATH_TAIL.length) : -1;
    if (ap > 0) {
      this.base = name.slice(0, ap);
      this.next = search.length;
      this.asIsPending = true;
      return 'autopath';
    }
    // ndots reached (or no search list): the name as given first, then every search candidate.
    this.base = name.slice(0, -1);
    this.next = 0;
    this.asIsPending = false;
    return 'as-is';
  }
}

/** What is known about one client (one pod, or one unknown address): its workload and its walks. */
export class ClientState {
  readonly walks: [SearchWalk, SearchWalk] = [new SearchWalk(), new SearchWalk()];
  constructor(
    readonly stats: WorkloadStats,
    /** The search list its resolver uses (absolute, lower-case), empty when unknown. */
    readonly search: readonly string[],
  ) {}
}

export interface AccountingOptions {
  /** Workloads that get their own Prometheus series; the rest are counted as `_other`. */
  maxSeries: number;
  /** The cluster zone the pods' search lists name (absolute), e.g. "cluster.local.". */
  zone: string;
  /** The node's own search domains that the kubelet appends to ClusterFirst pods (absolute). */
  hostSearch: readonly string[];
}

/** Workloads kept in memory at most; past it new workloads are counted as `_other` until idle ones go. */
export const MAX_TRACKED_WORKLOADS = 20_000;
/** Samples kept per workload: five minutes at one per 10 s tick. */
export const SAMPLES_KEPT = 30;
/** A workload without queries for this many ticks loses its series and, later, its entry. */
const IDLE_TICKS = 30;

export function workloadKey(namespace: string, kind: string, workload: string): string {
  return `${namespace}/${kind}/${workload}`;
}

/** The cluster search list the kubelet writes for a ClusterFirst pod in `namespace`, then the host's. */
export function podSearchList(namespace: string, zone: string, hostSearch: readonly string[]): string[] {
  const z = zone === '.' ? '' : zone;
  // Flat strings: they are compared with every query's name.
  return [`${namespace}.svc.${z}`, `svc.${z}`, ...(z === '' ? [] : [z]), ...hostSearch].map(flat);
}

export class Accounting {
  readonly workloads = new Map<string, WorkloadStats>();
  /** Counts of workloads past MAX_TRACKED_WORKLOADS and of those whose series were given up. */
  readonly other = new WorkloadStats('', '', OTHER_WORKLOAD);
  /** Counts moved into `_other` from workloads that since got their own series or were dropped. */
  private readonly otherFrozen = new Float64Array(SLOTS);
  /**
   * A Map, not a WeakMap: a WeakMap lookup per query cost half again as much in the
   * micro-benchmark. Pods the index no longer holds are dropped at each tick.
   */
  private readonly byPod = new Map<PodInfo, ClientState>();
  private lastIndex: PodIndex | undefined;
  private readonly unknownClients = new Map<string, ClientState>();
  private readonly unknown: WorkloadStats;
  private readonly hostNetwork: WorkloadStats;
  private tick = 0;
  /** When the last tick was, or the accounting started before the first (undefined: not told). */
  private lastTickAt: number | undefined;
  options: AccountingOptions;

  constructor(options: AccountingOptions, startedAt?: number) {
    this.options = options;
    this.lastTickAt = startedAt;
    this.other.zeroAt = startedAt;
    this.unknown = this.workloadFor('', 'Unknown', UNKNOWN_WORKLOAD);
    this.hostNetwork = this.workloadFor('', 'HostNetwork', HOST_NETWORK_WORKLOAD);
  }

  /** Pods with a client entry (for tests and memory checks). */
  get knownPods(): number {
    return this.byPod.size;
  }

  configure(options: AccountingOptions): void {
    this.options = options;
  }

  /** The client behind a source address (the pods index may be absent: then every client is unknown). */
  client(address: string, pods: PodIndex | undefined): ClientState {
    this.lastIndex = pods;
    let list = pods ? pods.podsByIP(address) : [];
    if (list.length === 0 && pods && address.includes(':')) {
      const ip = canonicalIP(address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address);
      if (ip !== undefined && ip !== address) list = pods.podsByIP(ip);
    }
    const pod = pickPod(list);
    if (pod === undefined) return this.unknownClient(address, list.length > 0);
    let state = this.byPod.get(pod);
    if (state === undefined) {
      state = this.newPodClient(pod);
      this.byPod.set(pod, state);
    }
    return state;
  }

  /** Counts one answered query. */
  record(client: ClientState, name: string, qtype: number, rcode: number): void {
    const w = client.stats;
    w.lastSeenTick = this.tick;
    const slot = rcodeSlot(rcode);
    w.total[slot] = (w.total[slot] as number) + 1;
    const family = qtype === RRType.A ? 0 : qtype === RRType.AAAA ? 1 : -1;
    if (family < 0) return;
    w.familyQueries[family] = (w.familyQueries[family] as number) + 1;
    const walk = client.walks[family as 0 | 1];
    if (walk.continues(name, client.search)) {
      w.total[SLOT_EXPANSIONS] = (w.total[SLOT_EXPANSIONS] as number) + 1;
      w.lastExpanded = walk.base;
      return;
    }
    w.lookups[family] = (w.lookups[family] as number) + 1;
    const started = walk.start(name, client.search);
    if (started !== 'as-is') w.autopath = started === 'autopath';
  }

  private unknownClient(address: string, hostNetwork: boolean): ClientState {
    let state = this.unknownClients.get(address);
    if (state === undefined || (state.stats === this.hostNetwork) !== hostNetwork) {
      // hostNetwork pods use the node's resolv.conf (ClusterFirstWithHostNet: the pod's namespace is
      // not known from a shared IP), so only the zone and host domains can be told apart.
      const search = hostNetwork ? [this.options.zone, ...this.options.hostSearch].filter((s) => s !== '.') : [];
      state = new ClientState(hostNetwork ? this.hostNetwork : this.unknown, search);
      if (this.unknownClients.size >= MAX_TRACKED_WORKLOADS) this.unknownClients.clear();
      this.unknownClients.set(address, state);
    }
    return state;
  }

  private newPodClient(pod: PodInfo): ClientState {
    const owner = pod.owner;
    const slash = owner === undefined ? -1 : owner.indexOf('/');
    const kind = owner === undefined || slash < 0 ? 'Pod' : owner.slice(0, slash);
    const name = owner === undefined || slash < 0 ? pod.name : owner.slice(slash + 1);
    const search = podSearchList(pod.namespace.toLowerCase(), this.options.zone, this.options.hostSearch);
    return new ClientState(this.workloadFor(pod.namespace, kind, name), search);
  }

  private workloadFor(namespace: string, kind: string, workload: string): WorkloadStats {
    const key = workloadKey(namespace, kind, workload);
    let w = this.workloads.get(key);
    if (w === undefined) {
      if (this.workloads.size >= MAX_TRACKED_WORKLOADS) return this.other;
      w = new WorkloadStats(namespace, kind, workload);
      w.lastSeenTick = this.tick;
      w.zeroAt = this.lastTickAt;
      this.workloads.set(key, w);
    }
    return w;
  }

  /**
   * Every 10 s: a sample for rates; workloads idle for IDLE_TICKS give up their series; the busiest
   * workloads without one take the free places (up to maxSeries).
   */
  advance(now: number): void {
    this.tick++;
    this.forgetGonePods();
    for (const w of [...this.workloads.values(), this.other]) {
      w.samples.push(sampleOf(w, now));
      if (w.samples.length > SAMPLES_KEPT) w.samples.shift();
    }
    for (const [key, w] of this.workloads) {
      const idle = this.tick - w.lastSeenTick;
      if (w.labelled && idle >= IDLE_TICKS) this.release(w);
      if (idle >= 2 * IDLE_TICKS && w !== this.unknown && w !== this.hostNetwork) {
        if (!w.labelled) addInto(this.otherFrozen, w.total, w.mark);
        this.workloads.delete(key);
      }
    }
    this.admitBusiest();
    this.lastTickAt = now;
  }

  /** Drops the clients of pods that the index no longer holds (deleted, or replaced by an update). */
  private forgetGonePods(): void {
    const index = this.lastIndex;
    for (const pod of this.byPod.keys()) {
      const ip = pod.ips[0];
      if (index === undefined || ip === undefined || !index.podsByIP(ip).includes(pod)) this.byPod.delete(pod);
    }
  }

  /** Gives series to the busiest unlabelled workloads while places are free. */
  admitBusiest(): void {
    let free = this.options.maxSeries - this.labelledCount();
    while (free > 0) {
      let best: WorkloadStats | undefined;
      for (const w of this.workloads.values()) {
        if (!w.labelled && w.queries > 0 && (best === undefined || recentQueries(w) > recentQueries(best) || (recentQueries(w) === recentQueries(best) && w.queries > best.queries))) best = w;
      }
      if (!best) break;
      // What `_other` already showed stays there; what no scrape saw yet moves with the workload.
      addInto(this.otherFrozen, best.shown, best.mark);
      best.mark.set(best.shown);
      best.labelled = true;
      free--;
    }
    // maxSeries lowered by a reload: the quietest give their series up.
    const labelled = [...this.workloads.values()].filter((w) => w.labelled).sort((a, b) => recentQueries(a) - recentQueries(b));
    for (let i = 0; i < labelled.length - this.options.maxSeries; i++) this.release(labelled[i] as WorkloadStats);
  }

  private release(w: WorkloadStats): void {
    w.labelled = false;
    w.mark.set(w.total);
    w.shown.set(w.total);
  }

  private labelledCount(): number {
    let n = 0;
    for (const w of this.workloads.values()) if (w.labelled) n++;
    return n;
  }

  /** Counter values for Prometheus: one row per labelled workload, then `_other` (always monotonic). */
  seriesValues(): Array<{ id: WorkloadId; values: Float64Array }> {
    this.admitBusiest();
    const out: Array<{ id: WorkloadId; values: Float64Array }> = [];
    const other = new Float64Array(this.otherFrozen);
    addInto(other, this.other.total, this.other.mark);
    for (const w of this.workloads.values()) {
      if (w.labelled) {
        const v = new Float64Array(SLOTS);
        addInto(v, w.total, w.mark);
        out.push({ id: w, values: v });
      } else {
        addInto(other, w.total, w.mark);
        w.shown.set(w.total);
      }
    }
    out.push({ id: { namespace: '', kind: '', workload: OTHER_WORKLOAD }, values: other });
    return out;
  }

  labelledWorkloads(): WorkloadStats[] {
    return [...this.workloads.values()].filter((w) => w.labelled);
  }
}

/** A pod that holds the IP now: the Running one that is not on its way out, else any Running one. */
function pickPod(list: readonly PodInfo[]): PodInfo | undefined {
  if (list.length === 0) return undefined;
  if (list.length === 1) {
    const only = list[0] as PodInfo;
    return only.owner === HOST_NETWORK_OWNER ? undefined : only;
  }
  // Several pods on one IP: hostNetwork pods share the node's, or an old pod still terminates.
  let found: PodInfo | undefined;
  for (const p of list) {
    if (p.owner === HOST_NETWORK_OWNER) return undefined;
    if (p.phase === 'Running' && !p.terminating) found ??= p;
  }
  return found ?? list.find((p) => p.phase === 'Running') ?? list[0];
}

function addInto(into: Float64Array, total: Float64Array, mark: Float64Array): void {
  for (let i = 0; i < into.length; i++) into[i] = (into[i] as number) + (total[i] as number) - (mark[i] as number);
}

function sampleOf(w: WorkloadStats, at: number): Sample {
  return {
    at,
    queries: w.queries,
    nxdomain: w.nxdomain,
    lookups: [w.lookups[0] as number, w.lookups[1] as number],
    familyQueries: [w.familyQueries[0] as number, w.familyQueries[1] as number],
  };
}

/** Queries over the sampled window (up to the last tick), or all of them before the first tick. */
function recentQueries(w: WorkloadStats): number {
  const first = w.samples[0];
  return first === undefined ? w.queries : w.queries - first.queries;
}
