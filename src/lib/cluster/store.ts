// The indexed cluster state DNS answers from. Sources (a manifest directory, the Kubernetes API)
// write objects in; readers get compact records through Map lookups by service key, IP and
// namespace. Every write touches only the indexes of the object it changes, and listeners hear
// exactly which services and IPs changed, so caches above can drop just those answers.

import { formatIPv4, formatIPv6, parseIPv4, parseIPv6 } from '../dns/ip.js';
import type { ClusterObject, EndpointSlice, Endpoints, Namespace, Node, Pod, Service, ServiceImport } from './types.js';

export type Labels = Readonly<Record<string, string>>;

export interface PortInfo {
  /** "" for an unnamed port. */
  readonly name: string;
  /** "TCP", "UDP", "SCTP"; "" only for the no-ports sentinel. */
  readonly protocol: string;
  /** -1 is the sentinel for "no ports declared" (the name still resolves, SRV does not). */
  readonly port: number;
}

export type ServiceKind = 'ClusterIP' | 'Headless' | 'ExternalName';

export interface EndpointAddressInfo {
  /** Canonical text form. */
  readonly ip: string;
  /** spec hostname of the endpoint, "" when unset. */
  readonly hostname: string;
  /** targetRef.name (the pod), "" when unset or too long for a DNS label. */
  readonly targetRefName: string;
  readonly nodeName: string;
  /**
   * Published in DNS: ready (unset counts as ready, as the API documents), or any address of a
   * service with publishNotReadyAddresses, which is what the EndpointSlice controller would write.
   */
  readonly ready: boolean;
}

/** One EndpointSlice, or one subset of a legacy Endpoints object. */
export interface EndpointGroup {
  /** `EndpointSlice ns/name` or `Endpoints ns/name[i]`. */
  readonly id: string;
  readonly legacy: boolean;
  readonly namespace: string;
  /** `service.namespace` of the owning service. */
  readonly serviceKey: string;
  readonly addresses: readonly EndpointAddressInfo[];
  /** Never empty: a group without ports holds the sentinel port -1. */
  readonly ports: readonly PortInfo[];
  readonly labels: Labels | undefined;
  /** The version of the object the group came from (every group of an Endpoints object shares it). */
  readonly version: ObjectVersion | undefined;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown' | '';

export interface PodInfo {
  readonly name: string;
  readonly namespace: string;
  /** Canonical text forms of status.podIPs (or podIP). */
  readonly ips: readonly string[];
  readonly phase: PodPhase;
  /** Has a deletionTimestamp: on its way out. */
  readonly terminating: boolean;
  readonly labels: Labels | undefined;
  readonly version: ObjectVersion | undefined;
  /**
   * The workload that runs the pod as "Kind/name" (one shared string per workload),
   * HOST_NETWORK_OWNER for a hostNetwork pod (its IP is the node's), undefined for a bare pod.
   */
  readonly owner: string | undefined;
}

/** PodInfo.owner of a pod on the node's network: its IP says nothing about which pod asked. */
export const HOST_NETWORK_OWNER = 'hostNetwork';

export interface NamespaceInfo {
  readonly name: string;
  readonly labels: Labels | undefined;
  readonly version: ObjectVersion | undefined;
}

/** The API's resourceVersion, or a number the directory source packs (file and content hash). */
export type ObjectVersion = string | number;

/** What one batch of writes changed, for caches that answer from the store. */
export interface StoreDelta {
  /** Keys (`name.namespace`) of services whose service object or endpoints changed. */
  readonly services: ReadonlySet<string>;
  /** IPs that gained or lost a service or endpoint (PTR answers). */
  readonly ips: ReadonlySet<string>;
  /** IPs whose pods changed (verified pod answers). */
  readonly podIPs: ReadonlySet<string>;
  readonly namespaces: boolean;
  readonly nodes: boolean;
  /**
   * For each EndpointSlice change carrying `endpoints.kubernetes.io/last-change-trigger-time`:
   * how long from that trigger until the store had it (CoreDNS's DNS programming latency).
   */
  readonly programmingLatency: ReadonlyArray<{ serviceKind: 'cluster_ip' | 'headless_with_selector' | 'headless_without_selector'; seconds: number }>;
}

export type StoreListener = (delta: StoreDelta) => void;

export type StoredKind = ClusterObject['kind'];

export interface VersionedObject {
  readonly kind: StoredKind;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly version: ObjectVersion;
}

export interface StoreCounts {
  namespaces: number;
  services: number;
  endpointGroups: number;
  pods: number;
  nodes: number;
}

const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** The ServiceImport an EndpointSlice of the Multi-Cluster Services API belongs to. */
export const MCS_SERVICE_NAME_LABEL = 'multicluster.kubernetes.io/service-name';
/** The cluster of the clusterset an MCS EndpointSlice's endpoints run in. */
export const MCS_SOURCE_CLUSTER_LABEL = 'multicluster.kubernetes.io/source-cluster';
const NO_PORTS: readonly PortInfo[] = Object.freeze([Object.freeze({ name: '', protocol: '', port: -1 })]);
const EMPTY: readonly never[] = Object.freeze([]);

/**
 * Shares equal small values between objects instead of keeping a copy per object: a cluster has
 * a few hundred namespaces, port lists and label sets, repeated over 100,000 objects. Values are
 * frozen because they are shared. Past `max` distinct values nothing more is shared (a cluster
 * with unique labels on every pod must not grow this table forever).
 */
class Interner<T> {
  private readonly table = new Map<string, T>();
  constructor(private readonly max: number) {}

  get(key: string, make: () => T): T {
    const found = this.table.get(key);
    if (found !== undefined) return found;
    const value = make();
    if (this.table.size < this.max) this.table.set(key, value);
    return value;
  }
}

const namespaceNames = new Interner<string>(100_000);
const portLists = new Interner<readonly PortInfo[]>(20_000);
const labelSets = new Interner<Labels>(50_000);
const ownerNames = new Interner<string>(100_000);

function internNamespace(ns: string): string {
  return namespaceNames.get(ns, () => ns);
}

/**
 * The one text form of an address, so "FD00::1" from a manifest and "fd00::1" from a reverse
 * name meet in the same Map key. undefined for text that is not an IP.
 */
export function canonicalIP(text: string): string | undefined {
  let canonical: string;
  if (text.includes(':')) {
    const b = parseIPv6(text);
    if (!b) return undefined;
    canonical = formatIPv6(b);
  } else {
    const b = parseIPv4(text);
    if (!b) return undefined;
    canonical = formatIPv4(b);
  }
  // Keep the string we were given when it already is canonical: the formatted one is built by
  // concatenation, a tree of parts that costs several times its length to keep.
  return canonical === text ? text : flat(canonical);
}

/**
 * A flat copy of a string built by concatenation. V8 keeps `a + b` as a tree of parts (32 bytes
 * a node, and the parts stay alive with it); a Map key lives as long as what it names, so keys
 * kept for 100,000 objects are worth one copy each.
 */
export function flat(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, 'utf8').toString('utf8');
}

/**
 * Canonical forms of a list of addresses, invalid ones left out, in an array of exactly that
 * length (`filter` and `push` leave room for 17 elements: 150 bytes an array, times 100,000).
 */
function canonicalIPs(list: readonly string[]): readonly string[] {
  if (list.length === 0) return EMPTY;
  const out = list.map((ip) => canonicalIP(ip));
  return out.every((ip) => ip !== undefined) ? (out as string[]) : (out.filter((ip) => ip !== undefined) as string[]).slice();
}

/** Kinds without a namespace. */
const CLUSTER_SCOPED: ReadonlySet<string> = new Set(['Namespace', 'Node']);

/**
 * `Kind ns/name`, or `Kind name` for Namespaces and Nodes; flat, as it is kept as a Map key (see
 * flat()). A namespaced object written without a namespace is in "default", as the API server
 * would put it, so one object has one key however its manifest spells that.
 */
export function objectKey(kind: string, namespace: string | undefined, name: string): string {
  const ns = namespaceOf(kind, namespace);
  return flat(ns === undefined ? `${kind} ${name}` : `${kind} ${ns}/${name}`);
}

/** The namespace an object of this kind is in: none for Namespaces and Nodes, else "default" when unset. */
function namespaceOf(kind: string, namespace: string | undefined): string | undefined {
  return CLUSTER_SCOPED.has(kind) ? undefined : namespace || 'default';
}

function sortedById(groups: readonly EndpointGroup[]): readonly EndpointGroup[] {
  return [...groups].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The inverse of objectKey (kinds have no space, namespaces and names no slash). */
export function parseObjectKey(key: string): { kind: StoredKind; namespace: string | undefined; name: string } {
  const space = key.indexOf(' ');
  const kind = key.slice(0, space) as StoredKind;
  const rest = key.slice(space + 1);
  const slash = rest.indexOf('/');
  return slash < 0 ? { kind, namespace: undefined, name: rest } : { kind, namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
}

interface ServiceEndpoints {
  // Arrays, not Sets: a service has one or a few of each, and a Set costs ~200 bytes empty.
  slices: EndpointGroup[];
  legacy: EndpointGroup[];
  /** The groups readers see, sorted by id; rebuilt lazily after a change. */
  view: readonly EndpointGroup[] | undefined;
}

/**
 * An index from a key (an IP) to the objects under it. Nearly every IP has exactly one object,
 * so a lone value is stored as itself and only a second one makes an array: at 150,000 pods
 * that is 150,000 arrays not allocated. (Values are objects, never arrays.)
 */
type MultiMap<V extends object> = Map<string, V | V[]>;

function addTo<V extends object>(map: MultiMap<V>, key: string, value: V): void {
  const cur = map.get(key);
  if (cur === undefined) map.set(key, value);
  else if (Array.isArray(cur)) cur.push(value);
  else map.set(key, [cur, value]);
}

function removeFrom<V extends object>(map: MultiMap<V>, key: string, value: V): void {
  const cur = map.get(key);
  if (cur === undefined) return;
  if (!Array.isArray(cur)) {
    if (cur === value) map.delete(key);
    return;
  }
  const i = cur.indexOf(value);
  if (i >= 0) cur.splice(i, 1);
  if (cur.length === 1) map.set(key, cur[0] as V);
  else if (cur.length === 0) map.delete(key);
}

function listOf<V extends object>(map: MultiMap<V>, key: string): readonly V[] {
  const cur = map.get(key);
  return cur === undefined ? EMPTY : Array.isArray(cur) ? cur : [cur];
}

function toPorts(ports: ReadonlyArray<{ name?: string; protocol?: string; port?: number }> | undefined): readonly PortInfo[] {
  if (!ports || ports.length === 0) return NO_PORTS;
  // The API server defaults protocol to TCP; manifests often leave it out.
  const list = ports.map((p) => ({ name: p.name ?? '', protocol: p.protocol ?? 'TCP', port: p.port ?? -1 }));
  const key = list.map((p) => `${p.name}/${p.protocol}/${p.port}`).join(',');
  return portLists.get(key, () => Object.freeze(list.map((p) => Object.freeze(p))));
}

function nonEmptyLabels(labels: Record<string, string> | undefined): Labels | undefined {
  if (!labels) return undefined;
  const keys = Object.keys(labels);
  if (keys.length === 0) return undefined;
  return labelSets.get(JSON.stringify(labels), () => Object.freeze({ ...labels }));
}

export function toServiceInfo(svc: Service, version?: ObjectVersion): ServiceInfo {
  return new ServiceInfo(svc, version);
}

/**
 * A service as the store keeps it. Its name is read back from its key: Service names are
 * lower-case DNS labels, so the key (`name.namespace`, lower case) begins with the name, and a
 * second copy of it was 40 bytes a service (4 MiB at 100,000). A name with capitals (a
 * hand-written manifest; the API server refuses them) is kept as given.
 */
export class ServiceInfo {
  /** `name.namespace`, lower case: the key DNS names map to (`<name>.<namespace>.svc.<zone>`). */
  readonly key: string;
  readonly namespace: string;
  readonly kind: ServiceKind;
  /**
   * The ClusterIP itself when there is one (nearly every service): an array of one was another
   * 56 bytes a service. See clusterIPs.
   */
  private readonly ips: string | readonly string[];
  /** As written in spec.externalName (ExternalName services only). */
  readonly externalName: string;
  /** Never empty: a service without ports holds the sentinel port -1. */
  readonly ports: readonly PortInfo[];
  readonly publishNotReadyAddresses: boolean;
  /** Whether spec.selector is set (endpoints managed by Kubernetes), for the programming-latency metric. */
  readonly hasSelector: boolean;
  readonly labels: Labels | undefined;
  /** How the source tells this object's versions apart (see ClusterStore.upsert). */
  readonly version: ObjectVersion | undefined;
  /** Only when the key cannot give the name back. */
  private readonly givenName: string | undefined;

  constructor(svc: Service, version: ObjectVersion | undefined) {
    const spec = svc.spec ?? {};
    const name = svc.metadata.name;
    this.namespace = internNamespace(svc.metadata.namespace ?? 'default');
    this.key = flat(`${name.toLowerCase()}.${this.namespace.toLowerCase()}`);
    this.givenName = name === name.toLowerCase() ? undefined : name;
    let kind: ServiceKind = 'ClusterIP';
    let clusterIPs: readonly string[] = EMPTY;
    if (spec.type === 'ExternalName') {
      kind = 'ExternalName';
    } else {
      const given = spec.clusterIPs && spec.clusterIPs.length > 0 ? spec.clusterIPs : spec.clusterIP !== undefined ? [spec.clusterIP] : [];
      if (given[0] === 'None') kind = 'Headless';
      else clusterIPs = canonicalIPs(given);
    }
    this.kind = kind;
    this.ips = clusterIPs.length === 1 ? (clusterIPs[0] as string) : clusterIPs;
    this.externalName = kind === 'ExternalName' ? (spec.externalName ?? '') : '';
    this.ports = toPorts(spec.ports);
    this.publishNotReadyAddresses = spec.publishNotReadyAddresses === true;
    this.hasSelector = spec.selector !== undefined && Object.keys(spec.selector).length > 0;
    this.labels = nonEmptyLabels(svc.metadata.labels);
    this.version = version;
  }

  get name(): string {
    return this.givenName ?? this.key.slice(0, this.key.length - this.namespace.length - 1);
  }

  /** Canonical text form, IPv4 and IPv6 (dual-stack) in spec order; empty unless kind is ClusterIP. */
  get clusterIPs(): readonly string[] {
    return typeof this.ips === 'string' ? [this.ips] : this.ips;
  }
}

/**
 * spec.externalIPs, then status.loadBalancer.ingress (each one's IP, or its hostname), IPs in
 * canonical form, hostnames lower-cased; what is neither is left out. Most services have none,
 * and then this is the shared empty array.
 */
export function externalAddressesOf(svc: Service): readonly string[] {
  const ingress = svc.status?.loadBalancer?.ingress;
  if (!svc.spec?.externalIPs?.length && !ingress?.length) return EMPTY; // nearly every service
  const out: string[] = [];
  for (const ip of svc.spec?.externalIPs ?? []) {
    const c = canonicalIP(ip);
    if (c !== undefined && !out.includes(c)) out.push(c);
  }
  for (const ing of ingress ?? []) {
    const c = ing.ip ? canonicalIP(ing.ip) : ing.hostname ? ing.hostname.toLowerCase() : undefined;
    if (c !== undefined && c !== '' && !out.includes(c)) out.push(c);
  }
  return out.length === 0 ? EMPTY : out;
}

/** A pod name longer than a DNS label cannot be an endpoint hostname (CoreDNS drops it too). */
function targetName(name: string | undefined): string {
  return name !== undefined && name.length < 64 ? name : '';
}

export function sliceToGroup(slice: EndpointSlice, version?: ObjectVersion): EndpointGroup {
  const namespace = internNamespace(slice.metadata.namespace ?? 'default');
  // An MCS slice belongs to its ServiceImport, not to a Service (see isMulticlusterGroup).
  const labels = slice.metadata.labels;
  const service = labels?.[MCS_SERVICE_NAME_LABEL] ?? labels?.[SERVICE_NAME_LABEL] ?? '';
  const addresses: EndpointAddressInfo[] = [];
  // FQDN slices name hosts, not addresses: nothing DNS can serve as A/AAAA or PTR.
  if (slice.addressType !== 'FQDN') {
    for (const ep of slice.endpoints ?? []) {
      const ready = ep.conditions?.ready !== false;
      for (const a of ep.addresses) {
        const ip = canonicalIP(a);
        if (ip === undefined) continue;
        addresses.push({ ip, hostname: ep.hostname ?? '', targetRefName: targetName(ep.targetRef?.name), nodeName: ep.nodeName ?? '', ready });
      }
    }
  }
  return {
    id: objectKey('EndpointSlice', namespace, slice.metadata.name),
    legacy: false,
    namespace,
    serviceKey: flat(`${service.toLowerCase()}.${namespace.toLowerCase()}`),
    addresses: addresses.slice(), // exact length, see canonicalIPs
    ports: toPorts(slice.ports),
    labels: nonEmptyLabels(slice.metadata.labels),
    version,
  };
}

export function endpointsToGroups(ep: Endpoints, version?: ObjectVersion): EndpointGroup[] {
  const namespace = internNamespace(ep.metadata.namespace ?? 'default');
  const serviceKey = flat(`${ep.metadata.name.toLowerCase()}.${namespace.toLowerCase()}`);
  const labels = nonEmptyLabels(ep.metadata.labels);
  return (ep.subsets ?? []).map((subset, i) => {
    const addresses: EndpointAddressInfo[] = [];
    const add = (list: typeof subset.addresses, ready: boolean): void => {
      for (const a of list ?? []) {
        const ip = canonicalIP(a.ip);
        if (ip !== undefined) addresses.push({ ip, hostname: a.hostname ?? '', targetRefName: targetName(a.targetRef?.name), nodeName: a.nodeName ?? '', ready });
      }
    };
    add(subset.addresses, true);
    add(subset.notReadyAddresses, false);
    return { id: flat(`${objectKey('Endpoints', namespace, ep.metadata.name)}[${i}]`), legacy: true, namespace, serviceKey, addresses: addresses.slice(), ports: toPorts(subset.ports), labels, version };
  });
}

/** The name without the "-<suffix>" a controller appends to the name of what it creates (a hash, a timestamp). */
function withoutSuffix(name: string, suffix: string | undefined): string | undefined {
  if (!suffix || !name.endsWith(`-${suffix}`) || name.length <= suffix.length + 1) return undefined;
  return name.slice(0, name.length - suffix.length - 1);
}

/**
 * The workload behind a pod from its controller reference alone, without watching ReplicaSets or
 * Jobs: a Deployment's ReplicaSet is named "<deployment>-<pod-template-hash>" (the hash is also a
 * pod label), a CronJob's Job "<cronjob>-<scheduled minute>" (digits only).
 */
export function podOwner(pod: Pod): string | undefined {
  if (pod.spec?.hostNetwork === true) return HOST_NETWORK_OWNER;
  const refs = pod.metadata.ownerReferences;
  if (!Array.isArray(refs) || refs.length === 0) return undefined;
  const ref = refs.find((r) => r.controller === true) ?? refs[0];
  if (!ref || typeof ref.kind !== 'string' || typeof ref.name !== 'string') return undefined;
  let kind = ref.kind;
  let name = ref.name;
  if (kind === 'ReplicaSet') {
    const deployment = withoutSuffix(name, pod.metadata.labels?.['pod-template-hash']);
    if (deployment !== undefined) [kind, name] = ['Deployment', deployment];
  } else if (kind === 'Job') {
    const m = /^(.+)-(\d{8,12})$/.exec(name);
    if (m) [kind, name] = ['CronJob', m[1] as string];
  }
  const owner = `${kind}/${name}`;
  return ownerNames.get(owner, () => flat(owner));
}

export function toPodInfo(pod: Pod, version?: ObjectVersion): PodInfo {
  const status = pod.status ?? {};
  const given = status.podIPs && status.podIPs.length > 0 ? status.podIPs.map((p) => p.ip) : status.podIP ? [status.podIP] : [];
  return {
    name: pod.metadata.name,
    namespace: internNamespace(pod.metadata.namespace ?? 'default'),
    ips: canonicalIPs(given),
    phase: status.phase ?? '',
    terminating: pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null,
    labels: nonEmptyLabels(pod.metadata.labels),
    version,
    owner: podOwner(pod),
  };
}

/** A ServiceImport as the store keeps it (only clusters using the MCS API have any). */
export interface ServiceImportInfo {
  /** `name.namespace`, lower case, as for services. */
  readonly key: string;
  readonly name: string;
  readonly namespace: string;
  readonly headless: boolean;
  /** Canonical clusterset IPs (ClusterSetIP imports). */
  readonly ips: readonly string[];
  /** Never empty: an import without ports holds the sentinel port -1. */
  readonly ports: readonly PortInfo[];
  readonly labels: Labels | undefined;
  readonly version: ObjectVersion | undefined;
}

export function toServiceImportInfo(si: ServiceImport, version?: ObjectVersion): ServiceImportInfo {
  const namespace = internNamespace(si.metadata.namespace ?? 'default');
  return {
    key: flat(`${si.metadata.name.toLowerCase()}.${namespace.toLowerCase()}`),
    name: si.metadata.name,
    namespace,
    headless: si.spec?.type === 'Headless',
    ips: canonicalIPs(si.spec?.ips ?? []),
    ports: toPorts(si.spec?.ports),
    labels: nonEmptyLabels(si.metadata.labels),
    version,
  };
}

/**
 * Whether a group is an EndpointSlice of the Multi-Cluster Services API (it names its
 * ServiceImport by label). Read from the labels the group keeps anyway, not a field of its own.
 */
export function isMulticlusterGroup(g: EndpointGroup): boolean {
  return !g.legacy && g.labels?.[MCS_SERVICE_NAME_LABEL] !== undefined;
}

/** The clusterset member an MCS group's endpoints run in ("" when the slice does not say). */
export function sourceClusterOf(g: EndpointGroup): string {
  return g.labels?.[MCS_SOURCE_CLUSTER_LABEL] ?? '';
}

class DeltaBuilder {
  services = new Set<string>();
  ips = new Set<string>();
  podIPs = new Set<string>();
  namespaces = false;
  nodes = false;
  programmingLatency: Array<StoreDelta['programmingLatency'][number]> = [];

  empty(): boolean {
    return this.services.size === 0 && this.ips.size === 0 && this.podIPs.size === 0 && !this.namespaces && !this.nodes && this.programmingLatency.length === 0;
  }
}

export class ClusterStore {
  private readonly namespaces = new Map<string, NamespaceInfo>();
  private readonly services = new Map<string, ServiceInfo>();
  /** object key → groups it produced (one per slice, one per legacy subset). */
  private readonly endpointObjects = new Map<string, EndpointGroup[]>();
  private readonly endpointsByService = new Map<string, ServiceEndpoints>();
  /** ServiceImports and their (MCS) EndpointSlices, by `name.namespace`: empty unless the MCS API is used. */
  private readonly imports = new Map<string, ServiceImportInfo>();
  private readonly endpointsByImport = new Map<string, ServiceEndpoints>();
  private readonly servicesByIp: MultiMap<ServiceInfo> = new Map();
  /**
   * Service key → its externalIPs and load-balancer ingress, for the few services that have
   * any: kept beside the service rather than on every ServiceInfo (see externalAddressesOf).
   */
  private readonly externals = new Map<string, readonly string[]>();
  private readonly servicesByExternalIp: MultiMap<ServiceInfo> = new Map();
  private readonly groupsByIp: MultiMap<EndpointGroup> = new Map();
  private readonly pods = new Map<string, PodInfo>();
  private readonly podsByIp: MultiMap<PodInfo> = new Map();
  private readonly nodeObjects = new Map<string, Node>();
  /**
   * How many services, endpoint groups and pods live in each namespace. A namespace that holds
   * objects exists even when no Namespace manifest was written for it (the API server would
   * never hold objects in a namespace that does not exist; a folder of manifests often omits it).
   */
  private readonly namespaceRefs = new Map<string, number>();
  /**
   * Each object's version as its source tells them apart (see upsert) lives on its record, so a
   * relist, a replayed event or an unchanged manifest costs a lookup, and the directory source
   * finds a file's objects by them. Only objects without a record of their own keep it here, by
   * objectKey: Nodes, and Endpoints without subsets. (A Map of every object's key and version
   * was 1.2 MiB at 10,000 Services, 100 bytes an object.)
   */
  private readonly unrecordedVersions = new Map<string, ObjectVersion>();
  private readonly listeners = new Set<StoreListener>();
  private pending: DeltaBuilder | undefined;
  private batchDepth = 0;
  private syncedFlag = false;
  private modifiedSeconds = Math.floor(Date.now() / 1000);

  /** True once the source has delivered its first complete view of the cluster. */
  get synced(): boolean {
    return this.syncedFlag;
  }

  /** Unix time (seconds) of the last change: CoreDNS uses it as the SOA serial. */
  get modified(): number {
    return this.modifiedSeconds;
  }

  markSynced(): void {
    if (this.syncedFlag) return;
    this.syncedFlag = true;
    // Readiness changes what unknown names get (SERVFAIL → NXDOMAIN): caches must forget.
    this.delta().namespaces = true;
    this.flushIfIdle();
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Runs `fn` with every write in it reported to listeners as one delta. */
  batch<T>(fn: () => T): T {
    this.batchDepth++;
    try {
      return fn();
    } finally {
      this.batchDepth--;
      this.flushIfIdle();
    }
  }

  /**
   * Like batch, for writes spread over several turns of the event loop (a large file applied in
   * slices, queries answered between them): listeners get one delta when `fn` has finished.
   */
  async batchAsync<T>(fn: () => Promise<T>): Promise<T> {
    this.batchDepth++;
    try {
      return await fn();
    } finally {
      this.batchDepth--;
      this.flushIfIdle();
    }
  }

  // ---- writes ----

  /**
   * Adds or replaces an object; false when skipped. `version` is how its source tells versions
   * apart (the API's resourceVersion; the directory source's file and content hash): an object
   * whose version equals the stored one is skipped, and the version is kept (versionOf). Without
   * one the object always applies: manifests edited by hand keep stale resourceVersions.
   */
  upsert(obj: ClusterObject, given?: ObjectVersion): boolean {
    const namespace = namespaceOf(obj.kind, obj.metadata.namespace);
    const key = objectKey(obj.kind, namespace, obj.metadata.name);
    const version = given === '' ? undefined : given;
    if (version !== undefined && this.storedVersion(obj.kind, namespace, obj.metadata.name, key) === version) return false;
    this.unrecordedVersions.delete(key);
    switch (obj.kind) {
      case 'Namespace':
        this.putNamespace(obj, version);
        break;
      case 'Service':
        this.putService(toServiceInfo(obj, version), externalAddressesOf(obj));
        break;
      case 'EndpointSlice':
        this.putEndpoints(key, [sliceToGroup(obj, version)], obj.metadata.annotations?.[TRIGGER_TIME_ANNOTATION]);
        break;
      case 'Endpoints': {
        const groups = endpointsToGroups(obj, version);
        this.putEndpoints(key, groups, undefined);
        if (groups.length === 0 && version !== undefined) this.unrecordedVersions.set(key, version);
        break;
      }
      case 'Pod':
        this.putPod(key, toPodInfo(obj, version));
        break;
      case 'Node':
        this.nodeObjects.set(obj.metadata.name, obj);
        if (version !== undefined) this.unrecordedVersions.set(key, version);
        this.delta().nodes = true;
        break;
      case 'ServiceImport':
        this.putImport(toServiceImportInfo(obj, version));
        break;
    }
    this.touch();
    return true;
  }

  /** The version upsert() was given for the object with this objectKey(). */
  versionOf(key: string): ObjectVersion | undefined {
    const { kind, namespace, name } = parseObjectKey(key);
    return this.storedVersion(kind, namespace, name, key);
  }

  /** versionOf() for an object whose key is already made (upsert has the parts at hand). */
  private storedVersion(kind: StoredKind, namespace: string | undefined, name: string, key: string): ObjectVersion | undefined {
    switch (kind) {
      case 'Namespace':
        return this.namespaces.get(name)?.version;
      case 'Service': {
        const svc = this.services.get(`${name.toLowerCase()}.${(namespace ?? '').toLowerCase()}`);
        return svc && svc.name === name && svc.namespace === namespace ? svc.version : undefined;
      }
      case 'EndpointSlice':
      case 'Endpoints':
        return this.endpointObjects.get(key)?.[0]?.version ?? this.unrecordedVersions.get(key);
      case 'Pod':
        return this.pods.get(key)?.version;
      case 'ServiceImport': {
        const si = this.imports.get(`${name.toLowerCase()}.${(namespace ?? '').toLowerCase()}`);
        return si && si.name === name && si.namespace === namespace ? si.version : undefined;
      }
      default:
        return this.unrecordedVersions.get(key);
    }
  }

  /** Every object stored with a version `match` accepts (every version, by default). */
  *versioned(match: (version: ObjectVersion) => boolean = () => true): Generator<VersionedObject> {
    const ok = (v: ObjectVersion | undefined): v is ObjectVersion => v !== undefined && match(v);
    for (const ns of this.namespaces.values()) if (ok(ns.version)) yield { kind: 'Namespace', namespace: undefined, name: ns.name, version: ns.version };
    for (const s of this.services.values()) if (ok(s.version)) yield { kind: 'Service', namespace: s.namespace, name: s.name, version: s.version };
    for (const [key, groups] of this.endpointObjects) {
      const version = groups[0]?.version;
      if (ok(version)) yield { ...parseObjectKey(key), version };
    }
    for (const [key, p] of this.pods) if (ok(p.version)) yield { ...parseObjectKey(key), version: p.version };
    for (const si of this.imports.values()) if (ok(si.version)) yield { kind: 'ServiceImport', namespace: si.namespace, name: si.name, version: si.version };
    for (const [key, version] of this.unrecordedVersions) if (ok(version)) yield { ...parseObjectKey(key), version };
  }

  remove(kind: StoredKind, namespace: string | undefined, name: string): void {
    const ns = namespaceOf(kind, namespace);
    const key = objectKey(kind, ns, name);
    this.unrecordedVersions.delete(key);
    let changed = false;
    switch (kind) {
      case 'Namespace':
        changed = this.namespaces.delete(name);
        if (changed) this.delta().namespaces = true;
        break;
      case 'Service': {
        const svc = this.services.get(`${name.toLowerCase()}.${(ns as string).toLowerCase()}`);
        if (svc && svc.name === name && svc.namespace === ns) {
          this.dropService(svc);
          changed = true;
        }
        break;
      }
      case 'EndpointSlice':
      case 'Endpoints':
        changed = this.dropEndpoints(key);
        break;
      case 'Pod':
        changed = this.dropPod(key);
        break;
      case 'Node':
        changed = this.nodeObjects.delete(name);
        if (changed) this.delta().nodes = true;
        break;
      case 'ServiceImport': {
        const si = this.imports.get(`${name.toLowerCase()}.${(ns as string).toLowerCase()}`);
        if (si && si.name === name && si.namespace === ns) {
          this.dropImport(si);
          changed = true;
        }
        break;
      }
    }
    if (changed) this.touch();
  }

  /**
   * Makes the objects of `kind` exactly `objects` (a relist): upserts each, removes the rest.
   * Objects whose resourceVersion is unchanged cost a Map lookup.
   */
  replaceKind(kind: StoredKind, objects: readonly ClusterObject[]): void {
    this.batch(() => {
      const keep = new Set<string>();
      for (const o of objects) {
        keep.add(objectKey(o.kind, o.metadata.namespace, o.metadata.name));
        this.upsert(o, o.metadata.resourceVersion);
      }
      for (const [key, ns, name] of this.keysOf(kind)) {
        if (!keep.has(key)) this.remove(kind, ns, name);
      }
    });
  }

  // ---- reads ----

  /** The namespace, from its object or implied by objects in it (then without labels). */
  namespace(name: string): NamespaceInfo | undefined {
    const ns = this.namespaces.get(name);
    if (ns) return ns;
    return this.namespaceRefs.has(name) ? { name, labels: undefined, version: undefined } : undefined;
  }

  /** By `name.namespace`, lower case (the form DNS names give). */
  service(key: string): ServiceInfo | undefined {
    return this.services.get(key);
  }

  /**
   * The endpoints of a service: its EndpointSlices, or its legacy Endpoints when it has no
   * slice (a cluster with both has them mirrored, and counting both would double every answer).
   */
  endpointGroups(serviceKey: string): readonly EndpointGroup[] {
    const e = this.endpointsByService.get(serviceKey);
    if (!e) return EMPTY;
    e.view ??= sortedById(e.slices.length > 0 ? e.slices : e.legacy);
    return e.view;
  }

  /** A ServiceImport by `name.namespace`, lower case. */
  serviceImport(key: string): ServiceImportInfo | undefined {
    return this.imports.get(key);
  }

  /** The MCS EndpointSlices of a ServiceImport, sorted by id. */
  importEndpointGroups(importKey: string): readonly EndpointGroup[] {
    const e = this.endpointsByImport.get(importKey);
    if (!e) return EMPTY;
    e.view ??= sortedById(e.slices);
    return e.view;
  }

  servicesByIP(ip: string): readonly ServiceInfo[] {
    return listOf(this.servicesByIp, ip);
  }

  /**
   * A service's addresses outside the cluster: spec.externalIPs, then each load-balancer
   * ingress's IP (or its hostname when it has no IP), as CoreDNS's k8s_external reads them.
   */
  externalAddresses(serviceKey: string): readonly string[] {
    return this.externals.get(serviceKey) ?? EMPTY;
  }

  /** Services with `ip` among their external addresses (k8s_external's PTR). */
  servicesByExternalIP(ip: string): readonly ServiceInfo[] {
    return listOf(this.servicesByExternalIp, ip);
  }

  /** Groups (of any service) that list `ip`, ready or not; callers check readiness. */
  endpointGroupsByIP(ip: string): readonly EndpointGroup[] {
    return listOf(this.groupsByIp, ip);
  }

  podsByIP(ip: string): readonly PodInfo[] {
    return listOf(this.podsByIp, ip);
  }

  node(name: string): Node | undefined {
    return this.nodeObjects.get(name);
  }

  nodes(): Node[] {
    return [...this.nodeObjects.values()];
  }

  allServices(): IterableIterator<ServiceInfo> {
    return this.services.values();
  }

  /** Namespace objects (not the implied ones). */
  allNamespaces(): IterableIterator<NamespaceInfo> {
    return this.namespaces.values();
  }

  counts(): StoreCounts {
    let groups = 0;
    for (const g of this.endpointObjects.values()) groups += g.length;
    return { namespaces: this.namespaces.size, services: this.services.size, endpointGroups: groups, pods: this.pods.size, nodes: this.nodeObjects.size };
  }

  // ---- internals ----

  private *keysOf(kind: StoredKind): Generator<[string, string | undefined, string]> {
    switch (kind) {
      case 'Namespace':
        for (const n of this.namespaces.keys()) yield [objectKey(kind, undefined, n), undefined, n];
        break;
      case 'Service':
        for (const s of this.services.values()) yield [objectKey(kind, s.namespace, s.name), s.namespace, s.name];
        break;
      case 'EndpointSlice':
      case 'Endpoints':
        for (const key of this.endpointObjects.keys()) {
          if (!key.startsWith(`${kind} `)) continue;
          const [ns, name] = key.slice(kind.length + 1).split('/') as [string, string];
          yield [key, ns, name];
        }
        break;
      case 'Pod':
        for (const [key, p] of this.pods) yield [key, p.namespace, p.name];
        break;
      case 'Node':
        for (const n of this.nodeObjects.keys()) yield [objectKey(kind, undefined, n), undefined, n];
        break;
      case 'ServiceImport':
        for (const si of this.imports.values()) yield [objectKey(kind, si.namespace, si.name), si.namespace, si.name];
        break;
    }
  }

  private delta(): DeltaBuilder {
    this.pending ??= new DeltaBuilder();
    return this.pending;
  }

  private touch(): void {
    this.modifiedSeconds = Math.floor(Date.now() / 1000);
    this.flushIfIdle();
  }

  private flushIfIdle(): void {
    if (this.batchDepth > 0 || !this.pending) return;
    const d = this.pending;
    this.pending = undefined;
    if (d.empty()) return;
    for (const l of this.listeners) l(d);
  }

  private ref(namespace: string, by: 1 | -1): void {
    const n = (this.namespaceRefs.get(namespace) ?? 0) + by;
    if (n > 0) this.namespaceRefs.set(namespace, n);
    else this.namespaceRefs.delete(namespace);
    // Crossing zero changes whether the namespace exists, when no Namespace object says so.
    if ((n === 0 || (n === 1 && by === 1)) && !this.namespaces.has(namespace)) this.delta().namespaces = true;
  }

  private putNamespace(ns: Namespace, version: ObjectVersion | undefined): void {
    this.namespaces.set(ns.metadata.name, { name: ns.metadata.name, labels: nonEmptyLabels(ns.metadata.labels), version });
    this.delta().namespaces = true;
  }

  private putService(info: ServiceInfo, external: readonly string[]): void {
    // Count the new object before letting go of the old one, so a replacement never looks
    // like the namespace emptying and filling again.
    this.ref(info.namespace, 1);
    const old = this.services.get(info.key);
    if (old) this.dropService(old);
    this.services.set(info.key, info);
    for (const ip of info.clusterIPs) {
      addTo(this.servicesByIp, ip, info);
      this.delta().ips.add(ip);
    }
    if (external.length > 0) {
      this.externals.set(info.key, external);
      for (const ip of external) {
        if (canonicalIP(ip) !== ip) continue; // a load balancer's hostname: no PTR for it
        addTo(this.servicesByExternalIp, ip, info);
        this.delta().ips.add(ip);
      }
    }
    this.delta().services.add(info.key);
  }

  private dropService(svc: ServiceInfo): void {
    this.services.delete(svc.key);
    this.ref(svc.namespace, -1);
    for (const ip of svc.clusterIPs) {
      removeFrom(this.servicesByIp, ip, svc);
      this.delta().ips.add(ip);
    }
    const external = this.externals.get(svc.key);
    if (external !== undefined) {
      this.externals.delete(svc.key);
      for (const ip of external) {
        if (canonicalIP(ip) !== ip) continue;
        removeFrom(this.servicesByExternalIp, ip, svc);
        this.delta().ips.add(ip);
      }
    }
    this.delta().services.add(svc.key);
    // Endpoints stay: they are separate objects and may outlive the service briefly.
  }

  private putEndpoints(key: string, groups: EndpointGroup[], triggerTime: string | undefined): void {
    for (const g of groups) this.ref(g.namespace, 1); // before the drop: see putService
    this.dropEndpoints(key);
    this.endpointObjects.set(key, groups);
    const d = this.delta();
    for (const g of groups) {
      const mcs = isMulticlusterGroup(g);
      const index = mcs ? this.endpointsByImport : this.endpointsByService;
      let e = index.get(g.serviceKey);
      if (!e) {
        e = { slices: [], legacy: [], view: undefined };
        index.set(g.serviceKey, e);
      }
      (g.legacy ? e.legacy : e.slices).push(g);
      e.view = undefined;
      d.services.add(g.serviceKey);
      // Other clusters' endpoints have no PTR here and do not front this server.
      if (mcs) continue;
      for (const a of g.addresses) {
        addTo(this.groupsByIp, a.ip, g);
        d.ips.add(a.ip);
      }
    }
    if (triggerTime !== undefined && groups[0]) this.recordLatency(groups[0].serviceKey, triggerTime);
  }

  private recordLatency(serviceKey: string, triggerTime: string): void {
    const at = Date.parse(triggerTime);
    const svc = this.services.get(serviceKey);
    if (Number.isNaN(at) || !svc) return;
    const serviceKind = svc.kind !== 'Headless' ? 'cluster_ip' : svc.hasSelector ? 'headless_with_selector' : 'headless_without_selector';
    this.delta().programmingLatency.push({ serviceKind, seconds: Math.max(0, (Date.now() - at) / 1000) });
  }

  private dropEndpoints(key: string): boolean {
    const groups = this.endpointObjects.get(key);
    if (!groups) return false;
    this.endpointObjects.delete(key);
    const d = this.delta();
    for (const g of groups) {
      this.ref(g.namespace, -1);
      const mcs = isMulticlusterGroup(g);
      const index = mcs ? this.endpointsByImport : this.endpointsByService;
      const e = index.get(g.serviceKey);
      if (e) {
        const list = g.legacy ? e.legacy : e.slices;
        const i = list.indexOf(g);
        if (i >= 0) list.splice(i, 1);
        e.view = undefined;
        if (e.slices.length === 0 && e.legacy.length === 0) index.delete(g.serviceKey);
      }
      d.services.add(g.serviceKey);
      if (mcs) continue;
      for (const a of g.addresses) {
        removeFrom(this.groupsByIp, a.ip, g);
        d.ips.add(a.ip);
      }
    }
    return true;
  }

  private putImport(info: ServiceImportInfo): void {
    this.ref(info.namespace, 1); // before the drop: see putService
    const old = this.imports.get(info.key);
    if (old) this.dropImport(old);
    this.imports.set(info.key, info);
    this.delta().services.add(info.key);
  }

  private dropImport(si: ServiceImportInfo): void {
    this.imports.delete(si.key);
    this.ref(si.namespace, -1);
    this.delta().services.add(si.key);
  }

  private putPod(key: string, info: PodInfo): void {
    this.ref(info.namespace, 1); // before the drop: see putService
    this.dropPod(key);
    this.pods.set(key, info);
    for (const ip of info.ips) {
      addTo(this.podsByIp, ip, info);
      this.delta().podIPs.add(ip);
    }
  }

  private dropPod(key: string): boolean {
    const old = this.pods.get(key);
    if (!old) return false;
    this.pods.delete(key);
    this.ref(old.namespace, -1);
    for (const ip of old.ips) {
      removeFrom(this.podsByIp, ip, old);
      this.delta().podIPs.add(ip);
    }
    return true;
  }
}
