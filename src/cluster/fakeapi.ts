// An HTTP server that speaks the Kubernetes API's list/watch protocol, for tests of code that
// reads a cluster (no API server runs here). It keeps objects per resource path with a global
// resourceVersion counter and an event history, and does what a real API server does:
//   - list: `{kind: XList, metadata: {resourceVersion, continue}, items}` (items without kind),
//     paged with limit/continue;
//   - watch: newline-delimited `{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": …}`
//     from the requested resourceVersion on, then live events;
//   - a resourceVersion older than the compacted history: an ERROR event with a 410 Status
//     (or, when asked, an HTTP 410 response, as some API servers and proxies give);
// and lets the test drop connections, fail requests and hold lists.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ApiResource {
  /** e.g. /api/v1/services */
  path: string;
  /** Kind of the items (Service); the list kind is this + "List". */
  kind: string;
  apiVersion: string;
}

export const CORE_RESOURCES: ApiResource[] = [
  { path: '/api/v1/namespaces', kind: 'Namespace', apiVersion: 'v1' },
  { path: '/api/v1/services', kind: 'Service', apiVersion: 'v1' },
  { path: '/apis/discovery.k8s.io/v1/endpointslices', kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' },
  { path: '/api/v1/pods', kind: 'Pod', apiVersion: 'v1' },
];

type ApiObject = Record<string, unknown> & { metadata: { name: string; namespace?: string; resourceVersion?: string; [field: string]: unknown } };

interface Event {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: ApiObject;
}

interface Collection {
  resource: ApiResource;
  objects: Map<string, ApiObject>;
  history: Event[];
  watchers: Set<ServerResponse>;
}

export interface RecordedRequest {
  path: string;
  watch: boolean;
  params: Record<string, string>;
}

function keyOf(o: ApiObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

export class FakeApiServer {
  private readonly server: Server;
  private readonly collections = new Map<string, Collection>();
  private rv = 1000;
  /** Watches from a version below this get 410 Gone (the history before it is compacted away). */
  private compactedAt = 0;
  readonly requests: RecordedRequest[] = [];
  /** The next n requests (list or watch) get HTTP 500. */
  failNext = 0;
  /** Send 410 as an HTTP status instead of a watch ERROR event. */
  goneAsHttpStatus = false;
  private listGate: Promise<void> | undefined;
  private openListGate: (() => void) | undefined;

  constructor(resources: ApiResource[] = CORE_RESOURCES) {
    for (const r of resources) this.collections.set(r.path, { resource: r, objects: new Map(), history: [], watchers: new Set() });
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.dropWatches();
    this.openListGate?.();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  /** Lists wait until releaseLists() (to see a client before its first sync). */
  holdLists(): void {
    this.listGate = new Promise((resolve) => {
      this.openListGate = resolve;
    });
  }

  releaseLists(): void {
    this.openListGate?.();
    this.listGate = undefined;
  }

  /** Loads objects without events (the state before the test starts). */
  seed(path: string, objects: ApiObject[]): void {
    const c = this.collection(path);
    for (const o of objects) {
      const copy = clone(o);
      copy.metadata.resourceVersion = String(++this.rv);
      c.objects.set(keyOf(copy), copy);
    }
  }

  add(path: string, obj: ApiObject): void {
    this.emit(path, this.collection(path).objects.has(keyOf(obj)) ? 'MODIFIED' : 'ADDED', obj);
  }

  remove(path: string, namespace: string | undefined, name: string): void {
    const c = this.collection(path);
    const key = `${namespace ?? ''}/${name}`;
    const old = c.objects.get(key);
    if (old) this.emit(path, 'DELETED', old);
  }

  /** A BOOKMARK to every open watch of `path`: the current resourceVersion, no object change. */
  bookmark(path: string): void {
    const c = this.collection(path);
    const line = JSON.stringify({ type: 'BOOKMARK', object: { kind: c.resource.kind, apiVersion: c.resource.apiVersion, metadata: { resourceVersion: String(this.rv) } } });
    for (const w of c.watchers) w.write(`${line}\n`);
  }

  /** Forgets history: watches from any version seen so far get 410 Gone. */
  compact(): void {
    this.compactedAt = this.rv;
    for (const c of this.collections.values()) c.history = [];
  }

  /** Cuts every open watch connection without a goodbye (a load balancer dropping idle streams). */
  dropWatches(): void {
    for (const c of this.collections.values()) {
      for (const w of c.watchers) w.socket?.destroy();
      c.watchers.clear();
    }
  }

  openWatches(path: string): number {
    return this.collection(path).watchers.size;
  }

  private collection(path: string): Collection {
    const c = this.collections.get(path);
    if (!c) throw new Error(`fake API server has no resource ${path}`);
    return c;
  }

  private emit(path: string, type: Event['type'], obj: ApiObject): void {
    const c = this.collection(path);
    const copy = clone(obj);
    copy['kind'] = c.resource.kind;
    copy['apiVersion'] = c.resource.apiVersion;
    copy.metadata.resourceVersion = String(++this.rv);
    if (type === 'DELETED') c.objects.delete(keyOf(copy));
    else c.objects.set(keyOf(copy), copy);
    const ev: Event = { rv: this.rv, type, object: copy };
    c.history.push(ev);
    const line = `${JSON.stringify({ type: ev.type, object: ev.object })}\n`;
    for (const w of c.watchers) w.write(line);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const params = Object.fromEntries(url.searchParams);
    const watch = params['watch'] === 'true' || params['watch'] === '1';
    this.requests.push({ path: url.pathname, watch, params });
    const c = this.collections.get(url.pathname);
    if (!c) return this.status(res, 404, 'NotFound', `the server could not find the requested resource (${url.pathname})`);
    if (this.failNext > 0) {
      this.failNext--;
      return this.status(res, 500, 'InternalError', 'an error on the server ("etcdserver: request timed out") has prevented the request from succeeding');
    }
    if (watch) return this.watch(c, params, res);
    if (this.listGate) await this.listGate;
    return this.list(c, params, res);
  }

  private status(res: ServerResponse, code: number, reason: string, message: string): void {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
  }

  private list(c: Collection, params: Record<string, string>, res: ServerResponse): void {
    const all = [...c.objects.values()].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
    const limit = params['limit'] ? Number(params['limit']) : all.length;
    const offset = params['continue'] ? Number(Buffer.from(params['continue'], 'base64url').toString()) : 0;
    const page = all.slice(offset, offset + limit).map((o) => {
      const { kind: _k, apiVersion: _a, ...rest } = o;
      return rest; // list items carry no kind/apiVersion, as the API server sends them
    });
    const next = offset + limit < all.length ? Buffer.from(String(offset + limit)).toString('base64url') : undefined;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: `${c.resource.kind}List`,
        apiVersion: c.resource.apiVersion,
        metadata: { resourceVersion: String(this.rv), ...(next ? { continue: next, remainingItemCount: all.length - offset - limit } : {}) },
        items: page,
      }),
    );
  }

  private watch(c: Collection, params: Record<string, string>, res: ServerResponse): void {
    const from = Number(params['resourceVersion'] ?? '0');
    if (from !== 0 && from < this.compactedAt) {
      const message = `too old resource version: ${from} (${this.compactedAt + 1})`;
      if (this.goneAsHttpStatus) return this.status(res, 410, 'Expired', message);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Expired', code: 410 } })}\n`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    for (const ev of c.history) {
      if (ev.rv > from) res.write(`${JSON.stringify({ type: ev.type, object: ev.object })}\n`);
    }
    c.watchers.add(res);
    const timeout = Number(params['timeoutSeconds'] ?? '0');
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    res.on('close', () => {
      if (timer) clearTimeout(timer);
      c.watchers.delete(res);
    });
  }
}
