// Which Kubernetes objects kdns reads, and whether one is well-formed enough to read: the kinds
// (by apiVersion) and, for each, shape checks of the fields DNS and the operator rely on, with
// problems worded the way the API server words them. Pure: a value in, the object or its
// problems out.

import { isIP } from 'node:net';
import type { ClusterObject } from './types.js';

/** A step of a field path: a key, or an index in a list. */
export type Segment = string | number;

/** What is wrong, and where in the object (so a reader of YAML can name the line). */
export interface Problem {
  path: Segment[];
  message: string;
}

/** Which apiVersions carry each kind; the same kind name in another group (Knative `Service`) is not ours. */
const KNOWN_KINDS: Record<string, readonly string[]> = {
  Namespace: ['v1'],
  Service: ['v1'],
  Endpoints: ['v1'],
  Pod: ['v1'],
  Node: ['v1'],
  EndpointSlice: ['discovery.k8s.io/v1', 'discovery.k8s.io/v1beta1'],
  ServiceImport: ['multicluster.x-k8s.io/v1alpha1'],
};

/** Every kind a manifest directory is read for (a reader that wants few ignores the rest). */
export const MANIFEST_KINDS: readonly string[] = Object.keys(KNOWN_KINDS);

const CLUSTER_SCOPED = new Set(['Namespace', 'Node']);

/**
 * One value → the object kdns reads, the problems that keep it from being read (paths relative
 * to the value), or undefined for a kind kdns does not read. A namespaced object without a
 * namespace gets "default" and a cluster-scoped one loses its namespace, in place.
 */
export function checkObject(value: unknown): ClusterObject | Problem[] | undefined {
  if (!isRecord(value)) return [{ path: [], message: 'expected a Kubernetes object (a mapping with apiVersion and kind)' }];
  const kind = value['kind'];
  const apiVersion = value['apiVersion'];
  if (typeof kind !== 'string' || kind === '') return [{ path: ['kind'], message: 'kind: Required value: every object needs a kind' }];
  if (typeof apiVersion !== 'string' || apiVersion === '') return [{ path: ['apiVersion'], message: `${kind}: apiVersion: Required value` }];
  // hasOwn: a kind such as "constructor" must not find Object.prototype's members.
  if (!Object.hasOwn(KNOWN_KINDS, kind) || !KNOWN_KINDS[kind]?.includes(apiVersion)) return undefined;
  const problems: Problem[] = [];
  const check = new Checker(value, problems);
  check.meta(!CLUSTER_SCOPED.has(kind));
  SPEC_CHECKS[kind]?.(check);
  if (problems.length === 0) return value as unknown as ClusterObject;
  const who = describe(kind, value);
  return problems.map((p) => ({ path: p.path, message: `${who}: ${p.message}` }));
}

function describe(kind: string, obj: Record<string, unknown>): string {
  const meta = obj['metadata'];
  if (!isRecord(meta) || typeof meta['name'] !== 'string') return kind;
  return typeof meta['namespace'] === 'string' ? `${kind} ${meta['namespace']}/${meta['name']}` : `${kind} ${meta['name']}`;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pathText(path: Segment[]): string {
  let s = '';
  for (const seg of path) s += typeof seg === 'number' ? `[${seg}]` : s === '' ? seg : `.${seg}`;
  return s;
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
}

/**
 * Shape checks for the fields kdns reads, reported the way the API server words them. Only
 * what DNS and the operator rely on is checked: other fields pass through untouched so that
 * pod validation (poddns) sees them as written.
 */
class Checker {
  constructor(
    private readonly root: Record<string, unknown>,
    private readonly problems: Problem[],
  ) {}

  get(path: Segment[]): unknown {
    let v: unknown = this.root;
    for (const seg of path) {
      if (typeof seg === 'number') v = Array.isArray(v) ? v[seg] : undefined;
      else v = isRecord(v) ? v[seg] : undefined;
    }
    return v;
  }

  fail(path: Segment[], value: unknown, detail: string): void {
    const shown = value === undefined ? '' : ` ${show(value)}`;
    this.problems.push({ path, message: `${pathText(path)}: Invalid value:${shown}: ${detail}` });
  }

  require(path: Segment[], detail = ''): void {
    this.problems.push({ path, message: `${pathText(path)}: Required value${detail ? `: ${detail}` : ''}` });
  }

  /** Present and an object (or absent when optional). Returns whether it is an object. */
  object(path: Segment[], optional = true): boolean {
    const v = this.get(path);
    if (v === undefined || v === null) {
      if (!optional) this.require(path);
      return false;
    }
    if (!isRecord(v)) {
      this.fail(path, v, 'must be an object');
      return false;
    }
    return true;
  }

  /** Each element of an optional list: calls `each` with the element's path. */
  list(path: Segment[], each?: (at: Segment[]) => void): void {
    const v = this.get(path);
    if (v === undefined || v === null) return;
    if (!Array.isArray(v)) {
      this.fail(path, v, 'must be a list');
      return;
    }
    if (each) for (let i = 0; i < v.length; i++) each([...path, i]);
  }

  string(path: Segment[], optional = true): void {
    const v = this.get(path);
    if (v === undefined || v === null) {
      if (!optional) this.require(path);
      return;
    }
    if (typeof v !== 'string') this.fail(path, v, 'must be a string');
  }

  boolean(path: Segment[]): void {
    const v = this.get(path);
    if (v !== undefined && v !== null && typeof v !== 'boolean') this.fail(path, v, 'must be true or false');
  }

  oneOf(path: Segment[], allowed: readonly string[], optional = true): void {
    const v = this.get(path);
    if (v === undefined || v === null || v === '') {
      if (!optional) this.require(path);
      return;
    }
    if (typeof v !== 'string' || !allowed.includes(v)) {
      this.problems.push({
        path,
        message: `${pathText(path)}: Unsupported value: ${show(v)}: supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
      });
    }
  }

  port(path: Segment[], optional: boolean): void {
    const v = this.get(path);
    if (v === undefined || v === null) {
      if (!optional) this.require(path);
      return;
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) {
      this.fail(path, v, 'must be between 1 and 65535, inclusive');
    }
  }

  ip(path: Segment[], optional = true, extra: readonly string[] = []): void {
    const v = this.get(path);
    if (v === undefined || v === null) {
      if (!optional) this.require(path);
      return;
    }
    if (typeof v !== 'string' || (!extra.includes(v) && isIP(v) === 0)) {
      this.fail(path, v, 'must be a valid IP address');
    }
  }

  stringMap(path: Segment[]): void {
    if (!this.object(path)) return;
    const m = this.get(path) as Record<string, unknown>;
    for (const [k, v] of Object.entries(m)) {
      if (typeof v !== 'string') this.fail([...path, k], v, 'must be a string');
    }
  }

  /** metadata; namespaced objects without a namespace land in "default", as `kubectl apply` does. */
  meta(namespaced: boolean): void {
    if (!this.object(['metadata'], false)) return;
    const meta = this.get(['metadata']) as Record<string, unknown>;
    const name = meta['name'];
    if (typeof name !== 'string' || name === '') {
      if (name === undefined || name === '') this.require(['metadata', 'name'], 'name or generateName is required');
      else this.fail(['metadata', 'name'], name, 'must be a string');
    }
    this.string(['metadata', 'namespace']);
    if (namespaced && (meta['namespace'] === undefined || meta['namespace'] === '')) meta['namespace'] = 'default';
    if (!namespaced) delete meta['namespace'];
    this.stringMap(['metadata', 'labels']);
    this.stringMap(['metadata', 'annotations']);
  }

  ports(path: Segment[], servicePort: boolean): void {
    this.list(path, (at) => {
      if (!this.object(at, false)) return;
      this.string([...at, 'name']);
      this.oneOf([...at, 'protocol'], PROTOCOLS);
      this.port([...at, 'port'], !servicePort);
    });
  }
}

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;

const SPEC_CHECKS: Record<string, (c: Checker) => void> = {
  Service(c) {
    if (!c.object(['spec'], false)) return;
    c.oneOf(['spec', 'type'], ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName']);
    c.ip(['spec', 'clusterIP'], true, ['None', '']);
    c.list(['spec', 'clusterIPs'], (at) => c.ip(at, false, ['None']));
    c.list(['spec', 'ipFamilies'], (at) => c.oneOf(at, ['IPv4', 'IPv6'], false));
    c.string(['spec', 'externalName']);
    if (c.get(['spec', 'type']) === 'ExternalName' && !c.get(['spec', 'externalName'])) {
      c.require(['spec', 'externalName'], 'an ExternalName service needs one');
    }
    c.ports(['spec', 'ports'], true);
    c.boolean(['spec', 'publishNotReadyAddresses']);
    c.list(['spec', 'externalIPs'], (at) => c.ip(at, false));
    if (c.object(['status']) && c.object(['status', 'loadBalancer'])) {
      c.list(['status', 'loadBalancer', 'ingress'], (at) => {
        if (!c.object(at, false)) return;
        c.ip([...at, 'ip']);
        c.string([...at, 'hostname']);
      });
    }
  },
  ServiceImport(c) {
    if (!c.object(['spec'])) return;
    c.oneOf(['spec', 'type'], ['ClusterSetIP', 'Headless']);
    c.list(['spec', 'ips'], (at) => c.ip(at, false));
    c.ports(['spec', 'ports'], true);
  },
  EndpointSlice(c) {
    c.oneOf(['addressType'], ['IPv4', 'IPv6', 'FQDN'], false);
    const family = c.get(['addressType']);
    c.list(['endpoints'], (at) => {
      if (!c.object(at, false)) return;
      const addrs = [...at, 'addresses'];
      if (!Array.isArray(c.get(addrs))) c.require(addrs);
      else if (family === 'FQDN') c.list(addrs, (a) => c.string(a, false));
      else c.list(addrs, (a) => c.ip(a, false));
      if (c.object([...at, 'conditions'])) {
        for (const cond of ['ready', 'serving', 'terminating']) c.boolean([...at, 'conditions', cond]);
      }
      c.string([...at, 'hostname']);
      c.string([...at, 'nodeName']);
      c.string([...at, 'zone']);
      c.object([...at, 'targetRef']);
    });
    c.ports(['ports'], false);
  },
  Endpoints(c) {
    c.list(['subsets'], (at) => {
      if (!c.object(at, false)) return;
      for (const group of ['addresses', 'notReadyAddresses']) {
        c.list([...at, group], (a) => {
          if (!c.object(a, false)) return;
          c.ip([...a, 'ip'], false);
          c.string([...a, 'hostname']);
          c.object([...a, 'targetRef']);
        });
      }
      c.ports([...at, 'ports'], false);
    });
  },
  Pod(c) {
    c.object(['spec']);
    if (!c.object(['status'])) return;
    c.string(['status', 'phase']);
    c.ip(['status', 'podIP'], true, ['']);
    c.list(['status', 'podIPs'], (at) => {
      if (c.object(at, false)) c.ip([...at, 'ip'], false);
    });
  },
  Node(c) {
    if (c.object(['spec'])) {
      c.boolean(['spec', 'unschedulable']);
      c.list(['spec', 'taints'], (at) => {
        if (!c.object(at, false)) return;
        c.string([...at, 'key'], false);
        c.string([...at, 'value']);
        c.oneOf([...at, 'effect'], ['NoSchedule', 'PreferNoSchedule', 'NoExecute'], false);
      });
    }
  },
};
