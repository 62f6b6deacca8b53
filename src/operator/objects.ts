// The objects the operator owns: ConfigMap, the DNS DaemonSet, the node-resolver DaemonSet, the
// Service, and the admission webhook's settings (ConfigMap kdns-webhook). Built fresh from the
// settings every time, so applying them is idempotent.

import { createHash } from 'node:crypto';
import type { KubeObject, Service, Toleration } from '../lib/cluster/types.js';
import { CA_BUNDLE_KEY, caBundleDir, DEFAULT_PORTS } from './corefile.js';
import type { CorefilePorts } from './corefile.js';
import type { Placement } from './placement.js';

// apps/v1 and core/v1 shapes kdns writes (only the fields it sets or reads back).

export interface ConfigMap extends KubeObject {
  kind: 'ConfigMap';
  data: Record<string, string>;
}

export interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: Array<{ name: string; containerPort: number; protocol: 'TCP' | 'UDP' }>;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string> };
  terminationMessagePolicy?: string;
}

export interface Probe {
  httpGet: { path: string; port: number; scheme: 'HTTP' };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

export interface Volume {
  name: string;
  configMap?: { name: string; items?: Array<{ key: string; path: string }> };
  hostPath?: { path: string; type: 'File' | 'DirectoryOrCreate' };
}

export interface DaemonSetStatus {
  desiredNumberScheduled: number;
  currentNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  numberReady?: number;
  updatedNumberScheduled?: number;
  observedGeneration?: number;
}

export interface DaemonSet extends KubeObject {
  kind: 'DaemonSet';
  spec: {
    selector: { matchLabels: Record<string, string> };
    minReadySeconds?: number;
    updateStrategy: { type: 'RollingUpdate'; rollingUpdate: { maxUnavailable: number | string; maxSurge?: number | string } };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: {
        serviceAccountName: string;
        priorityClassName?: string;
        dnsPolicy?: string;
        hostNetwork?: boolean;
        nodeSelector: Record<string, string>;
        tolerations: Toleration[];
        containers: Container[];
        volumes: Volume[];
        terminationGracePeriodSeconds?: number;
      };
    };
  };
  status?: DaemonSetStatus;
}

export type OwnedObject = ConfigMap | DaemonSet | Service;

export const DNS_NAME = 'dns-default';
export const NODE_RESOLVER_NAME = 'node-resolver';
/** The container OpenShift used to run inside dns-default before node-resolver got its own DaemonSet. */
export const LEGACY_NODE_RESOLVER_CONTAINER = 'dns-node-resolver';
export const COREFILE_HASH_ANNOTATION = 'dns.kdns.io/corefile-hash';
/** On the ConfigMap: the settings applied, so a part that turns invalid later keeps them (JSON). */
export const LAST_GOOD_ANNOTATION = 'dns.kdns.io/last-good';
export const OWNING_DNS_LABEL = 'dns.operator.openshift.io/owning-dns';
export const DNS_POD_LABEL = 'dns.operator.openshift.io/daemonset-dns';
export const NODE_RESOLVER_POD_LABEL = 'dns.operator.openshift.io/daemonset-node-resolver';
export const COREFILE_DIR = '/etc/kdns';
export const METRICS_SERVICE_PORT = 9154;
/** The settings of `kdns webhook` (deploy/components/webhook mounts it), and its key. */
export const WEBHOOK_CONFIG_NAME = 'kdns-webhook';
export const WEBHOOK_CONFIG_KEY = 'config.yaml';
export const NODE_RESOLVER_LOCK_DIR = '/run/kdns';
/** How often the kubelet asks a DNS pod's /ready; minReadySeconds is three of these. */
export const READINESS_PERIOD_SECONDS = 3;
/** The DNS pods' memory request, as deploy/coredns requests it (docs/memory.md). */
export const DNS_MEMORY_REQUEST = '72Mi';

export interface ObjectOptions {
  namespace: string;
  image: string;
  /** The DNS resource's name: the instance the objects belong to. */
  owner: string;
  ports?: CorefilePorts;
  /** Service names node-resolver writes into /etc/hosts, relative to the cluster domain. */
  nodeResolverServices: string[];
  clusterDomain: string;
  /**
   * The DNS Service's `trafficDistribution: PreferSameNode`; false where the API server would
   * refuse it (before Kubernetes 1.34, see preferSameNodeSupported).
   */
  preferSameNode?: boolean;
}

function meta(name: string, o: ObjectOptions): KubeObject['metadata'] {
  return { name, namespace: o.namespace, labels: { [OWNING_DNS_LABEL]: o.owner } };
}

/**
 * A restrictive container context: DNS needs no privilege since it listens on 5353. The kdns
 * image's node binary carries cap_net_bind_service (for :53 where it replaces CoreDNS), and the
 * kernel refuses to start a binary whose file capabilities are not in the bounding set, so
 * NET_BIND_SERVICE stays there (docs/deploy.md).
 */
const RESTRICTED = {
  runAsNonRoot: true,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

export function corefileHash(corefile: string): string {
  return `sha256:${createHash('sha256').update(corefile).digest('hex').slice(0, 32)}`;
}

export function configMap(corefile: string, lastGood: string, o: ObjectOptions): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...meta(DNS_NAME, o), annotations: { [LAST_GOOD_ANNOTATION]: lastGood } }, data: { Corefile: corefile } };
}

export function dnsDaemonSet(corefile: string, placement: Placement, caBundles: string[], o: ObjectOptions): DaemonSet {
  const ports = o.ports ?? DEFAULT_PORTS;
  const podLabels = { [DNS_POD_LABEL]: o.owner };
  const caVolumes: Volume[] = caBundles.map((name) => ({ name: `ca-${name}`, configMap: { name, items: [{ key: CA_BUNDLE_KEY, path: CA_BUNDLE_KEY }] } }));
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: meta(DNS_NAME, o),
    spec: {
      selector: { matchLabels: podLabels },
      // A new pod counts as available only after it has stayed ready for three readiness
      // periods (3 × 3 s), so the surge below deletes a node's old pod only once the new one has
      // really started serving, not after its first lucky probe. OpenShift's DNS operator sets
      // the same 9 s for the same reason, together with maxSurge (OCPBUGS-5943). Keep it at 3×
      // the readiness probe's periodSeconds when either changes.
      minReadySeconds: 3 * READINESS_PERIOD_SECONDS,
      // Surge first: a node always has a serving DNS pod while its replacement starts.
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '10%' } },
      template: {
        // The hash makes a Corefile change roll the pods even where reload is not watching.
        metadata: { labels: podLabels, annotations: { [COREFILE_HASH_ANNOTATION]: corefileHash(corefile) } },
        spec: {
          serviceAccountName: 'dns',
          priorityClassName: 'system-node-critical',
          // The DNS pods forward to the node's resolvers, not to themselves.
          dnsPolicy: 'Default',
          nodeSelector: { ...placement.nodeSelector },
          tolerations: placement.tolerations.map((t) => ({ ...t })),
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: 'dns',
              image: o.image,
              args: ['serve', '--conf', `${COREFILE_DIR}/Corefile`],
              ports: [
                { name: 'dns', containerPort: ports.dns, protocol: 'UDP' },
                { name: 'dns-tcp', containerPort: ports.dns, protocol: 'TCP' },
                { name: 'metrics', containerPort: ports.metrics, protocol: 'TCP' },
              ],
              readinessProbe: { httpGet: { path: '/ready', port: ports.ready, scheme: 'HTTP' }, initialDelaySeconds: 3, periodSeconds: READINESS_PERIOD_SECONDS, timeoutSeconds: 3, successThreshold: 1, failureThreshold: 3 },
              livenessProbe: { httpGet: { path: '/health', port: ports.health, scheme: 'HTTP' }, initialDelaySeconds: 60, timeoutSeconds: 5, successThreshold: 1, failureThreshold: 5 },
              volumeMounts: [
                { name: 'config-volume', mountPath: COREFILE_DIR, readOnly: true },
                ...caBundles.map((name) => ({ name: `ca-${name}`, mountPath: caBundleDir(name), readOnly: true })),
              ],
              securityContext: RESTRICTED,
              // kdns serve's measured memory after a query load at 10,000 Services + 10,000 Pods
              // on Node 26 (docs/memory.md), the request deploy/coredns makes too. No limit, as
              // on OpenShift's DNS pods.
              resources: { requests: { cpu: '50m', memory: DNS_MEMORY_REQUEST } },
              terminationMessagePolicy: 'FallbackToLogsOnError',
            },
          ],
          volumes: [{ name: 'config-volume', configMap: { name: DNS_NAME, items: [{ key: 'Corefile', path: 'Corefile' }] } }, ...caVolumes],
        },
      },
    },
  };
}

export function nodeResolverDaemonSet(clusterIP: string, o: ObjectOptions): DaemonSet {
  const podLabels = { [NODE_RESOLVER_POD_LABEL]: '' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: meta(NODE_RESOLVER_NAME, o),
    spec: {
      selector: { matchLabels: podLabels },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '33%' } },
      template: {
        metadata: { labels: podLabels },
        spec: {
          serviceAccountName: NODE_RESOLVER_NAME,
          priorityClassName: 'system-node-critical',
          // The host's network: no pod IP to spend, and the hosts file it keeps is the node's.
          hostNetwork: true,
          dnsPolicy: 'Default',
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          // Every node needs the entries, whatever its taints.
          tolerations: [{ operator: 'Exists' }],
          containers: [
            {
              name: 'dns-node-resolver',
              image: o.image,
              args: [
                'node-resolver',
                '--services',
                o.nodeResolverServices.join(','),
                '--nameserver',
                clusterIP,
                '--cluster-domain',
                o.clusterDomain,
                '--hosts-file',
                '/etc/hosts',
                '--lock-file',
                `${NODE_RESOLVER_LOCK_DIR}/node-resolver.lock`,
                '--interval',
                '60s',
              ],
              volumeMounts: [
                { name: 'hosts-file', mountPath: '/etc/hosts' },
                { name: 'lock-dir', mountPath: NODE_RESOLVER_LOCK_DIR },
              ],
              // Root to write the node's root-owned /etc/hosts, with every other capability dropped.
              securityContext: { ...RESTRICTED, runAsNonRoot: false, runAsUser: 0 },
              resources: { requests: { cpu: '5m', memory: '21Mi' } },
              terminationMessagePolicy: 'FallbackToLogsOnError',
            },
          ],
          volumes: [
            { name: 'hosts-file', hostPath: { path: '/etc/hosts', type: 'File' } },
            { name: 'lock-dir', hostPath: { path: NODE_RESOLVER_LOCK_DIR, type: 'DirectoryOrCreate' } },
          ],
        },
      },
    },
  };
}

/** The DNS Service; without `clusterIP` the API server allocates one. */
export function dnsService(clusterIP: string | undefined, o: ObjectOptions): Service {
  const ports = o.ports ?? DEFAULT_PORTS;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(DNS_NAME, o),
    spec: {
      type: 'ClusterIP',
      ...(clusterIP === undefined ? {} : { clusterIP }),
      selector: { [DNS_POD_LABEL]: o.owner },
      // There is a DNS pod on every node the placement selects: a pod's queries stay on its
      // node when that node's DNS pod is ready, and go elsewhere only when it is not. OpenShift's
      // operator sets the same since 4.22.
      ...(o.preferSameNode === false ? {} : { trafficDistribution: 'PreferSameNode' }),
      ports: [
        { name: 'dns', port: 53, targetPort: ports.dns, protocol: 'UDP' },
        { name: 'dns-tcp', port: 53, targetPort: ports.dns, protocol: 'TCP' },
        { name: 'metrics', port: METRICS_SERVICE_PORT, targetPort: ports.metrics, protocol: 'TCP' },
      ],
    },
  };
}

/**
 * Whether an API server of this version (its /version gitVersion, "v1.34.2", "v1.33.1+k3s1")
 * accepts `trafficDistribution: PreferSameNode` with its default feature gates. The value came
 * with the PreferSameTrafficDistribution gate: alpha and off in 1.33, on by default from 1.34
 * (locked on in 1.35). Before that the API server refuses the Service with 422 (1.31–1.33:
 * `spec.trafficDistribution: Unsupported value: "PreferSameNode": supported values:
 * "PreferClose"`), drops the field (1.30, whose ServiceTrafficDistribution gate is off), or does
 * not know the field at all (1.29 and older). An unknown version counts as too old: a Service
 * without the preference still works, a refused one is no DNS at all.
 */
export function preferSameNodeSupported(gitVersion: string | undefined): boolean {
  const m = /^v?(\d+)\.(\d+)/.exec(gitVersion ?? '');
  if (!m) return false;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major > 1 || (major === 1 && minor >= 34);
}

/**
 * The admission webhook's settings file: what it needs to give a pod the DNS the kubelet would
 * (src/webhook/README.md), here the cluster domain and the DNS Service's address, the one
 * node-resolver and the pods use. The DNS resource configures no node-local cache, so there is
 * no nodeCacheIP; nodeSearches (what $(HOST) stands for) is not the operator's to know either.
 * The whole key is the operator's: an edit is put back.
 */
export function webhookConfigMap(clusterIP: string, o: ObjectOptions): ConfigMap {
  const text = [
    `# Written by the kdns operator from DNS "${o.owner}" and Service ${DNS_NAME}; edits are put back.`,
    `clusterDomain: ${o.clusterDomain}`,
    `clusterDNS: [${clusterIP}]`,
    '',
  ].join('\n');
  const metadata = meta(WEBHOOK_CONFIG_NAME, o);
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...metadata, labels: { ...metadata.labels, 'app.kubernetes.io/name': 'kdns-webhook' } }, data: { [WEBHOOK_CONFIG_KEY]: text } };
}

/**
 * The Service's fixed address: the 10th of the service CIDR (10.96.0.0/12 → 10.96.0.10), the
 * address kubelets are configured with as clusterDNS.
 */
export function tenthAddress(cidr: string): string {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr);
  if (!m) throw new Error(`service CIDR ${JSON.stringify(cidr)}: expected ADDRESS/PREFIX`);
  const [, addr, prefixText] = m as unknown as [string, string, string];
  const v6 = addr.includes(':');
  const bits = v6 ? 128 : 32;
  const prefix = Number(prefixText);
  const base = v6 ? ipv6ToBigInt(addr) : ipv4ToBigInt(addr);
  if (base === undefined || prefix > bits) throw new Error(`service CIDR ${JSON.stringify(cidr)}: not an IPv4 or IPv6 network`);
  if (bits - prefix < 4) throw new Error(`service CIDR ${JSON.stringify(cidr)}: too small to hold a 10th address`);
  const hostBits = BigInt(bits - prefix);
  const network = (base >> hostBits) << hostBits;
  const ip = network + 10n;
  return v6 ? bigIntToIPv6(ip) : bigIntToIPv4(ip);
}

function ipv4ToBigInt(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((acc, p) => (acc << 8n) + BigInt(Number(p)), 0n);
}

function bigIntToIPv4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((n >> shift) & 255n)).join('.');
}

function ipv6ToBigInt(s: string): bigint | undefined {
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string | undefined): string[] => (h ? h.split(':') : []);
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return undefined;
  const all = [...head, ...Array<string>(missing).fill('0'), ...tail];
  if (all.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return all.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g, 16)), 0n);
}

function bigIntToIPv6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // Compress the longest run of zero groups, as RFC 5952 asks.
  let best = { start: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len && j - i > 1) best = { start: i, len: j - i };
    i = j;
  }
  if (best.start < 0) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.len).join(':')}`;
}
