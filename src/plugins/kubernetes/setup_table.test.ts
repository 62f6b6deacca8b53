// CoreDNS's plugin/kubernetes/setup_test.go, case by case (TestKubernetesParse and its
// siblings): the same Corefile text must be accepted with the same meaning, or refused where
// CoreDNS refuses it. Errors are kdns's own wording, with the line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseKubernetes, type KubernetesConfig } from './config.js';

function parse(directive: string): KubernetesConfig {
  const blocks = parseCorefile(`. {\n${directive}\n}\n`, { file: 'Corefile', baseDir: '/etc/kdns' });
  const d = blocks[0]?.directives[0];
  if (!d) throw new Error('no directive');
  return parseKubernetes(d, ['.'], '/etc/kdns/Corefile');
}

interface Want {
  zones: number;
  namespaces: number;
  labelRequirements?: number;
  namespaceLabelRequirements?: number;
  pods?: string;
  fallthrough?: string[] | undefined;
  startupMs?: number;
  endpointPodNames?: boolean;
  noEndpoints?: boolean;
  ignoreEmptyService?: boolean;
  multicluster?: string[] | undefined;
  zonal?: boolean;
}

const good: Array<{ input: string; want: Want }> = [
  { input: 'kubernetes coredns.local', want: { zones: 1, namespaces: 0 } },
  { input: 'kubernetes coredns.local test.local', want: { zones: 2, namespaces: 0 } },
  { input: 'kubernetes coredns.local {\n}', want: { zones: 1, namespaces: 0 } },
  { input: 'kubernetes coredns.local {\n\tendpoint http://localhost:9090 http://localhost:9091\n}', want: { zones: 1, namespaces: 0 } },
  { input: 'kubernetes coredns.local {\n\tnamespaces demo\n}', want: { zones: 1, namespaces: 1 } },
  { input: 'kubernetes coredns.local {\n\tnamespaces demo test\n}', want: { zones: 1, namespaces: 2 } },
  // CoreDNS adds the namespaces of every line.
  { input: 'kubernetes coredns.local {\n\tnamespaces demo\n\tnamespaces test demo\n}', want: { zones: 1, namespaces: 2 } },
  { input: 'kubernetes coredns.local {\n    labels environment=prod\n}', want: { zones: 1, namespaces: 0, labelRequirements: 1 } },
  { input: 'kubernetes coredns.local {\n    labels environment in (production, staging, qa),application=nginx\n}', want: { zones: 1, namespaces: 0, labelRequirements: 2 } },
  { input: 'kubernetes coredns.local {\n    namespace_labels istio-injection=enabled\n}', want: { zones: 1, namespaces: 0, namespaceLabelRequirements: 1 } },
  {
    input: 'kubernetes coredns.local test.local {\n\tendpoint http://localhost:8080\n\tnamespaces demo test\n    labels environment in (production, staging, qa),application=nginx\n    fallthrough\n}',
    want: { zones: 2, namespaces: 2, labelRequirements: 2, fallthrough: [] },
  },
  { input: 'kubernetes coredns.local {\n\tpods disabled\n}', want: { zones: 1, namespaces: 0, pods: 'disabled' } },
  { input: 'kubernetes coredns.local {\n\tpods insecure\n}', want: { zones: 1, namespaces: 0, pods: 'insecure' } },
  { input: 'kubernetes coredns.local {\n\tpods verified\n}', want: { zones: 1, namespaces: 0, pods: 'verified' } },
  { input: 'kubernetes coredns.local {\n\tfallthrough ip6.arpa inaddr.arpa foo.com\n}', want: { zones: 1, namespaces: 0, fallthrough: ['ip6.arpa.', 'inaddr.arpa.', 'foo.com.'] } },
  { input: 'kubernetes coredns.local {\n\tkubeconfig file\n}', want: { zones: 1, namespaces: 0 } },
  { input: 'kubernetes coredns.local {\n\tkubeconfig file context\n}', want: { zones: 1, namespaces: 0 } },
  { input: 'kubernetes coredns.local {\n        kubeconfig file context\n        startup_timeout 1s\n}', want: { zones: 1, namespaces: 0, startupMs: 1000 } },
  // TestKubernetesParseEndpointPodNames
  { input: 'kubernetes coredns.local {\n\tendpoint_pod_names\n}', want: { zones: 1, namespaces: 0, endpointPodNames: true } },
  // TestKubernetesParseNoEndpoints
  { input: 'kubernetes coredns.local {\n\tnoendpoints\n}', want: { zones: 1, namespaces: 0, noEndpoints: true } },
  // TestKubernetesParseIgnoreEmptyService: words after empty_service are ignored, as in CoreDNS.
  { input: 'kubernetes coredns.local {\n\tignore empty_service\n}', want: { zones: 1, namespaces: 0, ignoreEmptyService: true } },
  { input: 'kubernetes coredns.local {\n\tignore empty_service ixnay on the endpointsay\n}', want: { zones: 1, namespaces: 0, ignoreEmptyService: true } },
  // TestKubernetesParseMulticluster
  { input: 'kubernetes coredns.local clusterset.local {\n\tmulticluster clusterset.local\n}', want: { zones: 2, namespaces: 0, multicluster: ['clusterset.local.'] } },
  { input: 'kubernetes coredns.local {\n\tmulticluster\n}', want: { zones: 1, namespaces: 0, multicluster: [] } },
  // TestKubernetesParseAPIRateLimiting: qps is a float, the others integers.
  { input: 'kubernetes coredns.local {\n\tapiserver_qps 50.0\n\tapiserver_burst 100\n\tapiserver_max_inflight 25\n}', want: { zones: 1, namespaces: 0 } },
  // TestKubernetesParseZonal
  { input: 'kubernetes coredns.local {\n\tzonal\n}', want: { zones: 1, namespaces: 0, zonal: true } },
];

for (const [i, c] of good.entries()) {
  test(`CoreDNS kubernetes setup case ${i}: ${c.input.split('\n').join(' ⏎ ')}`, () => {
    const cfg = parse(c.input);
    const got: Want = {
      zones: cfg.zones.length,
      namespaces: cfg.namespaces?.size ?? 0,
      labelRequirements: cfg.labels?.requirements.length,
      namespaceLabelRequirements: cfg.namespaceLabels?.requirements.length,
      pods: cfg.podMode,
      fallthrough: cfg.fallthrough,
      startupMs: cfg.startupTimeoutMs,
      endpointPodNames: cfg.endpointPodNames,
      noEndpoints: cfg.noEndpoints,
      ignoreEmptyService: cfg.ignoreEmptyService,
      multicluster: cfg.multiclusterZones,
      zonal: cfg.zonal ?? false,
    };
    const want: Want = {
      pods: 'disabled',
      startupMs: 5000,
      endpointPodNames: false,
      noEndpoints: false,
      ignoreEmptyService: false,
      fallthrough: undefined,
      multicluster: undefined,
      zonal: false,
      labelRequirements: undefined,
      namespaceLabelRequirements: undefined,
      ...c.want,
    };
    assert.deepEqual(got, want);
  });
}

const bad: Array<{ input: string; error: string }> = [
  { input: 'kubernetes coredns.local {\n    namespaces foo bar\n    namespace_labels istio-injection=enabled\n}', error: 'Corefile:2: namespaces and namespace_labels cannot both be set' },
  { input: 'kubernetes coredns.local {\n    endpoint\n}', error: 'Corefile:3: wrong argument count for "endpoint": expected at least 1, got 0' },
  { input: 'kubernetes coredns.local {\n\tnamespaces\n}', error: 'Corefile:3: wrong argument count for "namespaces": expected at least 1, got 0' },
  { input: 'kubernetes coredns.local {\n    labels\n}', error: 'Corefile:3: wrong argument count for "labels": expected at least 1, got 0' },
  { input: 'kubernetes coredns.local {\n    labels environment in (production, qa\n}', error: 'Corefile:3: invalid label selector "environment in (production, qa": invalid label key "environment in (production, qa"' },
  { input: 'kubernetes coredns.local {\n\tpods giant_seed\n}', error: 'Corefile:3: invalid argument "giant_seed" for "pods": expected disabled, insecure or verified' },
  { input: 'kubernetes coredns.local {\n\tkubeconfig\n}', error: 'Corefile:3: wrong argument count for "kubeconfig": expected at least 1, got 0' },
  { input: 'kubernetes coredns.local {\n\tkubeconfig file context extraarg\n}', error: 'Corefile:3: wrong argument count for "kubeconfig": expected at most 2, got 3' },
  { input: 'kubernetes coredns.local {\n\tendpoint_pod_names giant_seed\n}', error: 'Corefile:3: wrong argument count for "endpoint_pod_names": expected no arguments, got 1' },
  { input: 'kubernetes coredns.local {\n\tnoendpoints ixnay on the endpointsay\n}', error: 'Corefile:3: wrong argument count for "noendpoints": expected no arguments, got 4' },
  { input: 'kubernetes coredns.local {\n\tignore ixnay on the endpointsay\n}', error: 'Corefile:3: invalid argument "ixnay" for "ignore": the only thing kubernetes can ignore is empty_service' },
  { input: 'kubernetes coredns.local {\n\tmulticluster clusterset.local\n}', error: 'Corefile:3: kubernetes is not authoritative for the multicluster zone clusterset.local. (add it to the zones of the kubernetes line)' },
  { input: 'kubernetes coredns.local clusterset.local {\n\tmulticluster clusterset.local test.local\n}', error: 'Corefile:3: kubernetes is not authoritative for the multicluster zone test.local. (add it to the zones of the kubernetes line)' },
  { input: 'kubernetes coredns.local {\n\tapiserver_qps -10\n}', error: 'Corefile:3: apiserver_qps must be >= 0, got -10' },
  { input: 'kubernetes coredns.local {\n\tapiserver_qps fast\n}', error: 'Corefile:3: invalid apiserver_qps: "fast" is not a number' },
  { input: 'kubernetes coredns.local {\n\tapiserver_burst -5\n}', error: 'Corefile:3: apiserver_burst must be at least 0, got -5' },
  { input: 'kubernetes coredns.local {\n\tapiserver_max_inflight -1\n}', error: 'Corefile:3: apiserver_max_inflight must be at least 0, got -1' },
  // CoreDNS: "non-reverse zone name must be used" (service and pod names need a forward zone).
  { input: 'kubernetes in-addr.arpa ip6.arpa', error: 'Corefile:2: kubernetes needs at least one zone that is not a reverse zone (in-addr.arpa, ip6.arpa)' },
  // TestKubernetesParseZonal: no arguments; not with noendpoints (the names are made of endpoints).
  { input: 'kubernetes coredns.local {\n\tzonal us-west-2a\n}', error: 'Corefile:3: wrong argument count for "zonal": expected no arguments, got 1' },
  { input: 'kubernetes coredns.local {\n\tzonal\n\tnoendpoints\n}', error: 'Corefile:3: zonal needs the endpoints, which noendpoints turns off; remove one of the two' },
  { input: 'kubernetes coredns.local {\n\tzonal\n\tzonal\n}', error: 'Corefile:4: duplicate property "zonal" in kubernetes block' },
];

for (const [i, c] of bad.entries()) {
  test(`CoreDNS kubernetes setup refuses case ${i}: ${c.input.split('\n').join(' ⏎ ')}`, () => {
    assert.throws(() => parse(c.input), { message: c.error });
  });
}
