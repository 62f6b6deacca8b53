// The Kubernetes API source: list + watch per kind through @kubernetes/client-node (its
// KubeConfig for kubeconfig files, in-cluster service accounts and TLS; its Watch for the
// streaming protocol). One reflector per kind keeps the store current:
//
//   list (paged) → replace the kind in the store → watch from the list's resourceVersion
//   → events → on a dropped connection, watch again from the last version seen (backoff)
//   → on 410 Gone (history compacted), list again.
//
// client-node's own ListWatch keeps every full object in memory and stops on the first error;
// a cluster of 150,000 pods needs neither, hence this small loop over the same building blocks.

import './node20.js';
import { existsSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ClusterSource, SourceLog } from './source.js';
import { ClusterStore, type StoredKind } from './store.js';
import type { ClusterObject } from './types.js';

export interface KubeApiSpec {
  endpoint?: string;
  tls?: { cert: string; key: string; ca: string };
  kubeconfig?: { path: string; context?: string };
  /** Relist every so often even when watches are healthy (0 = never). */
  resyncMs: number;
}

export interface KubeApiNeeds {
  pods: boolean;
  endpoints: boolean;
  /** ServiceImports (the Multi-Cluster Services API), for `multicluster` zones. */
  multicluster?: boolean;
}

export interface ReflectorTiming {
  /** First retry delay after a failure; doubles up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** Page size of lists (client-go's default is 500). */
  pageSize: number;
  /** Server-side watch timeout range: each watch asks for a random value in it, so reconnects spread out. */
  watchTimeoutSeconds: [min: number, max: number];
}

export const DEFAULT_TIMING: ReflectorTiming = {
  initialBackoffMs: 800,
  maxBackoffMs: 30_000,
  pageSize: 500,
  watchTimeoutSeconds: [300, 600],
};

interface Resource {
  kind: StoredKind;
  apiVersion: string;
  path: string;
  /** Server-side filter (pods that finished are of no use to DNS). */
  fieldSelector?: string;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export function resourcesFor(needs: KubeApiNeeds): Resource[] {
  const list: Resource[] = [
    { kind: 'Namespace', apiVersion: 'v1', path: '/api/v1/namespaces' },
    { kind: 'Service', apiVersion: 'v1', path: '/api/v1/services' },
  ];
  if (needs.endpoints) list.push({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', path: '/apis/discovery.k8s.io/v1/endpointslices' });
  if (needs.multicluster) list.push({ kind: 'ServiceImport', apiVersion: 'multicluster.x-k8s.io/v1alpha1', path: '/apis/multicluster.x-k8s.io/v1alpha1/serviceimports' });
  if (needs.pods) {
    list.push({ kind: 'Pod', apiVersion: 'v1', path: '/api/v1/pods', fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown' });
  }
  return list;
}

/** A KubeConfig as CoreDNS builds one: kubeconfig file, or endpoint (+tls), or in-cluster. */
export async function loadKubeConfig(spec: KubeApiSpec): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (spec.kubeconfig) {
    if (!existsSync(spec.kubeconfig.path)) throw new Error(`kubeconfig ${spec.kubeconfig.path} does not exist`);
    kc.loadFromFile(spec.kubeconfig.path);
    if (spec.kubeconfig.context !== undefined) {
      if (!kc.getContextObject(spec.kubeconfig.context)) throw new Error(`kubeconfig ${spec.kubeconfig.path} has no context "${spec.kubeconfig.context}"`);
      kc.setCurrentContext(spec.kubeconfig.context);
    }
    if (spec.endpoint !== undefined) {
      const cluster = kc.getCurrentCluster();
      if (cluster) (cluster as { server: string }).server = spec.endpoint;
    }
  } else if (spec.endpoint !== undefined) {
    const tls = spec.tls;
    kc.loadFromClusterAndUser(
      // client-node refuses plain http unless told TLS is off: `endpoint http://…` (kubectl
      // proxy, a local API) has no TLS to verify.
      { name: 'kdns', server: spec.endpoint, skipTLSVerify: spec.endpoint.startsWith('http://'), ...(tls ? { caFile: tls.ca } : {}) },
      { name: 'kdns', ...(tls ? { certFile: tls.cert, keyFile: tls.key } : {}) },
    );
  } else {
    if (!process.env['KUBERNETES_SERVICE_HOST'] || !process.env['KUBERNETES_SERVICE_PORT']) {
      throw new Error('not running in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset): give endpoint, kubeconfig or manifests');
    }
    if (!existsSync(`${SERVICE_ACCOUNT_DIR}/token`)) throw new Error(`in-cluster config: ${SERVICE_ACCOUNT_DIR}/token does not exist`);
    kc.loadFromCluster();
  }
  if (!kc.getCurrentCluster()) throw new Error('kubeconfig has no current cluster');
  return kc;
}

class GoneError extends Error {
  constructor(what: string) {
    super(`${what}: 410 Gone (resource version too old)`);
  }
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface ListPage {
  items: Array<Record<string, unknown>>;
  resourceVersion: string;
  continueToken: string;
}

/** The reason a Status body gives, for error messages. */
function statusMessage(body: string): string {
  try {
    const s = JSON.parse(body) as { message?: unknown };
    return typeof s.message === 'string' ? s.message : body.slice(0, 200);
  } catch {
    return body.slice(0, 200);
  }
}

type ClientModule = typeof import('@kubernetes/client-node');

/** list + watch of one kind into the store. */
export class Reflector {
  private resourceVersion = '';
  private stopped = false;
  private abort?: AbortController;
  private backoffMs: number;
  private syncedOnce = false;
  private syncWaiters: Array<() => void> = [];
  private relistTimer?: NodeJS.Timeout;
  private wake?: () => void;
  private running?: Promise<void>;
  /** Counters for tests and logs. */
  readonly stats = { lists: 0, watches: 0, events: 0, gone: 0, failures: 0 };

  constructor(
    private readonly client: ClientModule,
    private readonly kc: KubeConfig,
    private readonly resource: Resource,
    private readonly store: ClusterStore,
    private readonly log: SourceLog,
    private readonly timing: ReflectorTiming,
    private readonly resyncMs: number,
  ) {
    this.backoffMs = timing.initialBackoffMs;
  }

  get synced(): boolean {
    return this.syncedOnce;
  }

  /** Starts the loop; resolves after the first complete list. */
  start(): Promise<void> {
    this.running ??= this.loop();
    return this.syncedOnce ? Promise.resolve() : new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.relistTimer) clearInterval(this.relistTimer);
    this.abort?.abort();
    this.wake?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    if (this.resyncMs > 0) {
      this.relistTimer = setInterval(() => {
        this.resourceVersion = ''; // next turn lists
        this.abort?.abort();
      }, this.resyncMs);
      this.relistTimer.unref();
    }
    while (!this.stopped) {
      try {
        if (this.resourceVersion === '') await this.list();
        await this.watch();
        this.backoffMs = this.timing.initialBackoffMs;
      } catch (e) {
        if (this.stopped) break;
        if (e instanceof GoneError) {
          this.stats.gone++;
          this.log.info(`${this.resource.path}: ${e.message}; listing again`);
          this.resourceVersion = '';
          continue;
        }
        this.stats.failures++;
        this.log.warn(`${this.resource.path}: ${(e as Error).message}; retrying in ${this.backoffMs} ms`);
        await this.sleep(this.backoffMs);
        this.backoffMs = Math.min(this.backoffMs * 2, this.timing.maxBackoffMs);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private url(params: Record<string, string>): string {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('no current cluster in kubeconfig');
    const u = new URL(cluster.server.replace(/\/+$/, '') + this.resource.path);
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    return u.toString();
  }

  private async fetchPage(continueToken: string): Promise<ListPage> {
    const params: Record<string, string> = { limit: String(this.timing.pageSize) };
    if (continueToken) params['continue'] = continueToken;
    if (this.resource.fieldSelector) params['fieldSelector'] = this.resource.fieldSelector;
    const ctx = new this.client.RequestContext(this.url(params), this.client.HttpMethod.GET);
    ctx.setHeaderParam('Accept', 'application/json');
    this.abort = new AbortController();
    ctx.setSignal(this.abort.signal);
    await this.kc.applySecurityAuthentication(ctx);
    const res = await new this.client.IsomorphicFetchHttpLibrary().send(ctx).toPromise();
    const body = await res.body.text();
    if (res.httpStatusCode === 410) throw new GoneError(`list ${this.resource.path}`);
    if (res.httpStatusCode !== 200) throw new HttpError(res.httpStatusCode, `list ${this.resource.path}: HTTP ${res.httpStatusCode}: ${statusMessage(body)}`);
    const parsed = JSON.parse(body) as { items?: unknown; metadata?: { resourceVersion?: unknown; continue?: unknown } };
    if (!Array.isArray(parsed.items)) throw new Error(`list ${this.resource.path}: response has no items`);
    return {
      items: parsed.items as Array<Record<string, unknown>>,
      resourceVersion: typeof parsed.metadata?.resourceVersion === 'string' ? parsed.metadata.resourceVersion : '',
      continueToken: typeof parsed.metadata?.continue === 'string' ? parsed.metadata.continue : '',
    };
  }

  /** A full list, page by page; the kind in the store becomes exactly what it returned. */
  private async list(): Promise<void> {
    const objects: ClusterObject[] = [];
    let token = '';
    let rv = '';
    do {
      const page = await this.fetchPage(token);
      for (const item of page.items) objects.push(this.typed(item));
      rv = page.resourceVersion;
      token = page.continueToken;
    } while (token !== '' && !this.stopped);
    if (this.stopped) return;
    this.stats.lists++;
    this.store.replaceKind(this.resource.kind, objects);
    this.resourceVersion = rv;
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  /** Lists leave kind and apiVersion off their items; the store needs them. */
  private typed(item: Record<string, unknown>): ClusterObject {
    item['kind'] = this.resource.kind;
    item['apiVersion'] = this.resource.apiVersion;
    const meta = item['metadata'];
    if (typeof meta !== 'object' || meta === null || typeof (meta as { name?: unknown }).name !== 'string') {
      throw new Error(`${this.resource.path}: object without metadata.name`);
    }
    return item as unknown as ClusterObject;
  }

  /** One watch request; resolves when the server ends it cleanly, rejects on errors and 410. */
  private async watch(): Promise<void> {
    const [lo, hi] = this.timing.watchTimeoutSeconds;
    const params: Record<string, string | boolean | number> = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: Math.floor(lo + Math.random() * (hi - lo + 1)),
    };
    if (this.resource.fieldSelector) params['fieldSelector'] = this.resource.fieldSelector;
    const w = new this.client.Watch(this.kc);
    this.stats.watches++;
    await new Promise<void>((resolve, reject) => {
      let gone = false;
      let failed: Error | undefined;
      const onEvent = (type: string, obj: unknown): void => {
        try {
          if (this.handleEvent(type, obj)) gone = true;
        } catch (e) {
          failed = e as Error;
        }
        if ((gone || failed) && this.abort) this.abort.abort();
      };
      const done = (err: unknown): void => {
        if (gone) return reject(new GoneError(`watch ${this.resource.path}`));
        if (failed) return reject(failed);
        if (this.stopped) return resolve();
        const status = (err as { statusCode?: number } | null)?.statusCode;
        // client-node ends a watch that was silent for 30 s this way: just watch again.
        if ((err as { name?: string } | null)?.name === 'TimeoutError') return resolve();
        if (status === 410) return reject(new GoneError(`watch ${this.resource.path}`));
        if (err) return reject(new Error(`watch ${this.resource.path}: ${(err as Error).message ?? String(err)}`));
        resolve();
      };
      w.watch(this.resource.path, params, onEvent, done).then(
        (controller) => {
          this.abort = controller;
          if (this.stopped) controller.abort();
        },
        (e: unknown) => reject(e as Error),
      );
    });
  }

  /** Applies one watch event; true when the server said our version is gone. */
  private handleEvent(type: string, obj: unknown): boolean {
    if (typeof obj !== 'object' || obj === null) return false;
    const o = obj as Record<string, unknown>;
    if (type === 'ERROR') {
      const code = (o as { code?: unknown }).code;
      if (code === 410) return true;
      throw new Error(`watch ${this.resource.path}: server error ${String(code)}: ${String((o as { message?: unknown }).message ?? '')}`);
    }
    const meta = o['metadata'] as { resourceVersion?: unknown; name?: unknown; namespace?: unknown } | undefined;
    const rv = typeof meta?.resourceVersion === 'string' ? meta.resourceVersion : undefined;
    this.stats.events++;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        this.store.upsert(this.typed(o), rv);
        break;
      case 'DELETED':
        if (typeof meta?.name === 'string') this.store.remove(this.resource.kind, typeof meta.namespace === 'string' ? meta.namespace : undefined, meta.name);
        break;
      case 'BOOKMARK':
        break;
      default:
        return false;
    }
    if (rv !== undefined) this.resourceVersion = rv;
    return false;
  }
}

export class KubeApiSource implements ClusterSource {
  readonly description: string;
  readonly reflectors: Reflector[];

  constructor(
    client: ClientModule,
    kc: KubeConfig,
    spec: KubeApiSpec,
    needs: KubeApiNeeds,
    readonly store: ClusterStore,
    log: SourceLog,
    timing: ReflectorTiming = DEFAULT_TIMING,
  ) {
    this.description = `Kubernetes API ${kc.getCurrentCluster()?.server ?? '?'}`;
    this.reflectors = resourcesFor(needs).map((r) => new Reflector(client, kc, r, store, log, timing, spec.resyncMs));
  }

  async start(): Promise<void> {
    await Promise.all(this.reflectors.map((r) => r.start()));
    this.store.markSynced();
  }

  async stop(): Promise<void> {
    await Promise.all(this.reflectors.map((r) => r.stop()));
  }
}

export async function createKubeApiSource(
  spec: KubeApiSpec,
  needs: KubeApiNeeds,
  store: ClusterStore = new ClusterStore(),
  log: SourceLog,
  timing: ReflectorTiming = DEFAULT_TIMING,
): Promise<KubeApiSource> {
  const kc = await loadKubeConfig(spec);
  const client = await import('@kubernetes/client-node');
  return new KubeApiSource(client, kc, spec, needs, store, log, timing);
}
