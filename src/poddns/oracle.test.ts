import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubernetesOracle } from '../cli/explain.js';
import type { ClusterObject } from '../lib/cluster/types.js';
import { autopathOracle, firstKnown, namesOracle, zoneMapOracle } from './oracle.js';
import type { Outcome, QType } from './queries.js';

const objects: ClusterObject[] = [
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: 'ns1' }, spec: { clusterIP: '10.96.5.5', clusterIPs: ['10.96.5.5', 'fd00::5'] } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'v4only', namespace: 'ns1' }, spec: { clusterIP: '10.96.5.6' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'ns1' }, spec: { type: 'ExternalName', externalName: 'db.example.com' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'gone', namespace: 'ns1' }, spec: { type: 'ExternalName', externalName: 'gone.example.com' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'ns2' }, spec: { clusterIP: 'None' } },
  {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'db-abc', namespace: 'ns2', labels: { 'kubernetes.io/service-name': 'db' } },
    addressType: 'IPv4',
    endpoints: [
      { addresses: ['10.1.0.7'], hostname: 'db-0', conditions: { ready: true } },
      { addresses: ['10.1.0.8'], hostname: 'db-1', conditions: { ready: false } },
    ],
  },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'legacy', namespace: 'ns2' }, spec: { clusterIP: 'None' } },
  { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'legacy', namespace: 'ns2' }, subsets: [{ addresses: [{ ip: 'fd00::9', hostname: 'l-0' }] }] },
  { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns1' }, status: { podIP: '10.1.2.3' } },
];

// `kdns explain --cluster` answers through the kubernetes plugin's resolver.
const cluster = kubernetesOracle(objects, 'cluster.local', '/nonexistent', namesOracle(['db.example.com']));

const cases: Array<{ name: string; qname: string; type: QType; want: Outcome }> = [
  { name: 'a service with an IPv4 cluster IP answers A', qname: 'api.ns1.svc.cluster.local', type: 'A', want: 'answer' },
  { name: 'a dual-stack service answers AAAA', qname: 'api.ns1.svc.cluster.local', type: 'AAAA', want: 'answer' },
  { name: 'an IPv4-only service has no AAAA (NODATA)', qname: 'v4only.ns1.svc.cluster.local', type: 'AAAA', want: 'nodata' },
  { name: 'names are case-insensitive, a trailing dot is fine', qname: 'API.NS1.svc.cluster.local.', type: 'A', want: 'answer' },
  { name: 'an ExternalName service answers when its target does', qname: 'ext.ns1.svc.cluster.local', type: 'AAAA', want: 'answer' },
  { name: 'an ExternalName service whose target does not exist', qname: 'gone.ns1.svc.cluster.local', type: 'A', want: 'nxdomain' },
  { name: 'a headless service answers with its ready endpoints', qname: 'db.ns2.svc.cluster.local', type: 'A', want: 'answer' },
  { name: 'a ready endpoint hostname answers', qname: 'db-0.db.ns2.svc.cluster.local', type: 'A', want: 'answer' },
  { name: 'a not-ready endpoint hostname does not exist', qname: 'db-1.db.ns2.svc.cluster.local', type: 'A', want: 'nxdomain' },
  { name: 'legacy Endpoints are read when there is no slice', qname: 'l-0.legacy.ns2.svc.cluster.local', type: 'AAAA', want: 'answer' },
  { name: 'a pod record by dashed IP', qname: '10-1-2-3.ns1.pod.cluster.local', type: 'A', want: 'answer' },
  { name: 'a pod IP that no pod has', qname: '10-1-2-4.ns1.pod.cluster.local', type: 'A', want: 'nxdomain' },
  { name: 'the service name in another namespace does not exist', qname: 'api.ns2.svc.cluster.local', type: 'A', want: 'nxdomain' },
  { name: 'a namespace that holds services exists without addresses (NODATA)', qname: 'ns1.svc.cluster.local', type: 'A', want: 'nodata' },
  { name: 'the zone apex exists without addresses', qname: 'cluster.local', type: 'A', want: 'nodata' },
  { name: 'a name outside the zone is unknown', qname: 'api.example.com', type: 'A', want: 'nxdomain' },
];

for (const c of cases) {
  test(`cluster oracle (kubernetes plugin): ${c.name}`, () => assert.equal(cluster(c.qname, c.type), c.want));
}

const autopath = autopathOracle(firstKnown(cluster, namesOracle(['api.example.com'])), 'cluster.local');

const autopathCases: Array<{ name: string; qname: string; want: Outcome }> = [
  { name: 'a short name is found in the pod namespace', qname: 'api.search.ns1.cluster.local.ap.k8s.io', want: 'answer' },
  { name: 'svc.ns is found through svc.<zone>', qname: 'db.ns2.search.ns1.cluster.local.ap.k8s.io', want: 'answer' },
  { name: 'an external name is found as is', qname: 'api.example.com.search.ns1.cluster.local.ap.k8s.io', want: 'answer' },
  { name: 'an unknown name is NXDOMAIN', qname: 'nope.search.ns1.cluster.local.ap.k8s.io', want: 'nxdomain' },
  { name: 'another zone is not an autopath name', qname: 'api.search.ns1.other.zone.ap.k8s.io', want: 'nxdomain' },
  { name: 'plain names still reach the cluster', qname: 'api.ns1.svc.cluster.local', want: 'answer' },
];

for (const c of autopathCases) {
  test(`autopath oracle: ${c.name}`, () => assert.equal(autopath(c.qname, 'A'), c.want));
}

const zone = zoneMapOracle({
  'a.example': { A: ['192.0.2.1'] },
  'empty.example': {},
  'alias.example': { CNAME: 'a.example' },
  'dangling.example': { CNAME: 'missing.example' },
  'gone.example': { rcode: 'NXDOMAIN' },
});

const zoneCases: Array<{ name: string; qname: string; type: QType; want: Outcome }> = [
  { name: 'a listed name with the type answers', qname: 'A.example.', type: 'A', want: 'answer' },
  { name: 'a listed name without the type is NODATA', qname: 'a.example', type: 'AAAA', want: 'nodata' },
  { name: 'a listed name without records is NODATA', qname: 'empty.example', type: 'A', want: 'nodata' },
  { name: 'a CNAME is followed inside the map', qname: 'alias.example', type: 'A', want: 'answer' },
  { name: 'a CNAME to an unlisted name is NXDOMAIN (as the recorder answers)', qname: 'dangling.example', type: 'A', want: 'nxdomain' },
  { name: 'a forced NXDOMAIN', qname: 'gone.example', type: 'A', want: 'nxdomain' },
  { name: 'an unlisted name is NXDOMAIN', qname: 'other.example', type: 'A', want: 'nxdomain' },
];

for (const c of zoneCases) {
  test(`zone map oracle: ${c.name}`, () => assert.equal(zone(c.qname, c.type), c.want));
}

test('zone map oracle: a forced SERVFAIL is refused, the model does not follow it', () => {
  assert.throws(() => zoneMapOracle({ 'x.example': { rcode: 'SERVFAIL' } }), /rcode SERVFAIL is not modelled/);
});
