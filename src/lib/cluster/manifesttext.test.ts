import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseManifests, formatManifestError } from './manifesttext.js';

interface Case {
  name: string;
  text: string;
  /** `Kind ns/name` (or `Kind name` for cluster-scoped) of each object, in order. */
  objects: string[];
  /** formatted errors, file "f.yaml" */
  errors: string[];
}

const cases: Case[] = [
  {
    name: 'multi-document YAML with a default namespace filled in',
    text: `apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec: {clusterIP: 10.0.0.1, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec: {clusterIP: None}
`,
    objects: ['Service demo/web', 'Service default/api'],
    errors: [],
  },
  {
    name: 'kind: List as kubectl get -o yaml writes it',
    text: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: demo}
- apiVersion: v1
  kind: Pod
  metadata: {name: p, namespace: demo}
  status: {podIP: 10.1.0.5, podIPs: [{ip: 10.1.0.5}, {ip: "fd00::5"}]}
metadata: {resourceVersion: ""}
`,
    objects: ['Namespace demo', 'Pod demo/p'],
    errors: [],
  },
  {
    name: 'typed list from the API: items inherit kind and apiVersion',
    text: JSON.stringify({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSliceList',
      metadata: { resourceVersion: '12' },
      items: [{ metadata: { name: 'web-abc', namespace: 'demo' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.1.0.1'] }] }],
    }),
    objects: ['EndpointSlice demo/web-abc'],
    errors: [],
  },
  {
    name: 'JSON v1 List',
    text: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', namespace: 'x' }, spec: { unschedulable: true } }] }, null, 2),
    objects: ['Node n1'],
    errors: [],
  },
  {
    name: 'unknown kinds and known kind names of other groups are skipped',
    text: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: k}
---
apiVersion: v1
kind: constructor
metadata: {name: c}
`,
    objects: [],
    errors: [],
  },
  {
    name: 'empty documents and comments are nothing, not errors',
    text: '# just a comment\n---\n---\n',
    objects: [],
    errors: [],
  },
  {
    name: 'YAML syntax error names its line, other documents still parse',
    text: `apiVersion: v1
kind: Namespace
metadata: {name: a}
---
apiVersion: v1
kind: Namespace
metadata: {name: [b
`,
    objects: ['Namespace a'],
    errors: ['f.yaml:7: YAML: Flow sequence in block collection must be sufficiently indented and end with a ]'],
  },
  {
    name: 'bad field reported at its own line with the object and field path',
    text: `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: demo
spec:
  ports:
  - name: http
    port: eighty
`,
    objects: [],
    errors: ['f.yaml:9: Service demo/web: spec.ports[0].port: Invalid value: "eighty": must be between 1 and 65535, inclusive'],
  },
  {
    name: 'bad clusterIP and missing name',
    text: `apiVersion: v1
kind: Service
metadata: {name: web}
spec: {clusterIP: 10.0.0.300}
---
apiVersion: v1
kind: Pod
metadata: {namespace: x}
`,
    objects: [],
    errors: [
      'f.yaml:4: Service default/web: spec.clusterIP: Invalid value: "10.0.0.300": must be a valid IP address',
      'f.yaml:8: Pod: metadata.name: Required value: name or generateName is required',
    ],
  },
  {
    name: 'bad externalIPs and load-balancer ingress',
    text: `apiVersion: v1
kind: Service
metadata: {name: lb}
spec:
  externalIPs: [192.0.2.1, lb.example.net]
status:
  loadBalancer:
    ingress: [{ip: 198.51.100.300}, {hostname: 7}]
`,
    objects: [],
    errors: [
      'f.yaml:5: Service default/lb: spec.externalIPs[1]: Invalid value: "lb.example.net": must be a valid IP address',
      'f.yaml:8: Service default/lb: status.loadBalancer.ingress[0].ip: Invalid value: "198.51.100.300": must be a valid IP address',
      'f.yaml:8: Service default/lb: status.loadBalancer.ingress[1].hostname: Invalid value: 7: must be a string',
    ],
  },
  {
    name: 'bad ServiceImport type and ips',
    text: `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: db, namespace: shop}
spec:
  type: LoadBalancer
  ips: [10.0.0.300]
`,
    objects: [],
    errors: [
      'f.yaml:5: ServiceImport shop/db: spec.type: Unsupported value: "LoadBalancer": supported values: "ClusterSetIP", "Headless"',
      'f.yaml:6: ServiceImport shop/db: spec.ips[0]: Invalid value: "10.0.0.300": must be a valid IP address',
    ],
  },
  {
    name: 'JSON with a bad field falls back to YAML for the line',
    text: '{\n  "apiVersion": "discovery.k8s.io/v1",\n  "kind": "EndpointSlice",\n  "metadata": {"name": "s", "namespace": "n"},\n  "addressType": "IPv5"\n}\n',
    objects: [],
    errors: ['f.yaml:5: EndpointSlice n/s: addressType: Unsupported value: "IPv5": supported values: "IPv4", "IPv6", "FQDN"'],
  },
  {
    name: 'a scalar document is not an object',
    text: 'hello\n',
    objects: [],
    errors: ['f.yaml:1: expected a Kubernetes object (a mapping with apiVersion and kind)'],
  },
  {
    name: 'missing kind in a list item points at the item',
    text: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  metadata: {name: a}
`,
    objects: [],
    errors: ['f.yaml:4: kind: Required value: every object needs a kind'],
  },
  {
    name: 'endpoint conditions must be booleans; ExternalName needs a name',
    text: `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: s, namespace: n}
addressType: IPv4
endpoints:
- addresses: [10.0.0.1]
  conditions: {ready: "yes"}
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: n}
spec: {type: ExternalName}
`,
    objects: [],
    errors: [
      'f.yaml:7: EndpointSlice n/s: endpoints[0].conditions.ready: Invalid value: "yes": must be true or false',
      'f.yaml:12: Service n/ext: spec.externalName: Required value: an ExternalName service needs one',
    ],
  },
];

for (const c of cases) {
  test(`parseManifests: ${c.name}`, () => {
    const r = parseManifests(c.text, 'f.yaml');
    const names = r.objects.map((o) => (o.metadata.namespace ? `${o.kind} ${o.metadata.namespace}/${o.metadata.name}` : `${o.kind} ${o.metadata.name}`));
    assert.deepEqual(names, c.objects);
    assert.deepEqual(r.errors.map(formatManifestError), c.errors);
  });
}
