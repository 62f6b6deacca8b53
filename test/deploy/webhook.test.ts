// The admission webhook as each install variant renders it (deploy/components/webhook, through
// the real `kubectl kustomize`): the Deployment runs `kdns webhook` with the command line the
// objects around it agree with, least-privilege RBAC written out rule by rule, Service, PDB and
// NetworkPolicy ports, the settings per variant, and the MutatingWebhookConfiguration, whose
// selectors and CEL matchConditions are run through kube-apiserver's matching logic
// (testutil/webhookmatch.ts, a real CEL evaluator) for the pods users create. Also the optional
// cert-manager component, rendered over each variant.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { KDNS_POLICIES, NAMESPACE_POLICY_LABEL, POLICY_ANNOTATION, STOCK_DNS_POLICIES } from '../../src/poddns/annotations.js';
import { findObject, publishedImages, renderKustomization, repoRoot } from '../util/deploy.js';
import type { RenderedObject } from '../util/deploy.js';
import { missing } from '../util/upstream.js';
import { webhooksToCall } from '../util/webhookmatch.js';
import type { KubeObject, MutatingWebhook, WebhookConfiguration } from '../util/webhookmatch.js';

type Obj = RenderedObject;

interface Variant {
  dir: string;
  /** Where the webhook runs: the variant's namespace. */
  namespace: string;
  /** The settings file the variant ships, or undefined where the operator writes it. */
  config: string | undefined;
}

const VARIANTS: Variant[] = [
  { dir: 'deploy', namespace: 'kdns', config: undefined },
  { dir: 'deploy/coredns', namespace: 'kube-system', config: 'clusterDomain: cluster.local\nclusterDNS: [10.96.0.10]\n' },
  { dir: 'deploy/nodecache', namespace: 'kube-system', config: 'clusterDomain: cluster.local\nclusterDNS: [10.96.0.10]\nnodeCacheIP: 169.254.20.10\n' },
];

const skip = missing('kubectl', 'kubernetes-client');
const rendered = new Map<string, Obj[]>(skip ? [] : VARIANTS.map((v) => [v.dir, renderKustomization(v.dir)]));
const objectsOf = (dir: string): Obj[] => {
  const objs = rendered.get(dir);
  assert.ok(objs, `${dir} was not rendered`);
  return objs;
};
const id = (o: Obj): string => `${o['kind']} ${o['metadata']?.namespace ? `${o['metadata'].namespace}/` : ''}${o['metadata']?.name}`;

/** `kdns webhook`'s options (src/cli/webhook.ts), each with whether it takes a value. */
const CLI_FLAGS = new Map<string, boolean>([
  ['--config', true], ['--listen', true], ['--health', true], ['--metrics', true], ['--namespace', true], ['--service', true], ['--tls-secret', true],
  ['--webhook-configuration', true], ['--tls-cert-file', true], ['--tls-key-file', true], ['--kubeconfig', true], ['--cluster-domain', true],
  ['--cluster-dns', true], ['--nodecache-ip', true], ['--node-search', true], ['--config-poll-seconds', true],
]);

/** The args after the `webhook` subcommand as flag → value, failing on anything the command does not take. */
function webhookFlags(args: readonly string[]): Map<string, string> {
  assert.equal(args[0], 'webhook');
  const flags = new Map<string, string>();
  for (let i = 1; i < args.length; i++) {
    const flag = args[i]!;
    assert.ok(CLI_FLAGS.has(flag), `kdns webhook has no option ${flag}`);
    assert.ok(!flags.has(flag), `${flag} given twice`);
    const value = args[i + 1];
    assert.ok(value !== undefined && !value.startsWith('--'), `${flag} needs a value`);
    flags.set(flag, value);
    i++;
  }
  return flags;
}

const portOf = (hostPort: string): number => Number(hostPort.slice(hostPort.lastIndexOf(':') + 1));
const deployment = (objs: Obj[]): Obj => findObject(objs, 'Deployment', 'kdns-webhook');
const container = (objs: Obj[]): Obj => deployment(objs)['spec'].template.spec.containers[0];
const mwc = (objs: Obj[]): WebhookConfiguration & { webhooks: MutatingWebhook[] } => findObject(objs, 'MutatingWebhookConfiguration', 'kdns-webhook') as WebhookConfiguration & { webhooks: MutatingWebhook[] };

for (const v of VARIANTS) {
  describe(`${v.dir}: the webhook in ${v.namespace}`, { skip }, () => {
    const objs = (): Obj[] => objectsOf(v.dir);
    const ns = v.namespace;

    test('its objects, namespaced ones in the variant\'s namespace', () => {
      const ids = objs().filter((o) => String(o['metadata'].name).startsWith('kdns-webhook')).map(id).sort();
      assert.deepEqual(ids, [
        'ClusterRole kdns-webhook',
        'ClusterRoleBinding kdns-webhook',
        ...(v.config === undefined ? [] : [`ConfigMap ${ns}/kdns-webhook`]),
        `Deployment ${ns}/kdns-webhook`,
        'MutatingWebhookConfiguration kdns-webhook',
        `NetworkPolicy ${ns}/kdns-webhook`,
        `PodDisruptionBudget ${ns}/kdns-webhook`,
        `Role ${ns}/kdns-webhook`,
        `RoleBinding ${ns}/kdns-webhook`,
        `Service ${ns}/kdns-webhook`,
        `ServiceAccount ${ns}/kdns-webhook`,
      ]);
    });

    test('every one carries the kdns labels (deploy/base applies to the component)', () => {
      const unlabelled = objs()
        .filter((o) => String(o['metadata'].name).startsWith('kdns-webhook'))
        .filter((o) => o['metadata'].labels?.['app.kubernetes.io/part-of'] !== 'kdns' || o['metadata'].labels?.['app.kubernetes.io/name'] !== 'kdns-webhook')
        .map(id);
      assert.deepEqual(unlabelled, []);
    });

    test('Deployment: kdns webhook\'s command line, the names it takes agreeing with the objects', () => {
      const c = container(objs());
      assert.deepEqual(c['args'], [
        'webhook',
        '--config', '/etc/kdns-webhook/config.yaml',
        '--listen', ':9443',
        '--health', ':8080',
        '--metrics', ':9153',
        '--service', 'kdns-webhook',
        '--tls-secret', 'kdns-webhook-tls',
        '--webhook-configuration', 'kdns-webhook',
      ]);
      const flags = webhookFlags(c['args'] as string[]);
      const ports = Object.fromEntries((c['ports'] as Obj[]).map((p) => [p['name'], p['containerPort']]));
      assert.deepEqual(ports, { https: portOf(flags.get('--listen')!), metrics: portOf(flags.get('--metrics')!), health: portOf(flags.get('--health')!) });
      assert.equal(findObject(objs(), 'Service', flags.get('--service')!)['metadata'].namespace, ns);
      assert.equal(mwc(objs())['metadata']?.name, flags.get('--webhook-configuration'));
      assert.deepEqual(findObject(objs(), 'Role', 'kdns-webhook')['rules'][0].resourceNames, [flags.get('--tls-secret')]);
      // Its namespace from the downward API (the default of --namespace).
      assert.deepEqual(c['env'], [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }]);
    });

    test('Deployment: the settings ConfigMap mounted as a directory where --config points (updates reach the file)', () => {
      const pod = deployment(objs())['spec'].template.spec;
      const mount = (container(objs())['volumeMounts'] as Obj[]).find((m) => m['name'] === 'config');
      assert.deepEqual(mount, { name: 'config', mountPath: '/etc/kdns-webhook', readOnly: true });
      assert.deepEqual((pod['volumes'] as Obj[]).find((vol) => vol['name'] === 'config'), { name: 'config', configMap: { name: 'kdns-webhook', items: [{ key: 'config.yaml', path: 'config.yaml' }] } });
    });

    test('Deployment: probes on :8080 (/ready, /health), two replicas spread over nodes, kept available through rollouts', () => {
      const d = deployment(objs());
      const c = container(objs());
      assert.equal(`${c['readinessProbe'].httpGet.port}${c['readinessProbe'].httpGet.path}`, '8080/ready');
      assert.equal(`${c['livenessProbe'].httpGet.port}${c['livenessProbe'].httpGet.path}`, '8080/health');
      assert.equal(d['spec'].replicas, 2);
      assert.deepEqual(d['spec'].strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
      assert.deepEqual(d['spec'].selector.matchLabels, { 'app.kubernetes.io/name': 'kdns-webhook' });
      assert.deepEqual(
        (d['spec'].template.spec.topologySpreadConstraints as Obj[]).map((t) => `${t['topologyKey']} ${t['whenUnsatisfiable']} ${JSON.stringify(t['labelSelector'].matchLabels)}`),
        ['kubernetes.io/hostname ScheduleAnyway {"app.kubernetes.io/name":"kdns-webhook"}', 'topology.kubernetes.io/zone ScheduleAnyway {"app.kubernetes.io/name":"kdns-webhook"}'],
      );
    });

    test('Deployment: the kdns image, hardened as the other kdns pods, system-cluster-critical as the DNS Deployments, memory sized', () => {
      const pod = deployment(objs())['spec'].template.spec;
      const c = container(objs());
      assert.ok(publishedImages().has(c['image']), c['image']);
      assert.equal(c['image'], 'ghcr.io/kdns/kdns:0.1.0');
      assert.equal(pod['priorityClassName'], 'system-cluster-critical');
      assert.equal(pod['serviceAccountName'], 'kdns-webhook');
      assert.deepEqual(pod['securityContext'], { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      // NET_BIND_SERVICE only because the image's node binary carries it as a file capability.
      assert.deepEqual(c['securityContext'], { runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } });
      assert.deepEqual(c['resources'], { requests: { cpu: '20m', memory: '128Mi' }, limits: { memory: '256Mi' } });
      assert.deepEqual(pod['nodeSelector'], { 'kubernetes.io/os': 'linux' });
    });

    test('RBAC: its own Secret and MutatingWebhookConfiguration by name, creating Secrets, nothing else', () => {
      assert.deepEqual(findObject(objs(), 'Role', 'kdns-webhook')['rules'], [
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['kdns-webhook-tls'], verbs: ['get', 'update'] },
        { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      ]);
      assert.deepEqual(findObject(objs(), 'ClusterRole', 'kdns-webhook')['rules'], [
        { apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'], resourceNames: ['kdns-webhook'], verbs: ['get', 'patch', 'update'] },
      ]);
      const subject = [{ kind: 'ServiceAccount', name: 'kdns-webhook', namespace: ns }];
      const rb = findObject(objs(), 'RoleBinding', 'kdns-webhook');
      assert.deepEqual([rb['metadata'].namespace, rb['roleRef'], rb['subjects']], [ns, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kdns-webhook' }, subject]);
      const crb = findObject(objs(), 'ClusterRoleBinding', 'kdns-webhook');
      assert.deepEqual([crb['roleRef'], crb['subjects']], [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kdns-webhook' }, subject]);
    });

    test('Service 443 → 9443 (and metrics 9153), PodDisruptionBudget minAvailable 1, both selecting the webhook\'s pods', () => {
      const labels = deployment(objs())['spec'].template.metadata.labels as Record<string, string>;
      const s = findObject(objs(), 'Service', 'kdns-webhook');
      assert.deepEqual((s['spec'].ports as Obj[]).map((p) => `${p['name']} ${p['port']}→${p['targetPort']}/${p['protocol']}`), ['https 443→9443/TCP', 'metrics 9153→9153/TCP']);
      assert.ok(Object.entries(s['spec'].selector as Record<string, string>).every(([k, val]) => labels[k] === val));
      const pdb = findObject(objs(), 'PodDisruptionBudget', 'kdns-webhook');
      assert.equal(pdb['spec'].minAvailable, 1);
      assert.deepEqual(pdb['spec'].selector.matchLabels, deployment(objs())['spec'].selector.matchLabels);
    });

    test('NetworkPolicy: ingress to the webhook\'s pods on 9443 (API server) and 9153 (Prometheus) only', () => {
      const np = findObject(objs(), 'NetworkPolicy', 'kdns-webhook');
      assert.deepEqual(np['spec'], {
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'kdns-webhook' } },
        policyTypes: ['Ingress'],
        ingress: [{ ports: [{ protocol: 'TCP', port: 9443 }] }, { ports: [{ protocol: 'TCP', port: 9153 }] }],
      });
    });

    test('MutatingWebhookConfiguration: three webhooks, one path each, to the Service in this namespace', () => {
      assert.deepEqual(
        mwc(objs()).webhooks.map((w) => [w.name, w.clientConfig.service]),
        [
          ['pods.dns.kdns.io', { name: 'kdns-webhook', namespace: ns, path: '/mutate', port: 443 }],
          ['autopath-namespace.dns.kdns.io', { name: 'kdns-webhook', namespace: ns, path: '/mutate/namespace/ClusterFirstWithAutopath', port: 443 }],
          ['custom-namespace.dns.kdns.io', { name: 'kdns-webhook', namespace: ns, path: '/mutate/namespace/Custom', port: 443 }],
        ],
      );
    });

    test('MutatingWebhookConfiguration: Pod CREATE only, Ignore, 3 s, no side effects, v1, reinvoked if needed, no caBundle (the webhook writes it)', () => {
      for (const w of mwc(objs()).webhooks) {
        assert.deepEqual(w.rules, [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }], w.name);
        assert.deepEqual(
          [w.failurePolicy, w.sideEffects, w.timeoutSeconds, w.admissionReviewVersions, w.reinvocationPolicy, w.matchPolicy, w.clientConfig.caBundle],
          ['Ignore', 'None', 3, ['v1'], 'IfNeeded', 'Equivalent', undefined],
          w.name,
        );
      }
    });

    test(`MutatingWebhookConfiguration: kube-system${ns === 'kube-system' ? '' : ` and ${ns}`} left out by name, the label splitting namespaces three ways`, () => {
      assert.deepEqual(
        mwc(objs()).webhooks.map((w) => w.namespaceSelector),
        [
          { matchExpressions: [{ key: 'dns.kdns.io/policy', operator: 'NotIn', values: ['ClusterFirstWithAutopath', 'Custom'] }, { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...new Set(['kube-system', ns])] }] },
          { matchExpressions: [{ key: 'dns.kdns.io/policy', operator: 'In', values: ['ClusterFirstWithAutopath'] }, { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...new Set(['kube-system', ns])] }] },
          { matchExpressions: [{ key: 'dns.kdns.io/policy', operator: 'In', values: ['Custom'] }, { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...new Set(['kube-system', ns])] }] },
        ],
      );
    });

    test('settings: ' + (v.config === undefined ? 'none shipped, the operator writes ConfigMap kdns-webhook' : 'the cluster domain and addresses of this variant'), () => {
      const cm = objs().find((o) => o['kind'] === 'ConfigMap' && o['metadata'].name === 'kdns-webhook');
      if (v.config === undefined) {
        assert.equal(cm, undefined);
        return;
      }
      assert.deepEqual(cm?.['data'], { 'config.yaml': v.config });
    });

    describe('which pods the API server sends to which webhook (kube-apiserver\'s matching, real CEL)', () => {
      const A = POLICY_ANNOTATION;
      const podWith = (metadata: Record<string, unknown>, spec: Record<string, unknown> = {}): KubeObject => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', ...metadata },
        // As admission sees a pod: defaulting has run, so dnsPolicy is set.
        spec: { containers: [{ name: 'app', image: 'app:1' }], dnsPolicy: 'ClusterFirst', ...spec },
      });
      const cases: Array<{ name: string; namespace: string; nsLabels?: Record<string, string>; pod: KubeObject; want: string[] }> = [
        { name: 'annotated ClusterFirstWithAutopath', namespace: 'shop', pod: podWith({ annotations: { [A]: 'ClusterFirstWithAutopath' } }), want: ['pods.dns.kdns.io'] },
        { name: 'annotated Custom', namespace: 'shop', pod: podWith({ annotations: { [A]: 'Custom', 'dns.kdns.io/search': '$(NAMESPACE).svc.$(CLUSTER)' } }), want: ['pods.dns.kdns.io'] },
        { name: 'literal spec.dnsPolicy: ClusterFirstWithAutopath', namespace: 'shop', pod: podWith({}, { dnsPolicy: 'ClusterFirstWithAutopath' }), want: ['pods.dns.kdns.io'] },
        { name: 'literal spec.dnsPolicy: Custom', namespace: 'shop', pod: podWith({}, { dnsPolicy: 'Custom' }), want: ['pods.dns.kdns.io'] },
        { name: 'plain pod (annotations, none of kdns)', namespace: 'shop', pod: podWith({ annotations: { 'example.com/owner': 'web' } }), want: [] },
        { name: 'pod without an annotations map at all', namespace: 'shop', pod: podWith({}), want: [] },
        { name: 'pod without dnsPolicy (not defaulted) nor annotations', namespace: 'shop', pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } }, want: [] },
        { name: 'annotation naming a stock policy, no label: nothing to do', namespace: 'shop', pod: podWith({ annotations: { [A]: 'ClusterFirst' } }), want: [] },
        { name: 'misspelt annotation: sent, so the webhook can refuse it and say why', namespace: 'shop', pod: podWith({ annotations: { [A]: 'ClusterFirstWithAutoPath' } }), want: ['pods.dns.kdns.io'] },
        { name: 'hostNetwork pod with the annotation', namespace: 'shop', pod: podWith({ annotations: { [A]: 'ClusterFirstWithAutopath' } }, { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), want: [] },
        { name: 'hostNetwork: false with the annotation', namespace: 'shop', pod: podWith({ annotations: { [A]: 'ClusterFirstWithAutopath' } }, { hostNetwork: false }), want: ['pods.dns.kdns.io'] },
        { name: 'pod already dnsPolicy None with the annotation (what the webhook makes: a reinvocation skips it)', namespace: 'shop', pod: podWith({ annotations: { [A]: 'ClusterFirstWithAutopath', 'dns.kdns.io/mutated-from': 'ClusterFirstWithAutopath' } }, { dnsPolicy: 'None', dnsConfig: { nameservers: ['10.96.0.10'] } }), want: [] },
        { name: 'annotated pod in kube-system', namespace: 'kube-system', pod: podWith({ annotations: { [A]: 'ClusterFirstWithAutopath' } }), want: [] },
        { name: 'literal form in kube-system', namespace: 'kube-system', pod: podWith({}, { dnsPolicy: 'ClusterFirstWithAutopath' }), want: [] },
        { name: 'kube-system labelled ClusterFirstWithAutopath', namespace: 'kube-system', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'ClusterFirstWithAutopath' }, pod: podWith({}), want: [] },
        { name: `annotated pod in the webhook's namespace (${ns})`, namespace: ns, pod: podWith({ annotations: { [A]: 'ClusterFirstWithAutopath' } }), want: [] },
        { name: `the webhook's namespace (${ns}) labelled Custom`, namespace: ns, nsLabels: { [NAMESPACE_POLICY_LABEL]: 'Custom' }, pod: podWith({}), want: [] },
        { name: 'plain pod in a namespace labelled ClusterFirstWithAutopath', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'ClusterFirstWithAutopath' }, pod: podWith({ annotations: {} }), want: ['autopath-namespace.dns.kdns.io'] },
        { name: 'pod without an annotations map in a namespace labelled ClusterFirstWithAutopath', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'ClusterFirstWithAutopath' }, pod: podWith({}), want: ['autopath-namespace.dns.kdns.io'] },
        { name: 'plain pod in a namespace labelled Custom', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'Custom' }, pod: podWith({}), want: ['custom-namespace.dns.kdns.io'] },
        { name: 'labelled namespace, pod opting out with ClusterFirst', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'ClusterFirstWithAutopath' }, pod: podWith({ annotations: { [A]: 'ClusterFirst' } }), want: [] },
        { name: 'labelled namespace, pod opting out with Default', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'Custom' }, pod: podWith({ annotations: { [A]: 'Default' } }), want: [] },
        { name: 'labelled namespace, pod asking for the other kdns policy (the webhook gives the pod\'s)', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'ClusterFirstWithAutopath' }, pod: podWith({ annotations: { [A]: 'Custom' } }), want: ['autopath-namespace.dns.kdns.io'] },
        { name: 'labelled namespace, hostNetwork pod', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'ClusterFirstWithAutopath' }, pod: podWith({}, { hostNetwork: true }), want: [] },
        { name: 'labelled namespace, pod already None', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'ClusterFirstWithAutopath' }, pod: podWith({}, { dnsPolicy: 'None', dnsConfig: { nameservers: ['192.0.2.53'] } }), want: [] },
        { name: 'namespace label with another value: the pod\'s own annotation still counts', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'ClusterFirst' }, pod: podWith({ annotations: { [A]: 'ClusterFirstWithAutopath' } }), want: ['pods.dns.kdns.io'] },
        { name: 'namespace label with another value, plain pod', namespace: 'apps', nsLabels: { [NAMESPACE_POLICY_LABEL]: 'ClusterFirst' }, pod: podWith({}), want: [] },
      ];
      for (const c of cases) {
        test(`${c.name} → ${c.want.length === 0 ? 'no webhook' : c.want.join(', ')}`, () => {
          const attrs = {
            operation: 'CREATE' as const,
            resource: { group: '', version: 'v1', resource: 'pods' },
            object: c.pod,
            namespace: { metadata: { name: c.namespace, labels: { 'kubernetes.io/metadata.name': c.namespace, ...(c.nsLabels ?? {}) } } },
          };
          assert.deepEqual(webhooksToCall(mwc(objs()), attrs).map((w) => w.name), c.want);
        });
      }

      test('an UPDATE of an annotated pod, and a Deployment carrying the annotation in its template, are not sent', () => {
        const pod = podWith({ annotations: { [A]: 'ClusterFirstWithAutopath' } });
        const namespace = { metadata: { name: 'shop' } };
        assert.deepEqual(webhooksToCall(mwc(objs()), { operation: 'UPDATE', resource: { group: '', version: 'v1', resource: 'pods' }, object: pod, oldObject: pod, namespace }), []);
        const deploymentObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { template: { metadata: { annotations: { [A]: 'ClusterFirstWithAutopath' } } } } };
        assert.deepEqual(webhooksToCall(mwc(objs()), { operation: 'CREATE', resource: { group: 'apps', version: 'v1', resource: 'deployments' }, object: deploymentObject, namespace }), []);
      });
    });
  });
}

describe('the configuration names what src/poddns/annotations.ts names', { skip }, () => {
  const webhooks = (): MutatingWebhook[] => mwc(objectsOf('deploy/coredns')).webhooks;
  test('the namespace label and the two kdns policies in the selectors', () => {
    const [pods, autopath, custom] = webhooks().map((w) => w.namespaceSelector?.matchExpressions?.[0]);
    assert.deepEqual(pods, { key: NAMESPACE_POLICY_LABEL, operator: 'NotIn', values: [...KDNS_POLICIES] });
    assert.deepEqual([autopath?.values, custom?.values], [[KDNS_POLICIES[0]], [KDNS_POLICIES[1]]]);
  });
  test('the annotation, the stock policies (an opt-out) and the kdns ones (the literal form) in the CEL', () => {
    const stock = `[${STOCK_DNS_POLICIES.map((p) => `'${p}'`).join(', ')}]`;
    const kdns = `[${KDNS_POLICIES.map((p) => `'${p}'`).join(', ')}]`;
    for (const w of webhooks()) {
      const expressions = (w.matchConditions ?? []).map((c) => c.expression).join('\n');
      assert.ok(expressions.includes(`'${POLICY_ANNOTATION}' in object.metadata.annotations`), w.name);
      assert.ok(expressions.includes(`object.metadata.annotations['${POLICY_ANNOTATION}'] in ${stock}`), w.name);
      if (w.name === 'pods.dns.kdns.io') assert.ok(expressions.includes(`object.spec.dnsPolicy in ${kdns}`), w.name);
    }
  });
});

describe('the settings follow the variants\' own manifests', { skip }, () => {
  const settings = (dir: string): Record<string, unknown> => parse(findObject(objectsOf(dir), 'ConfigMap', 'kdns-webhook')['data']['config.yaml'] as string) as Record<string, unknown>;
  test('deploy/coredns: clusterDomain is the zone its Corefile\'s kubernetes plugin answers', () => {
    const corefile = findObject(objectsOf('deploy/coredns'), 'ConfigMap', 'coredns')['data'].Corefile as string;
    assert.equal(/^\s*kubernetes (\S+) /m.exec(corefile)?.[1], settings('deploy/coredns')['clusterDomain']);
  });
  test('deploy/nodecache: nodeCacheIP is the cache\'s -localip, clusterDomain its cluster zone', () => {
    const args = findObject(objectsOf('deploy/nodecache'), 'DaemonSet', 'node-local-dns')['spec'].template.spec.containers[0].args as string[];
    assert.equal(settings('deploy/nodecache')['nodeCacheIP'], args[args.indexOf('-localip') + 1]);
    const corefile = findObject(objectsOf('deploy/nodecache'), 'ConfigMap', 'node-local-dns')['data'].Corefile as string;
    assert.equal(`${settings('deploy/nodecache')['clusterDomain']}:53`, /^(\S+:53) \{$/m.exec(corefile)?.[1]);
  });
  test('clusterDNS is the address kubeadm gives kube-dns, as examples/install/coredns-clusterip pins it', () => {
    const pinned = findObject(renderKustomization('examples/install/coredns-clusterip'), 'Service', 'kube-dns')['spec'].clusterIP;
    assert.deepEqual([settings('deploy/coredns')['clusterDNS'], settings('deploy/nodecache')['clusterDNS']], [[pinned], [pinned]]);
  });
});

describe('deploy/components/webhook/cert-manager over each variant', { skip }, () => {
  /** A throwaway overlay: the variant plus the component, rendered with kubectl kustomize. */
  function renderWithCertManager(dir: string): Obj[] {
    const overlay = mkdtempSync(join(tmpdir(), 'kdns-webhook-certmanager-'));
    const rel = (p: string): string => relative(overlay, `${repoRoot}${p}`);
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ${rel(dir)}\ncomponents:\n  - ${rel('deploy/components/webhook/cert-manager')}\n`,
    );
    const r = spawnSync('kubectl', ['kustomize', overlay], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
  }

  for (const v of VARIANTS) {
    test(`${v.dir}: certificate files instead of the Secret kdns manages, the CA injected, no API access`, () => {
      const objs = renderWithCertManager(v.dir);
      const ns = v.namespace;
      const c = container(objs);
      const flags = webhookFlags(c['args'] as string[]);
      assert.deepEqual([...flags.keys()], ['--config', '--listen', '--health', '--metrics', '--service', '--tls-cert-file', '--tls-key-file']);
      assert.deepEqual([flags.get('--tls-cert-file'), flags.get('--tls-key-file')], ['/etc/kdns-webhook-tls/tls.crt', '/etc/kdns-webhook-tls/tls.key']);
      const pod = deployment(objs)['spec'].template.spec;
      assert.deepEqual((c['volumeMounts'] as Obj[]).find((m) => m['name'] === 'tls'), { name: 'tls', mountPath: '/etc/kdns-webhook-tls', readOnly: true });
      assert.deepEqual((pod['volumes'] as Obj[]).find((vol) => vol['name'] === 'tls'), { name: 'tls', secret: { secretName: 'kdns-webhook-cert' } });
      assert.equal(pod['automountServiceAccountToken'], false);
      assert.deepEqual(mwc(objs)['metadata'], { name: 'kdns-webhook', labels: { 'app.kubernetes.io/name': 'kdns-webhook', 'app.kubernetes.io/part-of': 'kdns' }, annotations: { 'cert-manager.io/inject-ca-from': `${ns}/kdns-webhook` } });
      assert.deepEqual(objs.filter((o) => ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'].includes(o['kind']) && o['metadata'].name === 'kdns-webhook').map(id), []);
      assert.deepEqual(
        objs.filter((o) => String(o['apiVersion']).startsWith('cert-manager.io/')).map(id).sort(),
        [`Certificate ${ns}/kdns-webhook`, `Certificate ${ns}/kdns-webhook-ca`, `Issuer ${ns}/kdns-webhook-ca`, `Issuer ${ns}/kdns-webhook-selfsigned`],
      );
      const cert = findObject(objs, 'Certificate', 'kdns-webhook');
      assert.deepEqual(cert['spec'].dnsNames, [`kdns-webhook.${ns}.svc`, `kdns-webhook.${ns}.svc.cluster.local`]);
      assert.equal(cert['spec'].secretName, 'kdns-webhook-cert');
      assert.deepEqual(cert['spec'].issuerRef, { kind: 'Issuer', name: 'kdns-webhook-ca' });
      assert.equal(findObject(objs, 'Issuer', 'kdns-webhook-ca')['spec'].ca.secretName, findObject(objs, 'Certificate', 'kdns-webhook-ca')['spec'].secretName);
      assert.equal(findObject(objs, 'Certificate', 'kdns-webhook-ca')['spec'].isCA, true);
    });
  }
});
