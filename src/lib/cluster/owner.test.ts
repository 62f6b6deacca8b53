import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { podOwner, toPodInfo } from './convert.js';
import { HOST_NETWORK_OWNER } from './records.js';
import type { OwnerReference, Pod } from './types.js';

function pod(name: string, owners: OwnerReference[] | undefined, labels?: Record<string, string>, hostNetwork?: boolean): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns1', ...(labels ? { labels } : {}), ...(owners ? { ownerReferences: owners } : {}) },
    spec: hostNetwork === undefined ? {} : { hostNetwork },
    status: { phase: 'Running', podIP: '10.0.0.1' },
  };
}

const rs = (name: string): OwnerReference => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, controller: true });

describe('podOwner: the workload behind a pod, from its controller reference and names', () => {
  const cases: Array<{ name: string; pod: Pod; want: string | undefined }> = [
    { name: 'bare pod', pod: pod('p', undefined), want: undefined },
    { name: 'ReplicaSet with its pod-template-hash → Deployment', pod: pod('api-7d9f8-x2', [rs('api-7d9f8')], { 'pod-template-hash': '7d9f8' }), want: 'Deployment/api' },
    { name: 'deployment name with dashes', pod: pod('a-b-c-5f6-q', [rs('a-b-c-5f6')], { 'pod-template-hash': '5f6' }), want: 'Deployment/a-b-c' },
    { name: 'ReplicaSet without the hash label stays a ReplicaSet', pod: pod('rs1-abc', [rs('rs1')]), want: 'ReplicaSet/rs1' },
    { name: 'hash label that is not the name suffix', pod: pod('rs1-abc', [rs('rs1')], { 'pod-template-hash': 'zzz' }), want: 'ReplicaSet/rs1' },
    { name: 'Job named <cronjob>-<scheduled minute> → CronJob', pod: pod('backup-29123456-abcde', [{ kind: 'Job', name: 'backup-29123456', controller: true }]), want: 'CronJob/backup' },
    { name: 'Job with a short number stays a Job', pod: pod('migrate-1-x', [{ kind: 'Job', name: 'migrate-1', controller: true }]), want: 'Job/migrate-1' },
    { name: 'StatefulSet', pod: pod('db-0', [{ kind: 'StatefulSet', name: 'db', controller: true }]), want: 'StatefulSet/db' },
    { name: 'DaemonSet', pod: pod('agent-x1', [{ kind: 'DaemonSet', name: 'agent', controller: true }]), want: 'DaemonSet/agent' },
    {
      name: 'the controller reference wins over others',
      pod: pod('w-1', [
        { kind: 'ConfigMap', name: 'cm' },
        { kind: 'StatefulSet', name: 'w', controller: true },
      ]),
      want: 'StatefulSet/w',
    },
    { name: 'hostNetwork pod', pod: pod('kube-proxy-x', [{ kind: 'DaemonSet', name: 'kube-proxy', controller: true }], undefined, true), want: HOST_NETWORK_OWNER },
  ];
  for (const c of cases) test(c.name, () => assert.equal(podOwner(c.pod), c.want));

  test('the store keeps the owner with the pod', () => {
    assert.equal(toPodInfo(pod('api-7d9f8-a', [rs('api-7d9f8')], { 'pod-template-hash': '7d9f8' })).owner, 'Deployment/api');
  });
});
