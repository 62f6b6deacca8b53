// The reconcile loop's backend for a Kubernetes API server: reads the DNS resource, the Nodes and
// the owned objects; writes the objects with server-side apply (field manager "kdns-operator")
// and the status through the status subresource; wakes the loop on watch events.

import type { KubeConfig } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { DNSResource, DNSStatus } from '../cluster/dnsresource.js';
import { loadKubeConfig } from '../cluster/kubeapi.js';
import type { Node, Service } from '../cluster/types.js';
import { DNS_NAME, LEGACY_NODE_RESOLVER_CONTAINER, NODE_RESOLVER_NAME } from './objects.js';
import type { ConfigMap, DaemonSet, OwnedObject } from './objects.js';
import type { Backend, Inputs } from './reconcile.js';
import { sleep } from './reconcile.js';
import type { CurrentObjects } from './render.js';

export const FIELD_MANAGER = 'kdns-operator';
/** On every applied object: the hash of what was applied, so an unchanged object is not re-sent. */
export const APPLIED_HASH_ANNOTATION = 'dns.kdns.io/applied-hash';
const DNS_PATH = '/apis/operator.openshift.io/v1/dnses';

type ClientModule = typeof import('@kubernetes/client-node');

export interface ApiOptions {
  kubeconfig?: string;
  context?: string;
  namespace: string;
  log: (line: string) => void;
}

interface Response {
  status: number;
  body: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

function hashOf(o: unknown): string {
  return createHash('sha256').update(JSON.stringify(o)).digest('hex').slice(0, 32);
}

function pathOf(o: OwnedObject, namespace: string): string {
  const group = o.kind === 'DaemonSet' ? '/apis/apps/v1' : '/api/v1';
  const plural = { ConfigMap: 'configmaps', DaemonSet: 'daemonsets', Service: 'services' }[o.kind];
  return `${group}/namespaces/${namespace}/${plural}/${o.metadata.name}`;
}

export class ApiBackend implements Backend {
  readonly name: string;

  private constructor(
    private readonly client: ClientModule,
    readonly kc: KubeConfig,
    private readonly o: ApiOptions,
  ) {
    this.name = `API ${kc.getCurrentCluster()?.server ?? '?'}`;
  }

  static async connect(o: ApiOptions): Promise<ApiBackend> {
    const client = await import('@kubernetes/client-node');
    const kc = await loadKubeConfig({ ...(o.kubeconfig !== undefined ? { kubeconfig: { path: o.kubeconfig, ...(o.context !== undefined ? { context: o.context } : {}) } } : {}), resyncMs: 0 });
    return new ApiBackend(client, kc, o);
  }

  private async request(method: 'GET' | 'PATCH', path: string, body?: unknown, contentType?: string): Promise<Response> {
    const server = this.kc.getCurrentCluster()?.server.replace(/\/+$/, '');
    const ctx = new this.client.RequestContext(`${server}${path}`, this.client.HttpMethod[method]);
    ctx.setHeaderParam('Accept', 'application/json');
    if (body !== undefined) {
      ctx.setHeaderParam('Content-Type', contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(body));
    }
    await this.kc.applySecurityAuthentication(ctx);
    const res = await new this.client.IsomorphicFetchHttpLibrary().send(ctx).toPromise();
    return { status: res.httpStatusCode, body: await res.body.text() };
  }

  /** GET that maps 404 to undefined and other failures to ApiError. */
  private async get<T>(path: string): Promise<T | undefined> {
    const r = await this.request('GET', path);
    if (r.status === 404) return undefined;
    if (r.status !== 200) throw new ApiError(r.status, `GET ${path}: HTTP ${r.status}: ${r.body.slice(0, 200)}`);
    return JSON.parse(r.body) as T;
  }

  async read(): Promise<Inputs> {
    const ns = this.o.namespace;
    const dns = await this.get<DNSResource>(`${DNS_PATH}/default`);
    const nodeList = await this.get<{ items: Node[] }>('/api/v1/nodes');
    const typed = <T extends { kind: string; apiVersion: string }>(o: T | undefined, kind: string, apiVersion: string): T | undefined => (o ? { ...o, kind, apiVersion } : undefined);
    const current: CurrentObjects = {};
    const cm = typed(await this.get<ConfigMap>(`/api/v1/namespaces/${ns}/configmaps/${DNS_NAME}`), 'ConfigMap', 'v1');
    const svc = typed(await this.get<Service>(`/api/v1/namespaces/${ns}/services/${DNS_NAME}`), 'Service', 'v1');
    const ds = typed(await this.get<DaemonSet>(`/apis/apps/v1/namespaces/${ns}/daemonsets/${DNS_NAME}`), 'DaemonSet', 'apps/v1');
    const nr = typed(await this.get<DaemonSet>(`/apis/apps/v1/namespaces/${ns}/daemonsets/${NODE_RESOLVER_NAME}`), 'DaemonSet', 'apps/v1');
    if (cm) current.configMap = cm;
    if (svc) current.service = svc;
    if (ds) current.dnsDaemonSet = ds;
    if (nr) current.nodeResolverDaemonSet = nr;
    return {
      ...(dns ? { dns } : {}),
      nodes: (nodeList?.items ?? []).map((n) => ({ ...n, kind: 'Node' as const, apiVersion: 'v1' })),
      current,
      problems: [],
    };
  }

  async apply(objects: readonly OwnedObject[], current: CurrentObjects): Promise<string[]> {
    const live: Record<string, OwnedObject | undefined> = {
      [`ConfigMap/${DNS_NAME}`]: current.configMap,
      [`Service/${DNS_NAME}`]: current.service,
      [`DaemonSet/${DNS_NAME}`]: current.dnsDaemonSet,
      [`DaemonSet/${NODE_RESOLVER_NAME}`]: current.nodeResolverDaemonSet,
    };
    const written: string[] = [];
    if (current.dnsDaemonSet) await this.removeLegacyContainer(current.dnsDaemonSet);
    for (const o of objects) {
      const id = `${o.kind}/${o.metadata.name}`;
      const hash = hashOf(o);
      if (live[id]?.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === hash) continue;
      const body = { ...o, metadata: { ...o.metadata, annotations: { ...(o.metadata.annotations ?? {}), [APPLIED_HASH_ANNOTATION]: hash } } };
      const path = `${pathOf(o, this.o.namespace)}?fieldManager=${FIELD_MANAGER}&force=true`;
      const r = await this.request('PATCH', path, body, 'application/apply-patch+yaml');
      if (r.status !== 200 && r.status !== 201) throw new ApiError(r.status, `apply ${id}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
      written.push(id);
    }
    return written;
  }

  /**
   * Server-side apply leaves fields another manager owns, so the container older OpenShift
   * releases put into dns-default survives an apply; it is removed by name with a JSON patch.
   */
  private async removeLegacyContainer(ds: DaemonSet): Promise<void> {
    const i = ds.spec.template.spec.containers.findIndex((c) => c.name === LEGACY_NODE_RESOLVER_CONTAINER);
    if (i < 0) return;
    const path = `/spec/template/spec/containers/${i}`;
    const patch = [
      { op: 'test', path: `${path}/name`, value: LEGACY_NODE_RESOLVER_CONTAINER },
      { op: 'remove', path },
    ];
    const r = await this.request('PATCH', `${pathOf(ds, this.o.namespace)}?fieldManager=${FIELD_MANAGER}`, patch, 'application/json-patch+json');
    if (r.status !== 200) throw new ApiError(r.status, `remove container ${LEGACY_NODE_RESOLVER_CONTAINER}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
    this.o.log(`removed container ${LEGACY_NODE_RESOLVER_CONTAINER} from DaemonSet ${ds.metadata.name}`);
  }

  async writeStatus(dns: DNSResource, status: DNSStatus): Promise<boolean> {
    if (isDeepStrictEqual(dns.status, status)) return false;
    const r = await this.request('PATCH', `${DNS_PATH}/${dns.metadata.name}/status`, { status }, 'application/merge-patch+json');
    if (r.status !== 200) throw new ApiError(r.status, `update DNS status: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
    return true;
  }

  /** Paths whose changes call for a pass: the DNS resource, Nodes, and the DaemonSets (for status). */
  watchPaths(): string[] {
    return [DNS_PATH, '/api/v1/nodes', `/apis/apps/v1/namespaces/${this.o.namespace}/daemonsets`];
  }

  /** One watch; resolves when it ends, calling `onEvent` for each event. */
  async watchOnce(path: string, onEvent: () => void, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const w = new this.client.Watch(this.kc);
    let controller: AbortController | undefined;
    const onAbort = (): void => controller?.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await new Promise<void>((resolve) => {
        w.watch(path, { allowWatchBookmarks: false, timeoutSeconds: 300 }, (type) => type !== 'BOOKMARK' && onEvent(), () => resolve()).then(
          (c) => {
            controller = c;
            if (signal.aborted) c.abort();
          },
          () => resolve(),
        );
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/** Wake-ups from watches on the DNS resource, Nodes and DaemonSets, re-established when they end. */
export async function* watchApi(api: ApiBackend, signal: AbortSignal, debounceMs = 200): AsyncGenerator<void> {
  let dirty = false;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const onEvent = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      dirty = true;
      wake?.();
    }, debounceMs);
  };
  const keepWatching = async (path: string): Promise<void> => {
    while (!signal.aborted) {
      await api.watchOnce(path, onEvent, signal);
      // A watch that ended (timeout, dropped connection) is re-opened after a short pause.
      await sleep(1000, signal);
    }
  };
  const watchers = api.watchPaths().map((p) => keepWatching(p));
  const onAbort = (): void => wake?.();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    while (!signal.aborted) {
      if (!dirty) await new Promise<void>((resolve) => (wake = resolve));
      if (signal.aborted) break;
      dirty = false;
      yield;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    clearTimeout(timer);
    await Promise.all(watchers);
  }
}
