import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClusterStore, type StoreDelta } from './store.js';
import type { ClusterObject, EndpointSlice, Endpoints, Pod, Service } from './types.js';

const service = (name: string, ips: string[] | 'None', extra: Partial<Service['spec']> = {}, rv?: string): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'ns', ...(rv ? { resourceVersion: rv } : {}) },
  spec: ips === 'None' ? { clusterIP: 'None', ...extra } : { clusterIP: ips[0], clusterIPs: ips, ...extra },
});

const slice = (name: string, svc: string, ips: Array<[string, boolean | undefined]>, annotations?: Record<string, string>): EndpointSlice => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'ns', labels: { 'kubernetes.io/service-name': svc }, ...(annotations ? { annotations } : {}) },
  addressType: 'IPv4',
  endpoints: ips.map(([ip, ready]) => ({ addresses: [ip], ...(ready === undefined ? {} : { conditions: { ready } }) })),
  ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
});

const legacy = (name: string, ready: string[], notReady: string[]): Endpoints => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name, namespace: 'ns' },
  subsets: [{ addresses: ready.map((ip) => ({ ip })), notReadyAddresses: notReady.map((ip) => ({ ip })), ports: [{ name: 'http', port: 80 }] }],
});

const pod = (name: string, ips: string[], extra: Partial<Pod['metadata']> = {}, phase: 'Running' | 'Succeeded' = 'Running'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', ...extra },
  status: { phase, podIPs: ips.map((ip) => ({ ip })) },
});

type Op = { upsert: ClusterObject; version?: string } | { remove: [ClusterObject['kind'], string] } | { replace: [ClusterObject['kind'], ClusterObject[]] };

interface Case {
  what: string;
  ops: Op[];
  /** Reads after the ops, each `label → value`. */
  expect: Record<string, unknown>;
  /** Union of what the last op's deltas reported. */
  lastDelta?: { services?: string[]; ips?: string[]; podIPs?: string[]; namespaces?: boolean };
}

function read(store: ClusterStore): Record<string, unknown> {
  return {
    services: [...store.allServices()].map((s) => `${s.key} ${s.kind} ${s.clusterIPs.join(',')}`).sort(),
    endpoints: [...store.allServices()].map((s) => `${s.key}: ${store.endpointGroups(s.key).flatMap((g) => g.addresses.map((a) => `${a.ip}${a.ready ? '' : '(not ready)'}`)).join(' ')}`).sort(),
    byIP: ['10.0.0.1', '10.0.0.2', 'fd00::1', '10.1.0.1', '10.1.0.2'].map((ip) => `${ip}: ${store.servicesByIP(ip).map((s) => s.key).join(',')}|${store.endpointGroupsByIP(ip).map((g) => g.id).join(',')}`),
    pods: ['10.2.0.1', '10.2.0.2'].map((ip) => `${ip}: ${store.podsByIP(ip).map((p) => `${p.name}${p.terminating ? '(terminating)' : ''} ${p.phase}`).join(',')}`),
    namespace: store.namespace('ns') ? 'exists' : 'missing',
  };
}

const cases: Case[] = [
  {
    what: 'a dual-stack service is indexed by both addresses',
    ops: [{ upsert: service('web', ['10.0.0.1', 'FD00::1']) }],
    expect: { services: ['web.ns ClusterIP 10.0.0.1,fd00::1'], byIP: ['10.0.0.1: web.ns|', '10.0.0.2: |', 'fd00::1: web.ns|', '10.1.0.1: |', '10.1.0.2: |'], namespace: 'exists' },
    lastDelta: { services: ['web.ns'], ips: ['10.0.0.1', 'fd00::1'], namespaces: true },
  },
  {
    what: 'changing a ClusterIP moves it in the reverse index and reports both addresses',
    ops: [{ upsert: service('web', ['10.0.0.1']) }, { upsert: service('web', ['10.0.0.2']) }],
    expect: { byIP: ['10.0.0.1: |', '10.0.0.2: web.ns|', 'fd00::1: |', '10.1.0.1: |', '10.1.0.2: |'] },
    lastDelta: { services: ['web.ns'], ips: ['10.0.0.1', '10.0.0.2'] },
  },
  {
    what: 'slices win over legacy Endpoints of the same service; legacy is used when no slice exists',
    ops: [{ upsert: service('db', 'None') }, { upsert: legacy('db', ['10.1.0.9'], ['10.1.0.8']) }, { upsert: slice('db-1', 'db', [['10.1.0.1', true], ['10.1.0.2', false]]) }],
    expect: { endpoints: ['db.ns: 10.1.0.1 10.1.0.2(not ready)'] },
    lastDelta: { services: ['db.ns'], ips: ['10.1.0.1', '10.1.0.2'] },
  },
  {
    what: 'removing the last slice falls back to legacy Endpoints',
    ops: [{ upsert: service('db', 'None') }, { upsert: legacy('db', ['10.1.0.9'], ['10.1.0.8']) }, { upsert: slice('db-1', 'db', [['10.1.0.1', true]]) }, { remove: ['EndpointSlice', 'db-1'] }],
    expect: { endpoints: ['db.ns: 10.1.0.9 10.1.0.8(not ready)'] },
    lastDelta: { services: ['db.ns'], ips: ['10.1.0.1'] },
  },
  {
    what: 'unset readiness counts as ready; several slices per service',
    ops: [{ upsert: service('db', 'None') }, { upsert: slice('db-1', 'db', [['10.1.0.1', undefined]]) }, { upsert: slice('db-2', 'db', [['10.1.0.2', true]]) }],
    expect: { endpoints: ['db.ns: 10.1.0.1 10.1.0.2'], byIP: ['10.0.0.1: |', '10.0.0.2: |', 'fd00::1: |', '10.1.0.1: |EndpointSlice ns/db-1', '10.1.0.2: |EndpointSlice ns/db-2'] },
  },
  {
    what: 'a resourceVersion seen before is skipped (API sources)',
    ops: [{ upsert: service('web', ['10.0.0.1'], {}, '7'), version: '7' }, { upsert: service('web', ['10.0.0.2'], {}, '7'), version: '7' }],
    expect: { services: ['web.ns ClusterIP 10.0.0.1'] },
    lastDelta: {},
  },
  {
    what: 'a hand-edited manifest keeps its stale resourceVersion and still applies (directory source)',
    ops: [{ upsert: service('web', ['10.0.0.1'], {}, '7') }, { upsert: service('web', ['10.0.0.2'], {}, '7') }],
    expect: { services: ['web.ns ClusterIP 10.0.0.2'] },
  },
  {
    what: 'replaceKind removes what the new list lacks',
    ops: [{ upsert: service('a', ['10.0.0.1']) }, { upsert: service('b', ['10.0.0.2']) }, { replace: ['Service', [service('b', ['10.0.0.2'])]] }],
    expect: { services: ['b.ns ClusterIP 10.0.0.2'] },
    lastDelta: { services: ['a.ns', 'b.ns'], ips: ['10.0.0.1', '10.0.0.2'] },
  },
  {
    what: 'the last object of a namespace without a Namespace object takes the namespace with it',
    ops: [{ upsert: service('a', ['10.0.0.1']) }, { remove: ['Service', 'a'] }],
    expect: { services: [], namespace: 'missing' },
    lastDelta: { services: ['a.ns'], ips: ['10.0.0.1'], namespaces: true },
  },
  {
    what: 'pods: indexed by every IP, terminating and finished ones flagged',
    ops: [{ upsert: pod('p1', ['10.2.0.1']) }, { upsert: pod('p2', ['10.2.0.2'], { deletionTimestamp: '2024-01-01T00:00:00Z' }) }, { upsert: pod('p3', ['10.2.0.1'], {}, 'Succeeded') }],
    expect: { pods: ['10.2.0.1: p1 Running,p3 Succeeded', '10.2.0.2: p2(terminating) Running'] },
    lastDelta: { podIPs: ['10.2.0.1'] },
  },
  {
    what: 'a headless service is not in the reverse index',
    ops: [{ upsert: service('h', 'None') }],
    expect: { services: ['h.ns Headless '], byIP: ['10.0.0.1: |', '10.0.0.2: |', 'fd00::1: |', '10.1.0.1: |', '10.1.0.2: |'] },
  },
];

for (const c of cases) {
  test(`store: ${c.what}`, () => {
    const store = new ClusterStore();
    let deltas: StoreDelta[] = [];
    store.subscribe((d) => deltas.push(d));
    for (const op of c.ops) {
      deltas = [];
      if ('upsert' in op) store.upsert(op.upsert, op.version);
      else if ('remove' in op) store.remove(op.remove[0], 'ns', op.remove[1]);
      else store.replaceKind(op.replace[0], op.replace[1]);
    }
    const got = read(store);
    for (const [k, v] of Object.entries(c.expect)) assert.deepEqual(got[k], v, k);
    if (c.lastDelta) {
      const union = {
        services: [...new Set(deltas.flatMap((d) => [...d.services]))].sort(),
        ips: [...new Set(deltas.flatMap((d) => [...d.ips]))].sort(),
        podIPs: [...new Set(deltas.flatMap((d) => [...d.podIPs]))].sort(),
        namespaces: deltas.some((d) => d.namespaces),
      };
      assert.deepEqual(union, { services: [], ips: [], podIPs: [], namespaces: false, ...c.lastDelta });
    }
  });
}

test('store: programming latency from the EndpointSlice trigger time, by service kind', () => {
  const store = new ClusterStore();
  const seen: string[] = [];
  store.subscribe((d) => {
    for (const l of d.programmingLatency) seen.push(`${l.serviceKind} ${l.seconds >= 1 && l.seconds < 60 ? 'ok' : l.seconds}`);
  });
  const oneSecondAgo = new Date(Date.now() - 1500).toISOString();
  store.upsert(service('web', ['10.0.0.1']));
  store.upsert(service('h', 'None', { selector: { app: 'h' } }));
  store.upsert(service('m', 'None'));
  store.upsert(slice('web-1', 'web', [['10.1.0.1', true]], { 'endpoints.kubernetes.io/last-change-trigger-time': oneSecondAgo }));
  store.upsert(slice('h-1', 'h', [['10.1.0.2', true]], { 'endpoints.kubernetes.io/last-change-trigger-time': oneSecondAgo }));
  store.upsert(slice('m-1', 'm', [['10.1.0.3', true]], { 'endpoints.kubernetes.io/last-change-trigger-time': oneSecondAgo }));
  store.upsert(slice('x-1', 'web', [['10.1.0.4', true]]));
  assert.deepEqual(seen, ['cluster_ip ok', 'headless_with_selector ok', 'headless_without_selector ok']);
});

test('store: batch() reports one delta for many writes', () => {
  const store = new ClusterStore();
  const deltas: StoreDelta[] = [];
  store.subscribe((d) => deltas.push(d));
  store.batch(() => {
    for (let i = 0; i < 50; i++) store.upsert(service(`s${i}`, [`10.0.1.${i}`]));
  });
  assert.equal(deltas.length, 1);
  assert.equal(deltas[0]?.services.size, 50);
});

interface VersionCase {
  what: string;
  object: ClusterObject;
  /** The objectKey() the directory source and the API source look it up by. */
  key: string;
  /** How versioned() lists it: kind, namespace (- for none), name. */
  listed: string;
}

const versionCases: VersionCase[] = [
  { what: 'Namespace', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } }, key: 'Namespace team', listed: 'Namespace - team' },
  { what: 'Service', object: service('web', ['10.0.0.1']), key: 'Service ns/web', listed: 'Service ns web' },
  { what: 'Service written without a namespace (in default)', object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { clusterIP: '10.0.0.9' } }, key: 'Service default/web', listed: 'Service default web' },
  { what: 'EndpointSlice', object: slice('web-1', 'web', [['10.1.0.1', true]]), key: 'EndpointSlice ns/web-1', listed: 'EndpointSlice ns web-1' },
  { what: 'Endpoints', object: legacy('web', ['10.1.0.1'], []), key: 'Endpoints ns/web', listed: 'Endpoints ns web' },
  { what: 'Endpoints without subsets (no group to carry it)', object: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'idle', namespace: 'ns' } }, key: 'Endpoints ns/idle', listed: 'Endpoints ns idle' },
  { what: 'Pod', object: pod('p1', ['10.2.0.1']), key: 'Pod ns/p1', listed: 'Pod ns p1' },
  { what: 'Pod written without a namespace (in default)', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p2' }, status: { podIP: '10.2.0.2' } }, key: 'Pod default/p2', listed: 'Pod default p2' },
  { what: 'Node', object: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }, key: 'Node n1', listed: 'Node - n1' },
];

for (const c of versionCases) {
  test(`store versions: ${c.what}: kept, skipped when equal, cleared without one, gone on remove`, () => {
    const store = new ClusterStore();
    assert.equal(store.upsert(c.object, 7), true);
    assert.equal(store.versionOf(c.key), 7);
    assert.deepEqual([...store.versioned()].map((o) => `${o.kind} ${o.namespace ?? '-'} ${o.name} ${o.version}`), [`${c.listed} 7`]);
    assert.equal(store.upsert(c.object, 7), false, 'same version is skipped');
    assert.equal(store.upsert(c.object, 8), true);
    assert.equal(store.versionOf(c.key), 8);
    assert.equal(store.upsert(c.object), true, 'no version always applies');
    assert.equal(store.versionOf(c.key), undefined);
    store.upsert(c.object, 9);
    store.remove(c.object.kind, c.object.metadata.namespace, c.object.metadata.name);
    assert.equal(store.versionOf(c.key), undefined);
    assert.deepEqual([...store.versioned()], []);
  });
}

test('store versions: versioned(match) yields only the versions it accepts', () => {
  const store = new ClusterStore();
  store.upsert(service('a', ['10.0.0.1']), 1);
  store.upsert(service('b', ['10.0.0.2']), 2);
  store.upsert(pod('p', ['10.2.0.1']), 'rv-3');
  assert.deepEqual([...store.versioned((v) => v !== 1)].map((o) => o.name), ['b', 'p']);
});

test('store: external addresses (externalIPs, then load-balancer ingress) and their reverse index', () => {
  const s = new ClusterStore();
  const deltas: StoreDelta[] = [];
  s.subscribe((d) => deltas.push(d));
  const lb: Service = {
    ...service('lb', ['10.0.0.1'], { type: 'LoadBalancer', externalIPs: ['192.0.2.1', 'bad', 'FD00::1'] }),
    status: { loadBalancer: { ingress: [{ ip: '198.51.100.7' }, { hostname: 'LB.Example.NET' }, { ip: '192.0.2.1' }] } },
  };
  s.upsert(lb);
  s.upsert(service('plain', ['10.0.0.2']));
  assert.deepEqual(s.externalAddresses('lb.ns'), ['192.0.2.1', 'fd00::1', '198.51.100.7', 'lb.example.net']);
  assert.deepEqual(s.externalAddresses('plain.ns'), []);
  assert.deepEqual(s.servicesByExternalIP('fd00::1').map((x) => x.key), ['lb.ns']);
  assert.deepEqual(s.servicesByExternalIP('lb.example.net'), []); // a hostname has no PTR
  assert.deepEqual([...(deltas[0]?.ips ?? [])].sort(), ['10.0.0.1', '192.0.2.1', '198.51.100.7', 'fd00::1']);
  // Replacing the service without them, then removing it, leaves nothing behind.
  s.upsert(service('lb', ['10.0.0.1'], { externalIPs: ['192.0.2.2'] }));
  assert.deepEqual(s.externalAddresses('lb.ns'), ['192.0.2.2']);
  assert.deepEqual(s.servicesByExternalIP('192.0.2.1'), []);
  s.remove('Service', 'ns', 'lb');
  assert.deepEqual(s.externalAddresses('lb.ns'), []);
  assert.deepEqual(s.servicesByExternalIP('192.0.2.2'), []);
});
