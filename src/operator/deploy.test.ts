// Every manifest of deploy/operator/ and every seed example in examples/operator/ is checked here: manifests
// parse and are known kinds with their required fields, RBAC grants exactly what the parts need,
// the CRD is the generated one, and its schema accepts the examples and rejects the invalid ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { formatFieldError, FieldPath } from '../lib/cluster/field.js';
import { dnsCRDYaml } from './crd.js';
import type { CustomResourceDefinition } from './crd.js';
import { DNS_SCHEMA_RULES } from './dnsschema.js';
import { parseDocuments } from './io.js';
import { render } from './render.js';
import type { Rendered } from './render.js';
import { isRecord, validateSchema } from './schema.js';
import type { Schema } from './schema.js';
import { validateDNSResource } from './validate.js';

const root = new URL('../../', import.meta.url);
const read = (rel: string): string => readFileSync(new URL(rel, root), 'utf8');
const list = (rel: string): string[] =>
  readdirSync(new URL(rel, root))
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
    .sort();

// A loose, test-local view of parsed YAML: the assertions are the type check.
type Obj = Record<string, any>;

const manifests: Array<{ file: string; obj: Obj }> = list('deploy/operator/').flatMap((file) =>
  parseDocuments(read(`deploy/operator/${file}`), file).map((d) => ({ file, obj: d.value as Obj })),
);
const ofKind = (kind: string): Obj[] => manifests.filter((m) => m.obj['kind'] === kind).map((m) => m.obj);

const NAMESPACED = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'Deployment']);
const API_VERSIONS: Record<string, string> = {
  Namespace: 'v1',
  ServiceAccount: 'v1',
  ClusterRole: 'rbac.authorization.k8s.io/v1',
  ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
  Role: 'rbac.authorization.k8s.io/v1',
  RoleBinding: 'rbac.authorization.k8s.io/v1',
  Deployment: 'apps/v1',
  CustomResourceDefinition: 'apiextensions.k8s.io/v1',
  DNS: 'operator.openshift.io/v1',
};

/** What each kind must carry beyond apiVersion/kind/metadata.name. */
const REQUIRED: Record<string, (o: Obj) => string[]> = {
  Namespace: () => [],
  ServiceAccount: () => [],
  ClusterRole: (o) => (Array.isArray(o['rules']) && o['rules'].length > 0 ? [] : ['rules']),
  Role: (o) => (Array.isArray(o['rules']) && o['rules'].length > 0 ? [] : ['rules']),
  ClusterRoleBinding: (o) => (o['roleRef']?.name && Array.isArray(o['subjects']) ? [] : ['roleRef/subjects']),
  RoleBinding: (o) => (o['roleRef']?.name && Array.isArray(o['subjects']) ? [] : ['roleRef/subjects']),
  Deployment: (o) => (o['spec']?.selector?.matchLabels && o['spec']?.template?.spec?.containers?.length ? [] : ['spec.selector/spec.template.spec.containers']),
  CustomResourceDefinition: (o) => (o['spec']?.versions?.[0]?.schema?.openAPIV3Schema ? [] : ['spec.versions[0].schema.openAPIV3Schema']),
  DNS: () => [],
};

for (const { file, obj } of manifests) {
  test(`deploy/operator/${file}: ${obj['kind']} ${obj['metadata']?.name} is a known kind with its required fields`, () => {
    const kind = obj['kind'] as string;
    assert.ok(kind in API_VERSIONS, `unknown kind ${kind}`);
    assert.equal(obj['apiVersion'], API_VERSIONS[kind]);
    assert.equal(typeof obj['metadata']?.name, 'string');
    assert.equal(obj['metadata']?.namespace, NAMESPACED.has(kind) ? 'kdns' : undefined);
    assert.deepEqual(REQUIRED[kind]!(obj), []);
  });
}

test('deploy/operator/crd-dns.yaml is what `kdns operator crd` generates', () => {
  assert.equal(read('deploy/operator/crd-dns.yaml'), dnsCRDYaml());
});

// ---- RBAC: exactly what each part needs ----

/** "group/resource verb" for every permission a role grants (namespaced ones prefixed "ns:"). */
function grants(role: Obj, namespaced: boolean): string[] {
  const out: string[] = [];
  for (const rule of role['rules'] as Obj[]) {
    for (const g of rule['apiGroups']) for (const r of rule['resources']) for (const v of rule['verbs']) out.push(`${namespaced ? 'ns:' : ''}${g || 'core'}/${r} ${v}`);
  }
  return out.sort();
}

/** Everything a service account can do through the bindings in deploy/. */
function permissionsOf(serviceAccount: string): string[] {
  const out: string[] = [];
  for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
    for (const b of ofKind(kind)) {
      if (!(b['subjects'] as Obj[]).some((s) => s['kind'] === 'ServiceAccount' && s['name'] === serviceAccount && s['namespace'] === 'kdns')) continue;
      const role = ofKind(b['roleRef'].kind).find((r) => r['metadata'].name === b['roleRef'].name);
      assert.ok(role, `${kind} ${b['metadata'].name} refers to missing ${b['roleRef'].kind} ${b['roleRef'].name}`);
      out.push(...grants(role, b['roleRef'].kind === 'Role'));
    }
  }
  return out.sort();
}

const crud = (prefix: string): string[] => ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'].map((v) => `${prefix} ${v}`);

const rbacCases: Array<{ account: string; want: string[] }> = [
  {
    account: 'kdns-operator',
    want: [
      'operator.openshift.io/dnses get',
      'operator.openshift.io/dnses list',
      'operator.openshift.io/dnses watch',
      'operator.openshift.io/dnses create',
      'operator.openshift.io/dnses/status get',
      'operator.openshift.io/dnses/status update',
      'operator.openshift.io/dnses/status patch',
      'core/nodes get',
      'core/nodes list',
      'core/nodes watch',
      ...crud('ns:core/configmaps'),
      ...crud('ns:core/services'),
      ...crud('ns:apps/daemonsets'),
    ].sort(),
  },
  {
    account: 'dns',
    want: ['core/services', 'core/endpoints', 'core/pods', 'core/namespaces', 'discovery.k8s.io/endpointslices'].flatMap((r) => [`${r} list`, `${r} watch`]).sort(),
  },
  { account: 'node-resolver', want: [] },
];

for (const c of rbacCases) {
  test(`RBAC: ${c.account} gets exactly what it needs`, () => {
    assert.deepEqual(permissionsOf(c.account), c.want);
  });
}

test('RBAC: no wildcards anywhere', () => {
  for (const role of [...ofKind('ClusterRole'), ...ofKind('Role')]) {
    for (const rule of role['rules'] as Obj[]) {
      for (const field of ['apiGroups', 'resources', 'verbs']) assert.ok(!(rule[field] as string[]).includes('*'), `${role['metadata'].name}: ${field} has *`);
    }
  }
});

test('RBAC: every service account a pod uses exists, node-resolver without a token', () => {
  const accounts = ofKind('ServiceAccount').map((s) => s['metadata'].name as string);
  const r = render({ dns: { apiVersion: 'operator.openshift.io/v1', kind: 'DNS', metadata: { name: 'default' }, spec: {} }, now: new Date(0) }) as Rendered;
  const podAccounts = [
    ...ofKind('Deployment').map((d) => d['spec'].template.spec.serviceAccountName as string),
    ...r.objects.flatMap((o) => (o.kind === 'DaemonSet' ? [o.spec.template.spec.serviceAccountName] : [])),
  ];
  assert.deepEqual(podAccounts, ['kdns-operator', 'dns', 'node-resolver']);
  for (const a of podAccounts) assert.ok(accounts.includes(a), `service account ${a} missing from deploy/`);
  assert.equal(ofKind('ServiceAccount').find((s) => s['metadata'].name === 'node-resolver')?.['automountServiceAccountToken'], false);
});

// ---- containers: non-root, read-only root filesystem ----

test('every container kdns runs has a read-only root filesystem and no privilege escalation', () => {
  const r = render({ dns: { apiVersion: 'operator.openshift.io/v1', kind: 'DNS', metadata: { name: 'default' }, spec: {} }, now: new Date(0) }) as Rendered;
  const pods: Array<[string, Obj]> = [
    ...ofKind('Deployment').map((d): [string, Obj] => [d['metadata'].name, d['spec'].template.spec]),
    ...r.objects.flatMap((o): Array<[string, Obj]> => (o.kind === 'DaemonSet' ? [[o.metadata.name, o.spec.template.spec as Obj]] : [])),
  ];
  const seen: string[] = [];
  for (const [name, pod] of pods) {
    for (const c of pod['containers'] as Obj[]) {
      seen.push(`${name}/${c['name']} nonroot=${c['securityContext']?.runAsNonRoot}`);
      assert.equal(c['securityContext']?.readOnlyRootFilesystem, true, `${name}/${c['name']}`);
      assert.equal(c['securityContext']?.allowPrivilegeEscalation, false, `${name}/${c['name']}`);
      // All dropped but NET_BIND_SERVICE, which the image's node binary needs to start at all.
      assert.deepEqual(c['securityContext']?.capabilities, { drop: ['ALL'], add: ['NET_BIND_SERVICE'] }, `${name}/${c['name']}`);
    }
  }
  // Only node-resolver runs as root: it writes the node's root-owned /etc/hosts.
  assert.deepEqual(seen, ['kdns-operator/operator nonroot=true', 'dns-default/dns nonroot=true', 'node-resolver/dns-node-resolver nonroot=false']);
});

test('deploy/operator/operator.yaml: selector matches the pod labels', () => {
  const d = ofKind('Deployment')[0]!;
  assert.deepEqual(d['spec'].template.metadata.labels, d['spec'].selector.matchLabels);
});

// ---- the CRD schema against the examples ----

const crd = parseDocuments(read('deploy/operator/crd-dns.yaml'), 'crd')[0]!.value as CustomResourceDefinition;
const crdSchema: Schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
const crdErrors = (obj: unknown): string[] => validateSchema(crdSchema, obj, FieldPath.root(), DNS_SCHEMA_RULES).map(formatFieldError);

const validExamples = list('examples/operator/')
  .filter((f) => f.startsWith('dns-'))
  .map((f) => `examples/operator/${f}`);

for (const file of validExamples) {
  test(`CRD schema and validateDNSResource accept ${file}`, () => {
    const obj = parseDocuments(read(file), file)[0]!.value;
    assert.deepEqual(crdErrors(obj), []);
    assert.deepEqual(validateDNSResource(obj).map(formatFieldError), []);
  });
}

const invalidExamples = list('examples/operator/invalid/');

test('there are invalid examples to check', () => {
  assert.ok(invalidExamples.length >= 5);
});

for (const file of invalidExamples) {
  const text = read(`examples/operator/invalid/${file}`);
  const expected = [...text.matchAll(/^# expect: (.*)$/gm)].map((m) => m[1]!);
  const crdAccepts = /^# crd: accepts$/m.test(text);
  test(`examples/operator/invalid/${file}: kdns reports exactly its # expect lines; the CRD ${crdAccepts ? 'cannot know (accepts)' : 'rejects it'}`, () => {
    const obj = parseDocuments(text, file)[0]!.value;
    assert.ok(isRecord(obj));
    assert.ok(expected.length > 0, 'every invalid example says what to expect');
    assert.deepEqual(validateDNSResource(obj).map(formatFieldError), expected);
    if (crdAccepts) assert.deepEqual(crdErrors(obj), []);
    else assert.notDeepEqual(crdErrors(obj), []);
  });
}
