// Kubernetes objects → the store's records (records.ts): addresses in canonical form, ports
// defaulted as the API server defaults them, and the small values many objects repeat (namespace
// names, port lists, label sets, workload names) shared instead of copied. Pure but for those
// shared tables.

import { canonicalIP, flat, objectKey } from './keys.js';
import {
  HOST_NETWORK_OWNER,
  MCS_SERVICE_NAME_LABEL,
  ServiceInfo,
  type EndpointAddressInfo,
  type EndpointGroup,
  type Labels,
  type NamespaceInfo,
  type ObjectVersion,
  type PodInfo,
  type PortInfo,
  type ServiceImportInfo,
  type ServiceKind,
} from './records.js';
import type { EndpointSlice, Endpoints, Namespace, Pod, Service, ServiceImport } from './types.js';

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
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
/** A cluster has a handful of zones; each address points at one shared string. */
const zoneNames = new Interner<string>(10_000);

function internZone(zone: string): string {
  return zoneNames.get(zone, () => zone);
}

function internNamespace(ns: string): string {
  return namespaceNames.get(ns, () => ns);
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

/** A Namespace as the store keeps it. */
export function toNamespaceInfo(ns: Namespace, version?: ObjectVersion): NamespaceInfo {
  return { name: ns.metadata.name, labels: nonEmptyLabels(ns.metadata.labels), version };
}

export function toServiceInfo(svc: Service, version?: ObjectVersion): ServiceInfo {
  const spec = svc.spec ?? {};
  const namespace = internNamespace(svc.metadata.namespace ?? 'default');
  let kind: ServiceKind = 'ClusterIP';
  let clusterIPs: readonly string[] = EMPTY;
  if (spec.type === 'ExternalName') {
    kind = 'ExternalName';
  } else {
    const given = spec.clusterIPs && spec.clusterIPs.length > 0 ? spec.clusterIPs : spec.clusterIP !== undefined ? [spec.clusterIP] : [];
    if (given[0] === 'None') kind = 'Headless';
    else clusterIPs = canonicalIPs(given);
  }
  return new ServiceInfo({
    name: svc.metadata.name,
    namespace,
    kind,
    clusterIPs,
    externalName: kind === 'ExternalName' ? (spec.externalName ?? '') : '',
    ports: toPorts(spec.ports),
    publishNotReadyAddresses: spec.publishNotReadyAddresses === true,
    hasSelector: spec.selector !== undefined && Object.keys(spec.selector).length > 0,
    labels: nonEmptyLabels(svc.metadata.labels),
    version,
  });
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

/**
 * An EndpointSlice as the store keeps it. `keepZones`: each address keeps its endpoint's zone
 * (lower-cased once here: names arrive lower-cased), for zone-scoped names; without it addresses
 * carry no zone field at all.
 */
export function sliceToGroup(slice: EndpointSlice, version?: ObjectVersion, keepZones = false): EndpointGroup {
  const namespace = internNamespace(slice.metadata.namespace ?? 'default');
  // An MCS slice belongs to its ServiceImport, not to a Service (see isMulticlusterGroup).
  const labels = slice.metadata.labels;
  const service = labels?.[MCS_SERVICE_NAME_LABEL] ?? labels?.[SERVICE_NAME_LABEL] ?? '';
  const addresses: EndpointAddressInfo[] = [];
  // FQDN slices name hosts, not addresses: nothing DNS can serve as A/AAAA or PTR.
  if (slice.addressType !== 'FQDN') {
    for (const ep of slice.endpoints ?? []) {
      const ready = ep.conditions?.ready !== false;
      const zone = keepZones && typeof ep.zone === 'string' && ep.zone !== '' ? internZone(ep.zone.toLowerCase()) : undefined;
      for (const a of ep.addresses) {
        const ip = canonicalIP(a);
        if (ip === undefined) continue;
        const address: EndpointAddressInfo = { ip, hostname: ep.hostname ?? '', targetRefName: targetName(ep.targetRef?.name), nodeName: ep.nodeName ?? '', ready };
        addresses.push(zone === undefined ? address : { ...address, zone });
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
