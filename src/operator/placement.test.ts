import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Taint, Toleration } from '../lib/cluster/types.js';
import { checkPlacement, describeRefusal, desiredPlacement, judgeNode, toleratesTaint } from './placement.js';

const taint: Taint = { key: 'dns-only', value: 'true', effect: 'NoSchedule' };

const tolerationCases: Array<{ name: string; t: Toleration; taint: Taint; want: boolean }> = [
  { name: 'Equal with same key, value, effect', t: { key: 'dns-only', operator: 'Equal', value: 'true', effect: 'NoSchedule' }, taint, want: true },
  { name: 'operator defaults to Equal', t: { key: 'dns-only', value: 'true' }, taint, want: true },
  { name: 'Equal with other value', t: { key: 'dns-only', operator: 'Equal', value: 'false' }, taint, want: false },
  { name: 'Equal with empty value against a valued taint', t: { key: 'dns-only', operator: 'Equal' }, taint, want: false },
  { name: 'Exists ignores the value', t: { key: 'dns-only', operator: 'Exists' }, taint, want: true },
  { name: 'Exists with other key', t: { key: 'gpu', operator: 'Exists' }, taint, want: false },
  { name: 'empty key with Exists tolerates everything', t: { operator: 'Exists' }, taint, want: true },
  { name: 'empty key with Exists and an effect tolerates only that effect', t: { operator: 'Exists', effect: 'NoExecute' }, taint, want: false },
  { name: 'effect must match when set', t: { key: 'dns-only', operator: 'Exists', effect: 'NoExecute' }, taint, want: false },
  { name: 'empty effect matches any effect', t: { key: 'dns-only', operator: 'Exists', effect: '' }, taint: { key: 'dns-only', effect: 'NoExecute' }, want: true },
  { name: 'Equal empty value matches a valueless taint', t: { key: 'a', operator: 'Equal', value: '' }, taint: { key: 'a', effect: 'NoSchedule' }, want: true },
];

for (const c of tolerationCases) {
  test(`toleratesTaint: ${c.name}`, () => {
    assert.equal(toleratesTaint(c.t, c.taint), c.want);
  });
}

const node = (name: string, labels: Record<string, string>, taints: Taint[] = [], unschedulable = false): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels },
  spec: { taints, unschedulable },
});

const linux = { 'kubernetes.io/os': 'linux' };

const nodeCases: Array<{ name: string; node: Node; spec: Parameters<typeof desiredPlacement>[0]; want: string[] }> = [
  { name: 'plain linux worker, default placement', node: node('w', linux), spec: {}, want: [] },
  { name: 'windows node, default placement', node: node('win', { 'kubernetes.io/os': 'windows' }), spec: {}, want: ['label kubernetes.io/os=windows, selector wants linux'] },
  { name: 'control plane tolerated by default', node: node('cp', linux, [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]), spec: {}, want: [] },
  {
    name: 'control plane not tolerated once tolerations are replaced',
    node: node('cp', linux, [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]),
    spec: { tolerations: [{ key: 'dns-only', operator: 'Exists' }] },
    want: ['taint node-role.kubernetes.io/control-plane:NoSchedule not tolerated'],
  },
  { name: 'PreferNoSchedule never keeps a pod off', node: node('p', linux, [{ key: 'x', effect: 'PreferNoSchedule' }]), spec: {}, want: [] },
  { name: 'NoExecute taint needs a toleration too', node: node('e', linux, [{ key: 'x', value: 'y', effect: 'NoExecute' }]), spec: {}, want: ['taint x=y:NoExecute not tolerated'] },
  { name: 'DaemonSet controller tolerates not-ready', node: node('nr', linux, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }]), spec: {}, want: [] },
  { name: 'cordoned node is not schedulable', node: node('c', linux, [], true), spec: {}, want: ['unschedulable'] },
  { name: 'selector label missing', node: node('w', linux), spec: { nodeSelector: { 'node-role.kubernetes.io/infra': '' } }, want: ['label node-role.kubernetes.io/infra= missing'] },
];

for (const c of nodeCases) {
  test(`judgeNode: ${c.name}`, () => {
    const v = judgeNode(c.node, desiredPlacement(c.spec));
    assert.deepEqual(v, { node: c.node.metadata.name, eligible: c.want.length === 0, reasons: c.want });
  });
}

test('desiredPlacement: each part replaces its default only when set', () => {
  assert.deepEqual(desiredPlacement({}), {
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }],
  });
  assert.deepEqual(desiredPlacement({ nodeSelector: { a: 'b' }, tolerations: [] }), {
    nodeSelector: { a: 'b' },
    tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }],
  });
});

test('checkPlacement: refused when no node qualifies, with every node and its reasons', () => {
  const placement = desiredPlacement({ nodeSelector: { gpu: 'true' } });
  const check = checkPlacement(placement, [node('a', linux), node('b', { ...linux, gpu: 'true' }, [{ key: 'gpu', effect: 'NoSchedule' }])]);
  assert.equal(check.ok, false);
  assert.equal(
    describeRefusal(placement, check),
    'nodePlacement selects no schedulable node: nodeSelector {gpu=true} with 1 toleration(s); nodes considered: a (label gpu=true missing), b (taint gpu:NoSchedule not tolerated)',
  );
});

test('checkPlacement: one eligible node is enough', () => {
  const check = checkPlacement(desiredPlacement({}), [node('win', { 'kubernetes.io/os': 'windows' }), node('lin', linux)]);
  assert.equal(check.ok, true);
});
