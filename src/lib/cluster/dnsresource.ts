// The DNS custom resource (operator.openshift.io/v1, kind DNS, cluster-scoped, the instance
// named "default"), typed as users write it. Two shapes of forwarding are accepted because
// both exist in the wild: the forwarding proposal (`spec.pluginConfig.forwardPlugins`) and
// today's OpenShift API (`spec.servers`, `spec.upstreamResolvers`). Validation lives in
// src/operator/validate.ts; these types describe a resource that passed it.

import type { KubeObject, Toleration } from './types.js';

export const DNS_API_VERSION = 'operator.openshift.io/v1';
export const DNS_KIND = 'DNS';
/** The operator manages only this instance, as OpenShift's does. */
export const DNS_DEFAULT_NAME = 'default';

export const FORWARDING_POLICIES = ['Random', 'RoundRobin', 'Sequential'] as const;
export type ForwardingPolicy = (typeof FORWARDING_POLICIES)[number];

export const PROTOCOL_STRATEGIES = ['', 'TCP'] as const;
/** "" lets the server pick (UDP, TCP on truncation); "TCP" forces TCP to the upstreams. */
export type ProtocolStrategy = (typeof PROTOCOL_STRATEGIES)[number];

export const DNS_TRANSPORTS = ['', 'TLS', 'Cleartext'] as const;
export type DNSTransport = (typeof DNS_TRANSPORTS)[number];

/** "" means SystemResolvConf, as in OpenShift's API. */
export const UPSTREAM_TYPES = ['SystemResolvConf', 'Network', ''] as const;
export type UpstreamType = (typeof UPSTREAM_TYPES)[number];

export const DNS_LOG_LEVELS = ['Normal', 'Debug', 'Trace'] as const;
export type DNSLogLevel = (typeof DNS_LOG_LEVELS)[number];

export const MANAGEMENT_STATES = ['Managed', 'Unmanaged', 'Force', 'Removed'] as const;
export type ManagementState = (typeof MANAGEMENT_STATES)[number];

/** One entry of the forwarding proposal: queries for `domain` go to `nameServers`. */
export interface ProposalForwardPlugin {
  domain: string;
  /** IPv4 or IPv6 addresses with an optional port: `10.0.0.1`, `10.0.0.1:5353`, `[fd00::1]:53`. */
  nameServers: string[];
  /** Default Random. */
  policy?: ForwardingPolicy;
}

export interface DNSPluginConfig {
  forwardPlugins?: ProposalForwardPlugin[];
}

export interface DNSOverTLSConfig {
  /** Name the upstreams' certificates must carry. */
  serverName: string;
  /** ConfigMap (in the DNS namespace) with key `ca-bundle.crt`; absent = the system trust store. */
  caBundle?: { name: string };
}

export interface DNSTransportConfig {
  transport?: DNSTransport;
  tls?: DNSOverTLSConfig;
}

export interface ForwardPlugin {
  upstreams: string[];
  /** Default Random. */
  policy?: ForwardingPolicy;
  protocolStrategy?: ProtocolStrategy;
  transportConfig?: DNSTransportConfig;
}

/** One entry of `spec.servers`: queries for `zones` go through `forwardPlugin`. */
export interface DNSServer {
  name: string;
  zones: string[];
  forwardPlugin: ForwardPlugin;
}

export interface Upstream {
  type: UpstreamType;
  /** Required for Network: an IPv4 or IPv6 address. Ignored for SystemResolvConf. */
  address?: string;
  /** Default 53. Ignored for SystemResolvConf. */
  port?: number;
}

/** Where the default (".") server forwards; absent = /etc/resolv.conf, Sequential. */
export interface UpstreamResolvers {
  upstreams?: Upstream[];
  /** Default Sequential. */
  policy?: ForwardingPolicy;
  protocolStrategy?: ProtocolStrategy;
  transportConfig?: DNSTransportConfig;
}

/** Cache caps as Go durations ("30s", "1h"); absent or zero = the defaults (900s, 30s). */
export interface DNSCache {
  positiveTTL?: string;
  negativeTTL?: string;
}

export interface DNSNodePlacement {
  /** Replaces the default `kubernetes.io/os: linux`. */
  nodeSelector?: Record<string, string>;
  /** Replaces the default control-plane toleration. */
  tolerations?: Toleration[];
}

export interface DNSSpec {
  pluginConfig?: DNSPluginConfig;
  servers?: DNSServer[];
  upstreamResolvers?: UpstreamResolvers;
  cache?: DNSCache;
  logLevel?: DNSLogLevel;
  operatorLogLevel?: DNSLogLevel;
  managementState?: ManagementState;
  nodePlacement?: DNSNodePlacement;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A status condition as OpenShift operators report them. */
export interface OperatorCondition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  /** RFC 3339; changes only when status, reason or message change. */
  lastTransitionTime: string;
}

export interface DNSStatus {
  clusterIP: string;
  clusterDomain: string;
  conditions: OperatorCondition[];
}

export interface DNSResource extends KubeObject {
  apiVersion: typeof DNS_API_VERSION;
  kind: typeof DNS_KIND;
  spec?: DNSSpec;
  status?: DNSStatus;
}
