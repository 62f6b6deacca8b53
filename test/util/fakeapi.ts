// An HTTP server that speaks the Kubernetes API's protocol, for tests of code that reads and
// writes a cluster (no API server runs here). It keeps objects per resource with a global
// resourceVersion counter and an event history, and does what a real API server does:
//   - list: `{kind: XList, metadata: {resourceVersion, continue}, items}` (items without kind),
//     paged with limit/continue, cluster-wide or in one namespace;
//   - get one object, create (POST), replace (PUT, its resourceVersion a precondition: 409
//     Conflict when stale), server-side apply, merge patch and JSON patch, and the status
//     subresource (which changes only status, and the main resource never does);
//   - watch: newline-delimited `{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": …}`
//     from the requested resourceVersion on (no version: the current objects as ADDED first),
//     then live events, BOOKMARKs at a cadence when asked for, until `timeoutSeconds`;
//   - field selectors (`fieldSelector=spec.nodeName=n1,status.phase!=Failed`) on lists and
//     watches, for the fields the API server allows per kind; a watched object that stops
//     matching is a DELETED event, one that starts matching an ADDED event;
//   - a resourceVersion older than the compacted history: an ERROR event with a 410 Status
//     (or, when asked, an HTTP 410 response, as some API servers and proxies give);
//   - field ownership (managedFields) per field manager, with server-side apply's semantics on
//     the fields: an apply sets the fields it names and takes them from other managers (force),
//     drops the fields its manager applied before and no longer names unless another manager
//     owns them, and leaves everyone else's fields alone; an update (merge or JSON patch) makes
//     its manager the owner of the fields it changed. Maps are granular and lists atomic, except
//     `nodeSelector` and a Service's `selector` (atomic maps, as in core/v1) and lists whose
//     items all carry a `name` (keyed by it, as containers, volumes and ports are);
//   - Services: a clusterIP is allocated from `serviceCIDR` when none is given, an address another
//     Service holds is refused with the API's 422, and a set clusterIP is immutable;
//   - defaults the API server fills in (imagePullPolicy, sessionAffinity, …), owned by nobody,
//     so clients must not mistake them for drift;
// and lets the test drop connections, fail requests and hold lists.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';

export interface ApiResource {
  /** Cluster-wide collection path, e.g. /api/v1/services */
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

/** What the webhook's certificate source reads and writes: its Secret, and the caBundle of its configuration. */
export const WEBHOOK_CERT_RESOURCES: ApiResource[] = [
  { path: '/api/v1/secrets', kind: 'Secret', apiVersion: 'v1' },
  { path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', kind: 'MutatingWebhookConfiguration', apiVersion: 'admissionregistration.k8s.io/v1' },
];

/** What the DNS operator reads and writes. */
export const OPERATOR_RESOURCES: ApiResource[] = [
  { path: '/apis/operator.openshift.io/v1/dnses', kind: 'DNS', apiVersion: 'operator.openshift.io/v1' },
  { path: '/api/v1/nodes', kind: 'Node', apiVersion: 'v1' },
  { path: '/api/v1/configmaps', kind: 'ConfigMap', apiVersion: 'v1' },
  { path: '/api/v1/services', kind: 'Service', apiVersion: 'v1' },
  { path: '/apis/apps/v1/daemonsets', kind: 'DaemonSet', apiVersion: 'apps/v1' },
];

type Json = unknown;
type JsonObject = Record<string, Json>;
export type ApiObject = Record<string, unknown> & { metadata: { name: string; namespace?: string; resourceVersion?: string; [field: string]: unknown } };

interface Event {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: ApiObject;
  /** What a MODIFIED object was before (a field selector may have matched only one of them). */
  prev?: ApiObject;
}

interface Watcher {
  res: ServerResponse;
  namespace?: string;
  fields: FieldTerm[];
}

/** One requirement of a field selector: the field at `path` equals (or not) `value`. */
interface FieldTerm {
  field: string;
  equal: boolean;
  value: string;
}

/** Fields the API server lets a selector name, beyond metadata.name and metadata.namespace (core/v1's field label conversions). */
const SELECTABLE_FIELDS: Record<string, readonly string[]> = {
  Pod: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
  Service: ['spec.clusterIP', 'spec.type'],
  Node: ['spec.unschedulable'],
};

/** A field selector as the API server reads it: `a=b`, `a==b`, `a!=b`, joined by commas (all must hold). */
function parseFieldSelector(text: string | undefined, kind: string): FieldTerm[] {
  if (text === undefined || text.trim() === '') return [];
  return text.split(',').map((part) => {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*([^=!,]*?)\s*$/.exec(part);
    if (!m) throw new ApiFailure(400, 'BadRequest', `unable to parse requirement: invalid selector: '${text}'; can't understand '${part}'`);
    const [, field, op, value] = m as unknown as [string, string, string, string];
    const allowed = ['metadata.name', 'metadata.namespace', ...(SELECTABLE_FIELDS[kind] ?? [])];
    if (!allowed.includes(field)) throw new ApiFailure(400, 'BadRequest', `field label not supported: ${field}`);
    return { field, equal: op !== '!=', value };
  });
}

/** The field's value as a selector compares it: a missing field is "". */
function fieldValue(o: ApiObject, field: string): string {
  let v: unknown = o;
  for (const key of field.split('.')) v = isObject(v) ? v[key] : undefined;
  return v === undefined || v === null ? '' : String(v);
}

function fieldsMatch(o: ApiObject, terms: readonly FieldTerm[]): boolean {
  return terms.every((t) => (fieldValue(o, t.field) === t.value) === t.equal);
}

/**
 * The event a watcher with these field requirements gets, as the API server's watch cache
 * sends it: MODIFIED into the selection is ADDED, out of it DELETED (with the old content).
 */
function selectedEvent(ev: Event, terms: readonly FieldTerm[]): { type: Event['type']; object: ApiObject } | undefined {
  if (terms.length === 0) return ev;
  const now = fieldsMatch(ev.object, terms);
  if (ev.type !== 'MODIFIED') return now ? ev : undefined;
  const before = ev.prev !== undefined && fieldsMatch(ev.prev, terms);
  if (now) return before ? ev : { type: 'ADDED', object: ev.object };
  if (!before || ev.prev === undefined) return undefined;
  return { type: 'DELETED', object: { ...ev.prev, metadata: { ...ev.prev.metadata, resourceVersion: ev.object.metadata.resourceVersion } } };
}

interface Collection {
  resource: ApiResource;
  objects: Map<string, ApiObject>;
  history: Event[];
  watchers: Set<Watcher>;
  /** Field owners per object key: manager → (field path → operation). */
  owners: Map<string, Map<string, FieldSet>>;
}

interface FieldSet {
  operation: 'Apply' | 'Update';
  fields: Map<string, Path>;
}

/** One step of a field path: a map key, or a keyed list item (`name`). */
type Step = { key: string } | { item: string };
type Path = Step[];

export interface RecordedRequest {
  method: string;
  path: string;
  watch: boolean;
  params: Record<string, string>;
  contentType: string;
  /** performance.now() when the request arrived (for tests of client-side rate limits). */
  receivedAt: number;
}

/** What the admission hook is given: the resource, the request's namespace and query, the decoded object. */
export interface AdmissionCall {
  resource: ApiResource;
  namespace?: string;
  object: ApiObject;
  params: Record<string, string>;
}

export interface FakeApiOptions {
  /** BOOKMARK to every watch that allows them, this often (0: only through bookmark()). */
  bookmarkIntervalMs?: number;
  /** Where Services get their clusterIP when they ask for none. */
  serviceCIDR?: string;
}

/** A request answered with an error instead of being done. */
export interface RequestFailure {
  /** Matches the request path's end, e.g. "/services/dns-default". */
  pathSuffix: string;
  /** Which requests: GET (not watches), or by default every write. */
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT';
  code: number;
  reason: string;
  message: string;
  /** How many requests to fail (default: all). */
  times?: number;
}

function keyOf(o: ApiObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Metadata the server owns: never a managed field. */
const SERVER_METADATA = new Set(['name', 'namespace', 'resourceVersion', 'uid', 'generation', 'creationTimestamp', 'managedFields']);

function isAtomicMap(path: Path, kind: string): boolean {
  const last = path[path.length - 1];
  if (!last || !('key' in last)) return false;
  if (last.key === 'nodeSelector') return true;
  return kind === 'Service' && path.length === 2 && last.key === 'selector';
}

function isKeyedList(v: unknown[]): boolean {
  return v.length > 0 && v.every((i) => isObject(i) && typeof i['name'] === 'string');
}

const pathKey = (p: Path): string => p.map((s) => ('key' in s ? `.${s.key}` : `[${s.item}]`)).join('');

/** The leaf fields an object sets, as server-side apply counts them. */
function fieldsOf(obj: JsonObject, kind: string): Map<string, Path> {
  const out = new Map<string, Path>();
  const walk = (v: unknown, path: Path): void => {
    if (isObject(v) && !isAtomicMap(path, kind) && Object.keys(v).length > 0) {
      for (const [k, child] of Object.entries(v)) {
        if (path.length === 0 && (k === 'apiVersion' || k === 'kind' || k === 'status')) continue;
        if (path.length === 1 && 'key' in path[0]! && path[0].key === 'metadata' && SERVER_METADATA.has(k)) continue;
        walk(child, [...path, { key: k }]);
      }
      return;
    }
    if (Array.isArray(v) && isKeyedList(v)) {
      for (const item of v as JsonObject[]) walk(item, [...path, { item: item['name'] as string }]);
      return;
    }
    out.set(pathKey(path), path);
  };
  walk(obj, []);
  return out;
}

function getAt(obj: unknown, path: Path): unknown {
  let cur: unknown = obj;
  for (const step of path) {
    if ('key' in step) cur = isObject(cur) ? cur[step.key] : undefined;
    else cur = Array.isArray(cur) ? cur.find((i) => isObject(i) && i['name'] === step.item) : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function setAt(obj: JsonObject, path: Path, value: unknown): void {
  let cur: JsonObject = obj;
  path.forEach((step, i) => {
    const last = i === path.length - 1;
    const next = path[i + 1];
    const fresh = (): unknown => (next && 'item' in next ? [] : {});
    if ('key' in step) {
      if (last) cur[step.key] = clone(value);
      else {
        if (!isObject(cur[step.key]) && !Array.isArray(cur[step.key])) cur[step.key] = fresh();
        cur = cur[step.key] as JsonObject;
      }
      return;
    }
    const list = cur as unknown as JsonObject[];
    let item = list.find((x) => x['name'] === step.item);
    if (!item) {
      item = { name: step.item };
      list.push(item);
    }
    if (last) Object.assign(item, clone(value));
    cur = item;
  });
}

function deleteAt(obj: JsonObject, path: Path): void {
  const parent = getAt(obj, path.slice(0, -1));
  const last = path[path.length - 1]!;
  if ('key' in last && isObject(parent)) delete parent[last.key];
  if ('item' in last && Array.isArray(parent)) {
    const i = parent.findIndex((x) => isObject(x) && x['name'] === last.item);
    if (i >= 0) parent.splice(i, 1);
  }
}

/** Removes maps and keyed-list items left empty (or holding only their key) by field removals. */
function prune(v: unknown): void {
  if (Array.isArray(v)) {
    for (let i = v.length - 1; i >= 0; i--) {
      prune(v[i]);
      if (isObject(v[i]) && Object.keys(v[i] as JsonObject).every((k) => k === 'name')) v.splice(i, 1);
    }
  } else if (isObject(v)) {
    for (const [k, child] of Object.entries(v)) {
      prune(child);
      if (isObject(child) && Object.keys(child).length === 0) delete v[k];
      if (Array.isArray(child) && child.length === 0) delete v[k];
    }
  }
}

/** RFC 7386 merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** RFC 6902 JSON patch (add, remove, replace, test); throws a message on a failed op. */
function jsonPatch(target: JsonObject, ops: Array<{ op: string; path: string; value?: unknown }>): JsonObject {
  const doc = clone(target);
  for (const op of ops) {
    const parts = op.path.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop() ?? '';
    const parent = parts.reduce<unknown>((acc, k) => (Array.isArray(acc) ? acc[Number(k)] : isObject(acc) ? acc[k] : undefined), doc);
    if (parent === undefined) throw new Error(`the server rejected our request due to an error in our request: path ${op.path} not found`);
    const read = (): unknown => (Array.isArray(parent) ? parent[Number(last)] : (parent as JsonObject)[last]);
    if (op.op === 'test') {
      if (!isDeepStrictEqual(read(), op.value)) throw new Error(`the server rejected our request due to an error in our request: test failed at ${op.path}`);
    } else if (op.op === 'remove') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete (parent as JsonObject)[last];
    } else if (op.op === 'add' && Array.isArray(parent)) {
      parent.splice(last === '-' ? parent.length : Number(last), 0, clone(op.value));
    } else if (op.op === 'add' || op.op === 'replace') {
      if (Array.isArray(parent)) parent[Number(last)] = clone(op.value);
      else (parent as JsonObject)[last] = clone(op.value);
    } else throw new Error(`unsupported JSON patch op ${op.op}`);
  }
  return doc;
}

/** managedFields' FieldsV1: `f:key` for map keys, `k:{"name":…}` for keyed list items. */
function fieldsV1(paths: Iterable<Path>): JsonObject {
  const root: JsonObject = {};
  for (const path of paths) {
    let cur = root;
    for (const step of path) {
      const k = 'key' in step ? `f:${step.key}` : `k:${JSON.stringify({ name: step.item })}`;
      cur = (cur[k] ??= {}) as JsonObject;
    }
  }
  return root;
}

/** Fields the API server fills in when a client leaves them out (a few, per kind). */
function applyDefaults(o: ApiObject): void {
  const spec = o['spec'];
  if (!isObject(spec)) return;
  if (o['kind'] === 'Service') {
    spec['sessionAffinity'] ??= 'None';
    spec['internalTrafficPolicy'] ??= 'Cluster';
    for (const p of Array.isArray(spec['ports']) ? spec['ports'] : []) if (isObject(p)) p['targetPort'] ??= p['port'];
  }
  if (o['kind'] === 'DaemonSet') {
    spec['revisionHistoryLimit'] ??= 10;
    const pod = getAt(spec, [{ key: 'template' }, { key: 'spec' }]);
    if (isObject(pod)) {
      pod['restartPolicy'] ??= 'Always';
      pod['schedulerName'] ??= 'default-scheduler';
      for (const c of Array.isArray(pod['containers']) ? pod['containers'] : []) {
        if (!isObject(c)) continue;
        c['imagePullPolicy'] ??= 'IfNotPresent';
        c['terminationMessagePath'] ??= '/dev/termination-log';
      }
    }
  }
}

/** An error answered as the API server's Status (code, reason, message). */
export class ApiFailure extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

interface Route {
  collection: Collection;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export class FakeApiServer {
  private readonly server: Server;
  private readonly collections = new Map<string, Collection>();
  private rv = 1000;
  private uid = 0;
  /** Watches from a version below this get 410 Gone (the history before it is compacted away). */
  private compactedAt = 0;
  readonly requests: RecordedRequest[] = [];
  /** The next n requests (list or watch) get HTTP 500. */
  failNext = 0;
  /** Send 410 as an HTTP status instead of a watch ERROR event. */
  goneAsHttpStatus = false;
  readonly requestFailures: RequestFailure[] = [];
  /**
   * Called for every create (POST) before it is stored, as kube-apiserver runs admission: it
   * returns the object to store (mutated or not) or throws ApiFailure to refuse the request.
   */
  admission: ((request: AdmissionCall) => Promise<ApiObject>) | undefined;
  private listGate: Promise<void> | undefined;
  private openListGate: (() => void) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    resources: ApiResource[] = CORE_RESOURCES,
    private readonly options: FakeApiOptions = {},
  ) {
    for (const r of resources) this.collections.set(r.path, { resource: r, objects: new Map(), history: [], watchers: new Set(), owners: new Map() });
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.dropWatches();
    for (const t of this.timers) clearInterval(t);
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
    if (old) {
      c.owners.delete(key);
      this.emit(path, 'DELETED', old);
    }
  }

  /** The stored object (a copy), or undefined. */
  get(path: string, namespace: string | undefined, name: string): ApiObject | undefined {
    const o = this.collection(path).objects.get(`${namespace ?? ''}/${name}`);
    return o ? clone(o) : undefined;
  }

  /** Field paths (".spec.template.spec.nodeSelector", "[dns]" for keyed items) each manager owns. */
  managedFields(path: string, namespace: string | undefined, name: string): Record<string, string[]> {
    const owners = this.collection(path).owners.get(`${namespace ?? ''}/${name}`) ?? new Map<string, FieldSet>();
    return Object.fromEntries([...owners].map(([m, set]) => [m, [...set.fields.keys()].sort()]));
  }

  /** A change by another client (as `kubectl edit` makes it): an update owned by `manager`. */
  edit(path: string, namespace: string | undefined, name: string, change: (o: ApiObject) => void, manager = 'kubectl-edit'): void {
    const c = this.collection(path);
    const old = c.objects.get(`${namespace ?? ''}/${name}`);
    if (!old) throw new Error(`fake API server: no ${path} ${namespace ?? ''}/${name} to edit`);
    const next = clone(old);
    change(next);
    this.update(c, old, next, manager);
  }

  /** A BOOKMARK to every open watch of `path`: the current resourceVersion, no object change. */
  bookmark(path: string): void {
    const c = this.collection(path);
    for (const w of c.watchers) this.sendBookmark(c, w.res);
  }

  /** Forgets history: watches from any version seen so far get 410 Gone. */
  compact(): void {
    this.compactedAt = this.rv;
    for (const c of this.collections.values()) c.history = [];
  }

  /** Cuts every open watch connection without a goodbye (a load balancer dropping idle streams). */
  dropWatches(): void {
    for (const c of this.collections.values()) {
      for (const w of c.watchers) w.res.socket?.destroy();
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

  private sendBookmark(c: Collection, res: ServerResponse): void {
    res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: c.resource.kind, apiVersion: c.resource.apiVersion, metadata: { resourceVersion: String(this.rv) } } })}\n`);
  }

  /** Stores `obj` (as given: kind, apiVersion and resourceVersion are set here) and tells the watchers. */
  private emit(path: string, type: Event['type'], obj: ApiObject): ApiObject {
    const c = this.collection(path);
    const copy = clone(obj);
    copy['kind'] = c.resource.kind;
    copy['apiVersion'] = c.resource.apiVersion;
    copy.metadata.resourceVersion = String(++this.rv);
    const prev = c.objects.get(keyOf(copy));
    if (type === 'DELETED') c.objects.delete(keyOf(copy));
    else c.objects.set(keyOf(copy), copy);
    const ev: Event = { rv: this.rv, type, object: copy, ...(type === 'MODIFIED' && prev ? { prev } : {}) };
    c.history.push(ev);
    for (const w of c.watchers) {
      if (w.namespace !== undefined && w.namespace !== copy.metadata.namespace) continue;
      const sent = selectedEvent(ev, w.fields);
      if (sent) w.res.write(`${JSON.stringify({ type: sent.type, object: sent.object })}\n`);
    }
    return copy;
  }

  /** Writes `next` in place of `old` (undefined: a create), with the metadata the server keeps. */
  private store(c: Collection, old: ApiObject | undefined, next: ApiObject, owners: Map<string, FieldSet>): ApiObject {
    if (c.resource.kind === 'Service') this.checkServiceAddress(c, old, next);
    applyDefaults(next);
    const meta = next.metadata;
    meta['uid'] = old?.metadata['uid'] ?? `00000000-0000-4000-8000-${String(++this.uid).padStart(12, '0')}`;
    meta['creationTimestamp'] = old?.metadata['creationTimestamp'] ?? '2024-05-01T12:00:00Z';
    const generation = typeof old?.metadata['generation'] === 'number' ? old.metadata['generation'] : 0;
    meta['generation'] = old && isDeepStrictEqual(old['spec'], next['spec']) ? generation : generation + 1;
    meta['managedFields'] = [...owners].map(([manager, set]) => ({ manager, operation: set.operation, apiVersion: c.resource.apiVersion, fieldsType: 'FieldsV1', fieldsV1: fieldsV1(set.fields.values()) }));
    c.owners.set(keyOf(next), owners);
    return this.emit(c.resource.path, old ? 'MODIFIED' : 'ADDED', next);
  }

  /** clusterIP: allocated when missing, unique across Services, immutable once set. */
  private checkServiceAddress(c: Collection, old: ApiObject | undefined, next: ApiObject): void {
    const spec = isObject(next['spec']) ? next['spec'] : (next['spec'] = {});
    const oldIP = getAt(old, [{ key: 'spec' }, { key: 'clusterIP' }]);
    const name = next.metadata.name;
    const taken = (ip: unknown): boolean => [...c.objects.values()].some((s) => keyOf(s) !== keyOf(next) && getAt(s, [{ key: 'spec' }, { key: 'clusterIP' }]) === ip);
    if (spec['clusterIP'] === undefined || spec['clusterIP'] === '') {
      spec['clusterIP'] = typeof oldIP === 'string' ? oldIP : this.allocate(taken);
    } else if (typeof oldIP === 'string' && oldIP !== spec['clusterIP']) {
      throw new ApiFailure(422, 'Invalid', `Service "${name}" is invalid: spec.clusterIPs[0]: Invalid value: []string{"${String(spec['clusterIP'])}"}: may not change once set`);
    } else if (oldIP === undefined && spec['clusterIP'] !== 'None' && taken(spec['clusterIP'])) {
      const ip = String(spec['clusterIP']);
      throw new ApiFailure(422, 'Invalid', `Service "${name}" is invalid: spec.clusterIPs: Invalid value: []string{"${ip}"}: failed to allocate IP ${ip}: provided IP is already allocated`);
    }
    spec['clusterIPs'] = [spec['clusterIP']];
  }

  private allocate(taken: (ip: string) => boolean): string {
    const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(this.options.serviceCIDR ?? '10.96.0.0/12');
    if (!m) throw new Error(`fake API server: serviceCIDR must be IPv4`);
    const base = m.slice(1, 5).reduce((acc, o) => acc * 256 + Number(o), 0);
    const size = 2 ** (32 - Number(m[5]));
    // The API server allocates at random; from the top down keeps tests readable and apart from the 10th.
    for (let n = base + size - 2; n > base; n--) {
      const ip = [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
      if (!taken(ip)) return ip;
    }
    throw new ApiFailure(500, 'InternalError', 'Internal error occurred: failed to allocate a serviceIP: range is full');
  }

  /** Server-side apply of `applied` by `manager` (always with force, as kdns sends it). */
  private apply(c: Collection, route: Route, applied: ApiObject, manager: string): ApiObject {
    const key = `${route.namespace ?? ''}/${route.name}`;
    const old = c.objects.get(key);
    const owners = new Map(c.owners.get(key) ?? []);
    const next: ApiObject = old ? clone(old) : { apiVersion: c.resource.apiVersion, kind: c.resource.kind, metadata: { name: route.name ?? '', ...(route.namespace ? { namespace: route.namespace } : {}) } };
    const fields = fieldsOf(applied, c.resource.kind);
    const before = owners.get(manager)?.fields ?? new Map<string, Path>();
    const ownedByOthers = (k: string): boolean => [...owners].some(([m, set]) => m !== manager && set.fields.has(k));
    for (const [k, path] of before) if (!fields.has(k) && !ownedByOthers(k)) deleteAt(next, path);
    for (const path of fields.values()) setAt(next, path, getAt(applied, path));
    prune(next);
    for (const [m, set] of owners) {
      if (m === manager) continue;
      // Forced: fields whose value this apply changed move to it; same values stay shared.
      const kept = new Map([...set.fields].filter(([k, p]) => !fields.has(k) || isDeepStrictEqual(getAt(old, p), getAt(applied, p))));
      if (kept.size === 0) owners.delete(m);
      else owners.set(m, { ...set, fields: kept });
    }
    owners.set(manager, { operation: 'Apply', fields });
    return this.store(c, old, next, owners);
  }

  /** An update by `manager`: it becomes the owner of every field whose value it changed. */
  private update(c: Collection, old: ApiObject | undefined, next: ApiObject, manager: string): ApiObject {
    const key = keyOf(next);
    const owners = new Map(c.owners.get(key) ?? []);
    const after = fieldsOf(next, c.resource.kind);
    const beforeFields = old ? fieldsOf(old, c.resource.kind) : new Map<string, Path>();
    const changed = [...after].filter(([, p]) => !isDeepStrictEqual(getAt(old, p), getAt(next, p)));
    const gone = [...beforeFields.keys()].filter((k) => !after.has(k));
    for (const [m, set] of owners) {
      const kept = new Map([...set.fields].filter(([k]) => !gone.includes(k) && !changed.some(([ck]) => ck === k)));
      if (kept.size === 0) owners.delete(m);
      else owners.set(m, { ...set, fields: kept });
    }
    if (changed.length > 0) {
      const mine = owners.get(manager)?.fields ?? new Map<string, Path>();
      owners.set(manager, { operation: 'Update', fields: new Map([...mine, ...changed]) });
    }
    return this.store(c, old, next, owners);
  }

  private route(pathname: string): Route | undefined {
    const m = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)\/(.*)$/.exec(pathname);
    if (!m) return undefined;
    const [, prefix, rest] = m as unknown as [string, string, string];
    const parts = rest.split('/').filter(Boolean);
    let namespace: string | undefined;
    if (parts[0] === 'namespaces' && parts.length >= 3 && parts[2] !== 'status') {
      namespace = parts[1];
      parts.splice(0, 2);
    }
    const collection = this.collections.get(`${prefix}/${parts[0] ?? ''}`);
    if (!collection || parts.length > 3) return undefined;
    return { collection, ...(namespace !== undefined ? { namespace } : {}), ...(parts[1] !== undefined ? { name: parts[1] } : {}), ...(parts[2] !== undefined ? { subresource: parts[2] } : {}) };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const params = Object.fromEntries(url.searchParams);
    const watch = params['watch'] === 'true' || params['watch'] === '1';
    const method = req.method ?? 'GET';
    const receivedAt = performance.now();
    let body = '';
    for await (const chunk of req) body += String(chunk);
    this.requests.push({ method, path: url.pathname, watch, params, contentType: req.headers['content-type'] ?? '', receivedAt });
    const route = this.route(url.pathname);
    if (!route) return this.status(res, 404, 'NotFound', `the server could not find the requested resource (${url.pathname})`);
    if (this.failNext > 0) {
      this.failNext--;
      return this.status(res, 500, 'InternalError', 'an error on the server ("etcdserver: request timed out") has prevented the request from succeeding');
    }
    try {
      if (!watch) this.checkRequestFailure(method, url.pathname);
      if (method === 'GET') {
        if (route.name !== undefined) return this.getOne(route, res);
        if (watch) return this.watch(route, params, res);
        if (this.listGate) await this.listGate;
        return this.list(route, params, res);
      }
      const manager = params['fieldManager'] ?? 'unknown';
      if (method === 'POST' && route.name === undefined) {
        const submitted = this.parseBody(body);
        const admitted = this.admission ? await this.admission({ resource: route.collection.resource, ...(route.namespace !== undefined ? { namespace: route.namespace } : {}), object: submitted, params }) : submitted;
        return this.send(res, 201, this.create(route, admitted, manager));
      }
      if (method === 'PATCH' && route.name !== undefined) return this.send(res, 200, this.patch(route, req.headers['content-type'] ?? '', body, manager));
      if (method === 'PUT' && route.name !== undefined && route.subresource === undefined) return this.send(res, 200, this.replace(route, this.parseBody(body), manager));
      return this.status(res, 405, 'MethodNotAllowed', `${method} is not supported on ${url.pathname}`);
    } catch (e) {
      if (e instanceof ApiFailure) return this.status(res, e.code, e.reason, e.message);
      return this.status(res, 422, 'Invalid', (e as Error).message);
    }
  }

  private parseBody(body: string): ApiObject {
    const o = parseYaml(body) as unknown;
    if (!isObject(o) || !isObject(o['metadata'])) throw new ApiFailure(400, 'BadRequest', 'the body is not an object with metadata');
    return o as ApiObject;
  }

  private checkRequestFailure(method: string, pathname: string): void {
    const f = this.requestFailures.find((w) => pathname.endsWith(w.pathSuffix) && (w.times ?? 1) > 0 && (w.method === undefined ? method !== 'GET' : w.method === method));
    if (!f) return;
    if (f.times !== undefined) f.times--;
    throw new ApiFailure(f.code, f.reason, f.message);
  }

  private create(route: Route, obj: ApiObject, manager: string): ApiObject {
    const c = route.collection;
    const name = obj.metadata.name;
    if (c.objects.has(`${route.namespace ?? ''}/${name}`)) throw new ApiFailure(409, 'AlreadyExists', `${c.resource.kind.toLowerCase()}s "${name}" already exists`);
    const next = clone(obj);
    if (route.namespace !== undefined) next.metadata.namespace = route.namespace;
    delete next['status'];
    return this.update(c, undefined, next, manager);
  }

  private patch(route: Route, contentType: string, body: string, manager: string): ApiObject {
    const c = route.collection;
    const key = `${route.namespace ?? ''}/${route.name}`;
    const old = c.objects.get(key);
    if (contentType === 'application/apply-patch+yaml') {
      if (route.subresource !== undefined) throw new ApiFailure(405, 'MethodNotAllowed', 'apply to a subresource is not supported here');
      const applied = this.parseBody(body);
      delete applied['status'];
      return this.apply(c, route, applied, manager);
    }
    if (!old) throw new ApiFailure(404, 'NotFound', `${c.resource.kind.toLowerCase()}s "${route.name}" not found`);
    const patch = JSON.parse(body) as unknown;
    let next: ApiObject;
    if (contentType === 'application/merge-patch+json') next = mergePatch(old, patch) as ApiObject;
    else if (contentType === 'application/json-patch+json') next = jsonPatch(old, patch as Array<{ op: string; path: string; value?: unknown }>) as ApiObject;
    else throw new ApiFailure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format: ${contentType}`);
    // The status subresource changes only status; the main resource never changes status.
    if (route.subresource === 'status') next = { ...clone(old), status: next['status'] };
    else if (old['status'] !== undefined) next['status'] = clone(old['status']);
    else delete next['status'];
    return this.update(c, old, next, manager);
  }

  /**
   * PUT: the whole object in place of the stored one. A resourceVersion in the body is a
   * precondition (409 Conflict when the object changed since), as clients use for optimistic
   * concurrency; none means "whatever is stored". No create through PUT (as for most kinds).
   */
  private replace(route: Route, obj: ApiObject, manager: string): ApiObject {
    const c = route.collection;
    const kind = c.resource.kind.toLowerCase();
    const old = c.objects.get(`${route.namespace ?? ''}/${route.name}`);
    if (!old) throw new ApiFailure(404, 'NotFound', `${kind}s "${route.name}" not found`);
    if (obj.metadata.name !== route.name) throw new ApiFailure(400, 'BadRequest', `the name of the object (${obj.metadata.name}) does not match the name on the URL (${route.name})`);
    const given = obj.metadata.resourceVersion;
    if (given !== undefined && given !== '' && given !== old.metadata.resourceVersion) {
      throw new ApiFailure(409, 'Conflict', `Operation cannot be fulfilled on ${kind}s "${route.name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    const next = clone(obj);
    if (route.namespace !== undefined) next.metadata.namespace = route.namespace;
    if (old['status'] !== undefined) next['status'] = clone(old['status']);
    else delete next['status'];
    return this.update(c, old, next, manager);
  }

  private getOne(route: Route, res: ServerResponse): void {
    const o = route.collection.objects.get(`${route.namespace ?? ''}/${route.name}`);
    if (!o) return this.status(res, 404, 'NotFound', `${route.collection.resource.kind.toLowerCase()}s "${route.name}" not found`);
    this.send(res, 200, o);
  }

  private send(res: ServerResponse, code: number, obj: unknown): void {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(obj));
  }

  private status(res: ServerResponse, code: number, reason: string, message: string): void {
    this.send(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  }

  private inNamespace(route: Route): ApiObject[] {
    return [...route.collection.objects.values()].filter((o) => route.namespace === undefined || o.metadata.namespace === route.namespace);
  }

  private list(route: Route, params: Record<string, string>, res: ServerResponse): void {
    const c = route.collection;
    const fields = parseFieldSelector(params['fieldSelector'], c.resource.kind);
    const all = this.inNamespace(route)
      .filter((o) => fieldsMatch(o, fields))
      .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
    const limit = params['limit'] ? Number(params['limit']) : all.length;
    const offset = params['continue'] ? Number(Buffer.from(params['continue'], 'base64url').toString()) : 0;
    const page = all.slice(offset, offset + limit).map((o) => {
      const { kind: _k, apiVersion: _a, ...rest } = o;
      return rest; // list items carry no kind/apiVersion, as the API server sends them
    });
    const next = offset + limit < all.length ? Buffer.from(String(offset + limit)).toString('base64url') : undefined;
    this.send(res, 200, {
      kind: `${c.resource.kind}List`,
      apiVersion: c.resource.apiVersion,
      metadata: { resourceVersion: String(this.rv), ...(next ? { continue: next, remainingItemCount: all.length - offset - limit } : {}) },
      items: page,
    });
  }

  private watch(route: Route, params: Record<string, string>, res: ServerResponse): void {
    const c = route.collection;
    const fields = parseFieldSelector(params['fieldSelector'], c.resource.kind);
    const given = params['resourceVersion'];
    const from = Number(given ?? '0');
    if (from !== 0 && from < this.compactedAt) {
      const message = `too old resource version: ${from} (${this.compactedAt + 1})`;
      if (this.goneAsHttpStatus) return this.status(res, 410, 'Expired', message);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Expired', code: 410 } })}\n`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const matches = (o: ApiObject): boolean => route.namespace === undefined || o.metadata.namespace === route.namespace;
    if (from === 0) {
      // No version (or "0"): the state as synthetic ADDED events, then what changes.
      for (const o of this.inNamespace(route)) if (fieldsMatch(o, fields)) res.write(`${JSON.stringify({ type: 'ADDED', object: o })}\n`);
    } else {
      for (const ev of c.history) {
        const sent = ev.rv > from && matches(ev.object) ? selectedEvent(ev, fields) : undefined;
        if (sent) res.write(`${JSON.stringify({ type: sent.type, object: sent.object })}\n`);
      }
    }
    const watcher: Watcher = { res, fields, ...(route.namespace !== undefined ? { namespace: route.namespace } : {}) };
    c.watchers.add(watcher);
    const timeout = Number(params['timeoutSeconds'] ?? '0');
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    const every = this.options.bookmarkIntervalMs ?? 0;
    const bookmarks = every > 0 && params['allowWatchBookmarks'] === 'true' ? setInterval(() => this.sendBookmark(c, res), every) : undefined;
    if (bookmarks) this.timers.add(bookmarks);
    res.on('close', () => {
      if (timer) clearTimeout(timer);
      if (bookmarks) {
        clearInterval(bookmarks);
        this.timers.delete(bookmarks);
      }
      c.watchers.delete(watcher);
    });
  }
}
