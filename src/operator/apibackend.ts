// The reconcile loop's backend for a Kubernetes API server: reads the DNS resource, the Nodes and
// the owned objects; writes the objects with server-side apply (field manager "kdns-operator")
// and the status through the status subresource; wakes the loop on watch events.
//
// An object is applied when what kdns wants in it changed (the hash of the last apply, kept in
// an annotation, differs) or when someone else changed a field kdns manages (drift.ts): the
// next pass puts back a hand edit, and an object nobody touched is not written. Each write
// stands alone: a refused one is reported in the status, the others still go through.

import type { KubeConfig } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { DNSResource, DNSStatus } from '../lib/cluster/dnsresource.js';
import { DNS_API_VERSION, DNS_DEFAULT_NAME, DNS_KIND } from '../lib/cluster/dnsresource.js';
import { Backoff, DEFAULT_TIMING, GoneError, loadKubeConfig, watchStream } from '../lib/cluster/kubeapi.js';
import type { ReflectorTiming } from '../lib/cluster/kubeapi.js';
import type { Node, Service } from '../lib/cluster/types.js';
import { driftOf } from './drift.js';
import { DNS_NAME, LEGACY_NODE_RESOLVER_CONTAINER, NODE_RESOLVER_NAME, WEBHOOK_CONFIG_NAME } from './objects.js';
import type { ConfigMap, DaemonSet, OwnedObject } from './objects.js';
import type { ApplyResult, Backend, Inputs } from './reconcile.js';
import { sleep } from './reconcile.js';
import type { CurrentObjects } from './render.js';
import type { ApiFailure } from './status.js';

export const FIELD_MANAGER = 'kdns-operator';
/** On every applied object: the hash of what was applied, so a change of the desired object is seen. */
export const APPLIED_HASH_ANNOTATION = 'dns.kdns.io/applied-hash';
const DNS_PATH = '/apis/operator.openshift.io/v1/dnses';

type ClientModule = typeof import('@kubernetes/client-node');

export interface ApiOptions {
  kubeconfig?: string;
  context?: string;
  namespace: string;
  log: (line: string) => void;
  /** Lines for operatorLogLevel Trace: every watch event. */
  trace?: (line: string) => void;
  /** Watch timing (tests shorten it); defaults as `kdns serve`'s API source. */
  timing?: Partial<ReflectorTiming>;
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

/** Counters of one watched path, for logs and tests. */
export interface WatchStats {
  /** Lists made to learn a version to watch from (the first, and after each 410). */
  lists: number;
  watches: number;
  events: number;
  bookmarks: number;
  gone: number;
  failures: number;
  idleTimeouts: number;
  lastBackoffMs: number;
}

function hashOf(o: unknown): string {
  return createHash('sha256').update(JSON.stringify(o)).digest('hex').slice(0, 32);
}

function pathOf(o: OwnedObject, namespace: string): string {
  const group = o.kind === 'DaemonSet' ? '/apis/apps/v1' : '/api/v1';
  const plural = { ConfigMap: 'configmaps', DaemonSet: 'daemonsets', Service: 'services' }[o.kind];
  return `${group}/namespaces/${namespace}/${plural}/${o.metadata.name}`;
}

/** The message of a Kubernetes Status body ("… provided IP is already allocated"), else the body. */
function statusMessage(body: string): string {
  try {
    const s = JSON.parse(body) as { message?: unknown };
    if (typeof s.message === 'string') return s.message;
  } catch {
    // not JSON: a proxy's page
  }
  return body.slice(0, 300);
}

export class ApiBackend implements Backend {
  readonly name: string;
  readonly watchStats = new Map<string, WatchStats>();
  private readonly timing: ReflectorTiming;

  private constructor(
    private readonly client: ClientModule,
    readonly kc: KubeConfig,
    private readonly o: ApiOptions,
  ) {
    this.name = `API ${kc.getCurrentCluster()?.server ?? '?'}`;
    this.timing = { ...DEFAULT_TIMING, ...(o.timing ?? {}) };
  }

  static async connect(o: ApiOptions): Promise<ApiBackend> {
    const client = await import('@kubernetes/client-node');
    const kc = await loadKubeConfig({ ...(o.kubeconfig !== undefined ? { kubeconfig: { path: o.kubeconfig, ...(o.context !== undefined ? { context: o.context } : {}) } } : {}), resyncMs: 0 });
    return new ApiBackend(client, kc, o);
  }

  private async request(method: 'GET' | 'PATCH' | 'POST', path: string, body?: unknown, contentType?: string): Promise<Response> {
    const server = this.kc.getCurrentCluster()?.server.replace(/\/+$/, '');
    const ctx = new this.client.RequestContext(`${server}${path}`, this.client.HttpMethod[method]);
    ctx.setHeaderParam('Accept', 'application/json');
    if (body !== undefined) {
      ctx.setHeaderParam('Content-Type', contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(body));
    }
    await this.kc.applySecurityAuthentication(ctx);
    const res = await new this.client.IsomorphicFetchHttpLibrary()
      .send(ctx)
      .toPromise()
      .catch((e: unknown) => {
        throw new Error(transportFailure(e));
      });
    return { status: res.httpStatusCode, body: await res.body.text() };
  }

  /** GET that maps 404 to undefined and other failures to ApiError. */
  private async get<T>(path: string): Promise<T | undefined> {
    const r = await this.request('GET', path);
    if (r.status === 404) return undefined;
    if (r.status !== 200) throw new ApiError(r.status, statusMessage(r.body));
    return JSON.parse(r.body) as T;
  }

  /**
   * The DNS resource (a failure ends the pass: there is no status to write it to), then the
   * Nodes and the owned objects, each of whose read failures is recorded and passed on: without
   * Nodes the placement is not checked, and an object that could not be read is applied as if
   * new (server-side apply needs no current copy).
   */
  async read(): Promise<Inputs> {
    const ns = this.o.namespace;
    const failures: ApiFailure[] = [];
    const tryGet = async <T extends object>(path: string, object: string, typing: Record<string, string>): Promise<T | undefined> => {
      try {
        const o = await this.get<T>(path);
        return o ? { ...o, ...typing } : undefined;
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        failures.push({ verb: 'read', object, code: e.status, message: e.message });
        return undefined;
      }
    };
    const dns = await this.get<DNSResource>(`${DNS_PATH}/${DNS_DEFAULT_NAME}`).catch((e: unknown) => {
      throw e instanceof ApiError ? new ApiError(e.status, `read DNS ${DNS_DEFAULT_NAME}: HTTP ${e.status}: ${e.message}`) : e;
    });
    const nodeList = await tryGet<{ items: Node[] }>('/api/v1/nodes', 'Nodes', {});
    const current: CurrentObjects = {};
    const cm = await tryGet<ConfigMap>(`/api/v1/namespaces/${ns}/configmaps/${DNS_NAME}`, `ConfigMap ${ns}/${DNS_NAME}`, { kind: 'ConfigMap', apiVersion: 'v1' });
    const svc = await tryGet<Service>(`/api/v1/namespaces/${ns}/services/${DNS_NAME}`, `Service ${ns}/${DNS_NAME}`, { kind: 'Service', apiVersion: 'v1' });
    const ds = await tryGet<DaemonSet>(`/apis/apps/v1/namespaces/${ns}/daemonsets/${DNS_NAME}`, `DaemonSet ${ns}/${DNS_NAME}`, { kind: 'DaemonSet', apiVersion: 'apps/v1' });
    const nr = await tryGet<DaemonSet>(`/apis/apps/v1/namespaces/${ns}/daemonsets/${NODE_RESOLVER_NAME}`, `DaemonSet ${ns}/${NODE_RESOLVER_NAME}`, { kind: 'DaemonSet', apiVersion: 'apps/v1' });
    const webhookCm = await tryGet<ConfigMap>(`/api/v1/namespaces/${ns}/configmaps/${WEBHOOK_CONFIG_NAME}`, `ConfigMap ${ns}/${WEBHOOK_CONFIG_NAME}`, { kind: 'ConfigMap', apiVersion: 'v1' });
    if (cm) current.configMap = cm;
    if (webhookCm) current.webhookConfigMap = webhookCm;
    if (svc) current.service = svc;
    if (ds) current.dnsDaemonSet = ds;
    if (nr) current.nodeResolverDaemonSet = nr;
    return {
      ...(dns ? { dns } : {}),
      kubernetesVersion: await this.serverVersion(),
      ...(nodeList ? { nodes: nodeList.items.map((n) => ({ ...n, kind: 'Node' as const, apiVersion: 'v1' })) } : {}),
      current,
      problems: [],
      failures,
    };
  }

  /**
   * The API server's gitVersion ("v1.34.2"), read each pass (a control-plane upgrade does not
   * restart the operator); "" when /version cannot be read, which counts as too old for
   * trafficDistribution: PreferSameNode.
   */
  private async serverVersion(): Promise<string> {
    try {
      const v = await this.get<{ gitVersion?: unknown }>('/version');
      return typeof v?.gitVersion === 'string' ? v.gitVersion : '';
    } catch (e) {
      if (e instanceof ApiError) return '';
      throw e;
    }
  }

  async apply(objects: readonly OwnedObject[], current: CurrentObjects): Promise<ApplyResult> {
    const live: Record<string, OwnedObject | undefined> = {
      [`ConfigMap/${DNS_NAME}`]: current.configMap,
      [`Service/${DNS_NAME}`]: current.service,
      [`DaemonSet/${DNS_NAME}`]: current.dnsDaemonSet,
      [`DaemonSet/${NODE_RESOLVER_NAME}`]: current.nodeResolverDaemonSet,
      [`ConfigMap/${WEBHOOK_CONFIG_NAME}`]: current.webhookConfigMap,
    };
    const written: string[] = [];
    const failed: ApiFailure[] = [];
    const ns = this.o.namespace;
    if (current.dnsDaemonSet) {
      const f = await this.removeLegacyContainer(current.dnsDaemonSet);
      if (f) failed.push(f);
    }
    for (const o of objects) {
      const id = `${o.kind}/${o.metadata.name}`;
      const hash = hashOf(o);
      const have = live[id];
      const drift = have && have.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === hash ? driftOf(o, have) : undefined;
      if (have && have.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === hash && drift === undefined) continue;
      if (drift !== undefined) this.o.log(`${id}: ${drift} was changed by another client; applying the desired value again`);
      const body = { ...o, metadata: { ...o.metadata, annotations: { ...(o.metadata.annotations ?? {}), [APPLIED_HASH_ANNOTATION]: hash } } };
      const path = `${pathOf(o, ns)}?fieldManager=${FIELD_MANAGER}&force=true`;
      const r = await this.request('PATCH', path, body, 'application/apply-patch+yaml');
      if (r.status === 200 || r.status === 201) written.push(id);
      else failed.push({ verb: 'apply', object: `${o.kind} ${ns}/${o.metadata.name}`, code: r.status, message: statusMessage(r.body) });
    }
    return { written, failed };
  }

  /**
   * Server-side apply leaves fields another manager owns, so the container older OpenShift
   * releases put into dns-default survives an apply; it is removed by name with a JSON patch.
   */
  private async removeLegacyContainer(ds: DaemonSet): Promise<ApiFailure | undefined> {
    const i = ds.spec.template.spec.containers.findIndex((c) => c.name === LEGACY_NODE_RESOLVER_CONTAINER);
    if (i < 0) return undefined;
    const path = `/spec/template/spec/containers/${i}`;
    const patch = [
      { op: 'test', path: `${path}/name`, value: LEGACY_NODE_RESOLVER_CONTAINER },
      { op: 'remove', path },
    ];
    const r = await this.request('PATCH', `${pathOf(ds, this.o.namespace)}?fieldManager=${FIELD_MANAGER}`, patch, 'application/json-patch+json');
    if (r.status !== 200) return { verb: 'apply', object: `DaemonSet ${this.o.namespace}/${ds.metadata.name} (removing container ${LEGACY_NODE_RESOLVER_CONTAINER})`, code: r.status, message: statusMessage(r.body) };
    this.o.log(`removed container ${LEGACY_NODE_RESOLVER_CONTAINER} from DaemonSet ${ds.metadata.name}`);
    return undefined;
  }

  async writeStatus(dns: DNSResource, status: DNSStatus): Promise<boolean> {
    if (isDeepStrictEqual(dns.status, status)) return false;
    const r = await this.request('PATCH', `${DNS_PATH}/${dns.metadata.name}/status`, { status }, 'application/merge-patch+json');
    if (r.status !== 200) throw new ApiError(r.status, `update DNS status: HTTP ${r.status}: ${statusMessage(r.body)}`);
    return true;
  }

  /**
   * Creates the DNS resource "default" (empty spec) unless it exists, as OpenShift's operator
   * does at start, so an install need not apply one in the same run as the CRD. Retries while
   * the CRD is not served yet (404) or the API fails (5xx); gives up on anything else (403: the
   * operator may not create DNS resources) with a log line.
   */
  async ensureDefaultDNS(signal: AbortSignal, retryMs = 1000): Promise<'exists' | 'created' | 'not-created'> {
    const backoff = new Backoff(retryMs, 30_000, Number.POSITIVE_INFINITY);
    while (!signal.aborted) {
      let r: Response;
      try {
        r = await this.request('GET', `${DNS_PATH}/${DNS_DEFAULT_NAME}`);
        if (r.status === 200) return 'exists';
        if (r.status === 404) {
          const body = { apiVersion: DNS_API_VERSION, kind: DNS_KIND, metadata: { name: DNS_DEFAULT_NAME }, spec: {} };
          r = await this.request('POST', `${DNS_PATH}?fieldManager=${FIELD_MANAGER}`, body);
          if (r.status === 201 || r.status === 200) {
            this.o.log(`created DNS "${DNS_DEFAULT_NAME}" (none existed)`);
            return 'created';
          }
          if (r.status === 409) return 'exists';
        }
      } catch (e) {
        r = { status: 0, body: (e as Error).message };
      }
      const retry = r.status === 0 || r.status === 404 || r.status === 429 || r.status >= 500;
      const why = `HTTP ${r.status}: ${statusMessage(r.body)}`;
      if (!retry) {
        this.o.log(`cannot create DNS "${DNS_DEFAULT_NAME}": ${why}`);
        return 'not-created';
      }
      const delay = backoff.delay(0);
      this.o.log(`cannot create DNS "${DNS_DEFAULT_NAME}" yet (${r.status === 404 ? 'the DNS CRD is not served yet' : why}); retrying in ${delay} ms`);
      await sleep(delay, signal);
    }
    return 'not-created';
  }

  /**
   * Paths whose changes call for a pass: the DNS resource, Nodes (placement), the DaemonSets (for
   * status), and the ConfigMaps and Services of the namespace (so a hand edit is put back at once).
   */
  watchPaths(): string[] {
    const ns = this.o.namespace;
    return [DNS_PATH, '/api/v1/nodes', `/apis/apps/v1/namespaces/${ns}/daemonsets`, `/api/v1/namespaces/${ns}/configmaps`, `/api/v1/namespaces/${ns}/services`];
  }

  /** The collection's current resourceVersion, from a one-item list. */
  private async listVersion(path: string): Promise<string> {
    const r = await this.request('GET', `${path}?limit=1`);
    if (r.status !== 200) throw new ApiError(r.status, `list ${path}: HTTP ${r.status}: ${statusMessage(r.body)}`);
    const rv = (JSON.parse(r.body) as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
    if (typeof rv !== 'string' || rv === '') throw new Error(`list ${path}: no resourceVersion`);
    return rv;
  }

  /**
   * Watches `path` until `signal` aborts, calling `onChange` for each change. Like `kdns serve`'s
   * source: it watches from a version (a reconnect resumes where it stopped, replaying nothing),
   * asks for bookmarks (which move that version on a quiet kind), keeps a quiet connection open
   * past client-node's 30 s, lists again only after 410 Gone (then calls `onChange`: events may
   * be lost), and backs off on failures, starting over after a healthy period.
   */
  async keepWatching(path: string, onChange: () => void, signal: AbortSignal): Promise<void> {
    const t = this.timing;
    const stats: WatchStats = { lists: 0, watches: 0, events: 0, bookmarks: 0, gone: 0, failures: 0, idleTimeouts: 0, lastBackoffMs: 0 };
    this.watchStats.set(path, stats);
    const backoff = new Backoff(t.initialBackoffMs, t.maxBackoffMs, t.backoffResetMs);
    let rv = '';
    while (!signal.aborted) {
      const started = Date.now();
      try {
        if (rv === '') {
          rv = await this.listVersion(path);
          if (stats.lists++ > 0) onChange();
        }
        stats.watches++;
        const [lo, hi] = t.watchTimeoutSeconds;
        const params = { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: Math.floor(lo + Math.random() * (hi - lo + 1)) };
        const onEvent = (type: string, obj: unknown): void => {
          const v = (obj as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
          if (typeof v === 'string' && v !== '') rv = v;
          const name = (obj as { metadata?: { name?: unknown } } | null)?.metadata?.name;
          this.o.trace?.(`watch ${path}: ${type}${typeof name === 'string' ? ` ${name}` : ''} (resourceVersion ${rv})`);
          if (type === 'BOOKMARK') stats.bookmarks++;
          else {
            stats.events++;
            onChange();
          }
        };
        let controller: AbortController | undefined;
        const onAbort = (): void => controller?.abort();
        signal.addEventListener('abort', onAbort, { once: true });
        try {
          await watchStream(this.client, this.kc, path, params, t.watchIdleTimeoutMs, onEvent, {
            onController: (c) => {
              controller = c;
              if (signal.aborted) c.abort();
            },
            stopped: () => signal.aborted,
            onIdle: () => stats.idleTimeouts++,
          });
        } finally {
          signal.removeEventListener('abort', onAbort);
        }
        backoff.reset();
      } catch (e) {
        if (signal.aborted) break;
        if (e instanceof GoneError) {
          stats.gone++;
          this.o.log(`${path}: ${e.message}; listing again`);
          rv = '';
          continue;
        }
        stats.failures++;
        const delay = backoff.delay(Date.now() - started);
        stats.lastBackoffMs = delay;
        this.o.log(`${path}: ${(e as Error).message}; watching again in ${delay} ms`);
        await sleep(delay, signal);
      }
    }
  }
}

/** Wake-ups from the watches (watchPaths), debounced so a burst of events is one pass. */
export async function* watchApi(api: ApiBackend, signal: AbortSignal, debounceMs = 200): AsyncGenerator<void> {
  let dirty = false;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const onChange = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      dirty = true;
      wake?.();
    }, debounceMs);
  };
  const watchers = api.watchPaths().map((p) => api.keepWatching(p, onChange, signal));
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

/**
 * fetch reports every network failure as "fetch failed" and keeps the kernel's reason in its
 * cause (connect ENETUNREACH 192.0.2.1:6443, certificate errors, …): the log and status need it.
 */
export function transportFailure(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const cause = e instanceof Error ? (e as Error & { cause?: unknown }).cause : undefined;
  return cause instanceof Error && cause.message !== message ? `${message}: ${cause.message}` : message;
}
