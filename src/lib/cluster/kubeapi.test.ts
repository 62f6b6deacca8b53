// The API source against an HTTP server speaking the real list/watch protocol, seeded with
// API responses as a kind cluster serves them (testdata/api/*.json).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { waitFor } from '../../../test/util/net.js';
import { FakeApiServer, type FakeApiOptions } from '../../../test/util/fakeapi.js';
import { apiAccess, Backoff, createKubeApiSource, DEFAULT_TIMING, endpointAccess, inClusterAccess, resourcesFor, runsClientNode, type KubeApiNeeds, type KubeApiSource, type ReflectorTiming } from './kubeapi.js';
import { ClusterStore } from './store.js';
import { silentLog } from './source.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
type Item = Record<string, unknown> & { metadata: { name: string; namespace?: string } };
const fixture = (file: string): Item[] => (JSON.parse(readFileSync(join(ROOT, 'src/lib/cluster/testdata/api', file), 'utf8')) as { items: Item[] }).items;

describe('which Node.js can load the Kubernetes API client', () => {
  const cases: Array<[string, boolean]> = [
    ['20.20.2', false],
    ['22.18.0', false],
    ['22.19.0', true],
    ['v22.21.1', true],
    ['24.0.0', true],
    ['26.12.1', true],
  ];
  for (const [version, want] of cases) test(`${version} → ${want}`, () => assert.equal(runsClientNode(version), want));
});

const SERVICES = '/api/v1/services';
const SLICES = '/apis/discovery.k8s.io/v1/endpointslices';
const PODS = '/api/v1/pods';
const TIMING: ReflectorTiming = { initialBackoffMs: 20, maxBackoffMs: 200, pageSize: 2, watchTimeoutSeconds: [60, 60], watchIdleTimeoutMs: 60_000, backoffResetMs: 120_000 };

interface Harness {
  api: FakeApiServer;
  store: ClusterStore;
  source: KubeApiSource;
  done(): Promise<void>;
}

async function harness(prepare?: (api: FakeApiServer) => void, resyncMs = 0, timing: ReflectorTiming = TIMING, apiOptions: FakeApiOptions = {}): Promise<Harness> {
  const api = new FakeApiServer(undefined, apiOptions);
  api.seed('/api/v1/namespaces', fixture('namespaces.json'));
  api.seed(SERVICES, fixture('services.json'));
  api.seed(SLICES, fixture('endpointslices.json'));
  api.seed('/api/v1/pods', fixture('pods.json'));
  prepare?.(api);
  const url = await api.listen();
  const store = new ClusterStore();
  const source = await createKubeApiSource({ endpoint: url, resyncMs }, { pods: true, endpoints: true }, store, silentLog, timing);
  return {
    api,
    store,
    source,
    done: async () => {
      await source.stop();
      await api.close();
    },
  };
}

/** `name.ns=ips` of every service, sorted: what DNS will answer from. */
const services = (store: ClusterStore): string[] =>
  [...store.allServices()].map((s) => `${s.key}=${s.kind === 'ExternalName' ? s.externalName : s.kind === 'Headless' ? 'None' : s.clusterIPs.join(',')}`).sort();

const requests = (api: FakeApiServer, path: string, watch: boolean): Array<Record<string, string>> =>
  api.requests.filter((r) => r.path === path && r.watch === watch).map((r) => r.params);

const cart = (ip: string): Item => ({ metadata: { name: 'cart', namespace: 'shop' }, spec: { clusterIP: ip, ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });

const INITIAL = ['cart.shop=10.96.44.12,fd00:10:96::2c0c', 'kube-dns.kube-system=10.96.0.10', 'kubernetes.default=10.96.0.1', 'orders-db.shop=None', 'payments.shop=api.payments.example'];

test('API source: paged lists of every kind, then synced', async () => {
  const h = await harness();
  try {
    await h.source.start();
    assert.equal(h.store.synced, true);
    assert.deepEqual(services(h.store), INITIAL);
    // 5 services in pages of 2: three requests, the later ones carrying the continue token.
    const lists = requests(h.api, SERVICES, false);
    assert.deepEqual(lists.map((p) => [p['limit'], p['continue'] !== undefined]), [['2', false], ['2', true], ['2', true]]);
    const db = h.store.endpointGroups('orders-db.shop').flatMap((g) => g.addresses.map((a) => `${a.hostname} ${a.ip} ${a.ready}`));
    assert.deepEqual(db, ['orders-db-0 10.244.1.7 true', 'orders-db-1 10.244.2.9 false']);
    assert.deepEqual(h.store.podsByIP('10.244.1.7').map((p) => `${p.namespace}/${p.name} ${p.phase}`), ['shop/orders-db-0 Running']);
    assert.equal(requests(h.api, '/api/v1/pods', false)[0]?.['fieldSelector'], 'status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown');
    // Watches start from the list's version and ask for bookmarks.
    await waitFor(() => h.api.openWatches(SERVICES) === 1);
    const w = requests(h.api, SERVICES, true)[0];
    assert.equal(w?.['resourceVersion'], h.api.resourceVersion);
    assert.equal(w?.['allowWatchBookmarks'], 'true');
  } finally {
    await h.done();
  }
});

interface EventCase {
  what: string;
  act: (api: FakeApiServer) => void;
  expect: string[];
}

const eventCases: EventCase[] = [
  { what: 'ADDED', act: (api) => api.add(SERVICES, { metadata: { name: 'new', namespace: 'shop' }, spec: { clusterIP: '10.96.9.9' } }), expect: [...INITIAL, 'new.shop=10.96.9.9'].sort() },
  { what: 'MODIFIED', act: (api) => api.add(SERVICES, cart('10.96.44.13')), expect: INITIAL.map((s) => (s.startsWith('cart.') ? 'cart.shop=10.96.44.13' : s)) },
  { what: 'DELETED', act: (api) => api.remove(SERVICES, 'shop', 'payments'), expect: INITIAL.filter((s) => !s.startsWith('payments.')) },
];

for (const c of eventCases) {
  test(`API source: a watch ${c.what} event reaches the store`, async () => {
    const h = await harness();
    try {
      await h.source.start();
      await waitFor(() => h.api.openWatches(SERVICES) === 1);
      c.act(h.api);
      await waitFor(() => services(h.store).join() === c.expect.join(), 2000);
      assert.deepEqual(services(h.store), c.expect);
      assert.equal(requests(h.api, SERVICES, false).length, 3, 'no relist');
    } finally {
      await h.done();
    }
  });
}

test('API source: a BOOKMARK moves the point a dropped watch resumes from', async () => {
  const h = await harness();
  try {
    await h.source.start();
    await waitFor(() => h.api.openWatches(SERVICES) === 1);
    // Changes elsewhere advance the global version; the bookmark tells the services watch.
    h.api.add(SLICES, { metadata: { name: 'x', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'cart' } }, addressType: 'IPv4', endpoints: [] });
    h.api.bookmark(SERVICES);
    const bookmarked = h.api.resourceVersion;
    await waitFor(() => h.store.endpointGroups('cart.shop').length === 1);
    await new Promise((r) => setTimeout(r, 50));
    h.api.dropWatches();
    await waitFor(() => requests(h.api, SERVICES, true).length === 2, 2000);
    assert.equal(requests(h.api, SERVICES, true)[1]?.['resourceVersion'], bookmarked);
    assert.equal(requests(h.api, SERVICES, false).length, 3, 'no relist');
  } finally {
    await h.done();
  }
});

test('API source: a dropped connection resumes from the last version, missing nothing', async () => {
  const h = await harness();
  try {
    await h.source.start();
    await waitFor(() => h.api.openWatches(SERVICES) === 1);
    h.api.add(SERVICES, cart('10.96.44.14'));
    await waitFor(() => h.store.service('cart.shop')?.clusterIPs[0] === '10.96.44.14');
    const seen = h.api.resourceVersion;
    h.api.dropWatches();
    // While the client is away (reconnecting after its backoff), the cluster changes.
    h.api.remove(SERVICES, 'shop', 'payments');
    await waitFor(() => services(h.store).every((s) => !s.startsWith('payments.')), 2000);
    const resumed = requests(h.api, SERVICES, true);
    assert.equal(resumed[resumed.length - 1]?.['resourceVersion'], seen);
    assert.equal(requests(h.api, SERVICES, false).length, 3, 'no relist');
  } finally {
    await h.done();
  }
});

for (const asHttp of [false, true]) {
  test(`API source: 410 Gone ${asHttp ? 'as an HTTP status' : 'as a watch ERROR event'} relists`, async () => {
    const h = await harness();
    try {
      await h.source.start();
      await waitFor(() => h.api.openWatches(SERVICES) === 1);
      h.api.goneAsHttpStatus = asHttp;
      h.api.dropWatches();
      // Deleted and compacted while away: only a relist can tell the client.
      h.api.remove(SERVICES, 'shop', 'cart');
      h.api.compact();
      await waitFor(() => requests(h.api, SERVICES, false).length > 3, 3000);
      await waitFor(() => !h.store.service('cart.shop'), 2000);
      assert.deepEqual(services(h.store), INITIAL.filter((s) => !s.startsWith('cart.')));
      await waitFor(() => h.api.openWatches(SERVICES) === 1, 2000);
    } finally {
      await h.done();
    }
  });
}

test('API source: failing requests are retried with backoff until the first sync', async () => {
  const h = await harness((api) => {
    api.failNext = 3;
  });
  try {
    const started = Date.now();
    await h.source.start();
    assert.equal(h.store.synced, true);
    assert.deepEqual(services(h.store), INITIAL);
    // Three failures: at least 20 + 40 + 80 ms of backoff on the retried kinds.
    assert.ok(Date.now() - started >= 20, 'retried after a pause');
    const failures = h.source.reflectors.reduce((n, r) => n + r.stats.failures, 0);
    assert.equal(failures, 3);
  } finally {
    await h.done();
  }
});

test('API source: resync relists on a timer', async () => {
  const h = await harness(undefined, 150);
  try {
    await h.source.start();
    await waitFor(() => requests(h.api, SERVICES, false).length >= 6, 3000);
    assert.deepEqual(services(h.store), INITIAL);
  } finally {
    await h.done();
  }
});

const reflectorOf = (h: Harness, path: string): KubeApiSource['reflectors'][number] => {
  const r = h.source.reflectors.find((x) => (x as unknown as { resource: { path: string } }).resource.path === path);
  assert.ok(r, `a reflector for ${path}`);
  return r;
};

test('API source: a quiet kind with bookmarks at their cadence keeps one watch open past the idle limit', async () => {
  // Scaled down: bookmarks every 100 ms, the client's idle limit 400 ms, 1.5 s of quiet.
  const h = await harness(undefined, 0, { ...TIMING, watchIdleTimeoutMs: 400 }, { bookmarkIntervalMs: 100 });
  try {
    await h.source.start();
    await waitFor(() => h.api.openWatches(SERVICES) === 1);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(requests(h.api, SERVICES, true).length, 1, 'still the first watch');
    assert.equal(reflectorOf(h, SERVICES).stats.idleTimeouts, 0);
    assert.equal(requests(h.api, SERVICES, false).length, 3, 'no relist');
  } finally {
    await h.done();
  }
});

test('API source: a watch silent past the idle limit (no bookmarks) resumes from its version, without a relist', async () => {
  const h = await harness(undefined, 0, { ...TIMING, watchIdleTimeoutMs: 300 });
  try {
    await h.source.start();
    const listed = h.api.resourceVersion;
    await waitFor(() => requests(h.api, SERVICES, true).length >= 3, 5000);
    assert.deepEqual(requests(h.api, SERVICES, true).map((p) => p['resourceVersion']).slice(0, 3), [listed, listed, listed]);
    assert.ok(reflectorOf(h, SERVICES).stats.idleTimeouts >= 2);
    assert.equal(reflectorOf(h, SERVICES).stats.failures, 0);
    assert.equal(requests(h.api, SERVICES, false).length, 3, 'no relist');
  } finally {
    await h.done();
  }
});

test('API source: with the default timing a silent watch stays connected past client-node\'s 30 s', { timeout: 60_000 }, async () => {
  // Real duration, the one check that the library's own 30 s limit is really replaced.
  const h = await harness(undefined, 0, { ...DEFAULT_TIMING, pageSize: 2 });
  try {
    await h.source.start();
    await waitFor(() => h.api.openWatches(SERVICES) === 1);
    await new Promise((r) => setTimeout(r, 35_000));
    assert.equal(h.api.openWatches(SERVICES), 1);
    assert.equal(requests(h.api, SERVICES, true).length, 1, 'no reconnect');
    assert.equal(reflectorOf(h, SERVICES).stats.idleTimeouts, 0);
  } finally {
    await h.done();
  }
});

test('API source: dropped watches back off, and a watch that stayed up long enough starts the backoff over', async () => {
  const h = await harness(undefined, 0, { ...TIMING, initialBackoffMs: 20, maxBackoffMs: 10_000, backoffResetMs: 600 });
  try {
    await h.source.start();
    const r = reflectorOf(h, SERVICES);
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      await waitFor(() => h.api.openWatches(SERVICES) === 1, 3000);
      const failures = r.stats.failures;
      h.api.dropWatches();
      await waitFor(() => r.stats.failures > failures, 3000);
      delays.push(r.stats.lastBackoffMs);
    }
    assert.deepEqual(delays, [20, 40, 80]);
    await waitFor(() => h.api.openWatches(SERVICES) === 1, 3000);
    await new Promise((res) => setTimeout(res, 700)); // healthy for longer than backoffResetMs
    h.api.dropWatches();
    await waitFor(() => r.stats.failures === 4, 3000);
    assert.equal(r.stats.lastBackoffMs, 20);
  } finally {
    await h.done();
  }
});

test('Backoff: doubles to its cap, starts over after a healthy period', () => {
  const b = new Backoff(100, 500, 1000);
  assert.deepEqual([b.delay(0), b.delay(10), b.delay(999), b.delay(0), b.delay(0), b.delay(1000), b.delay(0)], [100, 200, 400, 500, 500, 100, 200]);
});

describe('resourcesFor: what is listed and watched, and with which field selector', () => {
  const LIVE = 'status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown';
  const cases: Array<{ name: string; needs: KubeApiNeeds; want: string[] }> = [
    {
      name: 'a kubernetes block without pods',
      needs: { pods: false, endpoints: true },
      want: ['Namespace /api/v1/namespaces', 'Service /api/v1/services', 'EndpointSlice /apis/discovery.k8s.io/v1/endpointslices'],
    },
    {
      name: 'pods verified: every live pod',
      needs: { pods: true, endpoints: false },
      want: ['Namespace /api/v1/namespaces', 'Service /api/v1/services', `Pod /api/v1/pods ${LIVE}`],
    },
    { name: 'podsOnly: the Pod resource alone', needs: { pods: true, endpoints: false, podsOnly: true }, want: [`Pod /api/v1/pods ${LIVE}`] },
    {
      name: 'podsOnly wins over other needs',
      needs: { pods: false, endpoints: true, multicluster: true, podsOnly: true },
      want: [`Pod /api/v1/pods ${LIVE}`],
    },
    {
      name: 'podsOnly on one node: the node joins the phase selector',
      needs: { pods: true, endpoints: false, podsOnly: true, nodeName: 'node-a' },
      want: [`Pod /api/v1/pods ${LIVE},spec.nodeName=node-a`],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(
        resourcesFor(c.needs).map((r) => [r.kind, r.path, r.fieldSelector].filter((x) => x !== undefined).join(' ')),
        c.want,
      );
    });
  }
});

test('API source: the pods of one node; one that moves off it leaves the store, one that moves onto it arrives', async () => {
  const pod = (name: string, node: string, ip: string): Item => ({ metadata: { name, namespace: 'shop' }, spec: { nodeName: node }, status: { phase: 'Running', podIP: ip } });
  const api = new FakeApiServer();
  api.seed(PODS, [pod('a1', 'node-a', '10.244.1.1'), pod('b1', 'node-b', '10.244.2.1')]);
  const url = await api.listen();
  const store = new ClusterStore();
  const source = await createKubeApiSource({ endpoint: url, resyncMs: 0 }, { pods: true, endpoints: false, podsOnly: true, nodeName: 'node-a' }, store, silentLog, TIMING);
  const ips = (): string[] => ['10.244.1.1', '10.244.2.1', '10.244.1.2'].filter((ip) => store.podsByIP(ip).length > 0);
  try {
    await source.start();
    assert.deepEqual(ips(), ['10.244.1.1']);
    // Only the Pod resource, list and watch filtered by the API server.
    assert.deepEqual([...new Set(api.requests.map((r) => r.path))], [PODS]);
    await waitFor(() => api.openWatches(PODS) === 1);
    const selectors = api.requests.map((r) => `${r.watch ? 'watch' : 'list'} ${r.params['fieldSelector']}`);
    assert.deepEqual(selectors, [
      'list status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown,spec.nodeName=node-a',
      'watch status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown,spec.nodeName=node-a',
    ]);
    api.add(PODS, pod('a2', 'node-a', '10.244.1.2'));
    api.add(PODS, pod('b1', 'node-a', '10.244.2.1'));
    await waitFor(() => ips().length === 3, 2000);
    api.add(PODS, pod('a1', 'node-b', '10.244.1.1'));
    api.add(PODS, { ...pod('a2', 'node-a', '10.244.1.2'), status: { phase: 'Succeeded', podIP: '10.244.1.2' } });
    await waitFor(() => ips().join() === '10.244.2.1', 2000);
    assert.deepEqual(ips(), ['10.244.2.1']);
  } finally {
    await source.stop();
    await api.close();
  }
});

describe("kdns's own access: what the environment and the files say, and what is wrong with them", () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-sa-'));
  writeFileSync(join(dir, 'token'), 'sa-token\n');
  const cases: Array<{ name: string; env: Record<string, string>; dir: string; want: string | RegExp }> = [
    { name: 'an IPv4 service address', env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir, want: 'https://10.96.0.1:443' },
    { name: 'an IPv6 service address, in brackets', env: { KUBERNETES_SERVICE_HOST: 'fd00:10:96::1', KUBERNETES_SERVICE_PORT: '6443' }, dir, want: 'https://[fd00:10:96::1]:6443' },
    { name: 'no service host: not in a cluster', env: { KUBERNETES_SERVICE_PORT: '443' }, dir, want: /^not running in a cluster \(KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset\)/ },
    { name: 'no token mounted', env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir: join(dir, 'absent'), want: `in-cluster config: ${join(dir, 'absent')}/token does not exist` },
  ];
  for (const c of cases) {
    test(c.name, () => {
      if (typeof c.want === 'string' && c.want.startsWith('https://')) {
        assert.equal(inClusterAccess(c.env, c.dir).server, c.want);
      } else {
        assert.throws(() => inClusterAccess(c.env, c.dir), { message: c.want });
      }
    });
  }

  test('a CA the folder lacks is named when a request is prepared', async () => {
    await assert.rejects(inClusterAccess({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir).authorize({}), { message: `in-cluster CA ${dir}/ca.crt: ENOENT` });
  });

  test('a tls file that is not there is named when a request is prepared', async () => {
    await assert.rejects(endpointAccess('https://127.0.0.1:6443', { cert: join(dir, 'client.crt'), key: join(dir, 'client.key'), ca: join(dir, 'ca.crt') }).authorize({}), {
      message: `tls certificate ${join(dir, 'client.crt')}: ENOENT`,
    });
  });

  test('apiAccess: endpoint, else the pod\'s own service account', async () => {
    assert.equal((await apiAccess({ endpoint: 'http://127.0.0.1:8001', resyncMs: 0 })).server, 'http://127.0.0.1:8001');
    await assert.rejects(apiAccess({ resyncMs: 0 }, {}), { message: /^not running in a cluster/ });
  });
});

test('a pods-only source through endpoint lists and watches without loading @kubernetes/client-node', async () => {
  // In a process of its own, every module it resolves recorded: the node cache's saving is
  // that this client (about 40 MiB) is never imported.
  const script = `
    import { registerHooks } from 'node:module';
    import { createServer } from 'node:http';
    const resolved = [];
    registerHooks({ resolve: (specifier, context, next) => { const r = next(specifier, context); resolved.push(r.url); return r; } });
    const server = createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(req.url.includes('watch=true') ? '' : '{"items":[],"metadata":{"resourceVersion":"7"}}');
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const { createKubeApiSource } = await import(${JSON.stringify(new URL('./kubeapi.ts', import.meta.url).href)});
    const { ClusterStore } = await import(${JSON.stringify(new URL('./store.ts', import.meta.url).href)});
    const log = { info() {}, warn() {}, error() {} };
    const source = await createKubeApiSource({ endpoint: 'http://127.0.0.1:' + server.address().port, resyncMs: 0 }, { pods: true, endpoints: false, podsOnly: true, nodeName: 'n1' }, new ClusterStore(), log);
    await source.start();
    await source.stop();
    server.close();
    console.log(JSON.stringify({ synced: source.store.synced, clientNode: resolved.filter((u) => u.includes('@kubernetes/client-node')).length }));
  `;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: ROOT });
  assert.deepEqual(JSON.parse(out.trim().split('\n').pop() as string), { synced: true, clientNode: 0 });
});
