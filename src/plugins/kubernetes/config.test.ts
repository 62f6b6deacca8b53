import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseKubernetes, type KubernetesConfig } from './config.js';

const COREFILE = '/etc/kdns/Corefile';

function parse(body: string, clusterDir?: string): KubernetesConfig {
  const blocks = parseCorefile(`cluster.local {\n${body}\n}\n`, { file: 'Corefile', baseDir: '/etc/kdns' });
  const d = blocks[0]?.directives[0];
  if (!d) throw new Error('no directive');
  return parseKubernetes(d, ['cluster.local.'], COREFILE, clusterDir);
}

interface Summary {
  zones: string;
  primary: string;
  ttl: number;
  pods: string;
  source: string;
  flags: string;
  namespaces: string | undefined;
  labels: string | undefined;
  namespaceLabels: string | undefined;
  fallthrough: string | undefined;
  startup: number;
}

function sourceText(c: KubernetesConfig): string {
  const s = c.source;
  if (s.kind === 'directory') return `dir ${s.dir}`;
  const parts = ['api'];
  if (s.endpoint) parts.push(s.endpoint);
  if (s.kubeconfig) parts.push(`kubeconfig=${s.kubeconfig.path}@${s.kubeconfig.context ?? ''}`);
  if (s.tls) parts.push(`tls=${s.tls.cert},${s.tls.key},${s.tls.ca}`);
  if (s.limits) parts.push(`qps=${s.limits.qps} burst=${s.limits.burst} max_inflight=${s.limits.maxInflight}`);
  return parts.join(' ');
}

/** The parts of a config a row checks, in a form easy to write out. */
function summary(c: KubernetesConfig): Summary {
  return {
    zones: c.zones.join(' '),
    primary: c.primaryZone,
    ttl: c.ttl,
    pods: c.podMode,
    source: sourceText(c),
    flags: [c.endpointPodNames && 'endpoint_pod_names', c.noEndpoints && 'noendpoints', c.ignoreEmptyService && 'ignore_empty', c.zonal === true && 'zonal'].filter(Boolean).join(' '),
    namespaces: c.namespaces ? [...c.namespaces].join(' ') : undefined,
    labels: c.labels?.text,
    namespaceLabels: c.namespaceLabels?.text,
    fallthrough: c.fallthrough?.join(' '),
    startup: c.startupTimeoutMs,
  };
}

const defaults: Summary = { zones: 'cluster.local.', primary: 'cluster.local.', ttl: 5, pods: 'disabled', source: 'api', flags: '', namespaces: undefined, labels: undefined, namespaceLabels: undefined, fallthrough: undefined, startup: 5000 };

const good: Array<{ what: string; corefile: string; clusterDir?: string; expect: Partial<Summary> }> = [
  { what: 'bare directive: block zones, in-cluster API', corefile: 'kubernetes', expect: {} },
  {
    what: 'zones with reverse zones and a CIDR',
    corefile: 'kubernetes cluster.local in-addr.arpa 10.0.0.0/24',
    expect: { zones: 'cluster.local. in-addr.arpa. 0.0.10.in-addr.arpa.' },
  },
  { what: 'reverse zone first: primary is still the forward zone', corefile: 'kubernetes in-addr.arpa Cluster.Local.', expect: { zones: 'in-addr.arpa. cluster.local.', primary: 'cluster.local.' } },
  { what: 'manifests relative to the Corefile', corefile: 'kubernetes {\n manifests cluster\n}', expect: { source: 'dir /etc/kdns/cluster' } },
  { what: 'manifests absolute', corefile: 'kubernetes {\n manifests /srv/k8s\n}', expect: { source: 'dir /srv/k8s' } },
  { what: '--cluster for a block naming no source', corefile: 'kubernetes', clusterDir: '/data/cluster', expect: { source: 'dir /data/cluster' } },
  { what: 'an explicit endpoint wins over --cluster', corefile: 'kubernetes {\n endpoint https://10.0.0.1:6443\n}', clusterDir: '/data/cluster', expect: { source: 'api https://10.0.0.1:6443' } },
  {
    what: 'endpoint with tls files relative to the Corefile',
    corefile: 'kubernetes {\n endpoint https://k8s:6443\n tls cert.pem key.pem /ca.pem\n}',
    expect: { source: 'api https://k8s:6443 tls=/etc/kdns/cert.pem,/etc/kdns/key.pem,/ca.pem' },
  },
  { what: 'kubeconfig with context', corefile: 'kubernetes {\n kubeconfig kube.yaml prod\n}', expect: { source: 'api kubeconfig=/etc/kdns/kube.yaml@prod' } },
  {
    what: 'every option',
    corefile:
      'kubernetes {\n manifests /m\n namespaces demo other\n labels app=web,tier!=db\n pods verified\n endpoint_pod_names\n ttl 0\n noendpoints\n fallthrough in-addr.arpa\n ignore empty_service\n startup_timeout 1s\n}',
    expect: { source: 'dir /m', namespaces: 'demo other', labels: 'app=web,tier!=db', pods: 'verified', flags: 'endpoint_pod_names noendpoints ignore_empty', ttl: 0, fallthrough: 'in-addr.arpa.', startup: 1000 },
  },
  { what: 'namespace_labels joins its words', corefile: 'kubernetes {\n namespace_labels env in (prod, qa)\n}', expect: { namespaceLabels: 'env in (prod, qa)' } },
  { what: 'fallthrough without zones: everything', corefile: 'kubernetes {\n fallthrough\n}', expect: { fallthrough: '' } },
  { what: 'zonal', corefile: 'kubernetes {\n zonal\n}', expect: { flags: 'zonal' } },
  { what: 'ttl at its maximum', corefile: 'kubernetes {\n ttl 3600\n}', expect: { ttl: 3600 } },
  // CoreDNS's setup_test.go (TestKubernetesParseAPIServerThrottle): the three limits, read into the API source.
  { what: 'apiserver limits', corefile: 'kubernetes {\n apiserver_qps 50.0\n apiserver_burst 100\n apiserver_max_inflight 25\n}', expect: { source: 'api qps=50 burst=100 max_inflight=25' } },
  { what: 'apiserver_qps alone, a fraction', corefile: 'kubernetes {\n apiserver_qps 0.5\n}', expect: { source: 'api qps=0.5 burst=0 max_inflight=0' } },
  { what: 'apiserver_max_inflight alone', corefile: 'kubernetes {\n apiserver_max_inflight 2\n}', expect: { source: 'api qps=0 burst=0 max_inflight=2' } },
  { what: 'apiserver limits all 0: no limits', corefile: 'kubernetes {\n apiserver_qps 0\n apiserver_burst 0\n apiserver_max_inflight 0\n}', expect: { source: 'api' } },
  { what: 'apiserver limits with manifests: nothing to limit', corefile: 'kubernetes {\n manifests /m\n apiserver_qps 5\n}', expect: { source: 'dir /m' } },
];

for (const c of good) {
  test(`kubernetes config: ${c.what}`, () => {
    assert.deepEqual(summary(parse(c.corefile, c.clusterDir)), { ...defaults, ...c.expect });
  });
}

const bad: Array<{ what: string; corefile: string; error: string }> = [
  { what: 'ttl too large', corefile: 'kubernetes {\n ttl 3601\n}', error: 'Corefile:3: ttl must be between 0 and 3600, got 3601' },
  { what: 'ttl not a number', corefile: 'kubernetes {\n ttl five\n}', error: 'Corefile:3: invalid ttl: "five" is not an integer' },
  { what: 'unknown pods mode', corefile: 'kubernetes {\n pods all\n}', error: 'Corefile:3: invalid argument "all" for "pods": expected disabled, insecure or verified' },
  { what: 'unknown property', corefile: 'kubernetes {\n podz verified\n}', error: 'Corefile:3: unknown property "podz" in kubernetes block' },
  { what: 'duplicate property', corefile: 'kubernetes {\n ttl 5\n ttl 6\n}', error: 'Corefile:4: duplicate property "ttl" in kubernetes block' },
  { what: 'ignore something else', corefile: 'kubernetes {\n ignore empty\n}', error: 'Corefile:3: invalid argument "empty" for "ignore": the only thing kubernetes can ignore is empty_service' },
  { what: 'tls needs three files', corefile: 'kubernetes {\n tls a b\n}', error: 'Corefile:3: wrong argument count for "tls": expected 3, got 2' },
  { what: 'endpoint must be a URL', corefile: 'kubernetes {\n endpoint 10.0.0.1\n}', error: 'Corefile:3: invalid argument "10.0.0.1" for "endpoint": expected an http:// or https:// URL' },
  { what: 'namespaces and namespace_labels', corefile: 'kubernetes {\n namespaces a\n namespace_labels x=y\n}', error: 'Corefile:2: namespaces and namespace_labels cannot both be set' },
  { what: 'bad label selector', corefile: 'kubernetes {\n labels app=we b\n}', error: 'Corefile:3: invalid label selector "app=we b": invalid label value "we b"' },
  { what: 'manifests with endpoint', corefile: 'kubernetes {\n manifests m\n endpoint https://x\n}', error: 'Corefile:4: endpoint cannot be combined with manifests (one source per block)' },
  // CoreDNS's setup_test.go (TestKubernetesParseMulticluster): the zone must be one of the plugin's.
  {
    what: 'multicluster zone not among the zones',
    corefile: 'kubernetes coredns.local {\n multicluster clusterset.local\n}',
    error: 'Corefile:3: kubernetes is not authoritative for the multicluster zone clusterset.local. (add it to the zones of the kubernetes line)',
  },
  {
    what: 'one of two multicluster zones not among the zones',
    corefile: 'kubernetes coredns.local clusterset.local {\n multicluster clusterset.local test.local\n}',
    error: 'Corefile:3: kubernetes is not authoritative for the multicluster zone test.local. (add it to the zones of the kubernetes line)',
  },
  { what: 'multicluster bad zone', corefile: 'kubernetes {\n multicluster a..b\n}', error: 'Corefile:3: invalid argument "a..b" for "multicluster": not a valid zone name' },
  { what: 'bad zone', corefile: 'kubernetes cluster..local', error: 'Corefile:2: invalid argument "cluster..local" for "kubernetes": not a valid zone name' },
  { what: 'bad startup_timeout', corefile: 'kubernetes {\n startup_timeout soon\n}', error: 'Corefile:3: invalid duration for startup_timeout: "soon" (expected a Go duration such as 500ms, 5s or 1m30s)' },
];

for (const c of bad) {
  test(`kubernetes config rejects: ${c.what}`, () => {
    assert.throws(() => parse(c.corefile), { message: c.error });
  });
}

test('kubernetes config: multicluster zones (CoreDNS setup_test.go TestKubernetesParseMulticluster)', () => {
  assert.deepEqual(parse('kubernetes coredns.local clusterset.local {\n multicluster clusterset.local\n}').multiclusterZones, ['clusterset.local.']);
  assert.deepEqual(parse('kubernetes coredns.local {\n multicluster\n}').multiclusterZones, []);
  assert.equal(parse('kubernetes coredns.local').multiclusterZones, undefined);
});
