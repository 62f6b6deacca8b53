// The Kubernetes API source: list + watch per kind. One reflector per kind keeps the store current:
//
//   list (paged) → replace the kind in the store → watch from the list's resourceVersion
//   → events and bookmarks → on a dropped connection, watch again from the last version seen
//   (backoff, reset after a healthy period) → on 410 Gone (history compacted), list again.
//
// Every watch (this source's and the operator's) goes through watchStream, whose idle limit
// (2.5 min by default) outlasts the minute between an API server's bookmarks on a quiet kind.
//
// Lists and watches are plain GETs through node:https. What a request carries (TLS material,
// credentials) comes from an ApiAccess: kdns's own for `endpoint` and in-cluster, which need
// only files and the environment, and @kubernetes/client-node's KubeConfig for a kubeconfig
// file (exec plugins, auth providers, proxies). client-node is loaded only then: importing it
// costs about 40 MiB of memory, more than everything else a node cache holds.
//
// client-node's own ListWatch keeps every full object in memory and stops on the first error;
// a cluster of 150,000 pods needs neither, hence this small loop.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { nodeHttp } from '../node/http.js';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { isIPv6 } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiGate, hostOf, unlimitedGate, type Admission, type ApiLimits, type ApiRequestMetrics } from './apigate.js';
import type { ClusterSource, SourceLog } from './source.js';
import { ClusterStore, type StoredKind } from './store.js';
import type { ClusterObject } from './types.js';

export interface KubeApiSpec {
  endpoint?: string;
  tls?: { cert: string; key: string; ca: string };
  kubeconfig?: { path: string; context?: string };
  /** Relist every so often even when watches are healthy (0 = never). */
  resyncMs: number;
  /** Client-side limits on requests (`apiserver_qps`, `apiserver_burst`, `apiserver_max_inflight`); none when absent. */
  limits?: ApiLimits;
}

export interface KubeApiNeeds {
  pods: boolean;
  endpoints: boolean;
  /** ServiceImports (the Multi-Cluster Services API), for `multicluster` zones. */
  multicluster?: boolean;
  /** Pods and nothing else (who sent a query: the workloads plugin without a kubernetes plugin). */
  podsOnly?: boolean;
  /** Only the pods scheduled on this node (`spec.nodeName`): a node's cache watches its own. */
  nodeName?: string;
}

export interface ReflectorTiming {
  /** First retry delay after a failure; doubles up to maxBackoffMs. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** Page size of lists (client-go's default is 500). */
  pageSize: number;
  /** Server-side watch timeout range: each watch asks for a random value in it, so reconnects spread out. */
  watchTimeoutSeconds: [min: number, max: number];
  /**
   * A watch that sends nothing (no event, no bookmark) for this long is taken as dead and
   * resumed. client-node's own limit is 30 s, shorter than the minute between an API server's
   * bookmarks, so a quiet kind would reconnect every 30 s; this replaces it.
   */
  watchIdleTimeoutMs: number;
  /** A watch that stayed up this long resets the backoff (client-go: 2 minutes). */
  backoffResetMs: number;
}

export const DEFAULT_TIMING: ReflectorTiming = {
  initialBackoffMs: 800,
  maxBackoffMs: 30_000,
  pageSize: 500,
  watchTimeoutSeconds: [300, 600],
  watchIdleTimeoutMs: 150_000,
  backoffResetMs: 120_000,
};

/**
 * Retry delays that double from `initialMs` to `maxMs`, and start over once the thing retried
 * has been healthy for `resetAfterMs` (so a watch dropped once an hour does not wait 30 s).
 */
export class Backoff {
  private nextMs: number;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
    private readonly resetAfterMs: number,
  ) {
    this.nextMs = initialMs;
  }

  /** The delay before the next try, given how long the last try stayed healthy. */
  delay(healthyForMs: number): number {
    if (healthyForMs >= this.resetAfterMs) this.nextMs = this.initialMs;
    const d = this.nextMs;
    this.nextMs = Math.min(this.nextMs * 2, this.maxMs);
    return d;
  }

  reset(): void {
    this.nextMs = this.initialMs;
  }
}

export interface Resource {
  kind: StoredKind;
  apiVersion: string;
  path: string;
  /** Server-side filter (pods that finished are of no use to DNS). */
  fieldSelector?: string;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Pods that finished or are lost hold no address worth knowing. */
const LIVE_PODS = 'status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown';

export function resourcesFor(needs: KubeApiNeeds): Resource[] {
  // The API server filters by node, so each node's watch carries only that node's pods.
  const podSelector = needs.nodeName === undefined ? LIVE_PODS : `${LIVE_PODS},spec.nodeName=${needs.nodeName}`;
  const pods: Resource = { kind: 'Pod', apiVersion: 'v1', path: '/api/v1/pods', fieldSelector: podSelector };
  if (needs.podsOnly) return [pods];
  const list: Resource[] = [
    { kind: 'Namespace', apiVersion: 'v1', path: '/api/v1/namespaces' },
    { kind: 'Service', apiVersion: 'v1', path: '/api/v1/services' },
  ];
  if (needs.endpoints) list.push({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', path: '/apis/discovery.k8s.io/v1/endpointslices' });
  if (needs.multicluster) list.push({ kind: 'ServiceImport', apiVersion: 'multicluster.x-k8s.io/v1alpha1', path: '/apis/multicluster.x-k8s.io/v1alpha1/serviceimports' });
  if (needs.pods) list.push(pods);
  return list;
}

/**
 * Whether this Node.js can load @kubernetes/client-node 2: its HTTP client, undici 8, uses
 * built-ins that arrived by 22.19 (zlib's zstd, worker_threads' markAsUncloneable,
 * Promise.withResolvers) and declares `node >= 22.19`.
 */
export function runsClientNode(nodeVersion: string): boolean {
  const [major = 0, minor = 0] = nodeVersion.replace(/^v/, '').split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 19);
}

/** client-node, loaded only for a kubeconfig (and by the operator and the webhook); a clear error on a Node.js too old for it. */
export async function importClientNode(): Promise<ClientModule> {
  if (!runsClientNode(process.versions.node)) {
    throw new Error(`@kubernetes/client-node (which reads kubeconfig files, and serves the operator and the webhook) needs Node.js 22.19 or later for its HTTP client; this is Node.js ${process.version}`);
  }
  return import('@kubernetes/client-node');
}

/** A KubeConfig as CoreDNS builds one: kubeconfig file, or endpoint (+tls), or in-cluster. */
export async function loadKubeConfig(spec: KubeApiSpec): Promise<KubeConfig> {
  const { KubeConfig } = await importClientNode();
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

/**
 * How requests reach an API server: its address, and what each request carries. Filled in at
 * every request, so rotated files (a service account token, a renewed client certificate) are
 * read when they change.
 */
export interface ApiAccess {
  /** The API server's base URL: https://10.96.0.1:443 */
  readonly server: string;
  /** Sets the TLS options (ca, cert, key) and headers (Authorization) of one request. */
  authorize(opts: RequestOptions): Promise<void>;
}

/** A file's bytes, or an error naming what it is for and where it should be. */
async function readCredential(what: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (e) {
    throw new Error(`${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/**
 * Several credentials read at once; when some are missing, the error names the first of them in
 * the order given (not whichever read failed first), so the message is the same every time.
 */
async function readCredentials(files: ReadonlyArray<readonly [what: string, path: string]>): Promise<Buffer[]> {
  const settled = await Promise.allSettled(files.map(([what, path]) => readCredential(what, path)));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<Buffer>).value);
}

/** `endpoint URL [tls CERT KEY CA]`: the address as given, a client certificate when named (the system's CAs otherwise verify the server). */
export function endpointAccess(endpoint: string, tls?: { cert: string; key: string; ca: string }): ApiAccess {
  return {
    server: endpoint,
    authorize: async (opts) => {
      if (!tls) return;
      [opts.cert, opts.key, opts.ca] = await readCredentials([
        ['tls certificate', tls.cert],
        ['tls key', tls.key],
        ['tls CA', tls.ca],
      ]);
    },
  };
}

/**
 * A pod's own access, as client-go's in-cluster configuration: https://$KUBERNETES_SERVICE_HOST:
 * $KUBERNETES_SERVICE_PORT, the cluster's CA and the service account token mounted in `dir`.
 * The token is read at every request: the kubelet replaces a projected token well before it
 * expires (about hourly), and lists and watches are minutes apart.
 */
export function inClusterAccess(env: NodeJS.ProcessEnv = process.env, dir: string = SERVICE_ACCOUNT_DIR): ApiAccess {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) {
    throw new Error('not running in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset): give endpoint, kubeconfig or manifests');
  }
  if (!existsSync(`${dir}/token`)) throw new Error(`in-cluster config: ${dir}/token does not exist`);
  return {
    server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    authorize: async (opts) => {
      const [ca, token] = await readCredentials([
        ['in-cluster CA', `${dir}/ca.crt`],
        ['in-cluster token', `${dir}/token`],
      ]);
      opts.ca = ca;
      opts.headers = { ...opts.headers, Authorization: `Bearer ${token.toString('utf8').trim()}` };
    },
  };
}

/** A kubeconfig's access, through client-node (its current cluster, TLS, credentials, proxy). */
export function kubeConfigAccess(kc: KubeConfig): ApiAccess {
  return {
    get server(): string {
      const cluster = kc.getCurrentCluster();
      if (!cluster) throw new Error('no current cluster in kubeconfig');
      return cluster.server;
    },
    authorize: (opts) => kc.applyToHTTPSOptions(opts),
  };
}

/** The access a source spec names: a kubeconfig through client-node; an endpoint, or the pod's own service account, without it. */
export async function apiAccess(spec: KubeApiSpec, env: NodeJS.ProcessEnv = process.env): Promise<ApiAccess> {
  if (spec.kubeconfig) return kubeConfigAccess(await loadKubeConfig(spec));
  if (spec.endpoint !== undefined) return endpointAccess(spec.endpoint, spec.tls);
  return inClusterAccess(env);
}

export class GoneError extends Error {
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
  private readonly backoff: Backoff;
  /** How long the last watch stayed open (a long one resets the backoff). */
  private healthyForMs = 0;
  private syncedOnce = false;
  private syncWaiters: Array<() => void> = [];
  private relistTimer?: NodeJS.Timeout;
  private wake?: () => void;
  private running?: Promise<void>;
  /** Counters for tests and logs. */
  readonly stats = { lists: 0, watches: 0, events: 0, gone: 0, failures: 0, lastBackoffMs: 0, idleTimeouts: 0 };

  constructor(
    private readonly access: ApiAccess,
    private readonly resource: Resource,
    private readonly store: ClusterStore,
    private readonly log: SourceLog,
    private readonly timing: ReflectorTiming,
    private readonly resyncMs: number,
    private readonly gate: ApiGate = unlimitedGate(),
  ) {
    this.backoff = new Backoff(timing.initialBackoffMs, timing.maxBackoffMs, timing.backoffResetMs);
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
        this.healthyForMs = 0;
        if (this.resourceVersion === '') await this.list();
        await this.watch();
        this.backoff.reset();
      } catch (e) {
        if (this.stopped) break;
        if (e instanceof GoneError) {
          this.stats.gone++;
          this.log.info(`${this.resource.path}: ${e.message}; listing again`);
          this.resourceVersion = '';
          continue;
        }
        this.stats.failures++;
        const delay = this.backoff.delay(this.healthyForMs);
        this.stats.lastBackoffMs = delay;
        this.log.warn(`${this.resource.path}: ${(e as Error).message}; retrying in ${delay} ms`);
        await this.sleep(delay);
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

  private async fetchPage(continueToken: string): Promise<ListPage> {
    const url = apiUrl(this.access, this.resource.path);
    url.searchParams.set('limit', String(this.timing.pageSize));
    if (continueToken) url.searchParams.set('continue', continueToken);
    if (this.resource.fieldSelector) url.searchParams.set('fieldSelector', this.resource.fieldSelector);
    this.abort = new AbortController();
    const { res, admission } = await apiRequest(this.access, url, this.abort.signal, this.gate);
    // The page holds its in-flight slot until its body is read: that is the API server's work.
    const body = await readAll(res).finally(() => admission.finish(String(res.statusCode ?? '<error>')));
    if (res.statusCode === 410) throw new GoneError(`list ${this.resource.path}`);
    if (res.statusCode !== 200) throw new HttpError(res.statusCode ?? 0, `list ${this.resource.path}: HTTP ${res.statusCode ?? '?'}: ${statusMessage(body)}`);
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
    this.stats.watches++;
    const started = Date.now();
    await watchApi(this.access, this.resource.path, params, this.timing.watchIdleTimeoutMs, (type, obj) => this.handleEvent(type, obj), {
      onController: (c) => {
        this.abort = c;
        if (this.stopped) c.abort();
      },
      stopped: () => this.stopped,
      onIdle: () => this.stats.idleTimeouts++,
      gate: this.gate,
    }).finally(() => {
      this.healthyForMs = Date.now() - started;
    });
  }

  /** Applies one watch event (ERROR events are handled by watchStream). */
  private handleEvent(type: string, obj: unknown): void {
    if (typeof obj !== 'object' || obj === null) return;
    const o = obj as Record<string, unknown>;
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
        return;
    }
    if (rv !== undefined) this.resourceVersion = rv;
  }
}

export interface WatchHooks {
  /** Receives the request's AbortController as soon as the request is sent (to stop it). */
  onController: (c: AbortController) => void;
  /** True when the caller stopped on purpose: the end is then not an error. */
  stopped: () => boolean;
  /** Called when the watch ended for want of any byte within the idle limit. */
  onIdle?: () => void;
  /** The client's limits and metrics; an established watch gives its in-flight slot back. */
  gate?: ApiGate;
}

/** The error a watch ends with when nothing arrived within its idle limit. */
class IdleTimeout extends Error {}

/** `path` on the API server, as a URL to add query parameters to. */
function apiUrl(access: ApiAccess, path: string): URL {
  return new URL(access.server.replace(/\/+$/, '') + path);
}

/**
 * A GET of `url` through node:http(s), with the TLS material, credentials (and, from a
 * kubeconfig, proxy agent) the access gives, once `gate` lets it go. The caller finishes the
 * admission when the request's work is done (a list's body read, a watch established); a request
 * that fails before its response is finished here.
 */
async function apiRequest(access: ApiAccess, url: URL, signal: AbortSignal, gate: ApiGate): Promise<{ req: ClientRequest; res: IncomingMessage; admission: Admission }> {
  const admission = await gate.admit('GET', hostOf(access.server), signal);
  try {
    return { ...(await sendRequest(access, url, signal)), admission };
  } catch (e) {
    admission.finish('<error>');
    throw e;
  }
}

async function sendRequest(access: ApiAccess, url: URL, signal: AbortSignal): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  const opts: RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
  await access.authorize(opts);
  const request = url.protocol === 'http:' ? nodeHttp.request : httpsRequest;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    let response: IncomingMessage | undefined;
    const req = request(url, opts, (res) => {
      response = res;
      resolve({ req, res });
    });
    // The signal ends the request only while its response is still arriving. Given to
    // http.request instead, an abort after the last byte arrived (an ERROR event read from the
    // response's final chunk) destroys the socket the keep-alive pool has taken back, and on
    // Node.js 20 that socket's error has no listener: an uncaught exception.
    const onAbort = (): void => {
      if (response?.complete) return;
      req.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('close', () => signal.removeEventListener('abort', onAbort));
    req.on('error', reject);
    req.end();
  });
}

/** A whole response body (a list page), as text. */
function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.on('close', () => {
      if (!res.complete) reject(new Error('connection closed before the response ended'));
    });
  });
}

/** The whole body of a response that is not the stream asked for (an error Status), for the message. */
function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (body.length < 4096) body += chunk;
    });
    res.on('end', () => resolve(body));
    res.on('error', () => resolve(body));
  });
}

/**
 * One watch request through a kubeconfig (the operator's and the webhook's): watchApi with
 * client-node's access. `_client` is unused: the kubeconfig carries all the request needs.
 */
export function watchStream(
  _client: ClientModule,
  kc: KubeConfig,
  path: string,
  params: Record<string, string | boolean | number>,
  idleTimeoutMs: number,
  onEvent: (type: string, obj: unknown) => void,
  hooks: WatchHooks,
): Promise<void> {
  return watchApi(kubeConfigAccess(kc), path, params, idleTimeoutMs, onEvent, hooks);
}

/**
 * One watch request: `onEvent` gets ADDED, MODIFIED, DELETED and BOOKMARK. Resolves when the
 * server ends the watch (its timeoutSeconds) or the caller stops; rejects with GoneError on 410
 * (as HTTP status or as an in-stream ERROR), and with an Error on other failures or a dropped
 * connection. `idleTimeoutMs` without a byte (connecting included) ends it too (resolved,
 * `hooks.onIdle`). kdns makes the request itself rather than through client-node's Watch, whose
 * inactivity limit (30 s, shorter than the minute between an API server's bookmarks) has no
 * public setting.
 */
export async function watchApi(
  access: ApiAccess,
  path: string,
  params: Record<string, string | boolean | number>,
  idleTimeoutMs: number,
  onEvent: (type: string, obj: unknown) => void,
  hooks: WatchHooks,
): Promise<void> {
  const url = apiUrl(access, path);
  url.searchParams.set('watch', 'true');
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));

  const controller = new AbortController();
  hooks.onController(controller);
  let idle: NodeJS.Timeout | undefined;
  const armIdle = (): void => {
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(new IdleTimeout(`watch ${path}: nothing for ${idleTimeoutMs} ms`)), idleTimeoutMs);
    idle.unref();
  };
  /** How the stream ended, whatever the cause: stopped, idle, or the error to report. */
  const outcome = (err: unknown): 'stopped' | 'idle' | Error => {
    if (controller.signal.reason instanceof IdleTimeout) return 'idle';
    if (hooks.stopped()) return 'stopped';
    if (err instanceof Error) return err;
    return new Error(String(err));
  };
  armIdle();
  try {
    let res: IncomingMessage;
    try {
      let admission: Admission;
      ({ res, admission } = await apiRequest(access, url, controller.signal, hooks.gate ?? unlimitedGate()));
      // Established (or refused): a watch open for minutes must not hold a slot lists wait for.
      admission.finish(String(res.statusCode ?? '<error>'));
    } catch (e) {
      const o = outcome(e);
      if (o === 'idle') hooks.onIdle?.();
      if (typeof o === 'string') return;
      throw new Error(`watch ${path}: ${o.message}`);
    }
    if (res.statusCode === 410) {
      res.resume();
      throw new GoneError(`watch ${path}`);
    }
    if (res.statusCode !== 200) {
      const body = await readBody(res);
      throw new Error(`watch ${path}: HTTP ${res.statusCode ?? '?'}: ${statusMessage(body)}`);
    }
    armIdle();
    await readEvents(res, path, armIdle, onEvent, () => controller.abort()).catch((e: unknown) => {
      const o = outcome(e);
      if (o === 'idle') hooks.onIdle?.();
      if (typeof o !== 'string') throw o;
    });
  } finally {
    clearTimeout(idle);
    controller.abort();
  }
}

/**
 * Reads newline-delimited watch events until the server ends the response. Rejects with
 * GoneError on an in-stream 410, with the server's error on another ERROR event or an error
 * `onEvent` threw (after `stop()`), and with the stream's error on a dropped connection.
 */
function readEvents(res: IncomingMessage, path: string, onData: () => void, onEvent: (type: string, obj: unknown) => void, stop: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let failed: Error | undefined;
    let partial = '';
    const line = (text: string): void => {
      let event: { type?: unknown; object?: unknown };
      try {
        event = JSON.parse(text) as { type?: unknown; object?: unknown };
      } catch {
        return; // not an event: skipped, as client-node's Watch does
      }
      if (typeof event.type !== 'string') return;
      if (event.type === 'ERROR') {
        const status = (event.object ?? {}) as { code?: unknown; message?: unknown };
        failed = status.code === 410 ? new GoneError(`watch ${path}`) : new Error(`watch ${path}: server error ${String(status.code)}: ${String(status.message ?? '')}`);
        return;
      }
      onEvent(event.type, event.object);
    };
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      onData();
      if (failed) return;
      partial += chunk;
      let nl = partial.indexOf('\n');
      while (nl >= 0 && !failed) {
        const text = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        try {
          if (text.trim() !== '') line(text);
        } catch (e) {
          failed = e instanceof Error ? e : new Error(String(e));
        }
        nl = partial.indexOf('\n');
      }
      if (failed) {
        stop();
        reject(failed);
      }
    });
    res.on('end', () => {
      if (failed) return;
      if (partial.trim() !== '') line(partial);
      if (failed) reject(failed);
      else resolve();
    });
    // A connection cut mid-stream, or the request aborted (stopped, idle): 'aborted' then 'error'
    // or 'close' without 'end', depending on the Node.js version.
    res.on('error', (e) => reject(failed ?? e));
    res.on('close', () => {
      if (!res.complete) reject(failed ?? new Error('connection closed before the watch ended'));
    });
  });
}

export class KubeApiSource implements ClusterSource {
  readonly description: string;
  readonly reflectors: Reflector[];

  constructor(
    access: ApiAccess,
    spec: KubeApiSpec,
    needs: KubeApiNeeds,
    readonly store: ClusterStore,
    log: SourceLog,
    timing: ReflectorTiming = DEFAULT_TIMING,
    metrics?: ApiRequestMetrics,
  ) {
    this.description = `Kubernetes API ${access.server}`;
    // One gate for every kind: the limits are the client's, as in client-go.
    const gate = new ApiGate(spec.limits ?? { qps: 0, burst: 0, maxInflight: 0 }, metrics);
    this.reflectors = resourcesFor(needs).map((r) => new Reflector(access, r, store, log, timing, spec.resyncMs, gate));
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
  metrics?: ApiRequestMetrics,
): Promise<KubeApiSource> {
  return new KubeApiSource(await apiAccess(spec), spec, needs, store, log, timing, metrics);
}
