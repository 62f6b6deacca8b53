import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseCorefile } from '../lib/corefile/index.js';
import type { Directive, ServerBlock } from '../lib/corefile/index.js';
import type { Service } from '../lib/cluster/types.js';
import { dnsFromText, nodesFromText } from './io.js';
import type { ConfigMap, DaemonSet, OwnedObject } from './objects.js';
import { render } from './render.js';
import type { CurrentObjects, Rendered, RenderInput } from './render.js';

const root = new URL('../../', import.meta.url);
const example = (name: string): string => readFileSync(new URL(`examples/operator/${name}`, root), 'utf8');
const dnsExample = (name: string): unknown => dnsFromText(example(name), name);
const nodes = nodesFromText(example('nodes.yaml'), 'nodes.yaml');
const now = new Date('2024-05-01T12:00:00Z');

function rendered(input: Omit<RenderInput, 'now'>): Rendered {
  const r = render({ ...input, now });
  if (!r.ok) throw new Error(`render refused: ${JSON.stringify(r.errors)}`);
  return r;
}

const find = <K extends OwnedObject['kind']>(objects: OwnedObject[], kind: K, name: string): Extract<OwnedObject, { kind: K }> => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name}`);
  return o as Extract<OwnedObject, { kind: K }>;
};
const dnsDS = (r: Rendered): DaemonSet => find(r.objects, 'DaemonSet', 'dns-default');
const resolverDS = (r: Rendered): DaemonSet => find(r.objects, 'DaemonSet', 'node-resolver');
const blocks = (r: Rendered): ServerBlock[] => parseCorefile(r.corefile, { file: 'Corefile' });
const directive = (b: ServerBlock | undefined, name: string): Directive | undefined => b?.directives.find((d) => d.name === name);
/** A directive as one line per nested directive: "forward . 1.1.1.1 { policy round_robin }". */
const text = (d: Directive | undefined): string => (d ? [d.name, ...d.args].join(' ') + (d.block ? ` { ${d.block.map(text).join('; ')} }` : '') : '(none)');

test('render: the forwarding seed example (foo.com RoundRobin, bar.com Sequential)', () => {
  const r = rendered({ dns: dnsExample('dns-forwarding.yaml'), nodes });
  const bs = blocks(r);
  assert.deepEqual(
    bs.map((b) => b.keys),
    [['foo.com:5353'], ['bar.com:5353'], ['.:5353']],
  );
  assert.equal(text(directive(bs[0], 'forward')), 'forward . 1.1.1.1 2.2.2.2:5353 { policy round_robin }');
  assert.equal(text(directive(bs[1], 'forward')), 'forward . 3.3.3.3 [2001:db8::3]:53 { policy sequential }');
  assert.deepEqual(
    bs[0]?.directives.map((d) => d.name),
    ['prometheus', 'forward', 'errors', 'log', 'bufsize', 'cache'],
  );
  const def = bs[2];
  assert.deepEqual(
    def?.directives.map((d) => d.name),
    ['bufsize', 'errors', 'log', 'health', 'ready', 'kubernetes', 'prometheus', 'forward', 'cache', 'reload'],
  );
  assert.equal(text(directive(def, 'kubernetes')), 'kubernetes cluster.local in-addr.arpa ip6.arpa { pods insecure; fallthrough in-addr.arpa ip6.arpa }');
  assert.equal(text(directive(def, 'forward')), 'forward . /etc/resolv.conf { policy sequential }');
  assert.equal(text(directive(def, 'health')), 'health :8080 { lameduck 20s }');
  assert.equal(text(directive(def, 'cache')), 'cache 900 { denial 9984 30 }');
  assert.equal(text(directive(def, 'log')), 'log . { class error }');
  assert.deepEqual(r.leftOut, []);
  assert.equal(r.placementRefused, undefined);
});

test('render: objects carry the rules (ConfigMap, DaemonSets, Service, the webhook\'s settings)', () => {
  const r = rendered({ dns: dnsExample('dns-forwarding.yaml'), nodes });
  assert.deepEqual(
    r.objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`),
    ['ConfigMap/kdns/dns-default', 'DaemonSet/kdns/dns-default', 'DaemonSet/kdns/node-resolver', 'Service/kdns/dns-default', 'ConfigMap/kdns/kdns-webhook'],
  );
  assert.equal((find(r.objects, 'ConfigMap', 'dns-default') as ConfigMap).data['Corefile'], r.corefile);

  const ds = dnsDS(r);
  assert.deepEqual(ds.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '10%' } });
  const pod = ds.spec.template.spec;
  assert.deepEqual(pod.nodeSelector, { 'kubernetes.io/os': 'linux' });
  assert.deepEqual(pod.tolerations, [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }]);
  const c = pod.containers[0];
  assert.deepEqual(c?.args, ['serve', '--conf', '/etc/kdns/Corefile']);
  assert.deepEqual(c?.ports, [
    { name: 'dns', containerPort: 5353, protocol: 'UDP' },
    { name: 'dns-tcp', containerPort: 5353, protocol: 'TCP' },
    { name: 'metrics', containerPort: 9153, protocol: 'TCP' },
  ]);
  assert.deepEqual(c?.readinessProbe?.httpGet, { path: '/ready', port: 8181, scheme: 'HTTP' });
  assert.deepEqual(c?.livenessProbe?.httpGet, { path: '/health', port: 8080, scheme: 'HTTP' });
  assert.deepEqual(c?.volumeMounts, [{ name: 'config-volume', mountPath: '/etc/kdns', readOnly: true }]);
  assert.deepEqual(pod.volumes, [{ name: 'config-volume', configMap: { name: 'dns-default', items: [{ key: 'Corefile', path: 'Corefile' }] } }]);
  assert.match(ds.spec.template.metadata.annotations?.['dns.kdns.io/corefile-hash'] ?? '', /^sha256:[0-9a-f]{32}$/);

  const nr = resolverDS(r).spec.template.spec;
  assert.equal(nr.hostNetwork, true);
  assert.deepEqual(nr.tolerations, [{ operator: 'Exists' }]);
  assert.deepEqual(nr.nodeSelector, { 'kubernetes.io/os': 'linux' });
  assert.deepEqual(nr.volumes[0], { name: 'hosts-file', hostPath: { path: '/etc/hosts', type: 'File' } });
  assert.deepEqual(nr.containers[0]?.volumeMounts?.[0], { name: 'hosts-file', mountPath: '/etc/hosts' });
  assert.deepEqual(nr.containers[0]?.args?.slice(0, 5), ['node-resolver', '--services', 'image-registry.openshift-image-registry.svc', '--nameserver', '10.96.0.10']);

  const svc = find(r.objects, 'Service', 'dns-default') as Service;
  assert.equal(svc.spec.clusterIP, '10.96.0.10');
  assert.deepEqual(svc.spec.ports, [
    { name: 'dns', port: 53, targetPort: 5353, protocol: 'UDP' },
    { name: 'dns-tcp', port: 53, targetPort: 5353, protocol: 'TCP' },
    { name: 'metrics', port: 9154, targetPort: 9153, protocol: 'TCP' },
  ]);
  assert.deepEqual(svc.spec.selector, ds.spec.selector.matchLabels);
  assert.deepEqual(ds.spec.template.metadata.labels, ds.spec.selector.matchLabels);
});

test('render: today\'s API shape (servers, TLS, TCP, upstreamResolvers, cache, logLevel)', () => {
  const r = rendered({ dns: dnsExample('dns-servers.yaml') });
  const bs = blocks(r);
  assert.deepEqual(
    bs.map((b) => b.keys),
    [['corp.example.com:5353', '10.in-addr.arpa:5353'], ['secure.example.org:5353'], ['.:5353']],
  );
  assert.equal(text(directive(bs[0], 'forward')), 'forward . 10.0.0.53 10.0.1.53 { force_tcp; policy sequential }');
  assert.equal(
    text(directive(bs[1], 'forward')),
    'forward . tls://192.0.2.53 { tls_servername dns.secure.example.org; tls /etc/kdns/ca/secure-dns-ca/ca-bundle.crt; policy random }',
  );
  assert.equal(text(directive(bs[2], 'forward')), 'forward . 192.0.2.1:53 /etc/resolv.conf { policy sequential }');
  assert.equal(text(directive(bs[2], 'cache')), 'cache 3600 { denial 9984 10 }');
  assert.equal(text(directive(bs[2], 'log')), 'log . { class denial error }');
  const pod = dnsDS(r).spec.template.spec;
  assert.deepEqual(pod.volumes[1], { name: 'ca-secure-dns-ca', configMap: { name: 'secure-dns-ca', items: [{ key: 'ca-bundle.crt', path: 'ca-bundle.crt' }] } });
  assert.deepEqual(pod.containers[0]?.volumeMounts?.[1], { name: 'ca-secure-dns-ca', mountPath: '/etc/kdns/ca/secure-dns-ca', readOnly: true });
});

interface PlacementCase {
  name: string;
  file: string;
  current?: CurrentObjects;
  want: { nodeSelector: Record<string, string>; tolerations: unknown[]; refused?: string };
}

const currentInfra: CurrentObjects = {
  dnsDaemonSet: {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'dns-default', namespace: 'kdns' },
    spec: {
      selector: { matchLabels: {} },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } },
      template: {
        metadata: { labels: {} },
        spec: {
          serviceAccountName: 'dns',
          nodeSelector: { 'node-role.kubernetes.io/infra': '' },
          tolerations: [{ key: 'node-role.kubernetes.io/infra', operator: 'Exists' }],
          containers: [
            { name: 'dns', image: 'old' },
            { name: 'dns-node-resolver', image: 'old' },
          ],
          volumes: [],
        },
      },
    },
  },
};

const NOWHERE_REASON =
  'nodePlacement selects no schedulable node: nodeSelector {example.com/gpu=true} with 1 toleration(s); nodes considered: ' +
  'cp-0 (label example.com/gpu=true missing; taint node-role.kubernetes.io/control-plane:NoSchedule not tolerated), ' +
  'worker-0 (label example.com/gpu=true missing), ' +
  'worker-1 (unschedulable; label example.com/gpu=true missing), ' +
  'infra-0 (label example.com/gpu=true missing; taint node-role.kubernetes.io/infra:NoSchedule not tolerated), ' +
  'dns-0 (label example.com/gpu=true missing), ' +
  'gpu-0 (taint nvidia.com/gpu=present:NoSchedule not tolerated)';

const placementCases: PlacementCase[] = [
  {
    name: 'infra nodes',
    file: 'dns-infra.yaml',
    want: { nodeSelector: { 'node-role.kubernetes.io/infra': '' }, tolerations: [{ key: 'node-role.kubernetes.io/infra', operator: 'Exists', effect: 'NoSchedule' }] },
  },
  {
    name: 'nodes with a dns-only taint',
    file: 'dns-dedicated.yaml',
    want: { nodeSelector: { 'kubernetes.io/os': 'linux', 'example.com/dns-only': 'true' }, tolerations: [{ key: 'dns-only', operator: 'Equal', value: 'true', effect: 'NoSchedule' }] },
  },
  {
    name: 'matching no node, nothing applied yet: the defaults stay',
    file: 'dns-nowhere.yaml',
    want: { nodeSelector: { 'kubernetes.io/os': 'linux' }, tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }], refused: NOWHERE_REASON },
  },
  {
    name: 'matching no node: the current placement stays',
    file: 'dns-nowhere.yaml',
    current: currentInfra,
    want: { nodeSelector: { 'node-role.kubernetes.io/infra': '' }, tolerations: [{ key: 'node-role.kubernetes.io/infra', operator: 'Exists' }], refused: NOWHERE_REASON },
  },
];

for (const c of placementCases) {
  test(`render placement: ${c.name}`, () => {
    const r = rendered({ dns: dnsExample(c.file), nodes, ...(c.current ? { current: c.current } : {}) });
    const pod = dnsDS(r).spec.template.spec;
    assert.deepEqual({ nodeSelector: pod.nodeSelector, tolerations: pod.tolerations, ...(r.placementRefused ? { refused: r.placementRefused } : {}) }, c.want);
    const placementValid = r.status.conditions.find((x) => x.type === 'PlacementValid');
    assert.equal(placementValid?.status, c.want.refused ? 'False' : 'True');
    // The rest still applies: the Corefile and the other objects are rendered either way.
    assert.equal(r.objects.length, 5);
  });
}

test('render: an invalid entry is left out, the rest applies, and the status names it', () => {
  const r = rendered({ dns: dnsFromText(example('invalid/bad-nameserver.yaml'), 'bad-nameserver.yaml') });
  assert.deepEqual(
    blocks(r).map((b) => b.keys),
    [['bar.com:5353'], ['.:5353']],
  );
  assert.deepEqual(
    r.leftOut.map((l) => [l.part, l.label, l.instead, l.errors.length]),
    [['spec.pluginConfig.forwardPlugins[0]', 'foo.com', 'left out of the Corefile', 2]],
  );
  const cond = r.status.conditions.find((c) => c.type === 'ConfigurationValid');
  assert.equal(cond?.status, 'False');
  assert.match(cond?.message ?? '', /spec\.pluginConfig\.forwardPlugins\[0\] \("foo\.com"\): left out of the Corefile: spec\.pluginConfig\.forwardPlugins\[0\]\.nameServers\[0\]: Invalid value: "dns\.foo\.com"/);
});

test('render: an invalid upstreamResolvers falls back to /etc/resolv.conf', () => {
  const r = rendered({ dns: dnsFromText(example('invalid/tls-without-servername.yaml'), 'x.yaml') });
  const bs = blocks(r);
  assert.deepEqual(
    bs.map((b) => b.keys),
    [['.:5353']],
  );
  assert.equal(text(directive(bs[0], 'forward')), 'forward . /etc/resolv.conf { policy sequential }');
  assert.deepEqual(
    r.leftOut.map((l) => l.part),
    ['spec.servers[0]', 'spec.upstreamResolvers'],
  );
});

test('render: an object that is not the default DNS is refused whole', () => {
  const r = render({ dns: dnsFromText(example('invalid/not-default.yaml'), 'x.yaml'), now });
  assert.equal(r.ok, false);
  assert.deepEqual(!r.ok && r.errors.map((e) => e.field), ['metadata.name']);
});

test('render: upgrade removes the dns-node-resolver container from dns-default', () => {
  const r = rendered({ dns: dnsExample('dns-infra.yaml'), nodes, current: currentInfra });
  assert.deepEqual(
    dnsDS(r).spec.template.spec.containers.map((c) => c.name),
    ['dns'],
  );
  assert.deepEqual(r.notes, ['removed container dns-node-resolver from DaemonSet dns-default: node-resolver runs as its own DaemonSet now']);
});

test('render: idempotent, and a forwarding change (only) changes the Corefile hash', () => {
  const dns = dnsExample('dns-forwarding.yaml') as { spec: { pluginConfig: { forwardPlugins: Array<{ nameServers: string[] }> } } };
  const a = rendered({ dns });
  const b = rendered({ dns: structuredClone(dns) });
  assert.deepEqual(a.objects, b.objects);
  const changed = structuredClone(dns);
  changed.spec.pluginConfig.forwardPlugins[0]!.nameServers = ['9.9.9.9'];
  const c = rendered({ dns: changed });
  const hash = (r: Rendered): string | undefined => dnsDS(r).spec.template.metadata.annotations?.['dns.kdns.io/corefile-hash'];
  assert.notEqual(hash(c), hash(a));
  assert.deepEqual({ ...dnsDS(c).spec.template.spec }, { ...dnsDS(a).spec.template.spec });
});

test('render: options (namespace, image, cluster domain, service CIDR)', () => {
  const r = rendered({ dns: dnsExample('dns-forwarding.yaml'), options: { namespace: 'dns', image: 'reg/kdns:1', clusterDomain: 'example.internal', serviceCIDR: 'fd00:10:96::/112' } });
  assert.ok(r.objects.every((o) => o.metadata.namespace === 'dns'));
  assert.equal(dnsDS(r).spec.template.spec.containers[0]?.image, 'reg/kdns:1');
  assert.equal(text(directive(blocks(r)[2], 'kubernetes')).split(' {')[0], 'kubernetes example.internal in-addr.arpa ip6.arpa');
  assert.equal((find(r.objects, 'Service', 'dns-default') as Service).spec.clusterIP, 'fd00:10:96::a');
});

// ---- last good values: a part that turns invalid keeps what worked ----

const fwd = (plugins: unknown[], extra: Record<string, unknown> = {}): unknown => ({
  apiVersion: 'operator.openshift.io/v1',
  kind: 'DNS',
  metadata: { name: 'default' },
  spec: { pluginConfig: { forwardPlugins: plugins }, ...extra },
});
const currentOf = (r: Rendered): CurrentObjects => ({ configMap: find(r.objects, 'ConfigMap', 'dns-default') as ConfigMap });
const forwards = (r: Rendered): string[] => blocks(r).map((b) => `${b.keys.join(' ')} ${text(directive(b, 'forward'))}`);

interface LastGoodCase {
  name: string;
  before: unknown;
  after: unknown;
  forwards: string[];
  leftOut: Array<[string, string]>;
}

const lastGoodCases: LastGoodCase[] = [
  {
    name: 'an entry that turns invalid keeps its last good version',
    before: fwd([{ domain: 'example.test', nameServers: ['127.0.0.1:5300'] }]),
    after: fwd([{ domain: 'example.test', nameServers: ['not-an-ip'] }]),
    forwards: ['example.test:5353 forward . 127.0.0.1:5300 { policy random }', '.:5353 forward . /etc/resolv.conf { policy sequential }'],
    leftOut: [['spec.pluginConfig.forwardPlugins[0]', 'the last good version is kept']],
  },
  {
    name: 'a new invalid entry is left out, the rest applies',
    before: fwd([{ domain: 'example.test', nameServers: ['127.0.0.1:5300'] }]),
    after: fwd([{ domain: 'example.test', nameServers: ['127.0.0.1:5300'] }, { domain: 'new.test', nameServers: ['nope'] }]),
    forwards: ['example.test:5353 forward . 127.0.0.1:5300 { policy random }', '.:5353 forward . /etc/resolv.conf { policy sequential }'],
    leftOut: [['spec.pluginConfig.forwardPlugins[1]', 'left out of the Corefile']],
  },
  {
    name: 'a removed entry is gone (its last good version is not resurrected)',
    before: fwd([{ domain: 'example.test', nameServers: ['127.0.0.1:5300'] }]),
    after: fwd([]),
    forwards: ['.:5353 forward . /etc/resolv.conf { policy sequential }'],
    leftOut: [],
  },
  {
    name: 'a kept entry yields to a valid entry that now claims its zone',
    before: { apiVersion: 'operator.openshift.io/v1', kind: 'DNS', metadata: { name: 'default' }, spec: { servers: [{ name: 'a', zones: ['x.test'], forwardPlugin: { upstreams: ['127.0.0.1:5300'] } }] } },
    after: {
      apiVersion: 'operator.openshift.io/v1',
      kind: 'DNS',
      metadata: { name: 'default' },
      // Server a moves to y.test (with a typo); x.test now belongs to server b.
      spec: {
        servers: [
          { name: 'a', zones: ['y.test'], forwardPlugin: { upstreams: ['bad'] } },
          { name: 'b', zones: ['x.test'], forwardPlugin: { upstreams: ['127.0.0.2'] } },
        ],
      },
    },
    forwards: ['x.test:5353 forward . 127.0.0.2 { policy random }', '.:5353 forward . /etc/resolv.conf { policy sequential }'],
    leftOut: [['spec.servers[0]', 'left out of the Corefile (its last good version forwards x.test, which another entry now claims)']],
  },
  {
    name: 'invalid upstreamResolvers keep the last good upstreams',
    before: fwd([], { upstreamResolvers: { upstreams: [{ type: 'Network', address: '127.0.0.1', port: 5300 }] } }),
    after: fwd([], { upstreamResolvers: { upstreams: [{ type: 'Network' }] } }),
    forwards: ['.:5353 forward . 127.0.0.1:5300 { policy sequential }'],
    leftOut: [['spec.upstreamResolvers', 'the last good upstreams are kept']],
  },
];

for (const c of lastGoodCases) {
  test(`render: ${c.name}`, () => {
    const first = rendered({ dns: c.before });
    const second = rendered({ dns: c.after, current: currentOf(first) });
    assert.deepEqual(forwards(second), c.forwards);
    assert.deepEqual(
      second.leftOut.map((l) => [l.part, l.instead]),
      c.leftOut,
    );
    // Kept values are remembered again, so they survive more invalid edits.
    const third = rendered({ dns: c.after, current: currentOf(second) });
    assert.deepEqual(forwards(third), c.forwards);
  });
}

test('render: an unreadable last-good annotation means defaults, as on a first run', () => {
  const first = rendered({ dns: fwd([{ domain: 'example.test', nameServers: ['127.0.0.1:5300'] }]) });
  const cm = structuredClone(find(first.objects, 'ConfigMap', 'dns-default') as ConfigMap);
  cm.metadata.annotations = { 'dns.kdns.io/last-good': '{"forwarding": "garbage"' };
  const second = rendered({ dns: fwd([{ domain: 'example.test', nameServers: ['nope'] }]), current: { configMap: cm } });
  assert.deepEqual(forwards(second), ['.:5353 forward . /etc/resolv.conf { policy sequential }']);
});

// ---- the admission webhook's settings (ConfigMap kdns-webhook) ----

const liveService = (clusterIP: string): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'dns-default', namespace: 'kdns' },
  spec: { type: 'ClusterIP', clusterIP, ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] },
});

const HEADER = '# Written by the kdns operator from DNS "default" and Service dns-default; edits are put back.\n';

const webhookSettingsCases: Array<{ name: string; options?: RenderInput['options']; current?: CurrentObjects; want: string | undefined }> = [
  { name: 'defaults: cluster.local and the 10th address of 10.96.0.0/12', want: `${HEADER}clusterDomain: cluster.local\nclusterDNS: [10.96.0.10]\n` },
  { name: 'the cluster domain and service network given', options: { clusterDomain: 'example.internal', serviceCIDR: '172.30.0.0/16' }, want: `${HEADER}clusterDomain: example.internal\nclusterDNS: [172.30.0.10]\n` },
  { name: 'an IPv6 service network', options: { serviceCIDR: 'fd00:10:96::/112' }, want: `${HEADER}clusterDomain: cluster.local\nclusterDNS: [fd00:10:96::a]\n` },
  { name: 'the address the API server allocated', options: { allocateServiceIP: true }, current: { service: liveService('10.96.123.45') }, want: `${HEADER}clusterDomain: cluster.local\nclusterDNS: [10.96.123.45]\n` },
  { name: 'a Service that keeps its address against the service network', options: { serviceCIDR: '172.30.0.0/16' }, current: { service: liveService('10.96.0.50') }, want: `${HEADER}clusterDomain: cluster.local\nclusterDNS: [10.96.0.50]\n` },
  { name: 'no address yet (the API server is to allocate it): not written until there is one', options: { allocateServiceIP: true }, want: undefined },
];

for (const c of webhookSettingsCases) {
  test(`render: the webhook's settings: ${c.name}`, () => {
    const r = rendered({ dns: dnsExample('dns-forwarding.yaml'), ...(c.options ? { options: c.options } : {}), ...(c.current ? { current: c.current } : {}) });
    const cm = r.objects.find((o): o is ConfigMap => o.kind === 'ConfigMap' && o.metadata.name === 'kdns-webhook');
    assert.equal(cm?.data['config.yaml'], c.want);
    // The Service's address, whatever it is, is the one the webhook gives pods.
    if (c.want !== undefined) assert.deepEqual((parse(c.want) as { clusterDNS: string[] }).clusterDNS, [r.clusterIP]);
  });
}

test('render: the webhook\'s settings hold only keys kdns webhook reads, in the operator\'s namespace, labelled as its other objects', () => {
  const r = rendered({ dns: dnsExample('dns-forwarding.yaml'), options: { namespace: 'dns' } });
  const cm = find(r.objects, 'ConfigMap', 'kdns-webhook') as ConfigMap;
  assert.deepEqual(Object.keys(cm.data), ['config.yaml']);
  assert.deepEqual(Object.keys(parse(cm.data['config.yaml']!) as object), ['clusterDomain', 'clusterDNS']);
  assert.deepEqual(cm.metadata, { name: 'kdns-webhook', namespace: 'dns', labels: { 'dns.operator.openshift.io/owning-dns': 'default', 'app.kubernetes.io/name': 'kdns-webhook' } });
});

test('render: the webhook\'s settings do not change with forwarding (no needless write)', () => {
  const dns = dnsExample('dns-forwarding.yaml') as { spec: { pluginConfig: { forwardPlugins: Array<{ nameServers: string[] }> } } };
  const changed = structuredClone(dns);
  changed.spec.pluginConfig.forwardPlugins[0]!.nameServers = ['9.9.9.9'];
  assert.deepEqual(find(rendered({ dns: changed }).objects, 'ConfigMap', 'kdns-webhook'), find(rendered({ dns }).objects, 'ConfigMap', 'kdns-webhook'));
});
