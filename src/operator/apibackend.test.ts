// The API backend against an HTTP server speaking the Kubernetes protocol for the calls it makes
// (GET, server-side apply, JSON patch, status merge patch, watch). No API server can run here,
// so this stand-in records the requests and keeps the objects, as the real one would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiBackend, APPLIED_HASH_ANNOTATION, watchApi } from './apibackend.js';
import { Reconciler } from './reconcile.js';
import { waitFor } from '../testutil/net.js';

interface Recorded {
  method: string;
  path: string;
  query: string;
  contentType: string;
}

type Obj = Record<string, any>; // A loose view of JSON bodies; the assertions are the type check.

class FakeApi {
  readonly objects = new Map<string, Obj>();
  readonly requests: Recorded[] = [];
  private readonly watchers = new Set<{ prefix: string; res: ServerResponse }>();
  private readonly server = createServer((req, res) => void this.handle(req, res));
  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    for (const w of this.watchers) w.res.end();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** True once a watch is open on `path` (it would see a change made now). */
  watching(path: string): boolean {
    return [...this.watchers].some((w) => path.startsWith(w.prefix));
  }

  /** Stores an object and tells watchers, as a write through the API would. */
  put(path: string, obj: Obj, event: 'ADDED' | 'MODIFIED' = 'MODIFIED'): void {
    this.objects.set(path, obj);
    for (const w of this.watchers) if (path.startsWith(w.prefix)) w.res.write(`${JSON.stringify({ type: event, object: obj })}\n`);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    let body = '';
    for await (const chunk of req) body += chunk;
    const send = (status: number, obj: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(obj));
    };
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const w = { prefix: url.pathname, res };
      this.watchers.add(w);
      req.on('close', () => this.watchers.delete(w));
      return;
    }
    this.requests.push({ method: req.method ?? '', path: url.pathname, query: url.search, contentType: req.headers['content-type'] ?? '' });
    const path = url.pathname;
    if (req.method === 'GET') {
      if (path === '/api/v1/nodes') return send(200, { kind: 'NodeList', apiVersion: 'v1', metadata: {}, items: [...this.objects].filter(([p]) => p.startsWith('/api/v1/nodes/')).map(([, o]) => o) });
      const o = this.objects.get(path);
      return o ? send(200, o) : send(404, { kind: 'Status', code: 404, message: 'not found' });
    }
    if (req.method === 'PATCH') {
      const patch = JSON.parse(body) as Obj;
      const ct = req.headers['content-type'];
      if (ct === 'application/apply-patch+yaml') {
        const old = this.objects.get(path);
        // What matters here: the applied fields replace ours; the API server's own (status) stay.
        this.put(path, { ...patch, ...(old?.['status'] ? { status: old['status'] } : {}) }, old ? 'MODIFIED' : 'ADDED');
        return send(old ? 200 : 201, this.objects.get(path));
      }
      if (ct === 'application/merge-patch+json' && path.endsWith('/status')) {
        const target = path.slice(0, -'/status'.length);
        const o = this.objects.get(target);
        if (!o) return send(404, {});
        this.put(target, { ...o, status: patch['status'] });
        return send(200, this.objects.get(target));
      }
      if (ct === 'application/json-patch+json') {
        const o = structuredClone(this.objects.get(path));
        if (!o) return send(404, {});
        for (const op of patch as unknown as Array<{ op: string; path: string; value?: unknown }>) {
          const parts = op.path.split('/').slice(1);
          const last = parts.pop()!;
          const parent = parts.reduce((acc: Obj, k) => acc[k], o);
          if (op.op === 'test' && parent[last] !== op.value) return send(422, { message: 'test failed' });
          if (op.op === 'remove') (parent as unknown[]).splice(Number(last), 1);
        }
        this.put(path, o);
        return send(200, o);
      }
    }
    send(405, { message: 'unsupported' });
  }
}

const DNS_PATH = '/apis/operator.openshift.io/v1/dnses/default';
const dns = (plugins: unknown[]): Obj => ({ apiVersion: 'operator.openshift.io/v1', kind: 'DNS', metadata: { name: 'default', generation: 1 }, spec: { pluginConfig: { forwardPlugins: plugins } } });
const node = (name: string): Obj => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/os': 'linux' } }, spec: {} });

async function setup(): Promise<{ api: FakeApi; backend: ApiBackend; reconciler: Reconciler; logs: string[]; done: () => Promise<void> }> {
  const api = new FakeApi();
  await api.start();
  const dir = mkdtempSync(join(tmpdir(), 'kdns-kubeconfig-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // client-node refuses plain HTTP unless TLS verification is off; the stand-in speaks plain HTTP.
      clusters: [{ name: 'fake', cluster: { server: `http://127.0.0.1:${api.port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'fake', user: { token: 'test-token' } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
      'current-context': 'fake',
    }),
  );
  const logs: string[] = [];
  const backend = await ApiBackend.connect({ kubeconfig, namespace: 'kdns', log: (l) => logs.push(l) });
  const reconciler = new Reconciler(backend, { render: {}, log: (l) => logs.push(l), now: () => new Date('2024-05-01T12:00:00Z') });
  return { api, backend, reconciler, logs, done: () => api.stop() };
}

const writes = (api: FakeApi): string[] => api.requests.filter((r) => r.method === 'PATCH').map((r) => `${r.contentType} ${r.path}${r.query}`);

test('API backend: first pass server-side applies the four objects and patches the status', async () => {
  const t = await setup();
  try {
    t.api.put(DNS_PATH, dns([{ domain: 'foo.com', nameServers: ['1.1.1.1'] }]));
    t.api.put('/api/v1/nodes/n1', node('n1'));
    const outcome = await t.reconciler.pass();
    assert.equal(outcome.kind, 'applied');
    const q = '?fieldManager=kdns-operator&force=true';
    assert.deepEqual(writes(t.api), [
      `application/apply-patch+yaml /api/v1/namespaces/kdns/configmaps/dns-default${q}`,
      `application/apply-patch+yaml /apis/apps/v1/namespaces/kdns/daemonsets/dns-default${q}`,
      `application/apply-patch+yaml /apis/apps/v1/namespaces/kdns/daemonsets/node-resolver${q}`,
      `application/apply-patch+yaml /api/v1/namespaces/kdns/services/dns-default${q}`,
      `application/merge-patch+json ${DNS_PATH}/status`,
    ]);
    const cm = t.api.objects.get('/api/v1/namespaces/kdns/configmaps/dns-default');
    assert.match(cm?.['data'].Corefile, /^foo\.com:5353 \{/);
    assert.match(cm?.['metadata'].annotations[APPLIED_HASH_ANNOTATION], /^[0-9a-f]{32}$/);
    const status = t.api.objects.get(DNS_PATH)?.['status'];
    assert.deepEqual(
      status.conditions.map((c: Obj) => `${c['type']}=${c['status']}`),
      ['Degraded=False', 'Progressing=True', 'Available=False', 'Upgradeable=True', 'ConfigurationValid=True', 'PlacementValid=True'],
    );
  } finally {
    await t.done();
  }
});

test('API backend: a second pass with nothing changed sends nothing', async () => {
  const t = await setup();
  try {
    t.api.put(DNS_PATH, dns([]));
    await t.reconciler.pass();
    await t.reconciler.pass(); // the DaemonSets exist now: the status says so once
    const before = t.api.requests.length;
    await t.reconciler.pass();
    assert.deepEqual(writes({ requests: t.api.requests.slice(before) } as FakeApi), []);
  } finally {
    await t.done();
  }
});

test('API backend: the old dns-node-resolver container is removed from dns-default by name', async () => {
  const t = await setup();
  try {
    t.api.put(DNS_PATH, dns([]));
    const dsPath = '/apis/apps/v1/namespaces/kdns/daemonsets/dns-default';
    t.api.put(dsPath, {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'dns-default', namespace: 'kdns' },
      spec: { selector: { matchLabels: {} }, template: { metadata: { labels: {} }, spec: { containers: [{ name: 'dns', image: 'old' }, { name: 'dns-node-resolver', image: 'old' }] } } },
    });
    await t.reconciler.pass();
    assert.equal(writes(t.api)[0], `application/json-patch+json ${dsPath}?fieldManager=kdns-operator`);
    assert.deepEqual(
      t.api.objects.get(dsPath)?.['spec'].template.spec.containers.map((c: Obj) => c['name']),
      ['dns'],
    );
    assert.ok(t.logs.includes('removed container dns-node-resolver from DaemonSet dns-default'));
  } finally {
    await t.done();
  }
});

test('API backend: a change to the DNS resource wakes the loop through a watch', async () => {
  const t = await setup();
  const stop = new AbortController();
  try {
    t.api.put(DNS_PATH, dns([]));
    const wakes = watchApi(t.backend, stop.signal, 20)[Symbol.asyncIterator]();
    const next = wakes.next();
    // Change the resource only once the stand-in has seen the DNS watch: a fixed pause was too
    // short on a loaded machine, and a change made before the watch opens is never seen.
    await waitFor(() => t.api.watching(DNS_PATH), 10_000);
    t.api.put(DNS_PATH, dns([{ domain: 'bar.com', nameServers: ['2.2.2.2'] }]));
    const woke = await Promise.race([next.then(() => true), new Promise((r) => setTimeout(() => r(false), 5000))]);
    assert.equal(woke, true);
    stop.abort();
    await wakes.return?.(undefined);
  } finally {
    stop.abort();
    await t.done();
  }
});
