// The records the store keeps and DNS reads: a compact form of each Kubernetes object, built
// from it by convert.ts. Types and the few facts read off them; no indexes, no conversion.

import { flat } from './keys.js';

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
  /**
   * The endpoint's topology zone (EndpointSlice `zone`), lower case; only in a store that keeps
   * zones (the kubernetes plugin's `zonal` option), so other configurations' addresses are no bigger.
   */
  readonly zone?: string;
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

/** What a ServiceInfo is made of (convert.ts reads it off a Service). */
export interface ServiceFields {
  readonly name: string;
  /** One string shared by every record of the namespace (convert.ts interns it). */
  readonly namespace: string;
  readonly kind: ServiceKind;
  /** Canonical text form, in spec order; empty unless kind is ClusterIP. */
  readonly clusterIPs: readonly string[];
  readonly externalName: string;
  readonly ports: readonly PortInfo[];
  readonly publishNotReadyAddresses: boolean;
  readonly hasSelector: boolean;
  readonly labels: Labels | undefined;
  readonly version: ObjectVersion | undefined;
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

  constructor(f: ServiceFields) {
    this.namespace = f.namespace;
    this.key = flat(`${f.name.toLowerCase()}.${f.namespace.toLowerCase()}`);
    this.givenName = f.name === f.name.toLowerCase() ? undefined : f.name;
    this.kind = f.kind;
    this.ips = f.clusterIPs.length === 1 ? (f.clusterIPs[0] as string) : f.clusterIPs;
    this.externalName = f.externalName;
    this.ports = f.ports;
    this.publishNotReadyAddresses = f.publishNotReadyAddresses;
    this.hasSelector = f.hasSelector;
    this.labels = f.labels;
    this.version = f.version;
  }

  get name(): string {
    return this.givenName ?? this.key.slice(0, this.key.length - this.namespace.length - 1);
  }

  /** Canonical text form, IPv4 and IPv6 (dual-stack) in spec order; empty unless kind is ClusterIP. */
  get clusterIPs(): readonly string[] {
    return typeof this.ips === 'string' ? [this.ips] : this.ips;
  }
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

/** The ServiceImport an EndpointSlice of the Multi-Cluster Services API belongs to. */
export const MCS_SERVICE_NAME_LABEL = 'multicluster.kubernetes.io/service-name';
/** The cluster of the clusterset an MCS EndpointSlice's endpoints run in. */
export const MCS_SOURCE_CLUSTER_LABEL = 'multicluster.kubernetes.io/source-cluster';

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
