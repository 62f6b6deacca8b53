// The Kubernetes objects kdns reads, typed as the API serves them (only the fields DNS, the
// operator and node-resolver use). Every part of kdns reads these; nobody re-parses YAML alone.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  /** Read for Pods only: the controller reference names the workload that runs the pod. */
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion?: string;
  kind: string;
  name: string;
  uid?: string;
  controller?: boolean;
}

export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

export interface KubeObject extends TypeMeta {
  metadata: ObjectMeta;
}

export interface Namespace extends KubeObject {
  kind: 'Namespace';
}

export interface ServicePort {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port: number;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}

export interface Service extends KubeObject {
  kind: 'Service';
  spec: {
    type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
    /** "None" for a headless service. */
    clusterIP?: string;
    clusterIPs?: string[];
    ipFamilies?: Array<'IPv4' | 'IPv6'>;
    externalName?: string;
    /** Addresses outside the cluster that route to the service (k8s_external serves them). */
    externalIPs?: string[];
    ports?: ServicePort[];
    selector?: Record<string, string>;
    publishNotReadyAddresses?: boolean;
    /** A routing preference (PreferClose, PreferSameZone, PreferSameNode); Kubernetes 1.31+. */
    trafficDistribution?: string;
  };
  status?: {
    loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string }> };
  };
}

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
}

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface Endpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  nodeName?: string;
  zone?: string;
}

export interface EndpointPort {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port?: number;
  appProtocol?: string;
}

/** discovery.k8s.io/v1 EndpointSlice; the owning service is the `kubernetes.io/service-name` label. */
export interface EndpointSlice extends KubeObject {
  kind: 'EndpointSlice';
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints?: Endpoint[];
  ports?: EndpointPort[];
}

/** Legacy core/v1 Endpoints (one per service, same name). */
export interface Endpoints extends KubeObject {
  kind: 'Endpoints';
  subsets?: Array<{
    addresses?: Array<{ ip: string; hostname?: string; nodeName?: string; targetRef?: ObjectReference }>;
    notReadyAddresses?: Array<{ ip: string; hostname?: string; nodeName?: string; targetRef?: ObjectReference }>;
    ports?: EndpointPort[];
  }>;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | '';
  tolerationSeconds?: number;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface PodDNSConfigOption {
  name?: string;
  value?: string;
}

export interface PodDNSConfig {
  nameservers?: string[];
  searches?: string[];
  options?: PodDNSConfigOption[];
}

/** kdns extension for `dnsPolicy: Custom`. */
export interface PodDNSParams {
  custom?: {
    search?: string[];
    /** Accepted as another name for `search`. */
    searchPaths?: string[];
    options?: string[];
  };
}

export type DNSPolicy =
  | 'ClusterFirst'
  | 'ClusterFirstWithHostNet'
  | 'Default'
  | 'None'
  | 'Custom'
  | 'ClusterFirstWithAutopath';

export interface PodSpec {
  hostNetwork?: boolean;
  dnsPolicy?: DNSPolicy | string;
  dnsConfig?: PodDNSConfig;
  dnsParams?: PodDNSParams;
  hostname?: string;
  subdomain?: string;
  setHostnameAsFQDN?: boolean;
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  containers?: Array<{ name: string; image?: string; [key: string]: unknown }>;
  [key: string]: unknown;
}

export interface Pod extends KubeObject {
  kind: 'Pod';
  spec?: PodSpec;
  status?: {
    phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
    podIP?: string;
    podIPs?: Array<{ ip: string }>;
    hostIP?: string;
  };
}

export interface Node extends KubeObject {
  kind: 'Node';
  spec?: {
    taints?: Taint[];
    unschedulable?: boolean;
  };
  status?: {
    addresses?: Array<{ type: string; address: string }>;
    conditions?: Array<{ type: string; status: string }>;
  };
}

/**
 * multicluster.x-k8s.io/v1alpha1 ServiceImport (Multi-Cluster Services API): a service of the
 * clusterset, `<name>.<namespace>.svc.clusterset.local`. Its endpoints are EndpointSlices
 * labelled `multicluster.kubernetes.io/service-name` (and `.../source-cluster`).
 */
export interface ServiceImport extends KubeObject {
  kind: 'ServiceImport';
  spec?: {
    type?: 'ClusterSetIP' | 'Headless';
    /** The clusterset IPs (ClusterSetIP imports). */
    ips?: string[];
    ports?: ServicePort[];
  };
}

/** A kind that DNS and the operator read; anything else in a manifest directory is ignored. */
export type ClusterObject = Namespace | Service | EndpointSlice | Endpoints | Pod | Node | ServiceImport;
