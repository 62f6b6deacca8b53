// The indexed cluster state DNS answers from. Sources (a manifest directory, the Kubernetes API)
// write objects in; readers get compact records through Map lookups by service key, IP and
// namespace. Every write touches only the indexes of the object it changes, and listeners hear
// exactly which services and IPs changed, so caches above can drop just those answers. An object
// becomes its record in convert.ts; the store keeps records and indexes them.

import { endpointsToGroups, externalAddressesOf, sliceToGroup, toNamespaceInfo, toPodInfo, toServiceImportInfo, toServiceInfo } from './convert.js';
import { canonicalIP, namespaceOf, objectKey, parseObjectKey } from './keys.js';
import { isMulticlusterGroup, type EndpointGroup, type NamespaceInfo, type ObjectVersion, type PodInfo, type ServiceImportInfo, type ServiceInfo } from './records.js';
import type { ClusterObject, Node } from './types.js';

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
const EMPTY: readonly never[] = Object.freeze([]);

function sortedById(groups: readonly EndpointGroup[]): readonly EndpointGroup[] {
  return [...groups].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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

export interface StoreOptions {
  /** Keep each EndpointSlice endpoint's zone (the kubernetes plugin's `zonal`); off, addresses carry none. */
  endpointZones?: boolean;
}

export class ClusterStore {
  constructor(private readonly options: StoreOptions = {}) {}

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
        this.putNamespace(toNamespaceInfo(obj, version));
        break;
      case 'Service':
        this.putService(toServiceInfo(obj, version), externalAddressesOf(obj));
        break;
      case 'EndpointSlice':
        this.putEndpoints(key, [sliceToGroup(obj, version, this.options.endpointZones === true)], obj.metadata.annotations?.[TRIGGER_TIME_ANNOTATION]);
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

  private putNamespace(info: NamespaceInfo): void {
    this.namespaces.set(info.name, info);
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
