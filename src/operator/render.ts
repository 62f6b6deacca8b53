// The operator's pure core: DNS resource (+ nodes, + what is applied now) → the objects to
// apply and the status to report. No I/O and no clock (the time comes in), so `kdns operator
// render` and the reconcile loop compute exactly the same thing.

import type { DNSResource, DNSStatus, ManagementState } from '../lib/cluster/dnsresource.js';
import type { FieldError } from '../lib/cluster/field.js';
import type { Node, Service } from '../lib/cluster/types.js';
import { describeLeftOut, interpretDNS, parseLastGood } from './config.js';
import type { DNSSettings, LeftOut } from './config.js';
import { DEFAULT_PORTS, renderDNSCorefile } from './corefile.js';
import type { CorefilePorts } from './corefile.js';
import { configMap, dnsDaemonSet, dnsService, LAST_GOOD_ANNOTATION, LEGACY_NODE_RESOLVER_CONTAINER, nodeResolverDaemonSet, tenthAddress, webhookConfigMap } from './objects.js';
import type { ConfigMap, DaemonSet, ObjectOptions, OwnedObject } from './objects.js';
import { checkPlacement, DEFAULT_NODE_SELECTOR, CONTROL_PLANE_TOLERATION, describeRefusal, desiredPlacement } from './placement.js';
import type { Placement } from './placement.js';
import { computeStatus } from './status.js';
import { DEFAULT_CLUSTER_DOMAIN } from './validate.js';

export interface RenderOptions {
  /** Namespace of the objects. Default "kdns". */
  namespace?: string;
  /** Image running `kdns serve` and `kdns node-resolver`. */
  image?: string;
  clusterDomain?: string;
  /**
   * The Service's address is the 10th of this range (OpenShift's rule). Default 10.96.0.0/12
   * (10.96.0.10), unless `allocateServiceIP`. A Service that has an address keeps it.
   */
  serviceCIDR?: string;
  /** Without serviceCIDR: leave the address to the API server (never collides with kube-dns). */
  allocateServiceIP?: boolean;
  ports?: CorefilePorts;
  /** Services node-resolver puts into /etc/hosts. */
  nodeResolverServices?: string[];
  /** Where the Corefile expects caBundle folders; only for running the Corefile outside the DaemonSet (tests). */
  caBundleRoot?: string;
  /** `reload`'s check interval (Go duration, at least 2s); default 30s. */
  reloadInterval?: string;
  /**
   * Whether the DNS Service asks for `trafficDistribution: PreferSameNode`; default true. The API
   * backend turns it off for API servers older than 1.34, which refuse or drop it.
   */
  preferSameNode?: boolean;
}

export const DEFAULT_NAMESPACE = 'kdns';
export const DEFAULT_IMAGE = 'ghcr.io/kdns/kdns:0.1.0';
export const DEFAULT_SERVICE_CIDR = '10.96.0.0/12';
export const DEFAULT_NODE_RESOLVER_SERVICES = ['image-registry.openshift-image-registry.svc'];

/** The objects the operator wrote last time (each absent when it does not exist yet). */
export interface CurrentObjects {
  configMap?: ConfigMap;
  dnsDaemonSet?: DaemonSet;
  nodeResolverDaemonSet?: DaemonSet;
  service?: Service;
  /** The admission webhook's settings (ConfigMap kdns-webhook). */
  webhookConfigMap?: ConfigMap;
}

export interface RenderInput {
  dns: unknown;
  /** The cluster's nodes; without them the placement is not checked. */
  nodes?: readonly Node[];
  current?: CurrentObjects;
  options?: RenderOptions;
  now: Date;
}

export interface Rendered {
  ok: true;
  corefile: string;
  /** ConfigMap, DNS DaemonSet, node-resolver DaemonSet, Service, webhook settings: in the order to apply them. */
  objects: OwnedObject[];
  /** The DNS resource with its status filled in. */
  dns: DNSResource;
  status: DNSStatus;
  settings: DNSSettings;
  leftOut: LeftOut[];
  /** Why the requested placement was refused (the current one is kept). */
  placementRefused?: string;
  placement: Placement;
  managementState: ManagementState;
  /** Changes worth a log line that are not problems (upgrade clean-ups). */
  notes: string[];
  /** The Service's address, when known (undefined: the API server is to allocate it). */
  clusterIP?: string;
  /** Why the Service's address is not the one the options ask for, when it is not. */
  addressKept?: string;
}

export interface Refused {
  ok: false;
  /** Why nothing can be rendered: the object is not a usable DNS resource. */
  errors: FieldError[];
}

export type RenderResult = Rendered | Refused;

export function render(input: RenderInput): RenderResult {
  const o = input.options ?? {};
  const clusterDomain = o.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  const current = input.current ?? {};
  const interpreted = interpretDNS(input.dns, clusterDomain, parseLastGood(current.configMap?.metadata.annotations?.[LAST_GOOD_ANNOTATION]));
  if (!interpreted.ok) return { ok: false, errors: interpreted.errors };
  const settings = interpreted.settings;
  const dns = input.dns as DNSResource;
  const objectOptions: ObjectOptions = {
    namespace: o.namespace ?? DEFAULT_NAMESPACE,
    image: o.image ?? DEFAULT_IMAGE,
    owner: dns.metadata.name,
    ports: o.ports ?? DEFAULT_PORTS,
    nodeResolverServices: o.nodeResolverServices ?? DEFAULT_NODE_RESOLVER_SERVICES,
    clusterDomain,
    preferSameNode: o.preferSameNode ?? true,
  };

  const { placement, refused } = choosePlacement(settings, input.nodes, current.dnsDaemonSet);
  const corefile = renderDNSCorefile({
    settings,
    clusterDomain,
    ports: objectOptions.ports,
    ...(o.caBundleRoot === undefined ? {} : { caBundleRoot: o.caBundleRoot }),
    ...(o.reloadInterval === undefined ? {} : { reloadInterval: o.reloadInterval }),
  });
  const address = chooseAddress(o, current.service);
  const clusterIP = address.clusterIP;
  const caBundles = [...new Set([...settings.forwarding.map((f) => f.tls?.caBundle), settings.defaultForwarding.tls?.caBundle].filter((n): n is string => n !== undefined))];
  const objects: OwnedObject[] = [
    configMap(corefile, JSON.stringify(settings.lastGood), objectOptions),
    dnsDaemonSet(corefile, placement, caBundles, objectOptions),
    // node-resolver needs the address: until the API server has allocated it, it waits a pass.
    ...(clusterIP === undefined ? [] : [nodeResolverDaemonSet(clusterIP, objectOptions)]),
    dnsService(clusterIP, objectOptions),
    // The webhook's settings name the Service's address too: they wait for it the same way.
    ...(clusterIP === undefined ? [] : [webhookConfigMap(clusterIP, objectOptions)]),
  ];

  const status = computeStatus({
    clusterIP: current.service?.spec.clusterIP ?? '',
    clusterDomain,
    ...(current.dnsDaemonSet ? { dnsDaemonSet: current.dnsDaemonSet } : {}),
    ...(current.nodeResolverDaemonSet ? { nodeResolverDaemonSet: current.nodeResolverDaemonSet } : {}),
    placement,
    managementState: settings.managementState,
    leftOut: settings.leftOut.map(describeLeftOut),
    ...(refused === undefined ? {} : { placementRefused: refused }),
    ...(dns.status?.conditions ? { previous: dns.status.conditions } : {}),
    now: input.now,
  });

  return {
    ok: true,
    corefile,
    objects,
    dns: { ...dns, status },
    status,
    settings,
    leftOut: settings.leftOut,
    ...(refused === undefined ? {} : { placementRefused: refused }),
    placement,
    managementState: settings.managementState,
    notes: upgradeNotes(current),
    ...(clusterIP === undefined ? {} : { clusterIP }),
    ...(address.kept === undefined ? {} : { addressKept: address.kept }),
  };
}

/**
 * The Service's address: the one it has (a Service's clusterIP cannot change), else the 10th of
 * the service CIDR, else none (the API server allocates).
 */
function chooseAddress(o: RenderOptions, service: Service | undefined): { clusterIP?: string; kept?: string } {
  const live = service?.spec.clusterIP;
  const requested = o.serviceCIDR === undefined && o.allocateServiceIP ? undefined : tenthAddress(o.serviceCIDR ?? DEFAULT_SERVICE_CIDR);
  if (live === undefined || live === '' || live === 'None') return requested === undefined ? {} : { clusterIP: requested };
  if (requested === undefined || requested === live) return { clusterIP: live };
  return { clusterIP: live, kept: `Service ${service?.metadata.name} keeps its address ${live} (a Service's address cannot change); the service CIDR asks for ${requested}: delete the Service to move it` };
}

/**
 * The desired placement when it can schedule somewhere; otherwise the one the DaemonSet has now
 * (or the defaults when there is none yet), so applying never strands cluster DNS.
 */
function choosePlacement(settings: DNSSettings, nodes: readonly Node[] | undefined, currentDS: DaemonSet | undefined): { placement: Placement; refused?: string } {
  const fallback = currentPlacement(currentDS);
  if (settings.placement === undefined) return { placement: fallback };
  const wanted = desiredPlacement(settings.placement);
  if (nodes === undefined) return { placement: wanted };
  const check = checkPlacement(wanted, nodes);
  if (check.ok) return { placement: wanted };
  return { placement: fallback, refused: describeRefusal(wanted, check) };
}

function currentPlacement(ds: DaemonSet | undefined): Placement {
  const spec = ds?.spec.template.spec;
  if (!spec) return { nodeSelector: { ...DEFAULT_NODE_SELECTOR }, tolerations: [{ ...CONTROL_PLANE_TOLERATION }] };
  return { nodeSelector: { ...(spec.nodeSelector ?? {}) }, tolerations: (spec.tolerations ?? []).map((t) => ({ ...t })) };
}

/** Older OpenShift releases ran node-resolver as a second container of dns-default; it now has its own DaemonSet. */
function upgradeNotes(current: CurrentObjects): string[] {
  const containers = current.dnsDaemonSet?.spec.template.spec.containers ?? [];
  if (!containers.some((c) => c.name === LEGACY_NODE_RESOLVER_CONTAINER)) return [];
  return [`removed container ${LEGACY_NODE_RESOLVER_CONTAINER} from DaemonSet ${current.dnsDaemonSet?.metadata.name}: node-resolver runs as its own DaemonSet now`];
}
