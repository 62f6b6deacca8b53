import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toServiceInfo } from './convert.js';
import type { Service } from './types.js';

const nameCases: Array<{ name: string; namespace: string; key: string }> = [
  { name: 'web', namespace: 'demo', key: 'web.demo' },
  { name: 'web', namespace: 'Team-A', key: 'web.team-a' },
  { name: 'Web', namespace: 'demo', key: 'web.demo' },
  { name: 'a.b', namespace: 'demo', key: 'a.b.demo' },
];
for (const c of nameCases) {
  test(`toServiceInfo: ${c.name} in ${c.namespace} keeps its name beside key ${c.key}`, () => {
    const info = toServiceInfo({ apiVersion: 'v1', kind: 'Service', metadata: { name: c.name, namespace: c.namespace }, spec: { clusterIP: '10.0.0.1' } });
    assert.deepEqual([info.name, info.namespace, info.key], [c.name, c.namespace, c.key]);
  });
}

const clusterIPCases: Array<{ what: string; spec: Service['spec']; want: string[] }> = [
  { what: 'one ClusterIP', spec: { clusterIP: '10.0.0.1' }, want: ['10.0.0.1'] },
  { what: 'dual-stack, in spec order', spec: { clusterIP: 'fd00::1', clusterIPs: ['fd00::1', '10.0.0.1'] }, want: ['fd00::1', '10.0.0.1'] },
  { what: 'headless', spec: { clusterIP: 'None' }, want: [] },
  { what: 'ExternalName', spec: { type: 'ExternalName', externalName: 'db.example.org' }, want: [] },
];
for (const c of clusterIPCases) {
  test(`toServiceInfo: clusterIPs of ${c.what}`, () => {
    const info = toServiceInfo({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'demo' }, spec: c.spec });
    assert.deepEqual(info.clusterIPs, c.want);
  });
}
