// driftOf: which live values count as someone else's change to a field kdns manages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { driftOf } from './drift.js';
import { configMap, dnsDaemonSet, dnsService } from './objects.js';
import type { OwnedObject } from './objects.js';

const options = { namespace: 'kdns', image: 'kdns:1', owner: 'default', nodeResolverServices: [], clusterDomain: 'cluster.local' };
const placement = { nodeSelector: { 'kubernetes.io/os': 'linux' }, tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' as const, effect: 'NoSchedule' as const }] };
const cm = configMap('.:5353 {\n}\n', '{}', options);
const ds = dnsDaemonSet('.:5353 {\n}\n', placement, [], options);
const svc = dnsService('10.96.0.10', options);

type Live = Record<string, any>; // A loose view of an edited copy: the assertions are the type check.

interface Case {
  what: string;
  desired: OwnedObject;
  edit: (live: Live) => void;
  /** The reported field, or undefined for "no drift". */
  want: string | undefined;
}

const cases: Case[] = [
  { what: 'identical', desired: ds, edit: () => undefined, want: undefined },
  { what: 'Corefile changed', desired: cm, edit: (l) => (l['data'].Corefile = 'x'), want: 'data.Corefile' },
  { what: 'a ConfigMap key added', desired: cm, edit: (l) => (l['data'].extra = 'x'), want: undefined },
  { what: 'a label added', desired: cm, edit: (l) => (l['metadata'].labels.team = 'net'), want: undefined },
  { what: 'our label changed', desired: cm, edit: (l) => (l['metadata'].labels['dns.operator.openshift.io/owning-dns'] = 'x'), want: 'metadata.labels.dns.operator.openshift.io/owning-dns' },
  { what: 'nodeSelector key added (atomic map)', desired: ds, edit: (l) => (l['spec'].template.spec.nodeSelector.pool = 'dns'), want: 'spec.template.spec.nodeSelector' },
  { what: 'nodeSelector removed', desired: ds, edit: (l) => delete l['spec'].template.spec.nodeSelector, want: 'spec.template.spec.nodeSelector' },
  { what: 'a toleration added (atomic list)', desired: ds, edit: (l) => l['spec'].template.spec.tolerations.push({ operator: 'Exists' }), want: 'spec.template.spec.tolerations' },
  { what: 'a field added inside a toleration', desired: ds, edit: (l) => (l['spec'].template.spec.tolerations[0].value = 'x'), want: 'spec.template.spec.tolerations' },
  { what: 'container image (keyed list)', desired: ds, edit: (l) => (l['spec'].template.spec.containers[0].image = 'other'), want: 'spec.template.spec.containers[dns].image' },
  { what: 'container args', desired: ds, edit: (l) => l['spec'].template.spec.containers[0].args.push('--debug'), want: 'spec.template.spec.containers[dns].args' },
  { what: 'a sidecar container added', desired: ds, edit: (l) => l['spec'].template.spec.containers.push({ name: 'sidecar', image: 'x' }), want: undefined },
  { what: 'our container removed', desired: ds, edit: (l) => (l['spec'].template.spec.containers = [{ name: 'other', image: 'x' }]), want: 'spec.template.spec.containers[dns]' },
  { what: 'API defaults added', desired: ds, edit: (l) => Object.assign(l['spec'].template.spec.containers[0], { imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log' }), want: undefined },
  { what: 'maxSurge changed', desired: ds, edit: (l) => (l['spec'].updateStrategy.rollingUpdate.maxSurge = 1), want: 'spec.updateStrategy.rollingUpdate.maxSurge' },
  { what: 'status present', desired: ds, edit: (l) => (l['status'] = { desiredNumberScheduled: 3 }), want: undefined },
  { what: 'Service selector key added (atomic map)', desired: svc, edit: (l) => (l['spec'].selector.app = 'x'), want: 'spec.selector' },
  { what: 'Service port targetPort', desired: svc, edit: (l) => (l['spec'].ports[0].targetPort = 53), want: 'spec.ports[dns].targetPort' },
  { what: 'Service clusterIPs defaulted', desired: svc, edit: (l) => Object.assign(l['spec'], { clusterIPs: ['10.96.0.10'], sessionAffinity: 'None' }), want: undefined },
];

for (const c of cases) {
  test(`driftOf: ${c.what}`, () => {
    const live = structuredClone(c.desired) as unknown as Live;
    c.edit(live);
    assert.equal(driftOf(c.desired, live as unknown as OwnedObject), c.want);
  });
}
