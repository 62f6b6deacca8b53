import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideAdmission } from './admission.js';
import type { AdmissionDecision, AdmissionSettings, AdmittedPod } from './admission.js';

const SETTINGS: AdmissionSettings = { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'], nodeCacheIP: '169.254.20.10', nodeSearches: ['corp.example'] };
const CONTAINERS = [{ name: 'app', image: 'app:1' }];

function pod(annotations: Record<string, string> | undefined, spec: Record<string, unknown> = {}): AdmittedPod {
  return { metadata: { generateName: 'web-', ...(annotations !== undefined ? { annotations } : {}) }, spec: { containers: CONTAINERS, dnsPolicy: 'ClusterFirst', ...spec } as AdmittedPod['spec'] };
}

interface Case {
  name: string;
  pod: AdmittedPod;
  namespacePolicy?: string;
  settings?: AdmissionSettings;
  want: { skip: string } | { deny: string } | { dnsConfig: unknown; patch: unknown; warnings?: string[] };
}

const AUTOPATH_CONFIG = { nameservers: ['169.254.20.10', '10.96.0.10'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: [{ name: 'ndots', value: '5' }] };
const MUTATED = { op: 'add', path: '/metadata/annotations/dns.kdns.io~1mutated-from' };

const CASES: Case[] = [
  {
    name: 'autopath by annotation: None, the autopath dnsConfig, the mutated-from annotation',
    pod: pod({ 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }),
    want: {
      dnsConfig: AUTOPATH_CONFIG,
      patch: [
        { op: 'replace', path: '/spec/dnsPolicy', value: 'None' },
        { op: 'add', path: '/spec/dnsConfig', value: AUTOPATH_CONFIG },
        { ...MUTATED, value: 'ClusterFirstWithAutopath' },
      ],
    },
  },
  {
    name: 'autopath by the literal dnsPolicy on a pod without annotations: the annotations map is added',
    pod: pod(undefined, { dnsPolicy: 'ClusterFirstWithAutopath' }),
    want: {
      dnsConfig: AUTOPATH_CONFIG,
      patch: [
        { op: 'replace', path: '/spec/dnsPolicy', value: 'None' },
        { op: 'add', path: '/spec/dnsConfig', value: AUTOPATH_CONFIG },
        { op: 'add', path: '/metadata/annotations', value: { 'dns.kdns.io/mutated-from': 'ClusterFirstWithAutopath' } },
      ],
    },
  },
  {
    name: 'autopath by the namespace label',
    pod: pod({ team: 'a' }),
    namespacePolicy: 'ClusterFirstWithAutopath',
    want: {
      dnsConfig: AUTOPATH_CONFIG,
      patch: [
        { op: 'replace', path: '/spec/dnsPolicy', value: 'None' },
        { op: 'add', path: '/spec/dnsConfig', value: AUTOPATH_CONFIG },
        { ...MUTATED, value: 'ClusterFirstWithAutopath' },
      ],
    },
  },
  {
    name: "the pod's own dnsConfig is merged as the kubelet merges it (appended, options by name)",
    pod: pod({ 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }, { dnsConfig: { nameservers: ['192.0.2.53'], searches: ['corp.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] } }),
    want: {
      dnsConfig: { nameservers: ['169.254.20.10', '10.96.0.10', '192.0.2.53'], searches: ['search.ns1.cluster.local.ap.k8s.io', 'corp.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
      patch: [
        { op: 'replace', path: '/spec/dnsPolicy', value: 'None' },
        {
          op: 'replace',
          path: '/spec/dnsConfig',
          value: { nameservers: ['169.254.20.10', '10.96.0.10', '192.0.2.53'], searches: ['search.ns1.cluster.local.ap.k8s.io', 'corp.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
        },
        { ...MUTATED, value: 'ClusterFirstWithAutopath' },
      ],
    },
  },
  {
    name: 'more nameservers than fit: cut to three with the kubelet warning',
    pod: pod({ 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }, { dnsConfig: { nameservers: ['192.0.2.53', '192.0.2.54'] } }),
    want: {
      dnsConfig: { nameservers: ['169.254.20.10', '10.96.0.10', '192.0.2.53'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: [{ name: 'ndots', value: '5' }] },
      patch: [
        { op: 'replace', path: '/spec/dnsPolicy', value: 'None' },
        { op: 'replace', path: '/spec/dnsConfig', value: { nameservers: ['169.254.20.10', '10.96.0.10', '192.0.2.53'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: [{ name: 'ndots', value: '5' }] } },
        { ...MUTATED, value: 'ClusterFirstWithAutopath' },
      ],
      warnings: ['DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 169.254.20.10 10.96.0.10 192.0.2.53 (omitted: 192.0.2.54)'],
    },
  },
  {
    name: 'Custom by annotations: substitutions, $(HOST) from the configured node search paths, options',
    pod: pod({ 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '$(NAMESPACE).svc.$(CLUSTER), my.suffix, $(HOST)', 'dns.kdns.io/options': 'ndots:2,edns0' }),
    want: {
      dnsConfig: { nameservers: ['10.96.0.10'], searches: ['ns1.svc.cluster.local', 'my.suffix', 'corp.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
      patch: [
        { op: 'replace', path: '/spec/dnsPolicy', value: 'None' },
        { op: 'add', path: '/spec/dnsConfig', value: { nameservers: ['10.96.0.10'], searches: ['ns1.svc.cluster.local', 'my.suffix', 'corp.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] } },
        { ...MUTATED, value: 'Custom' },
      ],
    },
  },
  {
    name: 'Custom as a JSON array annotation',
    pod: pod({ 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '["$(NAMESPACE).svc.$(CLUSTER)"]' }),
    want: {
      dnsConfig: { nameservers: ['10.96.0.10'], searches: ['ns1.svc.cluster.local'] },
      patch: [
        { op: 'replace', path: '/spec/dnsPolicy', value: 'None' },
        { op: 'add', path: '/spec/dnsConfig', value: { nameservers: ['10.96.0.10'], searches: ['ns1.svc.cluster.local'] } },
        { ...MUTATED, value: 'Custom' },
      ],
    },
  },
  {
    name: 'the literal Custom with dnsParams (seen only where the decoder kept them): dnsParams removed',
    pod: pod(undefined, { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['$(CLUSTER)'] } } }),
    want: {
      dnsConfig: { nameservers: ['10.96.0.10'], searches: ['cluster.local'] },
      patch: [
        { op: 'replace', path: '/spec/dnsPolicy', value: 'None' },
        { op: 'add', path: '/spec/dnsConfig', value: { nameservers: ['10.96.0.10'], searches: ['cluster.local'] } },
        { op: 'remove', path: '/spec/dnsParams' },
        { op: 'add', path: '/metadata/annotations', value: { 'dns.kdns.io/mutated-from': 'Custom' } },
      ],
    },
  },
  { name: 'no opt-in: allowed, untouched', pod: pod({ team: 'a' }), want: { skip: 'no kdns DNS policy asked (none)' } },
  { name: 'a labelled namespace, the pod opts out with a stock policy', pod: pod({ 'dns.kdns.io/policy': 'ClusterFirst' }), namespacePolicy: 'ClusterFirstWithAutopath', want: { skip: 'no kdns DNS policy asked (annotation)' } },
  { name: 'hostNetwork pods are never touched', pod: pod({ 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }, { hostNetwork: true }), want: { skip: 'hostNetwork pod' } },
  { name: 'a pod already None is never touched', pod: pod({ 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }, { dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'] } }), want: { skip: 'dnsPolicy is already None' } },
  {
    name: 'Custom needing $(HOST) with no node search paths configured: denied',
    pod: pod({ 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'my.suffix $(HOST)' }),
    settings: { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'] },
    want: {
      deny: 'metadata.annotations[dns.kdns.io/search][1]: Invalid value: "$(HOST)": $(HOST) stands for the node\'s search paths, which are not known at admission (no node is chosen yet); the kdns webhook has no nodeSearches configured',
    },
  },
  {
    name: 'a bad substitution: denied, naming the annotation and the rule',
    pod: pod({ 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'abc$(NAMESPACE)1234' }),
    want: {
      deny: 'metadata.annotations[dns.kdns.io/search][0]: Invalid value: "abc$(NAMESPACE)1234": a label containing \'$\' must be exactly $(NAMESPACE) or $(CLUSTER), and $(HOST) must be a whole entry (found "abc$(NAMESPACE)1234")',
    },
  },
  {
    name: 'an unknown policy: denied with the values the annotation takes',
    pod: pod({ 'dns.kdns.io/policy': 'Autopath' }),
    want: {
      deny: 'metadata.annotations[dns.kdns.io/policy]: Unsupported value: "Autopath": supported values: "ClusterFirstWithAutopath", "Custom", "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    },
  },
];

function summary(d: AdmissionDecision): unknown {
  if (d.kind === 'skip') return { skip: d.reason };
  if (d.kind === 'deny') return { deny: d.message };
  return { dnsConfig: d.dnsConfig, patch: d.patch, ...(d.warnings.length > 0 ? { warnings: d.warnings } : {}) };
}

for (const c of CASES) {
  test(`admission: ${c.name}`, () => {
    const d = decideAdmission({ pod: c.pod, namespace: 'ns1', settings: c.settings ?? SETTINGS, ...(c.namespacePolicy !== undefined ? { namespacePolicy: c.namespacePolicy } : {}) });
    assert.deepEqual(summary(d), c.want);
  });
}
