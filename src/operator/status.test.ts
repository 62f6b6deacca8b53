import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OperatorCondition } from '../lib/cluster/dnsresource.js';
import type { DaemonSet, DaemonSetStatus } from './objects.js';
import { desiredPlacement } from './placement.js';
import type { Placement } from './placement.js';
import { computeStatus, withApiFailures } from './status.js';
import type { StatusInput } from './status.js';

const placement = desiredPlacement({});
const now = new Date('2024-05-01T12:00:00Z');

const ds = (status: DaemonSetStatus | undefined, p: Placement = placement, generation = 1): DaemonSet => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'dns-default', generation },
  spec: {
    selector: { matchLabels: {} },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } },
    template: { metadata: { labels: {} }, spec: { serviceAccountName: 'dns', nodeSelector: p.nodeSelector, tolerations: p.tolerations, containers: [], volumes: [] } },
  },
  ...(status ? { status } : {}),
});

const settled = (want: number, available: number): DaemonSetStatus => ({ desiredNumberScheduled: want, numberAvailable: available, updatedNumberScheduled: want, observedGeneration: 1 });
const nodeResolver = ds(settled(3, 3));

const base: StatusInput = {
  clusterIP: '10.96.0.10',
  clusterDomain: 'cluster.local',
  dnsDaemonSet: ds(settled(10, 10)),
  nodeResolverDaemonSet: nodeResolver,
  placement,
  managementState: 'Managed',
  leftOut: [],
  now,
};

/** type → "status/reason" for the four OpenShift conditions and kdns's two. */
type Summary = Record<string, string>;

const cases: Array<{ name: string; input: Partial<StatusInput>; want: Summary }> = [
  {
    name: 'all pods up',
    input: {},
    want: { Degraded: 'False/AsExpected', Progressing: 'False/AsExpected', Available: 'True/AsExpected', Upgradeable: 'True/AsExpected', ConfigurationValid: 'True/AsExpected', PlacementValid: 'True/AsExpected' },
  },
  {
    name: 'one of ten unavailable is within 10%',
    input: { dnsDaemonSet: ds(settled(10, 9)) },
    want: { Degraded: 'False/AsExpected', Progressing: 'False/AsExpected', Available: 'True/AsExpected' },
  },
  {
    name: 'two of ten unavailable is more than 10%',
    input: { dnsDaemonSet: ds(settled(10, 8)) },
    want: { Degraded: 'True/MaxUnavailableDNSPodsExceeded', Progressing: 'False/AsExpected', Available: 'True/AsExpected' },
  },
  {
    name: 'one of three unavailable is more than 10%',
    input: { dnsDaemonSet: ds(settled(3, 2)) },
    want: { Degraded: 'True/MaxUnavailableDNSPodsExceeded' },
  },
  {
    name: 'rolling out: never Degraded while Progressing',
    input: { dnsDaemonSet: ds({ desiredNumberScheduled: 10, numberAvailable: 5, updatedNumberScheduled: 4, observedGeneration: 1 }) },
    want: { Degraded: 'False/Progressing', Progressing: 'True/Reconciling', Available: 'True/AsExpected' },
  },
  {
    name: 'new spec not yet observed by the DaemonSet controller',
    input: { dnsDaemonSet: ds(settled(10, 10), placement, 2) },
    want: { Degraded: 'False/Progressing', Progressing: 'True/Reconciling' },
  },
  {
    name: 'no pods available',
    input: { dnsDaemonSet: ds(settled(4, 0)) },
    want: { Degraded: 'True/NoDNSPodsAvailable', Available: 'False/NoDaemonSetPods' },
  },
  {
    name: 'no pods desired (every node tainted)',
    input: { dnsDaemonSet: ds(settled(0, 0)) },
    want: { Degraded: 'True/NoDNSPodsDesired', Available: 'False/NoDaemonSetPods' },
  },
  {
    name: 'no DaemonSet yet',
    input: { dnsDaemonSet: undefined },
    want: { Degraded: 'False/Progressing', Progressing: 'True/Reconciling', Available: 'False/NoDaemonSet' },
  },
  {
    name: 'no Service address',
    input: { clusterIP: '' },
    want: { Progressing: 'True/Reconciling', Available: 'False/NoService' },
  },
  {
    name: 'placement not yet applied',
    input: { placement: desiredPlacement({ nodeSelector: { role: 'infra' } }) },
    want: { Progressing: 'True/Reconciling', Degraded: 'False/Progressing' },
  },
  {
    name: 'node-resolver rolling out',
    input: { nodeResolverDaemonSet: ds({ desiredNumberScheduled: 3, numberAvailable: 2, updatedNumberScheduled: 2, observedGeneration: 1 }) },
    want: { Progressing: 'True/Reconciling' },
  },
  { name: 'Unmanaged is not upgradeable', input: { managementState: 'Unmanaged' }, want: { Upgradeable: 'False/OperatorUnmanaged' } },
  { name: 'left-out entries', input: { leftOut: ['spec.servers[0] ("a"): left out of the Corefile: …'] }, want: { ConfigurationValid: 'False/InvalidEntries' } },
  { name: 'refused placement', input: { placementRefused: 'nodePlacement selects no schedulable node' }, want: { PlacementValid: 'False/NoSchedulableNodes' } },
];

for (const c of cases) {
  test(`computeStatus: ${c.name}`, () => {
    const status = computeStatus({ ...base, ...c.input });
    const got: Summary = {};
    for (const cond of status.conditions) if (cond.type in c.want) got[cond.type] = `${cond.status}/${cond.reason}`;
    assert.deepEqual(got, c.want);
  });
}

test('computeStatus: messages say how many pods', () => {
  const status = computeStatus({ ...base, dnsDaemonSet: ds(settled(10, 8)) });
  assert.equal(status.conditions.find((c) => c.type === 'Degraded')?.message, 'Too many DNS pods are unavailable (2 of 10, more than 10%).');
});

test('computeStatus: transition time kept while a condition is unchanged, renewed when it changes', () => {
  const earlier = '2024-01-01T00:00:00.000Z';
  const first = computeStatus({ ...base, now: new Date(earlier) });
  const previous: OperatorCondition[] = first.conditions;
  const same = computeStatus({ ...base, previous });
  assert.deepEqual(
    same.conditions.map((c) => c.lastTransitionTime),
    same.conditions.map(() => earlier),
  );
  const changed = computeStatus({ ...base, previous, dnsDaemonSet: ds(settled(10, 0)) });
  const degraded = changed.conditions.find((c) => c.type === 'Degraded');
  assert.equal(degraded?.lastTransitionTime, now.toISOString());
  assert.equal(changed.conditions.find((c) => c.type === 'Upgradeable')?.lastTransitionTime, earlier);
});

test('computeStatus: clusterIP and clusterDomain pass through', () => {
  const status = computeStatus(base);
  assert.equal(status.clusterIP, '10.96.0.10');
  assert.equal(status.clusterDomain, 'cluster.local');
});

test('status: refused writes make Degraded True with each object and the API message, whatever the rollout', () => {
  const status = computeStatus(base);
  const failures = [
    { verb: 'apply' as const, object: 'Service kdns/dns-default', code: 422, message: 'Service "dns-default" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated' },
    { verb: 'read' as const, object: 'ConfigMap kdns/dns-default', code: 403, message: 'configmaps "dns-default" is forbidden' },
  ];
  const s = withApiFailures(status, failures, status.conditions, now);
  const degraded = s.conditions.find((c) => c.type === 'Degraded');
  assert.deepEqual(degraded, {
    type: 'Degraded',
    status: 'True',
    reason: 'APIRequestFailed',
    message:
      'Failed to apply Service kdns/dns-default: HTTP 422: Service "dns-default" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated\nFailed to read ConfigMap kdns/dns-default: HTTP 403: configmaps "dns-default" is forbidden',
    lastTransitionTime: '2024-05-01T12:00:00.000Z',
  });
  assert.deepEqual(s.conditions.filter((c) => c.type !== 'Degraded'), status.conditions.filter((c) => c.type !== 'Degraded'));
  // The same failures later keep the transition time; none leaves the status as it was.
  const later = withApiFailures(status, failures, s.conditions, new Date('2024-05-01T13:00:00Z'));
  assert.equal(later.conditions.find((c) => c.type === 'Degraded')?.lastTransitionTime, '2024-05-01T12:00:00.000Z');
  assert.equal(withApiFailures(status, [], s.conditions, now), status);
});
