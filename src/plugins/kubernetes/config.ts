// The `kubernetes` Corefile block, read into a plain config (pure: no I/O, so tests are tables).
//
//   kubernetes [ZONES...] {
//       endpoint URL | tls CERT KEY CACERT | kubeconfig KUBECONFIG [CONTEXT] | manifests DIR
//       namespaces NAMESPACE...      namespace_labels EXPRESSION      labels EXPRESSION
//       pods disabled|insecure|verified      endpoint_pod_names      ttl TTL      noendpoints
//       fallthrough [ZONES...]      ignore empty_service      startup_timeout DURATION
//       multicluster [ZONES...]      zonal      apiserver_qps QPS      apiserver_burst N
//       apiserver_max_inflight N
//   }

import { resolve } from 'node:path';
import { argPosition, duplicateProperty, expectArgs, invalidArg, parseDuration, parseIntArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { removedOption } from '../../server/obsolete.js';
import { parseLabelSelector, LabelSelectorError, type LabelSelector } from '../../lib/cluster/labels.js';
import type { ApiLimits } from '../../lib/cluster/apigate.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import { zoneArgs } from '../pkg/zones.js';

export type PodMode = 'disabled' | 'insecure' | 'verified';

export type SourceSpec =
  | { kind: 'directory'; dir: string }
  | {
      kind: 'api';
      /** API server URL; with neither endpoint nor kubeconfig, the in-cluster service account is used. */
      endpoint?: string;
      tls?: { cert: string; key: string; ca: string };
      kubeconfig?: { path: string; context?: string };
      /** Full relist interval (0 = watch only). */
      resyncMs: number;
      /** `apiserver_qps`, `apiserver_burst`, `apiserver_max_inflight`; absent when none is set. */
      limits?: ApiLimits;
    };

export interface KubernetesConfig {
  /** Zones answered for: absolute, lower-case. */
  zones: string[];
  /** The first forward zone: PTR targets are named in it. */
  primaryZone: string;
  ttl: number;
  /** Only these namespaces are served (undefined = all). */
  namespaces?: ReadonlySet<string>;
  namespaceLabels?: LabelSelector;
  labels?: LabelSelector;
  podMode: PodMode;
  endpointPodNames: boolean;
  noEndpoints: boolean;
  ignoreEmptyService: boolean;
  /** Zones where a name error goes to the next plugin; undefined = off; [] = every zone. */
  fallthrough?: string[];
  /** Zones (of `zones`) served from ServiceImports of the Multi-Cluster Services API. */
  multiclusterZones?: string[];
  /** Headless services also answer `<topology-zone>.pin|prefer._zone.<service>.<namespace>.svc.<zone>`. */
  zonal?: boolean;
  source: SourceSpec;
  /** How long start-up waits for the first sync before serving anyway (CoreDNS: 5s). */
  startupTimeoutMs: number;
}

export const DEFAULT_TTL = 5;
export const MAX_TTL = 3600;
export const DEFAULT_STARTUP_TIMEOUT_MS = 5000;

function isReverseZone(zone: string): boolean {
  return zone.endsWith('in-addr.arpa.') || zone.endsWith('ip6.arpa.');
}

function selector(d: Directive): LabelSelector {
  const text = expectArgs(d, 1).join(' ');
  try {
    return parseLabelSelector(text);
  } catch (e) {
    if (e instanceof LabelSelectorError) throw CorefileError.at(d, e.message);
    throw e;
  }
}

const SINGLE = new Set([
  'endpoint',
  'tls',
  'kubeconfig',
  'namespace_labels',
  'labels',
  'pods',
  'endpoint_pod_names',
  'ttl',
  'noendpoints',
  'fallthrough',
  'ignore',
  'manifests',
  'startup_timeout',
  'multicluster',
  'zonal',
]);

/**
 * Reads a `kubernetes` directive. `clusterDir` is `kdns serve --cluster DIR` (relative to the
 * working directory, as command-line paths are): the source of a block that names none.
 */
export function parseKubernetes(d: Directive, blockZones: readonly string[], corefilePath: string, clusterDir?: string): KubernetesConfig {
  const zones = d.args.length > 0 ? zoneArgs(d, d.args) : [...blockZones];
  const primaryZone = zones.find((z) => !isReverseZone(z));
  if (primaryZone === undefined) throw CorefileError.at(d, 'kubernetes needs at least one zone that is not a reverse zone (in-addr.arpa, ip6.arpa)');
  const cfg: KubernetesConfig = {
    zones,
    primaryZone,
    ttl: DEFAULT_TTL,
    podMode: 'disabled',
    endpointPodNames: false,
    noEndpoints: false,
    ignoreEmptyService: false,
    zonal: false,
    source: { kind: 'api', resyncMs: 0 },
    startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
  };
  const source: SourceProperties = { lines: new Map() };
  const limits: ApiLimits = { qps: 0, burst: 0, maxInflight: 0 };
  const seen = new Map<string, Directive>();
  for (const p of d.block ?? []) {
    if (SINGLE.has(p.name)) {
      if (seen.has(p.name)) duplicateProperty(p, 'kubernetes');
      seen.set(p.name, p);
    }
    if (readSourceProperty(p, corefilePath, source)) continue;
    switch (p.name) {
      case 'namespaces':
        // Several lines add up, as in CoreDNS.
        cfg.namespaces = new Set([...(cfg.namespaces ?? []), ...expectArgs(p, 1)]);
        break;
      case 'namespace_labels':
        cfg.namespaceLabels = selector(p);
        break;
      case 'labels':
        cfg.labels = selector(p);
        break;
      case 'pods': {
        const mode = expectArgs(p, 1, 1)[0] as string;
        if (mode !== 'disabled' && mode !== 'insecure' && mode !== 'verified') invalidArg(p, mode, 'expected disabled, insecure or verified');
        cfg.podMode = mode;
        break;
      }
      case 'endpoint_pod_names':
        expectArgs(p, 0, 0);
        cfg.endpointPodNames = true;
        break;
      case 'ttl':
        cfg.ttl = parseIntArg(expectArgs(p, 1, 1)[0] as string, argPosition(p, 0), { what: 'ttl', min: 0, max: MAX_TTL });
        break;
      case 'noendpoints':
        expectArgs(p, 0, 0);
        cfg.noEndpoints = true;
        break;
      case 'fallthrough':
        cfg.fallthrough = zoneArgs(p, p.args);
        break;
      case 'ignore': {
        // CoreDNS reads only the first word.
        const what = expectArgs(p, 1)[0] as string;
        if (what !== 'empty_service') invalidArg(p, what, 'the only thing kubernetes can ignore is empty_service');
        cfg.ignoreEmptyService = true;
        break;
      }
      case 'startup_timeout':
        cfg.startupTimeoutMs = parseDuration(expectArgs(p, 1, 1)[0] as string, argPosition(p, 0), 'startup_timeout');
        break;
      case 'apiserver_qps': {
        // A number with a fraction allowed, as client-go's QPS (0.5: one request every 2 s).
        const text = expectArgs(p, 1, 1)[0] as string;
        const qps = Number(text);
        if (text.trim() === '' || !Number.isFinite(qps)) throw CorefileError.at(argPosition(p, 0), `invalid apiserver_qps: "${text}" is not a number`);
        if (qps < 0) throw CorefileError.at(argPosition(p, 0), `apiserver_qps must be >= 0, got ${text}`);
        limits.qps = qps;
        break;
      }
      case 'zonal':
        expectArgs(p, 0, 0);
        cfg.zonal = true;
        break;
      case 'apiserver_burst':
        limits.burst = parseIntArg(expectArgs(p, 1, 1)[0] as string, argPosition(p, 0), { what: p.name, min: 0 });
        break;
      case 'apiserver_max_inflight':
        limits.maxInflight = parseIntArg(expectArgs(p, 1, 1)[0] as string, argPosition(p, 0), { what: p.name, min: 0 });
        break;
      case 'multicluster':
        cfg.multiclusterZones = zoneArgs(p, p.args);
        for (const z of cfg.multiclusterZones) {
          // The zone's answers come from this plugin only: it must be one of its zones.
          if (!zones.includes(z)) throw CorefileError.at(p, `kubernetes is not authoritative for the multicluster zone ${z} (add it to the zones of the kubernetes line)`);
        }
        break;
      default: {
        const removed = removedOption('kubernetes', p.name);
        if (removed) throw CorefileError.at(p, `unknown property "${p.name}" in kubernetes block: ${removed}`);
        unknownProperty(p, 'kubernetes');
      }
    }
  }
  const zonal = seen.get('zonal');
  if (cfg.zonal && cfg.noEndpoints && zonal) {
    // Zone-scoped names are made of endpoints: with none read, every one of them would be wrong.
    throw CorefileError.at(zonal, 'zonal needs the endpoints, which noendpoints turns off; remove one of the two');
  }
  if (cfg.namespaces && cfg.namespaceLabels) {
    throw CorefileError.at(d, 'namespaces and namespace_labels cannot both be set');
  }
  const named = namedSource(source);
  if (named !== undefined) cfg.source = named;
  else if (clusterDir !== undefined) cfg.source = { kind: 'directory', dir: resolve(clusterDir) };
  else cfg.source = apiSource(source);
  // The limits are the API client's: a manifest directory makes no requests to limit.
  if (cfg.source.kind === 'api' && (limits.qps > 0 || limits.burst > 0 || limits.maxInflight > 0)) cfg.source.limits = limits;
  return cfg;
}

/** The source properties of a block (kubernetes, workloads): where cluster objects are read from. */
export interface SourceProperties {
  endpoint?: string;
  tls?: { cert: string; key: string; ca: string };
  kubeconfig?: { path: string; context?: string };
  manifests?: string;
  /** Each property's line, for errors. */
  lines: Map<string, Directive>;
}

/**
 * Reads `p` into `props` when it is a source property (`endpoint URL`, `tls CERT KEY CACERT`,
 * `kubeconfig KUBECONFIG [CONTEXT]`, `manifests DIR`); false when it is none of them. Paths
 * resolve against the Corefile's folder. Duplicates are the caller's to refuse.
 */
export function readSourceProperty(p: Directive, corefilePath: string, props: SourceProperties): boolean {
  switch (p.name) {
    case 'endpoint': {
      // CoreDNS takes several but only ever talks to the first.
      const url = expectArgs(p, 1)[0] as string;
      if (!/^https?:\/\//.test(url)) invalidArg(p, url, 'expected an http:// or https:// URL');
      props.endpoint = url;
      break;
    }
    case 'tls': {
      const [cert, key, ca] = expectArgs(p, 3, 3) as [string, string, string];
      props.tls = { cert: corefileRelative(cert, corefilePath), key: corefileRelative(key, corefilePath), ca: corefileRelative(ca, corefilePath) };
      break;
    }
    case 'kubeconfig': {
      const [path, context] = expectArgs(p, 1, 2) as [string, string | undefined];
      props.kubeconfig = context === undefined ? { path: corefileRelative(path, corefilePath) } : { path: corefileRelative(path, corefilePath), context };
      break;
    }
    case 'manifests':
      props.manifests = corefileRelative(expectArgs(p, 1, 1)[0] as string, corefilePath);
      break;
    default:
      return false;
  }
  props.lines.set(p.name, p);
  return true;
}

/**
 * The source the properties name: the manifests directory, or the API when endpoint or
 * kubeconfig is given; undefined when they name none. Manifests with an API property is an
 * error at the API property's line (one source per block).
 */
export function namedSource(props: SourceProperties): SourceSpec | undefined {
  if (props.manifests !== undefined) {
    const clash = ['endpoint', 'tls', 'kubeconfig'].find((n) => props.lines.has(n));
    if (clash) throw CorefileError.at(props.lines.get(clash) as Directive, `${clash} cannot be combined with manifests (one source per block)`);
    return { kind: 'directory', dir: props.manifests };
  }
  if (props.endpoint === undefined && props.kubeconfig === undefined) return undefined;
  return apiSource(props);
}

/** The API source of the properties; with neither endpoint nor kubeconfig, the in-cluster service account. */
export function apiSource(props: SourceProperties): SourceSpec {
  const { endpoint, tls, kubeconfig } = props;
  return { kind: 'api', resyncMs: 0, ...(endpoint !== undefined ? { endpoint } : {}), ...(tls ? { tls } : {}), ...(kubeconfig ? { kubeconfig } : {}) };
}
