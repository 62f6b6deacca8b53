import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseInputObjects } from './input.js';
import { readPodSpec } from './workload.js';

const inputCases: Array<{ name: string; text: string; kinds: string[]; lines: number[]; errors: string[] }> = [
  { name: 'several YAML documents', text: 'kind: Pod\nmetadata: {name: a}\n---\nkind: Job\nmetadata: {name: b}\n', kinds: ['Pod', 'Job'], lines: [1, 4], errors: [] },
  { name: 'empty documents and comments are skipped', text: '---\n# nothing\n---\nkind: Pod\n', kinds: ['Pod'], lines: [4], errors: [] },
  { name: 'JSON', text: '{"kind": "Deployment", "metadata": {"name": "d"}}', kinds: ['Deployment'], lines: [1], errors: [] },
  { name: 'kind: List is unwrapped', text: 'kind: List\nitems:\n- {kind: Pod}\n- {kind: CronJob}\n', kinds: ['Pod', 'CronJob'], lines: [1, 1], errors: [] },
  { name: 'a typed list gives its items their kind', text: 'kind: PodList\nitems:\n- {metadata: {name: a}}\n', kinds: ['Pod'], lines: [1], errors: [] },
  { name: 'a document that is not a mapping', text: '- a\n- b\n', kinds: [], lines: [], errors: ['f.yaml:1: expected a Kubernetes object (a mapping with apiVersion and kind)'] },
  { name: 'an object without a kind', text: 'metadata: {name: x}\n', kinds: [], lines: [], errors: ['f.yaml:1: kind: Required value: every object needs a kind'] },
];

for (const c of inputCases) {
  test(`input: ${c.name}`, () => {
    const r = parseInputObjects(c.text, 'f.yaml');
    assert.deepEqual(r.objects.map((o) => o.object['kind']), c.kinds);
    assert.deepEqual(r.objects.map((o) => o.line), c.lines);
    assert.deepEqual(r.errors, c.errors);
  });
}

const specCases: Array<{ name: string; obj: Record<string, unknown>; want: { path: string; metadataPath: string; annotations: Record<string, string>; name: string; namespace: string; dnsPolicy: string } | undefined }> = [
  { name: 'a Pod in its namespace', obj: { kind: 'Pod', metadata: { name: 'p', namespace: 'ns1' }, spec: {} }, want: { path: 'spec', metadataPath: 'metadata', annotations: {}, name: 'p', namespace: 'ns1', dnsPolicy: 'ClusterFirst' } },
  { name: 'no namespace means default', obj: { kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { dnsPolicy: 'Default' } } } }, want: { path: 'spec.template.spec', metadataPath: 'spec.template.metadata', annotations: {}, name: 'j', namespace: 'default', dnsPolicy: 'Default' } },
  { name: 'generateName stands in for a name', obj: { kind: 'Pod', metadata: { generateName: 'web-' } }, want: { path: 'spec', metadataPath: 'metadata', annotations: {}, name: 'web-', namespace: 'default', dnsPolicy: 'ClusterFirst' } },
  { name: 'a CronJob', obj: { kind: 'CronJob', metadata: { name: 'c' } }, want: { path: 'spec.jobTemplate.spec.template.spec', metadataPath: 'spec.jobTemplate.spec.template.metadata', annotations: {}, name: 'c', namespace: 'default', dnsPolicy: 'ClusterFirst' } },
  { name: 'a PodTemplate', obj: { kind: 'PodTemplate', metadata: { name: 't' } }, want: { path: 'template.spec', metadataPath: 'template.metadata', annotations: {}, name: 't', namespace: 'default', dnsPolicy: 'ClusterFirst' } },
  {
    name: 'a Deployment: the annotations are the template\'s, not the Deployment\'s',
    obj: { kind: 'Deployment', metadata: { name: 'd', annotations: { 'dns.kdns.io/policy': 'Custom' } }, spec: { template: { metadata: { annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' } } } } },
    want: { path: 'spec.template.spec', metadataPath: 'spec.template.metadata', annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }, name: 'd', namespace: 'default', dnsPolicy: 'ClusterFirst' },
  },
  { name: 'a Service has no pod spec', obj: { kind: 'Service', metadata: { name: 's' } }, want: undefined },
];

for (const c of specCases) {
  test(`pod spec: ${c.name}`, () => {
    const s = readPodSpec(c.obj);
    assert.deepEqual(s && { path: s.specPath.toString(), metadataPath: s.metadataPath.toString(), annotations: s.annotations, name: s.name, namespace: s.namespace, dnsPolicy: s.spec.dnsPolicy }, c.want);
  });
}
