// The API backend against kdns's stand-in for kube-apiserver (test/util/fakeapi.ts): get,
// server-side apply with field ownership, JSON and merge patch, the status subresource, watches
// with versions and bookmarks, Service addresses. Hand edits are made as `kubectl edit` makes
// them: a merge patch over HTTP under another field manager.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer, OPERATOR_RESOURCES } from '../../test/util/fakeapi.js';
import type { ApiObject, FakeApiOptions } from '../../test/util/fakeapi.js';
import type { ReflectorTiming } from '../lib/cluster/kubeapi.js';
import { ApiBackend, APPLIED_HASH_ANNOTATION, watchApi } from './apibackend.js';
import { Reconciler, runReconcileLoop } from './reconcile.js';
import type { PassOutcome } from './reconcile.js';
import type { RenderOptions } from './render.js';
import { writeKubeconfig } from '../../test/util/kubeconfig.js';
import { waitFor } from '../../test/util/net.js';

type Obj = Record<string, any>; // A loose view of JSON bodies; the assertions are the type check.

const DNSES = '/apis/operator.openshift.io/v1/dnses';
const NODES = '/api/v1/nodes';
const CONFIGMAPS = '/api/v1/configmaps';
const SERVICES = '/api/v1/services';
const DAEMONSETS = '/apis/apps/v1/daemonsets';
const NS = 'kdns';

const dns = (plugins: unknown[]): ApiObject => ({ metadata: { name: 'default' }, spec: { pluginConfig: { forwardPlugins: plugins } } });
const node = (name: string): ApiObject => ({ metadata: { name, labels: { 'kubernetes.io/os': 'linux' } }, spec: {} });
const KUBE_DNS: ApiObject = { metadata: { name: 'kube-dns', namespace: 'kube-system' }, spec: { clusterIP: '10.96.0.10', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] } };

interface Harness {
  api: FakeApiServer;
  url: string;
  kubeconfig: string;
  backend: ApiBackend;
  reconciler: Reconciler;
  logs: string[];
  done: () => Promise<void>;
}

async function setup(o: { render?: RenderOptions; api?: FakeApiOptions; timing?: Partial<ReflectorTiming>; prepare?: (api: FakeApiServer) => void } = {}): Promise<Harness> {
  const api = new FakeApiServer(OPERATOR_RESOURCES, o.api ?? {});
  o.prepare?.(api);
  const url = await api.listen();
  const kubeconfig = writeKubeconfig(url);
  const logs: string[] = [];
  const backend = await ApiBackend.connect({ kubeconfig, namespace: NS, log: (l) => logs.push(l), ...(o.timing ? { timing: o.timing } : {}) });
  const reconciler = new Reconciler(backend, { render: o.render ?? {}, log: (l) => logs.push(l), now: () => new Date('2024-05-01T12:00:00Z') });
  return { api, url, kubeconfig, backend, reconciler, logs, done: () => api.close() };
}

const writes = (api: FakeApiServer, from = 0): string[] => api.requests.slice(from).filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.contentType} ${r.path}`);
const applied = (outcome: PassOutcome): string[] => (outcome.kind === 'applied' ? outcome.written : []);
const conditions = (api: FakeApiServer): Obj[] => (api.get(DNSES, undefined, 'default')?.['status'] as Obj | undefined)?.['conditions'] ?? [];
const condition = (api: FakeApiServer, type: string): Obj | undefined => conditions(api).find((c) => c['type'] === type);

type SetupOptions = Parameters<typeof setup>[0];

/** Runs `body` with a fresh harness, closing the server after. */
async function withApi(o: SetupOptions, body: (t: Harness) => Promise<void>): Promise<void> {
  const t = await setup(o);
  try {
    await body(t);
  } finally {
    await t.done();
  }
}

/** A change as `kubectl edit` sends it: a merge patch under its own field manager. */
async function kubectlEdit(h: Harness, path: string, patch: unknown): Promise<void> {
  const r = await fetch(`${h.url}${path}?fieldManager=kubectl-edit`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify(patch) });
  assert.equal(r.status, 200, await r.text());
}

/** Applies, then one more pass to settle the status; returns the request count after. */
async function settled(h: Harness): Promise<number> {
  await h.reconciler.pass();
  await h.reconciler.pass();
  return h.api.requests.length;
}

test('API backend: first pass server-side applies the five objects and patches the status', async () => {
  await withApi({}, async (t) => {
    t.api.add(DNSES, dns([{ domain: 'foo.com', nameServers: ['1.1.1.1'] }]));
    t.api.add(NODES, node('n1'));
    const outcome = await t.reconciler.pass();
    assert.equal(outcome.kind, 'applied');
    const ssa = 'PATCH application/apply-patch+yaml';
    assert.deepEqual(writes(t.api), [
      `${ssa} /api/v1/namespaces/kdns/configmaps/dns-default`,
      `${ssa} /apis/apps/v1/namespaces/kdns/daemonsets/dns-default`,
      `${ssa} /apis/apps/v1/namespaces/kdns/daemonsets/node-resolver`,
      `${ssa} /api/v1/namespaces/kdns/services/dns-default`,
      `${ssa} /api/v1/namespaces/kdns/configmaps/kdns-webhook`,
      `PATCH application/merge-patch+json ${DNSES}/default/status`,
    ]);
    assert.ok(t.api.requests.filter((r) => r.method === 'PATCH' && r.contentType.includes('apply')).every((r) => r.params['fieldManager'] === 'kdns-operator' && r.params['force'] === 'true'));
    const cm = t.api.get(CONFIGMAPS, NS, 'dns-default') as Obj;
    assert.match(cm['data'].Corefile, /^foo\.com:5353 \{/);
    assert.match(cm['metadata'].annotations[APPLIED_HASH_ANNOTATION], /^[0-9a-f]{32}$/);
    assert.deepEqual(
      conditions(t.api).map((c) => `${c['type']}=${c['status']}`),
      ['Degraded=False', 'Progressing=True', 'Available=False', 'Upgradeable=True', 'ConfigurationValid=True', 'PlacementValid=True'],
    );
  });
});

test('API backend: a pass with nothing changed sends nothing', async () => {
  await withApi({}, async (t) => {
    t.api.add(DNSES, dns([]));
    const before = await settled(t);
    await t.reconciler.pass();
    assert.deepEqual(writes(t.api, before), []);
  });
});

test('API backend: the old dns-node-resolver container is removed from dns-default by name', async () => {
  await withApi({}, async (t) => {
    t.api.add(DNSES, dns([]));
    t.api.add(DAEMONSETS, {
      metadata: { name: 'dns-default', namespace: NS },
      spec: { selector: { matchLabels: {} }, template: { metadata: { labels: {} }, spec: { containers: [{ name: 'dns', image: 'old' }, { name: 'dns-node-resolver', image: 'old' }] } } },
    });
    await t.reconciler.pass();
    assert.equal(writes(t.api)[0], `PATCH application/json-patch+json /apis/apps/v1/namespaces/kdns/daemonsets/dns-default`);
    assert.deepEqual(
      (t.api.get(DAEMONSETS, NS, 'dns-default') as Obj)['spec'].template.spec.containers.map((c: Obj) => c['name']),
      ['dns'],
    );
    assert.ok(t.logs.includes('removed container dns-node-resolver from DaemonSet dns-default'));
  });
});

// ---- drift: hand edits are put back by the next pass ----

/** A hand edit: `patch` to the object at `path` (stored in `collection` as `name`). */
interface EditCase {
  what: string;
  path: string;
  collection: string;
  name: string;
  patch: unknown;
  /** The field as it must be after the pass. */
  read: (o: Obj) => unknown;
  want: unknown;
}

interface DriftCase extends EditCase {
  /** The field path kdns-operator owns again. */
  owned: string;
}

const DS_PATH = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
const driftCases: DriftCase[] = [
  {
    what: "the ConfigMap's Corefile",
    path: `/api/v1/namespaces/${NS}/configmaps/dns-default`,
    collection: CONFIGMAPS,
    name: 'dns-default',
    patch: { data: { Corefile: '.:5353 {\n  forward . 8.8.8.8\n}\n' } },
    read: (o) => o['data'].Corefile.startsWith('.:5353 {\n\tbufsize 1232'),
    want: true,
    owned: '.data.Corefile',
  },
  {
    what: "the DaemonSet's nodeSelector (a key added)",
    path: `${DS_PATH}/dns-default`,
    collection: DAEMONSETS,
    name: 'dns-default',
    patch: { spec: { template: { spec: { nodeSelector: { 'kubernetes.io/os': 'linux', 'example.com/pool': 'dns' } } } } },
    read: (o) => o['spec'].template.spec.nodeSelector,
    want: { 'kubernetes.io/os': 'linux' },
    owned: '.spec.template.spec.nodeSelector',
  },
  {
    what: "the DaemonSet's container image",
    path: `${DS_PATH}/dns-default`,
    collection: DAEMONSETS,
    name: 'dns-default',
    patch: { spec: { template: { spec: { containers: [{ name: 'dns', image: 'registry.example/coredns:1.11' }] } } } },
    read: (o) => o['spec'].template.spec.containers.map((c: Obj) => `${c['name']}=${c['image']}`),
    want: ['dns=ghcr.io/kdns/kdns:0.1.0'],
    owned: '.spec.template.spec.containers[dns].image',
  },
  {
    what: "node-resolver's tolerations",
    path: `${DS_PATH}/node-resolver`,
    collection: DAEMONSETS,
    name: 'node-resolver',
    patch: { spec: { template: { spec: { tolerations: [{ key: 'a', operator: 'Exists', effect: 'NoSchedule' }] } } } },
    read: (o) => o['spec'].template.spec.tolerations,
    want: [{ operator: 'Exists' }],
    owned: '.spec.template.spec.tolerations',
  },
  {
    what: "the webhook's settings",
    path: `/api/v1/namespaces/${NS}/configmaps/kdns-webhook`,
    collection: CONFIGMAPS,
    name: 'kdns-webhook',
    patch: { data: { 'config.yaml': 'clusterDomain: cluster.local\nclusterDNS: [8.8.8.8]\n' } },
    read: (o) => o['data']['config.yaml'],
    want: '# Written by the kdns operator from DNS "default" and Service dns-default; edits are put back.\nclusterDomain: cluster.local\nclusterDNS: [10.96.0.10]\n',
    owned: '.data.config.yaml',
  },
  {
    what: "the Service's selector",
    path: `/api/v1/namespaces/${NS}/services/dns-default`,
    collection: SERVICES,
    name: 'dns-default',
    patch: { spec: { selector: { app: 'other' } } },
    read: (o) => o['spec'].selector,
    want: { 'dns.operator.openshift.io/daemonset-dns': 'default' },
    owned: '.spec.selector',
  },
];

for (const c of driftCases) {
  test(`API backend: a hand edit of ${c.what} is put back by the next pass, then nothing is written`, async () => {
    await withApi({}, async (t) => {
      t.api.add(DNSES, dns([]));
      t.api.add(NODES, node('n1')); // the default placement has a node to go to
      await settled(t);
      await kubectlEdit(t, c.path, c.patch);
      assert.notDeepEqual(c.read(t.api.get(c.collection, NS, c.name) as Obj), c.want, 'the edit landed');
      assert.ok(t.api.managedFields(c.collection, NS, c.name)['kubectl-edit']?.includes(c.owned), 'kubectl-edit owns the field');
      const outcome = await t.reconciler.pass();
      assert.deepEqual(applied(outcome).length, 1, `one object re-applied: ${applied(outcome).join(', ')}`);
      assert.deepEqual(c.read(t.api.get(c.collection, NS, c.name) as Obj), c.want);
      assert.ok(t.api.managedFields(c.collection, NS, c.name)['kdns-operator']?.includes(c.owned), 'kdns-operator owns the field again');
      assert.ok(t.logs.some((l) => l.includes('was changed by another client')), t.logs.join('\n'));
      // The status read the edited object during that pass; the next pass writes at most the
      // status catching up, and then nothing at all.
      const after = t.api.requests.length;
      await t.reconciler.pass();
      assert.deepEqual(writes(t.api, after).filter((w) => !w.endsWith('/status')), []);
      const settledAt = t.api.requests.length;
      await t.reconciler.pass();
      assert.deepEqual(writes(t.api, settledAt), []);
    });
  });
}

const keptCases: EditCase[] = [
  {
    what: 'a label on the ConfigMap',
    path: `/api/v1/namespaces/${NS}/configmaps/dns-default`,
    collection: CONFIGMAPS,
    name: 'dns-default',
    patch: { metadata: { labels: { team: 'net' } } },
    read: (o) => o['metadata'].labels.team,
    want: 'net',
  },
  {
    what: 'another key in the ConfigMap',
    path: `/api/v1/namespaces/${NS}/configmaps/dns-default`,
    collection: CONFIGMAPS,
    name: 'dns-default',
    patch: { data: { notes: 'hello' } },
    read: (o) => o['data'].notes,
    want: 'hello',
  },
  {
    what: "an annotation on the DaemonSet's pods",
    path: `${DS_PATH}/dns-default`,
    collection: DAEMONSETS,
    name: 'dns-default',
    patch: { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2024-05-01T12:00:00Z' } } } } },
    read: (o) => o['spec'].template.metadata.annotations['kubectl.kubernetes.io/restartedAt'],
    want: '2024-05-01T12:00:00Z',
  },
];

for (const c of keptCases) {
  test(`API backend: ${c.what} (a field kdns does not manage) is left alone and causes no write`, async () => {
    await withApi({}, async (t) => {
      t.api.add(DNSES, dns([]));
      await settled(t);
      await kubectlEdit(t, c.path, c.patch);
      const before = t.api.requests.length;
      await t.reconciler.pass();
      assert.deepEqual(writes(t.api, before), []);
      assert.equal(c.read(t.api.get(c.collection, NS, c.name) as Obj), c.want);
    });
  });
}

test('API backend: defaults the API server adds are not drift', async () => {
  await withApi({}, async (t) => {
    t.api.add(DNSES, dns([]));
    const before = await settled(t);
    const ds = t.api.get(DAEMONSETS, NS, 'dns-default') as Obj;
    assert.equal(ds['spec'].template.spec.containers[0].imagePullPolicy, 'IfNotPresent', 'the stand-in defaults it');
    assert.equal((t.api.get(SERVICES, NS, 'dns-default') as Obj)['spec'].sessionAffinity, 'None');
    await t.reconciler.pass();
    assert.deepEqual(writes(t.api, before), []);
  });
});

// ---- API errors go to the status ----

test('API backend: kube-dns holding 10.96.0.10 — the Service is refused with 422, the rest applies, and Degraded says why', async () => {
  await withApi({ render: { serviceCIDR: '10.96.0.0/12' }, prepare: (api) => api.seed(SERVICES, [KUBE_DNS]) }, async (t) => {
    t.api.add(DNSES, dns([]));
    const outcome = await t.reconciler.pass();
    assert.equal(outcome.kind, 'applied');
    assert.deepEqual(applied(outcome), ['ConfigMap/dns-default', 'DaemonSet/dns-default', 'DaemonSet/node-resolver', 'ConfigMap/kdns-webhook']);
    assert.deepEqual(outcome.kind === 'applied' ? outcome.failed.map((f) => `${f.object} ${f.code}`) : [], ['Service kdns/dns-default 422']);
    const degraded = condition(t.api, 'Degraded');
    assert.equal(degraded?.['status'], 'True');
    assert.equal(degraded?.['reason'], 'APIRequestFailed');
    assert.equal(
      degraded?.['message'],
      'Failed to apply Service kdns/dns-default: HTTP 422: Service "dns-default" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated',
    );
  });
});

interface FailureCase {
  code: number;
  reason: string;
  message: string;
  pathSuffix: string;
  object: string;
}

const failureCases: FailureCase[] = [
  { code: 403, reason: 'Forbidden', pathSuffix: '/configmaps/dns-default', object: 'ConfigMap kdns/dns-default', message: 'configmaps "dns-default" is forbidden: User "system:serviceaccount:kdns:kdns-operator" cannot patch resource "configmaps" in API group "" in the namespace "kdns"' },
  { code: 409, reason: 'Conflict', pathSuffix: '/daemonsets/dns-default', object: 'DaemonSet kdns/dns-default', message: 'Operation cannot be fulfilled on daemonsets.apps "dns-default": the object has been modified; please apply your changes to the latest version and try again' },
  { code: 500, reason: 'InternalError', pathSuffix: '/daemonsets/node-resolver', object: 'DaemonSet kdns/node-resolver', message: 'Internal error occurred: etcdserver: request timed out' },
  { code: 503, reason: 'ServiceUnavailable', pathSuffix: '/services/dns-default', object: 'Service kdns/dns-default', message: 'the server is currently unable to handle the request' },
];

for (const c of failureCases) {
  test(`API backend: HTTP ${c.code} on ${c.object} is reported in Degraded; the other objects and the status are written`, async () => {
    await withApi({ prepare: (api) => api.requestFailures.push({ pathSuffix: c.pathSuffix, code: c.code, reason: c.reason, message: c.message }) }, async (t) => {
      t.api.add(DNSES, dns([]));
      const outcome = await t.reconciler.pass();
      assert.equal(outcome.kind === 'applied' ? outcome.written.length : -1, 4);
      const degraded = condition(t.api, 'Degraded');
      assert.equal(degraded?.['status'], 'True');
      assert.equal(degraded?.['message'], `Failed to apply ${c.object}: HTTP ${c.code}: ${c.message}`);
      // Once the API server accepts it, the next pass applies it and Degraded clears.
      t.api.requestFailures.length = 0;
      const again = await t.reconciler.pass();
      assert.deepEqual(again.kind === 'applied' ? again.failed : undefined, []);
      assert.notEqual(condition(t.api, 'Degraded')?.['reason'], 'APIRequestFailed');
    });
  });
}

test('API backend: a refused read of the Nodes is reported in Degraded; the objects are still applied', async () => {
  const message = 'nodes is forbidden: User "system:serviceaccount:kdns:kdns-operator" cannot list resource "nodes" in API group "" at the cluster scope';
  await withApi({ prepare: (api) => api.requestFailures.push({ pathSuffix: '/api/v1/nodes', method: 'GET', code: 403, reason: 'Forbidden', message }) }, async (t) => {
    t.api.add(DNSES, dns([]));
    const outcome = await t.reconciler.pass();
    assert.equal(applied(outcome).length, 5);
    assert.equal(condition(t.api, 'Degraded')?.['message'], `Failed to read Nodes: HTTP 403: ${message}`);
  });
});

test('reconcile loop: a refused write is retried with a doubling delay, not at the pace of events', async (tc) => {
  const t = await setup({ render: { serviceCIDR: '10.96.0.0/12' }, prepare: (api) => api.seed(SERVICES, [KUBE_DNS]) });
  const stop = new AbortController();
  try {
    t.api.add(DNSES, dns([]));
    const svcApplies = (): number => t.api.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/services/dns-default')).length;
    const times: number[] = [];
    let n = 0;
    const poll = setInterval(() => {
      const now = svcApplies();
      if (now > n) times.push(Date.now());
      n = now;
    }, 5);
    // A change every 20 ms (Node heartbeats) must not shorten the retry delay.
    async function* busy(): AsyncGenerator<void> {
      while (!stop.signal.aborted) {
        await new Promise((r) => setTimeout(r, 20));
        yield;
      }
    }
    const loop = runReconcileLoop(t.reconciler, { changes: busy(), resyncMs: 60_000, signal: stop.signal, retryInitialMs: 100, retryMaxMs: 400 }, () => undefined);
    await waitFor(() => times.length >= 4, 5000);
    stop.abort();
    clearInterval(poll);
    await loop;
    const gaps = times.slice(1, 4).map((x, i) => x - times[i]!);
    tc.diagnostic(`retry gaps: ${gaps.join(', ')} ms`);
    // 100, 200, 400 ms apart (a little more under load), never at the 20 ms of the changes.
    assert.ok(gaps[0]! >= 90 && gaps[1]! >= 190 && gaps[2]! >= 390, `gaps ${gaps.join(', ')}`);
  } finally {
    stop.abort();
    await t.done();
  }
});

// ---- the Service's address ----

test('API backend: without a service CIDR the API server allocates the address, and node-resolver follows it', async () => {
  await withApi({ render: { allocateServiceIP: true }, prepare: (api) => api.seed(SERVICES, [KUBE_DNS]) }, async (t) => {
    t.api.add(DNSES, dns([]));
    const outcome = await t.reconciler.pass();
    assert.deepEqual(outcome.kind === 'applied' ? outcome.failed : undefined, []);
    const svc = t.api.get(SERVICES, NS, 'dns-default') as Obj;
    const ip = svc['spec'].clusterIP as string;
    assert.equal(ip, '10.111.255.254', 'allocated by the stand-in (top of 10.96.0.0/12)');
    const args = (t.api.get(DAEMONSETS, NS, 'node-resolver') as Obj)['spec'].template.spec.containers[0].args as string[];
    assert.equal(args[args.indexOf('--nameserver') + 1], ip);
    assert.equal((t.api.get(DNSES, undefined, 'default')?.['status'] as Obj)['clusterIP'], ip);
    await t.reconciler.pass(); // the status sees node-resolver exist
    const before = t.api.requests.length;
    await t.reconciler.pass();
    assert.deepEqual(writes(t.api, before), []);
  });
});

test('API backend: the webhook\'s settings name the address the API server allocated, written with node-resolver once it is known', async () => {
  await withApi({ render: { allocateServiceIP: true }, prepare: (api) => api.seed(SERVICES, [KUBE_DNS]) }, async (t) => {
    t.api.add(DNSES, dns([]));
    const outcome = await t.reconciler.pass();
    // The follow-up pass, after the Service was created without an address (which it now names).
    assert.deepEqual(applied(outcome), ['DaemonSet/node-resolver', 'Service/dns-default', 'ConfigMap/kdns-webhook']);
    const ip = (t.api.get(SERVICES, NS, 'dns-default') as Obj)['spec'].clusterIP as string;
    assert.equal(ip, '10.111.255.254');
    const cm = t.api.get(CONFIGMAPS, NS, 'kdns-webhook') as Obj;
    assert.equal(cm['data']['config.yaml'], '# Written by the kdns operator from DNS "default" and Service dns-default; edits are put back.\nclusterDomain: cluster.local\nclusterDNS: [10.111.255.254]\n');
    assert.equal(t.api.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/configmaps/kdns-webhook')).length, 1, 'written once, with the address');
  });
});

test('API backend: a Service that has an address keeps it when the service CIDR asks for another, and says so once', async () => {
  await withApi({ render: { serviceCIDR: '10.96.0.0/12' } }, async (t) => {
    t.api.add(SERVICES, { metadata: { name: 'dns-default', namespace: NS }, spec: { clusterIP: '10.96.7.7', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] } });
    t.api.add(DNSES, dns([]));
    const outcome = await t.reconciler.pass();
    await t.reconciler.pass();
    assert.deepEqual(outcome.kind === 'applied' ? outcome.failed : undefined, []);
    assert.equal((t.api.get(SERVICES, NS, 'dns-default') as Obj)['spec'].clusterIP, '10.96.7.7');
    const said = t.logs.filter((l) => l.startsWith('Service dns-default keeps its address 10.96.7.7'));
    assert.equal(said.length, 1, t.logs.join('\n'));
  });
});

// ---- the default DNS resource ----

test('API backend: DNS "default" is created when none exists, and left alone when one does', async () => {
  const t = await setup();
  const stop = new AbortController();
  try {
    assert.equal(await t.backend.ensureDefaultDNS(stop.signal), 'created');
    const created = t.api.get(DNSES, undefined, 'default') as Obj;
    assert.deepEqual(created['spec'], {});
    assert.equal(await t.backend.ensureDefaultDNS(stop.signal), 'exists');
    assert.equal(t.api.requests.filter((r) => r.method === 'POST').length, 1);
  } finally {
    await t.done();
  }
});

test('API backend: creating DNS "default" retries while the CRD is not served, and gives up on 403', async () => {
  const t = await setup({
    prepare: (api) => api.requestFailures.push({ pathSuffix: '/dnses', code: 404, reason: 'NotFound', message: 'the server could not find the requested resource', times: 2 }),
  });
  const stop = new AbortController();
  try {
    assert.equal(await t.backend.ensureDefaultDNS(stop.signal, 10), 'created');
    assert.equal(t.api.requests.filter((r) => r.method === 'POST').length, 3);
    t.api.remove(DNSES, undefined, 'default');
    t.api.requestFailures.push({ pathSuffix: '/dnses', code: 403, reason: 'Forbidden', message: 'dnses.operator.openshift.io is forbidden' });
    assert.equal(await t.backend.ensureDefaultDNS(stop.signal, 10), 'not-created');
    assert.ok(t.logs.includes('cannot create DNS "default": HTTP 403: dnses.operator.openshift.io is forbidden'), t.logs.join('\n'));
  } finally {
    await t.done();
  }
});

// ---- watches ----

test('API backend: a change to the DNS resource wakes the loop through a watch', async () => {
  const t = await setup();
  const stop = new AbortController();
  try {
    t.api.add(DNSES, dns([]));
    const wakes = watchApi(t.backend, stop.signal, 20)[Symbol.asyncIterator]();
    const next = wakes.next();
    await waitFor(() => t.api.openWatches(DNSES) === 1, 10_000);
    t.api.add(DNSES, dns([{ domain: 'bar.com', nameServers: ['2.2.2.2'] }]));
    const woke = await Promise.race([next.then(() => true), new Promise((r) => setTimeout(() => r(false), 5000))]);
    assert.equal(woke, true);
    stop.abort();
    await wakes.return?.(undefined);
  } finally {
    stop.abort();
    await t.done();
  }
});

/** Runs `body` while the backend watches `path` (open); `changes()` counts the wake-ups it caused. */
async function whileWatching(o: SetupOptions, path: string, body: (t: Harness, changes: () => number) => Promise<void>): Promise<void> {
  await withApi(o, async (t) => {
    const stop = new AbortController();
    let changes = 0;
    const watching = t.backend.keepWatching(path, () => changes++, stop.signal);
    try {
      await waitFor(() => t.api.openWatches(path) === 1);
      await body(t, () => changes);
    } finally {
      stop.abort();
      await watching;
    }
  });
}

const seedNodes = (api: FakeApiServer): void => ['n1', 'n2', 'n3'].forEach((n) => api.add(NODES, node(n)));

test('API backend: a dropped watch resumes from its last version: no Node replayed as ADDED, no wake-up, no relist', async () => {
  await whileWatching({ timing: { initialBackoffMs: 20 }, prepare: seedNodes }, NODES, async (t, changes) => {
    t.api.add(NODES, node('n4'));
    await waitFor(() => changes() === 1);
    const seen = t.api.resourceVersion;
    t.api.dropWatches();
    await waitFor(() => t.api.openWatches(NODES) === 1, 3000);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(changes(), 1, 'nothing replayed');
    const watches = t.api.requests.filter((r) => r.path === NODES && r.watch);
    assert.equal(watches[watches.length - 1]?.params['resourceVersion'], seen);
    assert.equal(t.backend.watchStats.get(NODES)?.lists, 1, 'no relist');
  });
});

for (const asHttp of [false, true]) {
  test(`API backend: 410 Gone ${asHttp ? 'as an HTTP status' : 'in the stream'} lists again and wakes the loop`, async () => {
    await whileWatching({ timing: { initialBackoffMs: 20 } }, NODES, async (t, changes) => {
      t.api.goneAsHttpStatus = asHttp;
      t.api.dropWatches();
      t.api.add(NODES, node('n9'));
      t.api.compact();
      await waitFor(() => t.backend.watchStats.get(NODES)?.gone === 1, 3000);
      await waitFor(() => changes() >= 1, 3000);
      await waitFor(() => t.api.openWatches(NODES) === 1, 3000);
      assert.equal(t.backend.watchStats.get(NODES)?.lists, 2);
    });
  });
}

test('API backend: a quiet kind with bookmarks at their cadence keeps one watch open past the idle limit', async () => {
  // Scaled: bookmarks every 100 ms, idle limit 400 ms, 1.5 s of quiet.
  await whileWatching({ api: { bookmarkIntervalMs: 100 }, timing: { watchIdleTimeoutMs: 400 } }, NODES, async (t, changes) => {
    await new Promise((r) => setTimeout(r, 1500));
    const stats = t.backend.watchStats.get(NODES);
    assert.equal(stats?.watches, 1);
    assert.equal(stats?.idleTimeouts, 0);
    assert.ok((stats?.bookmarks ?? 0) >= 5, `bookmarks: ${stats?.bookmarks}`);
    assert.equal(changes(), 0, 'bookmarks wake nothing');
  });
});

test('API backend: dropped watches back off, and a watch healthy long enough starts the backoff over', async () => {
  await whileWatching({ timing: { initialBackoffMs: 20, maxBackoffMs: 10_000, backoffResetMs: 600 } }, NODES, async (t) => {
    const stats = (): { failures: number; lastBackoffMs: number } => t.backend.watchStats.get(NODES) ?? { failures: 0, lastBackoffMs: 0 };
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      await waitFor(() => t.api.openWatches(NODES) === 1, 3000);
      const f = stats().failures;
      t.api.dropWatches();
      await waitFor(() => stats().failures > f, 3000);
      delays.push(stats().lastBackoffMs);
    }
    assert.deepEqual(delays, [20, 40, 80]);
    await waitFor(() => t.api.openWatches(NODES) === 1, 3000);
    await new Promise((r) => setTimeout(r, 700));
    t.api.dropWatches();
    await waitFor(() => stats().failures === 4, 3000);
    assert.equal(stats().lastBackoffMs, 20);
  });
});

test('API backend: with the default timing a silent watch stays connected past client-node\'s 30 s', { timeout: 60_000 }, async () => {
  // Real duration: no event and no bookmark for 35 s, and still the first watch.
  await whileWatching({}, NODES, async (t) => {
    await new Promise((r) => setTimeout(r, 35_000));
    assert.equal(t.api.openWatches(NODES), 1);
    const stats = t.backend.watchStats.get(NODES);
    assert.deepEqual([stats?.lists, stats?.watches, stats?.idleTimeouts, stats?.failures], [1, 1, 0, 0]);
  });
});
