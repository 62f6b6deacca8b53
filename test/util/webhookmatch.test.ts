// The matcher against hand-written webhooks, one behaviour of kube-apiserver per case: label
// selector semantics, rules with wildcards and scope, object selectors on old and new objects,
// and matchConditions through a real CEL evaluator with their false/error/failurePolicy logic.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdmissionRejected, decide, toCel, WebhookConfigurationError, webhooksToCall } from './webhookmatch.js';
import type { AdmissionAttributes, KubeObject, LabelSelectorSpec, MatchDecision, MutatingWebhook, RuleWithOperations } from './webhookmatch.js';

const PODS: RuleWithOperations = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' };

const hook = (over: Partial<MutatingWebhook> = {}): MutatingWebhook => ({
  name: 'test.example.com',
  clientConfig: { service: { namespace: 'hooks', name: 'hook', path: '/' } },
  rules: [PODS],
  failurePolicy: 'Ignore',
  ...over,
});

const pod = (labels: Record<string, string> = {}, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'shop', labels },
  spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
});

const createPod = (object: KubeObject = pod(), nsLabels: Record<string, string> = {}, over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  resource: { group: '', version: 'v1', resource: 'pods' },
  object,
  namespace: { metadata: { name: 'shop', labels: nsLabels } },
  ...over,
});

/** "call", or "skip <stage>", or "reject". */
const verdict = (d: MatchDecision): string => (d.outcome === 'skip' ? `skip ${d.stage}` : d.outcome);

describe('namespaceSelector: label selector semantics on the Namespace\'s labels', () => {
  const cases: Array<{ name: string; selector: LabelSelectorSpec | undefined; labels: Record<string, string>; want: string }> = [
    { name: 'absent selector matches every namespace', selector: undefined, labels: {}, want: 'call' },
    { name: 'empty selector matches every namespace', selector: {}, labels: { a: 'b' }, want: 'call' },
    { name: 'matchLabels: equal value', selector: { matchLabels: { team: 'web' } }, labels: { team: 'web' }, want: 'call' },
    { name: 'matchLabels: other value', selector: { matchLabels: { team: 'web' } }, labels: { team: 'db' }, want: 'skip namespaceSelector' },
    { name: 'matchLabels: label absent', selector: { matchLabels: { team: 'web' } }, labels: {}, want: 'skip namespaceSelector' },
    { name: 'In: value listed', selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['a', 'b'] }] }, labels: { env: 'b' }, want: 'call' },
    { name: 'In: label absent', selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['a'] }] }, labels: {}, want: 'skip namespaceSelector' },
    { name: 'NotIn: value listed', selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] }, labels: { env: 'a' }, want: 'skip namespaceSelector' },
    { name: 'NotIn: other value', selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] }, labels: { env: 'c' }, want: 'call' },
    { name: 'NotIn: label absent matches', selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] }, labels: {}, want: 'call' },
    { name: 'Exists: present with an empty value', selector: { matchExpressions: [{ key: 'canary', operator: 'Exists' }] }, labels: { canary: '' }, want: 'call' },
    { name: 'Exists: absent', selector: { matchExpressions: [{ key: 'canary', operator: 'Exists' }] }, labels: {}, want: 'skip namespaceSelector' },
    { name: 'DoesNotExist: absent', selector: { matchExpressions: [{ key: 'canary', operator: 'DoesNotExist' }] }, labels: {}, want: 'call' },
    { name: 'DoesNotExist: present', selector: { matchExpressions: [{ key: 'canary', operator: 'DoesNotExist' }] }, labels: { canary: 'x' }, want: 'skip namespaceSelector' },
    { name: 'matchLabels and expressions must all hold', selector: { matchLabels: { team: 'web' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] }, labels: { team: 'web', env: 'dev' }, want: 'skip namespaceSelector' },
    {
      name: 'kubernetes.io/metadata.name is the namespace\'s name even when the caller left it out',
      selector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['shop'] }] },
      labels: {},
      want: 'skip namespaceSelector',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(verdict(decide(hook({ ...(c.selector ? { namespaceSelector: c.selector } : {}) }), createPod(pod(), c.labels))), c.want);
    });
  }

  test('a cluster-scoped object other than a Namespace is never kept out by a namespaceSelector', () => {
    const nodes = hook({ rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['nodes'] }], namespaceSelector: { matchLabels: { never: 'there' } } });
    const attrs: AdmissionAttributes = { operation: 'CREATE', resource: { group: '', version: 'v1', resource: 'nodes' }, object: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } } };
    assert.equal(verdict(decide(nodes, attrs)), 'call');
  });

  test('a Namespace being created is judged by its own new labels', () => {
    const ns = hook({ rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] }], namespaceSelector: { matchLabels: { tier: 'gold' } } });
    const attrs = (labels: Record<string, string>): AdmissionAttributes => ({ operation: 'CREATE', resource: { group: '', version: 'v1', resource: 'namespaces' }, object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'new', labels } } });
    assert.equal(verdict(decide(ns, attrs({ tier: 'gold' }))), 'call');
    assert.equal(verdict(decide(ns, attrs({ tier: 'tin' }))), 'skip namespaceSelector');
  });

  const invalid: Array<[string, LabelSelectorSpec, string]> = [
    ['an unknown operator', { matchExpressions: [{ key: 'a', operator: 'Like' as 'In', values: ['x'] }] }, 'webhook "test.example.com".namespaceSelector.matchExpressions[0].operator: Unsupported value "Like": supported values: "In", "NotIn", "Exists", "DoesNotExist"'],
    ['In without values', { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, 'webhook "test.example.com".namespaceSelector.matchExpressions[0].values: Required value: must be specified when operator is In'],
    ['Exists with values', { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 'webhook "test.example.com".namespaceSelector.matchExpressions[0].values: Forbidden: may not be specified when operator is Exists'],
  ];
  for (const [name, selector, message] of invalid) {
    test(`a selector the API server would not store: ${name}`, () => {
      assert.throws(() => decide(hook({ namespaceSelector: selector }), createPod()), (e: unknown) => e instanceof WebhookConfigurationError && e.message === message);
    });
  }
});

describe('rules: operation, group, version, resource/subresource, scope', () => {
  const deployments = { group: 'apps', version: 'v1', resource: 'deployments' };
  const cases: Array<{ name: string; rule: RuleWithOperations; attrs: Partial<AdmissionAttributes>; want: string }> = [
    { name: 'CREATE pods', rule: PODS, attrs: {}, want: 'call' },
    { name: 'UPDATE is not CREATE', rule: PODS, attrs: { operation: 'UPDATE', oldObject: pod() }, want: 'skip rules' },
    { name: 'operations * takes DELETE', rule: { ...PODS, operations: ['*'] }, attrs: { operation: 'DELETE', object: null, oldObject: pod() }, want: 'call' },
    { name: 'another API group', rule: PODS, attrs: { resource: deployments }, want: 'skip rules' },
    { name: 'apiVersions * takes any version', rule: { ...PODS, apiVersions: ['*'] }, attrs: { resource: { group: '', version: 'v2', resource: 'pods' } }, want: 'call' },
    { name: '"pods" is not its status subresource', rule: PODS, attrs: { subresource: 'status' }, want: 'skip rules' },
    { name: '"pods/*" takes pods/status', rule: { ...PODS, resources: ['pods/*'] }, attrs: { subresource: 'status' }, want: 'call' },
    { name: '"pods/*" takes pods itself', rule: { ...PODS, resources: ['pods/*'] }, attrs: {}, want: 'call' },
    { name: '"*" takes every resource', rule: { ...PODS, apiGroups: ['*'], resources: ['*'] }, attrs: { resource: deployments }, want: 'call' },
    { name: '"*" does not take a subresource', rule: { ...PODS, apiGroups: ['*'], resources: ['*'] }, attrs: { resource: deployments, subresource: 'scale' }, want: 'skip rules' },
    { name: '"*/scale" takes deployments/scale', rule: { ...PODS, apiGroups: ['*'], resources: ['*/scale'] }, attrs: { resource: deployments, subresource: 'scale' }, want: 'call' },
    { name: '"*/*" takes everything', rule: { ...PODS, apiGroups: ['*'], resources: ['*/*'] }, attrs: { resource: deployments, subresource: 'status' }, want: 'call' },
    { name: 'no resources at all', rule: { ...PODS, resources: [] }, attrs: {}, want: 'skip rules' },
    {
      name: 'scope Namespaced leaves out a cluster-scoped Node',
      rule: { ...PODS, resources: ['nodes'] },
      attrs: { resource: { group: '', version: 'v1', resource: 'nodes' }, object: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } }, namespace: undefined },
      want: 'skip rules',
    },
    {
      name: 'scope Namespaced leaves out a Namespace (cluster-scoped, though the request names it)',
      rule: { ...PODS, resources: ['namespaces'] },
      attrs: { resource: { group: '', version: 'v1', resource: 'namespaces' }, object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } } },
      want: 'skip rules',
    },
    {
      name: 'scope Cluster takes a Namespace',
      rule: { ...PODS, resources: ['namespaces'], scope: 'Cluster' },
      attrs: { resource: { group: '', version: 'v1', resource: 'namespaces' }, object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } } },
      want: 'call',
    },
    { name: 'scope Cluster leaves out a pod', rule: { ...PODS, scope: 'Cluster' }, attrs: {}, want: 'skip rules' },
    { name: 'scope * takes a pod', rule: { ...PODS, scope: '*' }, attrs: {}, want: 'call' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(verdict(decide(hook({ rules: [c.rule] }), { ...createPod(), ...c.attrs })), c.want);
    });
  }

  test('any one of several rules is enough', () => {
    assert.equal(verdict(decide(hook({ rules: [{ ...PODS, resources: ['services'] }, PODS] }), createPod())), 'call');
  });

  test('a request for a MutatingWebhookConfiguration is never sent, whatever the rules', () => {
    const all = hook({ rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: '*' }] });
    const attrs: AdmissionAttributes = {
      operation: 'UPDATE',
      resource: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations' },
      object: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'x' } },
    };
    assert.equal(verdict(decide(all, attrs)), 'skip exempt');
  });
});

describe('objectSelector: the object\'s labels, or the old object\'s', () => {
  const selector: LabelSelectorSpec = { matchLabels: { app: 'web' } };
  const cases: Array<{ name: string; attrs: Partial<AdmissionAttributes>; want: string }> = [
    { name: 'CREATE, the object matches', attrs: { object: pod({ app: 'web' }) }, want: 'call' },
    { name: 'CREATE, the object does not', attrs: { object: pod({ app: 'db' }) }, want: 'skip objectSelector' },
    { name: 'UPDATE that removes the label: the old object matches', attrs: { operation: 'UPDATE', object: pod({}), oldObject: pod({ app: 'web' }) }, want: 'call' },
    { name: 'DELETE: only the old object', attrs: { operation: 'DELETE', object: null, oldObject: pod({ app: 'web' }) }, want: 'call' },
    { name: 'no labels at all', attrs: { object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} } }, want: 'skip objectSelector' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const rules: RuleWithOperations[] = [{ ...PODS, operations: ['*'] }];
      assert.equal(verdict(decide(hook({ rules, objectSelector: selector }), { ...createPod(), ...c.attrs })), c.want);
    });
  }
});

describe('matchConditions: real CEL over object, oldObject and request', () => {
  const ANNOTATED = "has(object.metadata.annotations) && 'x.example.com/on' in object.metadata.annotations";
  const annotated = (): KubeObject => ({ ...pod(), metadata: { name: 'p', annotations: { 'x.example.com/on': 'yes' } } });
  const cases: Array<{ name: string; conditions: string[]; object?: KubeObject; failurePolicy?: 'Ignore' | 'Fail'; want: string }> = [
    { name: 'no conditions: called', conditions: [], want: 'call' },
    { name: 'every condition true: called', conditions: ['true', "object.kind == 'Pod'"], want: 'call' },
    { name: 'one false: skipped', conditions: ['true', 'false'], want: 'skip matchConditions' },
    { name: 'has() on a pod without an annotations map: false, no error', conditions: [ANNOTATED], object: pod(), want: 'skip matchConditions' },
    { name: 'the annotation present: called', conditions: [ANNOTATED], object: annotated(), want: 'call' },
    { name: 'reading a field that is not there is an error; Ignore skips', conditions: ["object.metadata.annotations['x'] == 'y'"], failurePolicy: 'Ignore', want: 'skip matchConditions' },
    { name: 'the same error under Fail: the request is refused', conditions: ["object.metadata.annotations['x'] == 'y'"], failurePolicy: 'Fail', want: 'reject' },
    { name: 'an error and a false: false wins, even under Fail', conditions: ["object.metadata.annotations['x'] == 'y'", 'false'], failurePolicy: 'Fail', want: 'skip matchConditions' },
    { name: 'a value that is not a bool is an error', conditions: ['object.kind'], failurePolicy: 'Fail', want: 'reject' },
    { name: 'integers are CEL ints', conditions: ['object.spec.priority == 3', 'object.spec.priority > 2'], object: pod({}, { priority: 3 }), want: 'call' },
    { name: 'oldObject is null on CREATE', conditions: ['oldObject == null'], want: 'call' },
    { name: 'request: operation, namespace, resource', conditions: ["request.operation == 'CREATE'", "request.namespace == 'shop'", "request.resource.resource == 'pods'", "request.kind.kind == 'Pod'"], want: 'call' },
    { name: 'the strings extension is there', conditions: ["object.metadata.name.startsWith('p')", "'a,b'.split(',').size() == 2"], want: 'call' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const w = hook({ matchConditions: c.conditions.map((expression, i) => ({ name: `c${i}`, expression })), ...(c.failurePolicy ? { failurePolicy: c.failurePolicy } : {}) });
      assert.equal(verdict(decide(w, createPod(c.object ?? pod()))), c.want);
    });
  }

  test('failurePolicy defaults to Fail: an evaluation error refuses the request, naming webhook and condition', () => {
    const { failurePolicy: _, ...w } = hook({ matchConditions: [{ name: 'needs-labels', expression: "object.metadata.labels['team'] == 'web'" }] });
    const attrs = createPod({ ...pod(), metadata: { name: 'p' } });
    assert.throws(
      () => webhooksToCall({ webhooks: [w] }, attrs),
      (e: unknown) => e instanceof AdmissionRejected && e.webhook === 'test.example.com' && /^Internal error occurred: failed to evaluate matchConditions of webhook "test\.example\.com": needs-labels: /.test(e.message),
    );
  });

  test('an expression that does not parse is a configuration the API server refuses to store', () => {
    const w = hook({ matchConditions: [{ name: 'broken', expression: 'object.kind ==' }] });
    assert.throws(() => decide(w, createPod()), (e: unknown) => e instanceof WebhookConfigurationError && e.message.startsWith('webhook "test.example.com".matchConditions[0].expression: Invalid value: "object.kind ==": compilation failed'));
  });

  test('conditions run after rules and selectors: a request no rule takes is skipped without evaluating them', () => {
    const w = hook({ failurePolicy: 'Fail', matchConditions: [{ name: 'would-fail', expression: 'object.nothing' }] });
    assert.equal(verdict(decide(w, createPod(pod(), {}, { operation: 'UPDATE', oldObject: pod() }))), 'skip rules');
  });
});

describe('webhooksToCall', () => {
  test('configurations in name order, then each one\'s webhooks as listed; only those that match', () => {
    const b = { metadata: { name: 'b' }, webhooks: [hook({ name: 'b1' }), hook({ name: 'b2', matchConditions: [{ name: 'off', expression: 'false' }] }), hook({ name: 'b3' })] };
    const a = { metadata: { name: 'a' }, webhooks: [hook({ name: 'a1' })] };
    assert.deepEqual(webhooksToCall([b, a], createPod()).map((w) => w.name), ['a1', 'b1', 'b3']);
  });

  test('a configuration without webhooks calls nothing', () => {
    assert.deepEqual(webhooksToCall({ webhooks: null }, createPod()), []);
  });
});

describe('toCel: JSON as CEL sees it', () => {
  test('objects are maps, whole numbers bigints, fractions doubles', () => {
    assert.deepEqual(toCel({ a: [1, 1.5, 'x', true, null] }), new Map([['a', [1n, 1.5, 'x', true, null]]]));
  });
});
