// What `kubectl apply -k` installs: every kustomization in deploy/ and examples/install/ is
// rendered with the real `kubectl kustomize`, every object it yields is validated against the
// Kubernetes OpenAPI schemas (kubernetes-models), and the conventions existing tooling selects
// kdns by (k8s-app labels, port names, scrape annotations, probes, memory, disruption budget)
// are checked on the rendered objects, not on the files.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { type RenderedObject, findObject, publishedImages, renderKustomization, renderWithComponents, repoRoot, rewrite } from '../util/deploy.js';
import { answers, dig } from '../util/dig.js';
import { startKdns } from '../util/kdns.js';
import { freePort, waitFor } from '../util/net.js';
import { parseLinearParams } from '../util/proportional.js';
import { missing } from '../util/upstream.js';
import { render as renderDNS } from '../../src/operator/render.js';

const root = repoRoot;

type Obj = RenderedObject;

/** Directories holding a kustomization of kind Kustomization (components are checked through their users). */
function kustomizations(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    const file = `${root}${rel}/kustomization.yaml`;
    if (statSync(file, { throwIfNoEntry: false }) && /^kind: Kustomization$/m.test(readFileSync(file, 'utf8'))) out.push(rel);
    for (const e of readdirSync(`${root}${rel}`, { withFileTypes: true })) if (e.isDirectory()) walk(`${rel}/${e.name}`);
  };
  walk(dir);
  return out.sort();
}

const OVERLAYS = [...kustomizations('deploy'), ...kustomizations('examples/install')];

/**
 * The optional components of deploy/components/, each over the variant it is made for, as a
 * user's overlay adds it (the webhook's are in every variant, its cert-manager one is rendered
 * by webhook.test.ts, servicemonitor by examples/install/servicemonitor). Each rendering is
 * checked as an overlay is, under the name `VARIANT + COMPONENT`.
 */
const COMPONENTS: ReadonlyArray<{ variant: string; component: string }> = [
  { variant: 'deploy/coredns', component: 'deploy/components/proportional-autoscaler' },
  { variant: 'deploy/coredns', component: 'deploy/components/hpa' },
  { variant: 'deploy/coredns', component: 'deploy/components/prefer-close' },
  { variant: 'deploy/coredns', component: 'deploy/components/dual-stack' },
  { variant: 'deploy/coredns', component: 'deploy/components/zone-files' },
];
const withComponent = (c: { variant: string; component: string }): string => `${c.variant} + ${c.component}`;

/** Images the components pull from their upstream projects, pinned, not built by kdns. */
const UPSTREAM_IMAGES = new Set(['registry.k8s.io/cpa/cluster-proportional-autoscaler:v1.10.3']);

const render = renderKustomization;

const skip = missing('kubectl', 'kubernetes-client');
const rendered = new Map<string, Obj[]>(
  skip ? [] : [...OVERLAYS.map((dir): [string, Obj[]] => [dir, render(dir)]), ...COMPONENTS.map((c): [string, Obj[]] => [withComponent(c), renderWithComponents(c.variant, [c.component])])],
);
const RENDERINGS = [...OVERLAYS, ...COMPONENTS.map(withComponent)];
const objectsOf = (dir: string): Obj[] => {
  const objs = rendered.get(dir);
  assert.ok(objs, `${dir} was not rendered`);
  return objs;
};
const find = findObject;
const id = (o: Obj): string => `${o['kind']} ${o['metadata']?.namespace ? `${o['metadata'].namespace}/` : ''}${o['metadata']?.name}`;

type ModelClass = new (data: unknown) => { validate(): void };

/** The kubernetes-models class that validates objects of this apiVersion and kind. */
async function modelOf(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  const pkg = apiVersion.startsWith('monitoring.coreos.com/') ? '@kubernetes-models/prometheus-operator' : 'kubernetes-models';
  let mod: Record<string, unknown>;
  try {
    mod = (await import(`${pkg}/${apiVersion}`)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const cls = mod[kind];
  return typeof cls === 'function' ? (cls as ModelClass) : undefined;
}

/** Schema errors of one object ("" when valid). */
async function schemaError(o: Obj): Promise<string> {
  const Model = await modelOf(String(o['apiVersion']), String(o['kind']));
  if (!Model) return `${id(o)}: no schema for ${o['apiVersion']} ${o['kind']}`;
  try {
    new Model(o).validate();
    return '';
  } catch (e) {
    return `${id(o)}: ${(e as Error).message}`;
  }
}

/** Pod specs of the workloads in a rendering, by workload. */
function podSpecs(objs: Obj[]): Array<[string, Obj]> {
  return objs.filter((o) => ['Deployment', 'DaemonSet'].includes(o['kind'])).map((o) => [id(o), o['spec'].template.spec as Obj]);
}

const matches = (selector: Record<string, string>, labels: Record<string, string> | undefined): boolean =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

describe('schema validation', () => {
  const cases: Array<{ name: string; obj: Obj; error: RegExp | '' }> = [
    { name: 'a valid Service', obj: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 53 }] } }, error: '' },
    { name: 'a port as a string', obj: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: '53' }] } }, error: /^Service s: .*ports\/0\/port must be integer/ },
    { name: 'a Deployment without its selector', obj: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: {} } }, error: /^Deployment d: .*selector/ },
    { name: 'a ServiceMonitor without endpoints', obj: { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'm' }, spec: { selector: {}, endpoints: 'metrics' } }, error: /^ServiceMonitor m: .*endpoints must be array/ },
    { name: 'a kind no schema knows', obj: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }, error: /^Widget w: no schema for example\.com\/v1 Widget$/ },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const e = await schemaError(c.obj);
      if (c.error === '') assert.equal(e, '');
      else assert.match(e, c.error);
    });
  }
});

describe('kustomize overlays', { skip }, () => {
  test('the variants and examples the README shows are all here', () => {
    assert.deepEqual(OVERLAYS, [
      'deploy',
      'deploy/coredns',
      'deploy/nodecache',
      'deploy/operator',
      'examples/install/coredns-clusterip',
      'examples/install/operator-hardened',
      'examples/install/own-registry',
      'examples/install/servicemonitor',
      'examples/install/zone-files',
    ]);
  });

  test('every component under deploy/components is rendered over a variant by a test', () => {
    const components: string[] = [];
    const walk = (rel: string): void => {
      const file = `${root}${rel}/kustomization.yaml`;
      if (statSync(file, { throwIfNoEntry: false }) && /^kind: Component$/m.test(readFileSync(file, 'utf8'))) components.push(rel);
      for (const e of readdirSync(`${root}${rel}`, { withFileTypes: true })) if (e.isDirectory()) walk(`${rel}/${e.name}`);
    };
    walk('deploy/components');
    const usedByOverlays = OVERLAYS.flatMap((dir) => ((parse(readFileSync(`${root}${dir}/kustomization.yaml`, 'utf8')) as { components?: string[] }).components ?? []).map((c) => join(dir, c)));
    const renderedElsewhere = ['deploy/components/webhook/cert-manager']; // webhook.test.ts
    const covered = new Set([...usedByOverlays, ...COMPONENTS.map((c) => c.component), ...renderedElsewhere]);
    assert.deepEqual(components.sort().filter((c) => !covered.has(c)), []);
  });

  for (const dir of RENDERINGS) {
    test(`${dir}: every object validates against the Kubernetes schemas`, async () => {
      const objs = objectsOf(dir);
      assert.ok(objs.length > 0);
      const errors = (await Promise.all(objs.map(schemaError))).filter((e) => e !== '');
      assert.deepEqual(errors, []);
    });

    test(`${dir}: applies in one run (no object of a kind whose CRD is in the same apply)`, () => {
      const objs = objectsOf(dir);
      const defined = new Set(
        objs.filter((o) => o['kind'] === 'CustomResourceDefinition').flatMap((c) => (c['spec'].versions as Obj[]).map((v) => `${c['spec'].group}/${v['name']} ${c['spec'].names.kind}`)),
      );
      assert.deepEqual(objs.filter((o) => defined.has(`${o['apiVersion']} ${o['kind']}`)).map(id), []);
    });

    test(`${dir}: every container is hardened and has its memory sized`, () => {
      const problems: string[] = [];
      for (const [workload, pod] of podSpecs(objectsOf(dir))) {
        for (const c of pod['containers'] as Obj[]) {
          const sc = c['securityContext'] ?? {};
          const where = `${workload}/${c['name']}`;
          if (sc.readOnlyRootFilesystem !== true) problems.push(`${where}: root filesystem not read-only`);
          if (sc.allowPrivilegeEscalation !== false) problems.push(`${where}: privilege escalation allowed`);
          if (JSON.stringify(sc.capabilities?.drop) !== '["ALL"]') problems.push(`${where}: capabilities not dropped`);
          if (!c['resources']?.requests?.memory || !c['resources']?.limits?.memory) problems.push(`${where}: no memory request and limit`);
        }
      }
      assert.deepEqual(problems, []);
    });

    if (dir.startsWith('deploy')) {
      test(`${dir}: every image is one deploy/base/ names, which the Dockerfiles build, or a component's pinned upstream one`, () => {
        const built = publishedImages();
        const images = podSpecs(objectsOf(dir)).flatMap(([, pod]) => (pod['containers'] as Obj[]).map((c) => c['image'] as string));
        assert.ok(images.length > 0);
        assert.deepEqual(images.filter((i) => !built.has(i) && !UPSTREAM_IMAGES.has(i)), []);
      });
    }

    test(`${dir}: every Service and PodDisruptionBudget selects pods of this install`, () => {
      const objs = objectsOf(dir);
      const templates = objs.filter((o) => ['Deployment', 'DaemonSet'].includes(o['kind'])).map((o) => o['spec'].template.metadata.labels as Record<string, string>);
      const unselected = objs
        .filter((o) => (o['kind'] === 'Service' && o['spec'].selector) || o['kind'] === 'PodDisruptionBudget')
        .filter((o) => {
          const selector = (o['kind'] === 'Service' ? o['spec'].selector : o['spec'].selector.matchLabels) as Record<string, string>;
          return !templates.some((labels) => matches(selector, labels));
        })
        .map(id);
      // kube-dns-upstream selects the cluster DNS pods, which the node cache variant does not run.
      assert.deepEqual(unselected, dir === 'deploy/nodecache' ? ['Service kube-system/kube-dns-upstream'] : []);
    });
  }
});

describe('deploy (operator-managed, the default)', { skip }, () => {
  test('is the operator variant', () => {
    assert.deepEqual(objectsOf('deploy'), objectsOf('deploy/operator'));
  });
  test('installs the CRD, the namespace, RBAC and the operator, and no DNS resource (the operator creates it)', () => {
    assert.deepEqual(objectsOf('deploy').map(id).sort(), [
      'ClusterRole kdns-dns',
      'ClusterRole kdns-operator',
      'ClusterRole kdns-webhook',
      'ClusterRoleBinding kdns-dns',
      'ClusterRoleBinding kdns-operator',
      'ClusterRoleBinding kdns-webhook',
      'CustomResourceDefinition dnses.operator.openshift.io',
      'Deployment kdns/kdns-operator',
      'Deployment kdns/kdns-webhook',
      'MutatingWebhookConfiguration kdns-webhook',
      'Namespace kdns',
      'NetworkPolicy kdns/kdns-webhook',
      'PodDisruptionBudget kdns/kdns-webhook',
      'Role kdns/kdns-operator',
      'Role kdns/kdns-webhook',
      'RoleBinding kdns/kdns-operator',
      'RoleBinding kdns/kdns-webhook',
      'Service kdns/kdns-webhook',
      'ServiceAccount kdns/dns',
      'ServiceAccount kdns/kdns-operator',
      'ServiceAccount kdns/kdns-webhook',
      'ServiceAccount kdns/node-resolver',
    ]);
  });
  for (const dir of ['deploy', 'examples/install/own-registry']) {
    test(`${dir}: the operator starts the DNS pods with its own image`, () => {
      const c = find(objectsOf(dir), 'Deployment', 'kdns-operator')['spec'].template.spec.containers[0];
      const args = c['args'] as string[];
      assert.equal(args[args.indexOf('--image') + 1], c['image']);
    });
  }
  test('examples/install/own-registry: both images are the overridden one', () => {
    const c = find(objectsOf('examples/install/own-registry'), 'Deployment', 'kdns-operator')['spec'].template.spec.containers[0];
    assert.equal(c['image'], 'registry.example.com/platform/kdns:0.1.0-custom');
  });
});

describe('deploy/coredns (kdns serve in CoreDNS\'s place)', { skip }, () => {
  const objs = (): Obj[] => objectsOf('deploy/coredns');
  test('kubeadm\'s names in kube-system', () => {
    assert.deepEqual(objs().map(id).sort(), [
      'ClusterRole kdns-webhook',
      'ClusterRole system:coredns',
      'ClusterRoleBinding kdns-webhook',
      'ClusterRoleBinding system:coredns',
      'ConfigMap kube-system/coredns',
      'ConfigMap kube-system/kdns-webhook',
      'Deployment kube-system/coredns',
      'Deployment kube-system/kdns-webhook',
      'MutatingWebhookConfiguration kdns-webhook',
      'NetworkPolicy kube-system/kdns-webhook',
      'PodDisruptionBudget kube-system/coredns',
      'PodDisruptionBudget kube-system/kdns-webhook',
      'Role kube-system/kdns-webhook',
      'RoleBinding kube-system/kdns-webhook',
      'Service kube-system/kdns-webhook',
      'Service kube-system/kube-dns',
      'ServiceAccount kube-system/coredns',
      'ServiceAccount kube-system/kdns-webhook',
    ]);
  });
  test('the Deployment and its pods carry k8s-app: kube-dns, and select by it alone', () => {
    const d = find(objs(), 'Deployment', 'coredns');
    assert.equal(d['metadata'].labels['k8s-app'], 'kube-dns');
    assert.deepEqual(d['spec'].selector.matchLabels, { 'k8s-app': 'kube-dns' });
    assert.equal(d['spec'].template.metadata.labels['k8s-app'], 'kube-dns');
  });
  test('the kube-dns Service: ports dns, dns-tcp, metrics and the scrape annotations', () => {
    const s = find(objs(), 'Service', 'kube-dns');
    assert.deepEqual(
      (s['spec'].ports as Obj[]).map((p) => `${p['name']} ${p['port']}/${p['protocol']}`),
      ['dns 53/UDP', 'dns-tcp 53/TCP', 'metrics 9153/TCP'],
    );
    assert.deepEqual(s['metadata'].annotations, { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9153' });
    assert.equal(s['metadata'].labels['k8s-app'], 'kube-dns');
  });
  test('probes on :8080/health and :8181/ready, container ports named as CoreDNS names them', () => {
    const c = find(objs(), 'Deployment', 'coredns')['spec'].template.spec.containers[0];
    assert.equal(`${c['livenessProbe'].httpGet.port}${c['livenessProbe'].httpGet.path}`, '8080/health');
    assert.equal(`${c['readinessProbe'].httpGet.port}${c['readinessProbe'].httpGet.path}`, '8181/ready');
    assert.deepEqual((c['ports'] as Obj[]).map((p) => `${p['name']} ${p['containerPort']}/${p['protocol']}`), ['dns 53/UDP', 'dns-tcp 53/TCP', 'metrics 9153/TCP']);
  });
  test('non-root on :53 through NET_BIND_SERVICE only', () => {
    const pod = find(objs(), 'Deployment', 'coredns')['spec'].template.spec;
    assert.equal(pod['securityContext'].runAsNonRoot, true);
    assert.deepEqual(pod['containers'][0].securityContext.capabilities, { drop: ['ALL'], add: ['NET_BIND_SERVICE'] });
  });
  test('memory from the measured figures on Node 26: request ≥ 72 MiB (after a load, 10k Services + 10k Pods), limit ≥ 212 MiB (loading peak, 100k + 150k)', () => {
    const r = find(objs(), 'Deployment', 'coredns')['spec'].template.spec.containers[0].resources;
    assert.deepEqual(r, { requests: { cpu: '100m', memory: '72Mi' }, limits: { memory: '256Mi' } });
  });
  test('two replicas, spread over nodes and zones, one at a time disrupted', () => {
    const d = find(objs(), 'Deployment', 'coredns');
    assert.equal(d['spec'].replicas, 2);
    assert.deepEqual((d['spec'].template.spec.topologySpreadConstraints as Obj[]).map((t) => t['topologyKey']), ['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
    const pdb = find(objs(), 'PodDisruptionBudget', 'coredns');
    assert.equal(pdb['spec'].maxUnavailable, 1);
    assert.deepEqual(pdb['spec'].selector.matchLabels, d['spec'].selector.matchLabels);
  });
  test('the Corefile is mounted where the args say', () => {
    const pod = find(objs(), 'Deployment', 'coredns')['spec'].template.spec;
    const c = pod['containers'][0];
    assert.deepEqual(c['args'], ['serve', '--conf', '/etc/coredns/Corefile']);
    assert.equal(c['volumeMounts'][0].mountPath, '/etc/coredns');
    assert.deepEqual(pod['volumes'][0].configMap, { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }] });
  });
  test('examples/install/coredns-clusterip gives the Service kubeadm\'s address', () => {
    assert.equal(find(objectsOf('examples/install/coredns-clusterip'), 'Service', 'kube-dns')['spec'].clusterIP, '10.96.0.10');
  });
});

describe('deploy/nodecache (kdns nodecache in NodeLocal DNSCache\'s place)', { skip }, () => {
  const objs = (): Obj[] => objectsOf('deploy/nodecache');
  test('NodeLocal DNSCache\'s names in kube-system', () => {
    assert.deepEqual(objs().map(id).sort(), [
      'ClusterRole kdns-node-local-dns',
      'ClusterRole kdns-webhook',
      'ClusterRoleBinding kdns-node-local-dns',
      'ClusterRoleBinding kdns-webhook',
      'ConfigMap kube-system/kdns-webhook',
      'ConfigMap kube-system/node-local-dns',
      'DaemonSet kube-system/node-local-dns',
      'Deployment kube-system/kdns-webhook',
      'MutatingWebhookConfiguration kdns-webhook',
      'NetworkPolicy kube-system/kdns-webhook',
      'PodDisruptionBudget kube-system/kdns-webhook',
      'Role kube-system/kdns-webhook',
      'RoleBinding kube-system/kdns-webhook',
      'Service kube-system/kdns-webhook',
      'Service kube-system/kube-dns-upstream',
      'Service kube-system/node-local-dns',
      'ServiceAccount kube-system/kdns-webhook',
      'ServiceAccount kube-system/node-local-dns',
    ]);
  });
  test('node-cache\'s command line: the template where -basecorefile looks, the Corefile written to a writable volume', () => {
    const pod = find(objs(), 'DaemonSet', 'node-local-dns')['spec'].template.spec;
    const c = pod['containers'][0];
    assert.deepEqual(c['args'], ['node-cache', '-localip', '169.254.20.10', '-conf', '/run/node-cache/Corefile', '-upstreamsvc', 'kube-dns-upstream']);
    const mounts = Object.fromEntries((c['volumeMounts'] as Obj[]).map((m) => [m['mountPath'], m['name']]));
    const volumes = Object.fromEntries((pod['volumes'] as Obj[]).map((v) => [v['name'], v]));
    assert.deepEqual(volumes[mounts['/etc/coredns']].configMap, { name: 'node-local-dns', items: [{ key: 'Corefile', path: 'Corefile.base' }] });
    assert.deepEqual(volumes[mounts['/etc/kube-dns']].configMap, { name: 'kube-dns', optional: true });
    assert.ok(volumes[mounts['/run/node-cache']].emptyDir);
  });
  test('the README\'s ap.k8s.io block for a stock node-local-dns ConfigMap is this template\'s, but for the workloads import', () => {
    // A stock ConfigMap has no workloads snippet (nor the DaemonSet's NODE_NAME and pod RBAC).
    const corefile = (find(objs(), 'ConfigMap', 'node-local-dns')['data'].Corefile as string).replaceAll('    import workloads\n', '');
    const block = /```corefile\n([\s\S]*?)```/.exec(readFileSync(`${root}README.md`, 'utf8'))?.[1]?.replace(/^ {3}/gm, '');
    assert.ok(block);
    assert.ok(corefile.includes(block), block);
  });
  test('the template: NodeLocal DNSCache\'s blocks plus ap.k8s.io, each bound to the -localip addresses', () => {
    const corefile = find(objs(), 'ConfigMap', 'node-local-dns')['data'].Corefile as string;
    assert.deepEqual([...corefile.matchAll(/^(\S+) \{$/gm)].map((m) => m[1]), ['(workloads)', 'cluster.local:53', 'in-addr.arpa:53', 'ip6.arpa:53', 'ap.k8s.io:53', '.:53']);
    assert.equal([...corefile.matchAll(/^ {4}bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__$/gm)].length, 5);
    assert.equal([...corefile.matchAll(/^ {4}forward \. __PILLAR__CLUSTER__DNS__ \{$/gm)].length, 4);
    assert.match(corefile, /^ {4}forward \. __PILLAR__UPSTREAM__SERVERS__$/m);
  });
  test('the DaemonSet and its pods carry k8s-app: node-local-dns, on the host network with the node\'s resolv.conf', () => {
    const ds = find(objs(), 'DaemonSet', 'node-local-dns');
    assert.deepEqual(ds['spec'].selector.matchLabels, { 'k8s-app': 'node-local-dns' });
    assert.equal(ds['metadata'].labels['k8s-app'], 'node-local-dns');
    assert.equal(ds['spec'].template.spec.hostNetwork, true);
    assert.equal(ds['spec'].template.spec.dnsPolicy, 'Default');
  });
  test('metrics on :9253 through the node-local-dns Service, with the scrape annotations', () => {
    const s = find(objs(), 'Service', 'node-local-dns');
    assert.equal(s['spec'].clusterIP, 'None');
    assert.deepEqual((s['spec'].ports as Obj[]).map((p) => `${p['name']} ${p['port']}/${p['protocol']}`), ['metrics 9253/TCP']);
    assert.deepEqual(s['metadata'].annotations, { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9253' });
  });
  test('workloads in every block: this node\'s pods (NODE_NAME from the downward API), the report on loopback', () => {
    const corefile = find(objs(), 'ConfigMap', 'node-local-dns')['data'].Corefile as string;
    assert.equal(/^\(workloads\) \{\n([\s\S]*?)^\}$/m.exec(corefile)?.[1], '    workloads 127.0.0.1:9155 {\n        incluster\n        node {$NODE_NAME}\n    }\n');
    assert.equal([...corefile.matchAll(/^ {4}import workloads$/gm)].length, 5);
    const pod = find(objs(), 'DaemonSet', 'node-local-dns')['spec'].template.spec;
    assert.deepEqual(pod['containers'][0].env, [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }]);
    assert.equal(pod['automountServiceAccountToken'], true);
  });
  test('RBAC: list and watch pods, nothing more, for the DaemonSet\'s service account', () => {
    assert.deepEqual(find(objs(), 'ClusterRole', 'kdns-node-local-dns')['rules'], [{ apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] }]);
    const binding = find(objs(), 'ClusterRoleBinding', 'kdns-node-local-dns');
    assert.deepEqual(binding['roleRef'], { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kdns-node-local-dns' });
    assert.deepEqual(binding['subjects'], [{ kind: 'ServiceAccount', name: 'node-local-dns', namespace: 'kube-system' }]);
    assert.equal(find(objs(), 'DaemonSet', 'node-local-dns')['spec'].template.spec.serviceAccountName, 'node-local-dns');
  });
  test('memory from the measured figure on Node 26: request ≥ 67 MiB (both processes idle after a load, workloads watching the node\'s pods), limit with the caches\' room on top', () => {
    const r = find(objs(), 'DaemonSet', 'node-local-dns')['spec'].template.spec.containers[0].resources;
    assert.deepEqual(r, { requests: { cpu: '25m', memory: '68Mi' }, limits: { memory: '256Mi' } });
  });
  test('the capabilities for port 53 and the dummy interface, nothing else', () => {
    const c = find(objs(), 'DaemonSet', 'node-local-dns')['spec'].template.spec.containers[0];
    assert.deepEqual(c['securityContext'].capabilities, { drop: ['ALL'], add: ['NET_ADMIN', 'NET_BIND_SERVICE'] });
  });
});

describe('deploy/components/servicemonitor', { skip }, () => {
  test('scrapes the port named metrics of kube-dns and node-local-dns', () => {
    const sm = find(objectsOf('examples/install/servicemonitor'), 'ServiceMonitor', 'kdns');
    assert.deepEqual(sm['spec'].selector.matchExpressions, [{ key: 'k8s-app', operator: 'In', values: ['kube-dns', 'node-local-dns'] }]);
    assert.deepEqual(sm['spec'].endpoints.map((e: Obj) => e['port']), ['metrics']);
  });
  test('examples/install/servicemonitor: the label Prometheus selects by, the interval and the timeout, patched in', () => {
    const sm = find(objectsOf('examples/install/servicemonitor'), 'ServiceMonitor', 'kdns');
    assert.deepEqual(sm['metadata'].labels, { 'app.kubernetes.io/part-of': 'kdns', release: 'prometheus' });
    assert.deepEqual(sm['spec'].endpoints, [{ port: 'metrics', interval: '15s', scrapeTimeout: '10s' }]);
  });
});

/** Objects of a rendering that deploy/coredns does not have, by id. */
const added = (objs: Obj[]): string[] => {
  const base = new Set(objectsOf('deploy/coredns').map(id));
  return objs.map(id).filter((i) => !base.has(i)).sort();
};
/** A component rendering's objects, by the component's directory. */
const over = (component: string): Obj[] => objectsOf(withComponent({ variant: 'deploy/coredns', component }));
/** A rendering's objects deploy/coredns also has, with `except` (ids) left out: what a component must leave alone. */
const untouched = (objs: Obj[], except: readonly string[]): Obj[] => {
  const base = new Set(objectsOf('deploy/coredns').map(id));
  return objs.filter((o) => base.has(id(o)) && !except.includes(id(o)));
};

describe('deploy/components/proportional-autoscaler over deploy/coredns', { skip }, () => {
  const objs = (): Obj[] => over('deploy/components/proportional-autoscaler');
  test('adds the autoscaler, its ConfigMap and its RBAC', () => {
    assert.deepEqual(added(objs()), [
      'ClusterRole kdns-coredns-autoscaler',
      'ClusterRoleBinding kdns-coredns-autoscaler',
      'ConfigMap kube-system/coredns-autoscaler',
      'Deployment kube-system/coredns-autoscaler',
      'Role kube-system/coredns-autoscaler',
      'RoleBinding kube-system/coredns-autoscaler',
      'ServiceAccount kube-system/coredns-autoscaler',
    ]);
  });
  test('the coredns Deployment has no replicas of its own (an apply would undo the autoscaler), and is otherwise deploy/coredns\'s', () => {
    const d = find(objs(), 'Deployment', 'coredns');
    assert.equal(d['spec'].replicas, undefined);
    const { replicas: _, ...baseSpec } = find(objectsOf('deploy/coredns'), 'Deployment', 'coredns')['spec'];
    assert.deepEqual(d['spec'], baseSpec);
    assert.deepEqual(untouched(objs(), ['Deployment kube-system/coredns']), untouched(objectsOf('deploy/coredns'), ['Deployment kube-system/coredns']));
  });
  test('the pinned upstream image, pointed at its ConfigMap and the coredns Deployment of its own namespace', () => {
    const pod = find(objs(), 'Deployment', 'coredns-autoscaler')['spec'].template.spec;
    const c = pod['containers'][0];
    assert.equal(c['image'], 'registry.k8s.io/cpa/cluster-proportional-autoscaler:v1.10.3');
    assert.deepEqual(c['args'], ['--configmap=coredns-autoscaler', '--target=deployment/coredns', '--logtostderr=true', '--v=2']);
    assert.deepEqual(c['env'], [{ name: 'MY_POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }]);
    assert.equal(pod['serviceAccountName'], 'coredns-autoscaler');
    assert.equal(`${c['livenessProbe'].httpGet.port}${c['livenessProbe'].httpGet.path}`, '8080/healthz');
  });
  test('kube-dns-autoscaler\'s linear parameters', () => {
    const linear = find(objs(), 'ConfigMap', 'coredns-autoscaler')['data'].linear as string;
    assert.deepEqual(parseLinearParams(linear), { coresPerReplica: 256, nodesPerReplica: 16, min: 1, max: 0, preventSinglePointFailure: true, includeUnschedulableNodes: false });
  });
  test('RBAC: watch nodes; get its ConfigMap and get/update the coredns scale, by name, in its namespace; nothing more', () => {
    assert.deepEqual(find(objs(), 'ClusterRole', 'kdns-coredns-autoscaler')['rules'], [{ apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] }]);
    assert.deepEqual(find(objs(), 'Role', 'coredns-autoscaler')['rules'], [
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['coredns-autoscaler'], verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['deployments/scale'], resourceNames: ['coredns'], verbs: ['get', 'update'] },
    ]);
    const subjects = [{ kind: 'ServiceAccount', name: 'coredns-autoscaler', namespace: 'kube-system' }];
    assert.deepEqual(find(objs(), 'ClusterRoleBinding', 'kdns-coredns-autoscaler')['subjects'], subjects);
    assert.deepEqual(find(objs(), 'RoleBinding', 'coredns-autoscaler')['subjects'], subjects);
    assert.deepEqual(find(objs(), 'ClusterRoleBinding', 'kdns-coredns-autoscaler')['roleRef'], { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kdns-coredns-autoscaler' });
    assert.deepEqual(find(objs(), 'RoleBinding', 'coredns-autoscaler')['roleRef'], { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'coredns-autoscaler' });
  });
  test('every object it adds carries app.kubernetes.io/part-of: kdns', () => {
    const added_ = new Set(added(objs()));
    assert.deepEqual(objs().filter((o) => added_.has(id(o)) && o['metadata'].labels?.['app.kubernetes.io/part-of'] !== 'kdns').map(id), []);
  });
});

describe('deploy/components/hpa over deploy/coredns', { skip }, () => {
  const objs = (): Obj[] => over('deploy/components/hpa');
  test('adds a HorizontalPodAutoscaler, and takes the Deployment\'s replicas away', () => {
    assert.deepEqual(added(objs()), ['HorizontalPodAutoscaler kube-system/coredns']);
    assert.equal(find(objs(), 'Deployment', 'coredns')['spec'].replicas, undefined);
    assert.deepEqual(untouched(objs(), ['Deployment kube-system/coredns']), untouched(objectsOf('deploy/coredns'), ['Deployment kube-system/coredns']));
  });
  test('2 to 10 replicas of the coredns Deployment at 70% of the CPU request, which every container has', () => {
    const hpa = find(objs(), 'HorizontalPodAutoscaler', 'coredns');
    assert.equal(hpa['apiVersion'], 'autoscaling/v2');
    assert.deepEqual(hpa['spec'], {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'coredns' },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
    });
    const containers = find(objs(), 'Deployment', 'coredns')['spec'].template.spec.containers as Obj[];
    assert.deepEqual(containers.filter((c) => !c['resources']?.requests?.cpu).map((c) => c['name']), []);
    assert.equal(hpa['metadata'].labels['app.kubernetes.io/part-of'], 'kdns');
  });
});

describe('deploy/components/prefer-close and dual-stack over deploy/coredns', { skip }, () => {
  // kubernetes-models knows both fields (trafficDistribution as a string, the IP families as
  // enums), but no schema here rejects a misspelt field: the values are checked by name.
  const cases: Array<{ component: string; spec: Obj }> = [
    { component: 'deploy/components/prefer-close', spec: { trafficDistribution: 'PreferClose' } },
    { component: 'deploy/components/dual-stack', spec: { ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv4', 'IPv6'] } },
  ];
  for (const c of cases) {
    test(`${c.component}: the kube-dns Service gets ${JSON.stringify(c.spec)}, nothing else changes`, () => {
      const objs = over(c.component);
      assert.deepEqual(added(objs), []);
      assert.deepEqual(find(objs, 'Service', 'kube-dns')['spec'], { ...find(objectsOf('deploy/coredns'), 'Service', 'kube-dns')['spec'], ...c.spec });
      assert.deepEqual(untouched(objs, ['Service kube-system/kube-dns']), untouched(objectsOf('deploy/coredns'), ['Service kube-system/kube-dns']));
    });
  }
});

describe('deploy/components/zone-files over deploy/coredns', { skip }, () => {
  const objs = (): Obj[] => over('deploy/components/zone-files');
  test('deploy/coredns\'s Corefile with an auto block after kubernetes, serving db.<zone> files from the mounted folder', () => {
    const base = find(objectsOf('deploy/coredns'), 'ConfigMap', 'coredns')['data'].Corefile as string;
    const auto = '    auto {\n       directory /etc/kdns/zones ^db\\.(.+)$ {1}\n    }\n';
    const expected = rewrite(base, '       ttl 30\n    }\n', `       ttl 30\n    }\n${auto}`);
    assert.equal(find(objs(), 'ConfigMap', 'coredns')['data'].Corefile, expected);
  });
  test('the ConfigMap coredns-zones mounted read-only at /etc/kdns/zones, optional, outside the Corefile\'s read-only volume', () => {
    const pod = find(objs(), 'Deployment', 'coredns')['spec'].template.spec;
    assert.deepEqual((pod['volumes'] as Obj[]).find((v) => v['name'] === 'zones'), { name: 'zones', configMap: { name: 'coredns-zones', optional: true } });
    assert.deepEqual((pod['containers'][0].volumeMounts as Obj[]).map((m) => `${m['name']} ${m['mountPath']} ${m['readOnly']}`), ['config-volume /etc/coredns true', 'zones /etc/kdns/zones true']);
    assert.equal(pod['containers'][0].args.join(' '), 'serve --conf /etc/coredns/Corefile');
  });
  test('examples/install/zone-files: the ConfigMap under its plain name (edits reach the pods without a restart), one key per zone file', () => {
    const cm = find(objectsOf('examples/install/zone-files'), 'ConfigMap', 'coredns-zones');
    assert.deepEqual(Object.keys(cm['data']), ['db.example.internal']);
    assert.equal(cm['metadata'].namespace, 'kube-system');
    assert.equal(cm['metadata'].labels['app.kubernetes.io/part-of'], 'kdns');
  });
});

describe('deploy/components/operator-networkpolicies and operator-alerts (examples/install/operator-hardened)', { skip }, () => {
  const objs = (): Obj[] => objectsOf('examples/install/operator-hardened');
  // What the operator renders into the namespace: the DNS pods and Service the policies and the
  // ServiceMonitor must match.
  const operatorObjects = (): { pod: Obj; podLabels: Record<string, string>; service: Obj } => {
    const r = renderDNS({ dns: { apiVersion: 'operator.openshift.io/v1', kind: 'DNS', metadata: { name: 'default' }, spec: {} }, now: new Date(0) });
    if (!r.ok) throw new Error('render refused the empty DNS resource');
    const ds = r.objects.find((o) => o.kind === 'DaemonSet' && o.metadata.name === 'dns-default') as unknown as Obj;
    const service = r.objects.find((o) => o.kind === 'Service') as unknown as Obj;
    return { pod: ds['spec'].template.spec, podLabels: ds['spec'].template.metadata.labels, service };
  };
  const policy = (name: string): Obj => find(objs(), 'NetworkPolicy', name);
  const ports = (rule: Obj): string[] => (rule['ports'] as Obj[]).map((p) => `${p['port']}/${p['protocol']}`);
  const selects = (np: Obj, labels: Record<string, string>): boolean => {
    const sel = np['spec'].podSelector;
    const byLabels = matches(sel.matchLabels ?? {}, labels);
    const byExpressions = ((sel.matchExpressions ?? []) as Obj[]).every((e) => e['operator'] === 'In' && (e['values'] as string[]).includes(labels[e['key']] ?? ''));
    return byLabels && byExpressions;
  };

  test('kdns-deny-all: every pod of the namespace, nothing in or out', () => {
    const np = policy('kdns-deny-all');
    assert.equal(np['metadata'].namespace, 'kdns');
    assert.deepEqual(np['spec'], { podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
  });
  test('dns-default: selects the DNS pods the operator renders, DNS from anyone on the ports they listen on', () => {
    const { pod, podLabels } = operatorObjects();
    const np = policy('dns-default');
    assert.ok(selects(np, podLabels), JSON.stringify(podLabels));
    const dnsPorts = (pod['containers'][0].ports as Obj[]).filter((p) => p['name'] !== 'metrics').map((p) => `${p['containerPort']}/${p['protocol']}`);
    const open = (np['spec'].ingress as Obj[]).find((r) => r['from'] === undefined) as Obj;
    assert.deepEqual(ports(open), dnsPorts);
  });
  test('dns-default: metrics only from the monitoring namespace, on the pods\' metrics port', () => {
    const { pod } = operatorObjects();
    const metricsPort = (pod['containers'][0].ports as Obj[]).find((p) => p['name'] === 'metrics') as Obj;
    const rule = (policy('dns-default')['spec'].ingress as Obj[]).find((r) => r['from'] !== undefined) as Obj;
    assert.deepEqual(ports(rule), [`${metricsPort['containerPort']}/TCP`]);
    assert.deepEqual(rule['from'], [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
  });
  test('dns-default: out to anywhere (upstream resolvers, the API server)', () => {
    assert.deepEqual(policy('dns-default')['spec'].egress, [{ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }] }]);
  });
  test('every Deployment of the namespace may still reach the API server (443 or 6443)', () => {
    const np = policy('kdns-api-server');
    assert.deepEqual(ports((np['spec'].egress as Obj[])[0] as Obj), ['443/TCP', '6443/TCP']);
    const cutOff = objs()
      .filter((o) => o['kind'] === 'Deployment' && o['metadata'].namespace === 'kdns')
      .filter((d) => !selects(np, d['spec'].template.metadata.labels))
      .map(id);
    assert.deepEqual(cutOff, []);
  });
  test('the webhook keeps its ingress policy (admission 9443, metrics 9153)', () => {
    const { podSelector, ingress } = policy('kdns-webhook')['spec'];
    assert.deepEqual(podSelector, { matchLabels: { 'app.kubernetes.io/name': 'kdns-webhook' } });
    assert.deepEqual((ingress as Obj[]).flatMap(ports), ['9443/TCP', '9153/TCP']);
  });
  test('ServiceMonitor dns-default scrapes the port named metrics of the Service the operator renders', () => {
    const { service } = operatorObjects();
    const sm = find(objs(), 'ServiceMonitor', 'dns-default');
    assert.ok(matches(sm['spec'].selector.matchLabels, service['metadata'].labels), JSON.stringify(service['metadata'].labels));
    assert.deepEqual(sm['spec'].namespaceSelector, { matchNames: ['kdns'] });
    assert.deepEqual(sm['spec'].endpoints.map((e: Obj) => e['port']), ['metrics']);
    assert.ok((service['spec'].ports as Obj[]).some((p) => p['name'] === 'metrics'));
  });
  test('PrometheusRule dns-default: the three alerts, in the kdns namespace (test/deploy/alerts.test.ts evaluates them)', () => {
    const rule = find(objs(), 'PrometheusRule', 'dns-default');
    assert.equal(rule['metadata'].namespace, 'kdns');
    assert.deepEqual((rule['spec'].groups as Obj[]).flatMap((g) => (g['rules'] as Obj[]).map((r) => `${r['alert']} ${r['for']} ${r['labels'].severity}`)), [
      'CoreDNSPanicking 5m warning',
      'CoreDNSHealthCheckSlow 5m warning',
      'CoreDNSErrorsHigh 5m warning',
    ]);
  });
});

describe('the rendered configurations run', { skip: skip ?? missing('dig', 'bind9-dnsutils') }, () => {
  interface Served {
    port: number;
    health: number;
    ready: number;
    metrics: number;
    dir: string;
    kdns: ReturnType<typeof startKdns>;
  }

  /**
   * kdns serve on a rendered coredns Corefile moved to loopback ports, answering for the demo
   * cluster; `adapt` rewrites paths of the pod's file system into `dir`, the test's folder.
   */
  async function serveRendered(corefile: string, adapt: (text: string, dir: string) => string = (t) => t): Promise<Served> {
    const [port, health, ready, metrics, dead] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const dir = mkdtempSync(join(tmpdir(), 'kdns-deploy-coredns-'));
    const resolv = join(dir, 'resolv.conf');
    writeFileSync(resolv, `nameserver 127.0.0.1\nsearch corp.test\n`);
    let text = rewrite(corefile, '.:53 {', `.:${port} {\n    bind 127.0.0.1`);
    text = rewrite(text, 'health {', `health 127.0.0.1:${health} {`);
    text = rewrite(text, '    ready\n', `    ready 127.0.0.1:${ready}\n`);
    text = rewrite(text, 'prometheus :9153', `prometheus 127.0.0.1:${metrics}`);
    // No query leaves loopback: the node's resolvers become a port nothing listens on.
    text = rewrite(text, 'forward . /etc/resolv.conf', `forward . 127.0.0.1:${dead}`);
    text = rewrite(text, 'autopath ap.k8s.io /etc/resolv.conf', `autopath ap.k8s.io ${resolv}`);
    writeFileSync(join(dir, 'Corefile'), adapt(text, dir));
    const kdns = startKdns(['serve', '--conf', join(dir, 'Corefile'), '--cluster', `${root}examples/cluster`]);
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${ready}/ready`).catch(() => undefined))?.status === 200, 20_000);
    } catch (e) {
      await kdns.stop();
      throw new Error(`kdns did not get ready: ${(e as Error).message}\n${kdns.output()}`);
    }
    return { port, health, ready, metrics, dir, kdns };
  }

  test('deploy/coredns: kdns serves its Corefile (moved to loopback ports): cluster names, ap.k8s.io search paths, health, ready, metrics', async () => {
    const corefile = find(objectsOf('deploy/coredns'), 'ConfigMap', 'coredns')['data'].Corefile as string;
    const { port, health, metrics, kdns } = await serveRendered(corefile);
    try {
      assert.deepEqual(answers(await dig('web.demo.svc.cluster.local', 'A', { port })), ['A 10.96.100.10']);
      assert.deepEqual(answers(await dig('web.search.demo.cluster.local.ap.k8s.io', 'A', { port })), ['A 10.96.100.10', 'CNAME web.demo.svc.cluster.local.']);
      assert.equal((await fetch(`http://127.0.0.1:${health}/health`)).status, 200);
      assert.match(await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text(), /^coredns_dns_requests_total\{.*\} [1-9]/m);
    } finally {
      await kdns.stop();
    }
    assert.doesNotMatch(kdns.output(), /\[ERROR\] (?!plugin\/errors)/);
  });

  test('examples/install/zone-files: the ConfigMap\'s zone file is served from the mounted folder, cluster names as before', async () => {
    const objs = objectsOf('examples/install/zone-files');
    const corefile = find(objs, 'ConfigMap', 'coredns')['data'].Corefile as string;
    const zones = find(objs, 'ConfigMap', 'coredns-zones')['data'] as Record<string, string>;
    const mountPath = find(objs, 'Deployment', 'coredns')['spec'].template.spec.containers[0].volumeMounts.find((m: Obj) => m['name'] === 'zones').mountPath as string;
    const { port, kdns } = await serveRendered(corefile, (text, dir) => {
      // The kubelet's layout of a ConfigMap volume: the files in a timestamped folder, ..data
      // a symlink to it, and each key a symlink through ..data.
      const volume = join(dir, 'zones');
      mkdirSync(join(volume, '..2026_06_01_00_00_00.000000001'), { recursive: true });
      symlinkSync('..2026_06_01_00_00_00.000000001', join(volume, '..data'));
      for (const [name, content] of Object.entries(zones)) {
        writeFileSync(join(volume, '..2026_06_01_00_00_00.000000001', name), content);
        symlinkSync(join('..data', name), join(volume, name));
      }
      return rewrite(text, `directory ${mountPath} `, `directory ${volume} `);
    });
    try {
      assert.deepEqual(answers(await dig('db.example.internal', 'A', { port })), ['A 10.0.10.5', 'A 10.0.10.6']);
      assert.deepEqual(answers(await dig('git.example.internal', 'A', { port })), ['A 10.0.10.5', 'A 10.0.10.6', 'CNAME db.example.internal.']);
      assert.equal((await dig('nothing.example.internal', 'A', { port })).status, 'NXDOMAIN');
      assert.deepEqual(answers(await dig('web.demo.svc.cluster.local', 'A', { port })), ['A 10.96.100.10']);
    } finally {
      await kdns.stop();
    }
    assert.doesNotMatch(kdns.output(), /\[ERROR\] (?!plugin\/errors)/);
  });
});
