// Who the shipped configuration sends to the webhook, and what comes back, through a stock API
// server's admission path: the namespace label, a pod's opt-out, the namespaces never touched,
// and denials as a client sees them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startWebhookRig } from '../../test/util/webhookrig.js';
import type { WebhookRig } from '../../test/util/webhookrig.js';

let rig: WebhookRig;
before(async () => {
  rig = await startWebhookRig({
    settings: { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'], nodeCacheIP: '169.254.20.10' },
    // The operator variant: the webhook lives in namespace kdns.
    variant: 'deploy',
    namespaceLabels: { shop: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }, corp: { 'dns.kdns.io/policy': 'Custom' } },
  });
});
after(async () => rig.close());

const AUTOPATH = { nameservers: ['169.254.20.10', '10.96.0.10'], searches: ['search.shop.cluster.local.ap.k8s.io'], options: [{ name: 'ndots', value: '5' }] };

interface Case {
  name: string;
  namespace: string;
  annotations?: Record<string, string>;
  spec?: Record<string, unknown>;
  /** Which webhooks the API server called. */
  called: string[];
  code: number;
  /** The stored pod's DNS fields, or the start of the refusal. */
  want: unknown;
}

const CASES: Case[] = [
  { name: 'a plain pod in a labelled namespace gets autopath', namespace: 'shop', called: ['autopath-namespace.dns.kdns.io'], code: 201, want: { dnsPolicy: 'None', dnsConfig: AUTOPATH } },
  { name: 'a pod opting out of its namespace\'s label is not sent', namespace: 'shop', annotations: { 'dns.kdns.io/policy': 'ClusterFirst' }, called: [], code: 201, want: { dnsPolicy: 'ClusterFirst' } },
  { name: 'a pod with an explicit Default in a labelled namespace keeps it', namespace: 'shop', spec: { dnsPolicy: 'Default' }, called: ['autopath-namespace.dns.kdns.io'], code: 201, want: { dnsPolicy: 'Default' } },
  { name: 'a hostNetwork pod in a labelled namespace is not sent', namespace: 'shop', spec: { hostNetwork: true }, called: [], code: 201, want: { dnsPolicy: 'ClusterFirst' } },
  {
    name: 'a Custom namespace: the pod brings its search list',
    namespace: 'corp',
    annotations: { 'dns.kdns.io/search': '$(NAMESPACE).svc.$(CLUSTER) corp.example' },
    called: ['custom-namespace.dns.kdns.io'],
    code: 201,
    want: { dnsPolicy: 'None', dnsConfig: { nameservers: ['10.96.0.10'], searches: ['corp.svc.cluster.local', 'corp.example'] } },
  },
  {
    name: 'a Custom namespace, a pod without a search list: refused, naming the annotation',
    namespace: 'corp',
    called: ['custom-namespace.dns.kdns.io'],
    code: 422,
    want: 'admission webhook "custom-namespace.dns.kdns.io" denied the request: kdns: metadata.annotations[dns.kdns.io/search]: Required value',
  },
  { name: 'kube-system is never sent', namespace: 'kube-system', annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }, called: [], code: 201, want: { dnsPolicy: 'ClusterFirst' } },
  { name: "the webhook's own namespace is never sent", namespace: 'kdns', annotations: { 'dns.kdns.io/policy': 'Custom' }, called: [], code: 201, want: { dnsPolicy: 'ClusterFirst' } },
  { name: 'an unlabelled namespace, a pod that asks nothing: not sent', namespace: 'web', called: [], code: 201, want: { dnsPolicy: 'ClusterFirst' } },
  {
    name: 'a misspelt policy is sent and refused with the values it takes',
    namespace: 'web',
    annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutoPath' },
    called: ['pods.dns.kdns.io'],
    code: 422,
    want: 'admission webhook "pods.dns.kdns.io" denied the request: kdns: metadata.annotations[dns.kdns.io/policy]: Unsupported value: "ClusterFirstWithAutoPath"',
  },
];

let n = 0;
for (const c of CASES) {
  test(`namespaces: ${c.name}`, async () => {
    const before = rig.standIn.calls.length;
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${n++}`, ...(c.annotations ? { annotations: c.annotations } : {}) }, spec: { containers: [{ name: 'c', image: 'x' }], dnsPolicy: 'ClusterFirst', ...c.spec } };
    const r = await rig.createPod(c.namespace, pod);
    assert.deepEqual(rig.standIn.calls.slice(before).map((x) => x.webhook), c.called);
    assert.equal(r.code, c.code, JSON.stringify(r.body));
    if (c.code === 201) {
      const spec = r.body['spec'] as Record<string, unknown>;
      assert.deepEqual({ dnsPolicy: spec['dnsPolicy'], ...(spec['dnsConfig'] !== undefined ? { dnsConfig: spec['dnsConfig'] } : {}) }, c.want);
    } else {
      assert.ok(String(r.body['message']).startsWith(c.want as string), String(r.body['message']));
    }
  });
}
