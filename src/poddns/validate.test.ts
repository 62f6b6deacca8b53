import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatFieldError } from '../lib/cluster/field.js';
import { kdnsFormWarnings, stockDecodingError, validatePodObject } from './validate.js';
import type { APIServerKind } from './validate.js';
import { readPodSpec } from './workload.js';

// The API server's messages, written out so a change in wording fails here.
const STRICT =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const RELAXED =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')";
const IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const POLICIES = '"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom", "ClusterFirstWithAutopath"';
// A released kube-apiserver's list, in its order (pkg/apis/core/validation validateDNSPolicy).
const STOCK_POLICIES = '"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"';
const NEEDS_SEARCH = 'Required value: must be set when the policy is Custom (the search list: a comma- or space-separated list, or a JSON array of strings; "" for none)';

type Obj = Record<string, unknown>;
type Spec = Record<string, unknown>;

function pod(spec: Spec, name = 'p', namespace: string | undefined = 'ns1'): Obj {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...(namespace ? { namespace } : {}) }, spec: { containers: [{ name: 'c', image: 'x' }], ...spec } };
}

function template(spec: Spec): Obj {
  return { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'x' }], ...spec } };
}

function workload(kind: string, spec: Spec): Obj {
  const meta = { name: 'w', namespace: 'ns1' };
  switch (kind) {
    case 'PodTemplate':
      return { apiVersion: 'v1', kind, metadata: meta, template: template(spec) };
    case 'CronJob':
      return { apiVersion: 'batch/v1', kind, metadata: meta, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: template(spec) } } } };
    default:
      return { apiVersion: 'apps/v1', kind, metadata: meta, spec: { template: template(spec) } };
  }
}

/** The object with these annotations where its pods' metadata is (the template's in a workload). */
function annotated(obj: Obj, annotations: Record<string, unknown>): Obj {
  const copy = structuredClone(obj);
  const spec = copy['spec'] as Obj | undefined;
  const holder = (copy['kind'] === 'Pod' ? copy : copy['kind'] === 'PodTemplate' ? copy['template'] : copy['kind'] === 'CronJob' ? ((spec?.['jobTemplate'] as Obj)['spec'] as Obj)['template'] : spec?.['template']) as Obj;
  holder['metadata'] = { ...(holder['metadata'] as Obj | undefined), annotations };
  return copy;
}

const custom = (c: Record<string, unknown>, extra: Spec = {}): Spec => ({ dnsPolicy: 'Custom', dnsParams: { custom: c }, ...extra });
const searches = (list: unknown): Spec => ({ dnsConfig: { searches: list } });

interface Case {
  name: string;
  obj: Obj;
  old?: Obj;
  gate?: boolean;
  clusterDomain?: string;
  api?: APIServerKind;
  want: string[];
}

const label63 = 'a'.repeat(63);
const name254 = [label63, label63, label63, 'a'.repeat(62)].join('.');

const cases: Case[] = [
  // --- dnsPolicy
  { name: 'ClusterFirst is valid', obj: pod({ dnsPolicy: 'ClusterFirst' }), want: [] },
  { name: 'an unset dnsPolicy is defaulted to ClusterFirst, not required', obj: pod({}), want: [] },
  { name: 'an empty dnsPolicy is defaulted too', obj: pod({ dnsPolicy: '' }), want: [] },
  { name: 'ClusterFirstWithHostNet is valid', obj: pod({ dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true }), want: [] },
  { name: 'Default is valid', obj: pod({ dnsPolicy: 'Default' }), want: [] },
  { name: 'ClusterFirstWithAutopath is accepted', obj: pod({ dnsPolicy: 'ClusterFirstWithAutopath' }), want: [] },
  { name: 'Custom is accepted', obj: pod(custom({ search: ['$(NAMESPACE).svc.$(CLUSTER)'] })), want: [] },
  {
    name: 'an unknown dnsPolicy is unsupported, listing the accepted values',
    obj: pod({ dnsPolicy: 'ClusterLast' }),
    want: [`spec.dnsPolicy: Unsupported value: "ClusterLast": supported values: ${POLICIES}`],
  },
  {
    name: 'policy names are case-sensitive',
    obj: pod({ dnsPolicy: 'clusterfirst' }),
    want: [`spec.dnsPolicy: Unsupported value: "clusterfirst": supported values: ${POLICIES}`],
  },
  // --- None
  {
    name: 'None needs dnsConfig',
    obj: pod({ dnsPolicy: 'None' }),
    want: ['spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None'],
  },
  {
    name: 'None needs a nameserver',
    obj: pod({ dnsPolicy: 'None', dnsConfig: { searches: ['a.example'] } }),
    want: ['spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None'],
  },
  { name: 'None with a nameserver is valid', obj: pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'] } }), want: [] },
  // --- nameservers
  {
    name: 'more than 3 nameservers',
    obj: pod({ dnsConfig: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4'] } }),
    want: ['spec.dnsConfig.nameservers: Invalid value: 1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4: must not have more than 3 nameservers'],
  },
  { name: 'a nameserver that is not an IP', obj: pod({ dnsConfig: { nameservers: ['1.2.3'] } }), want: [`spec.dnsConfig.nameservers[0]: Invalid value: "1.2.3": ${IP}`] },
  { name: 'a host name is not a nameserver', obj: pod({ dnsConfig: { nameservers: ['1.1.1.1', 'dns.example'] } }), want: [`spec.dnsConfig.nameservers[1]: Invalid value: "dns.example": ${IP}`] },
  { name: 'an IPv6 nameserver is valid', obj: pod({ dnsConfig: { nameservers: ['2001:db8::53'] } }), want: [] },
  { name: 'an IPv4 address with leading zeros is still accepted (legacy IP field)', obj: pod({ dnsConfig: { nameservers: ['010.001.002.003'] } }), want: [] },
  { name: 'an IPv6 address with a zone is not', obj: pod({ dnsConfig: { nameservers: ['fe80::1%eth0'] } }), want: [`spec.dnsConfig.nameservers[0]: Invalid value: "fe80::1%eth0": ${IP}`] },
  { name: 'an octet over 255 is not', obj: pod({ dnsConfig: { nameservers: ['10.0.0.256'] } }), want: [`spec.dnsConfig.nameservers[0]: Invalid value: "10.0.0.256": ${IP}`] },
  // --- searches, strict
  {
    name: 'more than 32 search paths',
    obj: pod(searches(Array.from({ length: 33 }, (_, i) => `s${i}`))),
    want: [`spec.dnsConfig.searches: Invalid value: ${Array.from({ length: 33 }, (_, i) => `s${i}`).join(',')}: must not have more than 32 search paths`],
  },
  {
    name: 'a search list over 2048 characters',
    obj: pod(searches(Array.from({ length: 9 }, (_, i) => `${i}${'a'.repeat(62)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(60)}`))),
    want: [
      `spec.dnsConfig.searches: Invalid value: ${Array.from({ length: 9 }, (_, i) => `${i}${'a'.repeat(62)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(60)}`).join(',')}: must not have more than 2048 characters (including spaces) in the search list`,
    ],
  },
  { name: 'upper case is invalid', obj: pod(searches(['Corp.example'])), want: [`spec.dnsConfig.searches[0]: Invalid value: "Corp.example": ${STRICT}`] },
  { name: 'an underscore is invalid without the gate', obj: pod(searches(['_sip._tcp.example'])), want: [`spec.dnsConfig.searches[0]: Invalid value: "_sip._tcp.example": ${STRICT}`] },
  { name: 'a trailing dot is allowed (trimmed before the check)', obj: pod(searches(['corp.example.'])), want: [] },
  { name: 'a lone dot is invalid without the gate (shown trimmed, as the API server does)', obj: pod(searches(['.'])), want: [`spec.dnsConfig.searches[0]: Invalid value: "": ${STRICT}`] },
  { name: 'over 253 characters', obj: pod(searches([name254])), want: [`spec.dnsConfig.searches[0]: Invalid value: "${name254}": must be no more than 253 characters`] },
  { name: 'a leading hyphen', obj: pod(searches(['-a.example'])), want: [`spec.dnsConfig.searches[0]: Invalid value: "-a.example": ${STRICT}`] },
  { name: 'an empty label', obj: pod(searches(['a..example'])), want: [`spec.dnsConfig.searches[0]: Invalid value: "a..example": ${STRICT}`] },
  { name: 'each bad search is reported at its index', obj: pod(searches(['ok.example', 'B', 'fine'])), want: [`spec.dnsConfig.searches[1]: Invalid value: "B": ${STRICT}`] },
  // --- searches, relaxed
  { name: 'gate on: underscores are allowed', obj: pod(searches(['_sip._tcp.example', 'a_b.example'])), gate: true, want: [] },
  { name: 'gate on: a lone dot is allowed', obj: pod(searches(['.'])), gate: true, want: [] },
  { name: 'gate on: a label may not end with an underscore', obj: pod(searches(['a_.example'])), gate: true, want: [`spec.dnsConfig.searches[0]: Invalid value: "a_.example": ${RELAXED}`] },
  { name: 'gate on: a lone underscore label is invalid', obj: pod(searches(['_.example'])), gate: true, want: [`spec.dnsConfig.searches[0]: Invalid value: "_.example": ${RELAXED}`] },
  { name: 'gate on: upper case is still invalid', obj: pod(searches(['A_b'])), gate: true, want: [`spec.dnsConfig.searches[0]: Invalid value: "A_b": ${RELAXED}`] },
  { name: 'gate on: two dots are still invalid', obj: pod(searches(['..'])), gate: true, want: [`spec.dnsConfig.searches[0]: Invalid value: ".": ${RELAXED}`] },
  // --- options
  { name: 'an option needs a name', obj: pod({ dnsConfig: { options: [{ name: 'ndots', value: '2' }, { value: '1' }] } }), want: ['spec.dnsConfig.options[1]: Required value: must not be empty'] },
  { name: 'an option with an empty name', obj: pod({ dnsConfig: { options: [{ name: '' }] } }), want: ['spec.dnsConfig.options[0]: Required value: must not be empty'] },
  // --- ratcheting: all four combinations, plus the old-object variants
  {
    name: 'gate off, create: strict',
    obj: pod(searches(['a_b.example'])),
    want: [`spec.dnsConfig.searches[0]: Invalid value: "a_b.example": ${STRICT}`],
  },
  {
    name: 'gate off, update of an object that used an underscore: relaxed',
    obj: pod(searches(['a_b.example', 'c_d.example'])),
    old: pod(searches(['a_b.example'])),
    want: [],
  },
  {
    name: 'gate off, update of a strictly valid object: strict',
    obj: pod(searches(['a_b.example'])),
    old: pod(searches(['a.example'])),
    want: [`spec.dnsConfig.searches[0]: Invalid value: "a_b.example": ${STRICT}`],
  },
  { name: 'gate on, create: relaxed', obj: pod(searches(['a_b.example'])), gate: true, want: [] },
  { name: 'gate on, update of a strictly valid object: relaxed', obj: pod(searches(['a_b.example'])), old: pod(searches(['a.example'])), gate: true, want: [] },
  { name: 'gate off, update of an object that had a lone dot: relaxed', obj: pod(searches(['.', 'x_y'])), old: pod(searches(['.'])), want: [] },
  {
    name: 'gate off, update of an object without dnsConfig: strict',
    obj: pod(searches(['x_y'])),
    old: pod({}),
    want: [`spec.dnsConfig.searches[0]: Invalid value: "x_y": ${STRICT}`],
  },
  {
    name: 'gate off, update of a Custom object whose entry needed relaxed: relaxed',
    obj: pod(custom({ search: ['_grpc.$(NAMESPACE).svc.$(CLUSTER)', 'x_y.example'] })),
    old: pod(custom({ search: ['_grpc.$(NAMESPACE).svc.$(CLUSTER)'] })),
    want: [],
  },
  {
    name: 'gate off, update of a CronJob that used an underscore: relaxed (every kind ratchets)',
    obj: workload('CronJob', searches(['a_b.example', 'c_d'])),
    old: workload('CronJob', searches(['a_b.example'])),
    want: [],
  },
  {
    name: 'gate off, update of a Deployment that was strict: strict',
    obj: workload('Deployment', searches(['a_b.example'])),
    old: workload('Deployment', searches(['a.example'])),
    want: [`spec.template.spec.dnsConfig.searches[0]: Invalid value: "a_b.example": ${STRICT}`],
  },
  // --- Custom / dnsParams
  {
    name: 'dnsParams without dnsPolicy Custom is forbidden',
    obj: pod({ dnsPolicy: 'ClusterFirst', dnsParams: { custom: { search: ['a.example'] } } }),
    want: ['spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom'],
  },
  { name: 'dnsParams with the defaulted policy is forbidden too', obj: pod({ dnsParams: {} }), want: ['spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom'] },
  { name: 'Custom needs its search list: the annotation (dnsParams never reach a real API server)', obj: pod({ dnsPolicy: 'Custom' }), want: [`metadata.annotations[dns.kdns.io/search]: ${NEEDS_SEARCH}`] },
  { name: 'Custom with empty dnsParams', obj: pod({ dnsPolicy: 'Custom', dnsParams: {} }), want: ['spec.dnsParams.custom: Required value: must provide `dnsParams.custom` when `dnsPolicy` is Custom'] },
  { name: 'Custom with an empty custom block is valid (no search paths)', obj: pod(custom({})), want: [] },
  { name: 'the issue example is valid', obj: pod(custom({ search: ['$(NAMESPACE).svc.$(CLUSTER)', 'my.dns.search.suffix', '$(HOST)'], options: ['ndots:2'] })), want: [] },
  {
    name: 'a label with $ that is not exactly a substitution',
    obj: pod(custom({ search: ['abc$(NAMESPACE)1234.svc'] })),
    want: [
      `spec.dnsParams.custom.search[0]: Invalid value: "abc$(NAMESPACE)1234.svc": a label containing '$' must be exactly $(NAMESPACE) or $(CLUSTER), and $(HOST) must be a whole entry (found "abc$(NAMESPACE)1234")`,
    ],
  },
  {
    name: 'substitutions are case-sensitive',
    obj: pod(custom({ search: ['$(namespace).svc'] })),
    want: [`spec.dnsParams.custom.search[0]: Invalid value: "$(namespace).svc": a label containing '$' must be exactly $(NAMESPACE) or $(CLUSTER), and $(HOST) must be a whole entry (found "$(namespace)")`],
  },
  {
    name: '$(HOST) inside an entry',
    obj: pod(custom({ search: ['corp.$(HOST)'] })),
    want: [`spec.dnsParams.custom.search[0]: Invalid value: "corp.$(HOST)": a label containing '$' must be exactly $(NAMESPACE) or $(CLUSTER), and $(HOST) must be a whole entry (found "$(HOST)")`],
  },
  {
    name: '$(HOST) not last',
    obj: pod(custom({ search: ['$(HOST)', 'a.example'] })),
    want: ['spec.dnsParams.custom.search[0]: Invalid value: "$(HOST)": $(HOST) may only be the last entry'],
  },
  {
    name: '$HOST not last',
    obj: pod(custom({ search: ['a.example', '$HOST', 'b.example'] })),
    want: ['spec.dnsParams.custom.search[1]: Invalid value: "$HOST": $HOST may only be the last entry'],
  },
  {
    name: 'more than 5 entries besides $(HOST)',
    obj: pod(custom({ search: ['a.x', 'b.x', 'c.x', 'd.x', 'e.x', 'f.x', '$(HOST)'] })),
    want: ['spec.dnsParams.custom.search: Too many: 6: must have at most 5 items besides $(HOST)'],
  },
  { name: '5 entries plus $(HOST) is valid', obj: pod(custom({ search: ['a.x', 'b.x', 'c.x', 'd.x', 'e.x', '$(HOST)'] })), want: [] },
  { name: 'ndots 15 is valid', obj: pod(custom({ options: ['ndots:15', 'edns0'] })), want: [] },
  { name: 'ndots above 15 is invalid', obj: pod(custom({ options: ['edns0', 'ndots:16'] })), want: ['spec.dnsParams.custom.options[1]: Invalid value: "ndots:16": ndots must be no more than 15'] },
  {
    name: 'ndots must be a number',
    obj: pod(custom({ options: ['ndots:two'] })),
    want: ['spec.dnsParams.custom.options[0]: Invalid value: "ndots:two": ndots must be an integer between 0 and 15, inclusive'],
  },
  { name: 'an empty option', obj: pod(custom({ options: [''] })), want: ['spec.dnsParams.custom.options[0]: Required value: must not be empty'] },
  {
    name: 'an entry is checked after substitution (strict)',
    obj: pod(custom({ search: ['$(NAMESPACE).Corp'] }), 'p', 'team'),
    want: [`spec.dnsParams.custom.search[0]: Invalid value: "team.Corp": ${STRICT}`],
  },
  { name: 'an entry after substitution may use underscores with the gate', obj: pod(custom({ search: ['_grpc.$(NAMESPACE).svc.$(CLUSTER)'] })), gate: true, want: [] },
  {
    name: 'the cluster domain flag is what $(CLUSTER) becomes',
    obj: pod(custom({ search: ['svc.$(CLUSTER)'] })),
    clusterDomain: 'Bad_Domain',
    want: [`spec.dnsParams.custom.search[0]: Invalid value: "svc.Bad_Domain": ${STRICT}`],
  },
  {
    name: 'search and searchPaths together are forbidden',
    obj: pod(custom({ search: ['a.example'], searchPaths: ['b.example'] })),
    want: ['spec.dnsParams.custom.searchPaths: Forbidden: may not be set together with `search` (it is another name for it)'],
  },
  {
    name: 'errors in searchPaths carry that name',
    obj: pod(custom({ searchPaths: ['a.example', 'B.example'] })),
    want: [`spec.dnsParams.custom.searchPaths[1]: Invalid value: "B.example": ${STRICT}`],
  },
  {
    name: 'Custom also gets the dnsConfig rules',
    obj: pod(custom({ search: ['a.example'] }, { dnsConfig: { nameservers: ['x'] } })),
    want: [`spec.dnsConfig.nameservers[0]: Invalid value: "x": ${IP}`],
  },
  // --- every pod-template kind, with its path
  { name: 'Pod path', obj: pod(searches(['A'])), want: [`spec.dnsConfig.searches[0]: Invalid value: "A": ${STRICT}`] },
  { name: 'Deployment path', obj: workload('Deployment', searches(['A'])), want: [`spec.template.spec.dnsConfig.searches[0]: Invalid value: "A": ${STRICT}`] },
  { name: 'ReplicaSet path', obj: workload('ReplicaSet', { dnsPolicy: 'X' }), want: [`spec.template.spec.dnsPolicy: Unsupported value: "X": supported values: ${POLICIES}`] },
  { name: 'StatefulSet path', obj: workload('StatefulSet', { dnsPolicy: 'None' }), want: ['spec.template.spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None'] },
  { name: 'DaemonSet path', obj: workload('DaemonSet', { dnsConfig: { nameservers: ['nope'] } }), want: [`spec.template.spec.dnsConfig.nameservers[0]: Invalid value: "nope": ${IP}`] },
  { name: 'Job path', obj: workload('Job', { dnsConfig: { options: [{}] } }), want: ['spec.template.spec.dnsConfig.options[0]: Required value: must not be empty'] },
  { name: 'CronJob path', obj: workload('CronJob', searches(['a_b'])), want: [`spec.jobTemplate.spec.template.spec.dnsConfig.searches[0]: Invalid value: "a_b": ${STRICT}`] },
  { name: 'ReplicationController path', obj: workload('ReplicationController', { dnsParams: {} }), want: ['spec.template.spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom'] },
  {
    name: 'PodTemplate path',
    obj: workload('PodTemplate', custom({ search: ['$(HOST)', 'x'] })),
    want: ['template.spec.dnsParams.custom.search[0]: Invalid value: "$(HOST)": $(HOST) may only be the last entry'],
  },
  { name: 'a valid Deployment', obj: workload('Deployment', { dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a.example'] } }), want: [] },
  // --- shape and metadata
  {
    name: 'a field of the wrong type is reported alone (the API server could not decode it)',
    obj: pod({ dnsPolicy: 'Nope', dnsConfig: { searches: 'corp.example' } }),
    want: ['spec.dnsConfig.searches: Invalid value: "corp.example": must be a list of strings'],
  },
  { name: 'a non-string nameserver', obj: pod({ dnsConfig: { nameservers: [1234] } }), want: ['spec.dnsConfig.nameservers[0]: Invalid value: 1234: must be a string'] },
  // --- the annotation form (a cluster with the kdns webhook)
  { name: 'a Deployment asking for autopath through the annotation', obj: annotated(workload('Deployment', {}), { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }), want: [] },
  {
    name: 'a Deployment asking for Custom through the annotations',
    obj: annotated(workload('Deployment', {}), { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '$(NAMESPACE).svc.$(CLUSTER),$(HOST)', 'dns.kdns.io/options': 'ndots:2' }),
    want: [],
  },
  { name: 'a bare Pod with the literal Custom and the annotations', obj: annotated(pod({ dnsPolicy: 'Custom' }), { 'dns.kdns.io/search': 'a.example' }), want: [] },
  {
    name: 'an unknown policy in a CronJob template annotation',
    obj: annotated(workload('CronJob', {}), { 'dns.kdns.io/policy': 'Autopath' }),
    want: [
      'spec.jobTemplate.spec.template.metadata.annotations[dns.kdns.io/policy]: Unsupported value: "Autopath": supported values: "ClusterFirstWithAutopath", "Custom", "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    ],
  },
  {
    name: 'a Custom search entry of a Deployment, invalid after substitution',
    obj: annotated(workload('Deployment', {}), { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'svc.$(CLUSTER)' }),
    clusterDomain: 'Cluster.Local',
    want: [`spec.template.metadata.annotations[dns.kdns.io/search][0]: Invalid value: "svc.Cluster.Local": ${STRICT}`],
  },
  {
    name: 'the search annotation without Custom',
    obj: annotated(workload('Deployment', {}), { 'dns.kdns.io/search': 'a.example' }),
    want: ['spec.template.metadata.annotations[dns.kdns.io/search]: Forbidden: may only be set when the policy is Custom (dns.kdns.io/policy: Custom)'],
  },
  {
    name: 'an annotation that is not a string is reported alone (the API server could not decode it)',
    obj: annotated(workload('Deployment', { dnsPolicy: 'Nope' }), { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/options': 5 }),
    want: ['spec.template.metadata.annotations[dns.kdns.io/options]: Invalid value: 5: must be a string'],
  },
  {
    name: 'gate off, update of a Deployment whose Custom annotation needed relaxed: relaxed',
    obj: annotated(workload('Deployment', {}), { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '_grpc.$(NAMESPACE).svc.$(CLUSTER),x_y.example' }),
    old: annotated(workload('Deployment', {}), { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '_grpc.$(NAMESPACE).svc.$(CLUSTER)' }),
    want: [],
  },
  {
    name: 'gate off, create of a Deployment with an underscore in the Custom annotation: strict',
    obj: annotated(workload('Deployment', {}), { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'x_y.example' }),
    want: [`spec.template.metadata.annotations[dns.kdns.io/search][0]: Invalid value: "x_y.example": ${STRICT}`],
  },
  // --- a stock API server (--api stock): four policies, no dnsParams, annotations are only annotations
  { name: 'stock: the literal autopath is unsupported', obj: pod({ dnsPolicy: 'ClusterFirstWithAutopath' }), api: 'stock', want: [`spec.dnsPolicy: Unsupported value: "ClusterFirstWithAutopath": supported values: ${STOCK_POLICIES}`] },
  {
    name: 'stock: the literal Custom in a Deployment is unsupported (dnsParams dropped as unknown)',
    obj: workload('Deployment', custom({ search: ['$(HOST)', 'x'] })),
    api: 'stock',
    want: [`spec.template.spec.dnsPolicy: Unsupported value: "Custom": supported values: ${STOCK_POLICIES}`],
  },
  { name: 'stock: a dnsParams of the wrong type is dropped too', obj: pod({ dnsParams: 'x' }), api: 'stock', want: [] },
  { name: 'stock: kdns annotations are valid, whatever they say', obj: annotated(workload('Deployment', {}), { 'dns.kdns.io/policy': 'Autopath', 'dns.kdns.io/search': '$(HOST),x' }), api: 'stock', want: [] },
  { name: 'stock: the stock rules still apply', obj: workload('Deployment', { dnsPolicy: 'None' }), api: 'stock', want: ['spec.template.spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None'] },
  { name: 'stock: an annotation that is not a string is still a decoding error', obj: annotated(pod({}), { a: ['x'] }), api: 'stock', want: ['metadata.annotations[a]: Invalid value: x: must be a string'] },
  {
    name: 'a missing name',
    obj: { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: {} },
    want: ['metadata.name: Required value: name or generateName is required'],
  },
];

for (const c of cases) {
  test(`validate: ${c.name}`, () => {
    const errors = validatePodObject(c.obj, c.old, { relaxedDNSSearchGate: c.gate ?? false, clusterDomain: c.clusterDomain ?? 'cluster.local', ...(c.api !== undefined ? { api: c.api } : {}) });
    assert.ok(errors !== undefined, 'a pod-bearing kind');
    assert.deepEqual(errors.map(formatFieldError), c.want);
  });
}

test('validate: kinds without a pod spec are not handled here', () => {
  assert.equal(validatePodObject({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } }, undefined, { relaxedDNSSearchGate: false, clusterDomain: 'cluster.local' }), undefined);
});

const decodingCases: Array<{ name: string; obj: Obj; want: string | undefined }> = [
  { name: 'a Pod without dnsParams decodes', obj: pod({ dnsPolicy: 'ClusterFirstWithAutopath' }), want: undefined },
  { name: 'a Pod with dnsParams', obj: pod(custom({ search: ['a.example'] })), want: 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.dnsParams"' },
  {
    name: 'a Deployment with dnsParams: the template path',
    obj: workload('Deployment', { dnsParams: {} }),
    want: 'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.dnsParams"',
  },
  {
    name: 'a CronJob with dnsParams of the wrong type',
    obj: workload('CronJob', { dnsParams: 'x' }),
    want: 'CronJob in version "v1" cannot be handled as a CronJob: strict decoding error: unknown field "spec.jobTemplate.spec.template.spec.dnsParams"',
  },
];

for (const c of decodingCases) {
  test(`stock decoding: ${c.name}`, () => {
    const source = readPodSpec(c.obj);
    assert.ok(source !== undefined);
    assert.equal(stockDecodingError(source), c.want);
  });
}

const warningCases: Array<{ name: string; obj: Obj; want: string[] }> = [
  { name: 'the annotation form: no warning', obj: annotated(workload('Deployment', {}), { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }), want: [] },
  { name: 'a stock policy: no warning', obj: pod({ dnsPolicy: 'Default' }), want: [] },
  {
    name: 'the literal autopath on a bare Pod',
    obj: pod({ dnsPolicy: 'ClusterFirstWithAutopath' }),
    want: [
      'spec.dnsPolicy: "ClusterFirstWithAutopath": a stock API server refuses this value; only the kdns webhook accepts it (src/webhook/README.md). The form every API server keeps: metadata.annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath}',
    ],
  },
  {
    name: 'the literal autopath in a Deployment template',
    obj: workload('Deployment', { dnsPolicy: 'ClusterFirstWithAutopath' }),
    want: [
      'spec.template.spec.dnsPolicy: "ClusterFirstWithAutopath": the API server validates a pod template itself and refuses this value there, kdns webhook or not (the webhook rewrites Pods). Use spec.template.metadata.annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath}',
    ],
  },
  {
    name: 'the literal Custom with dnsParams on a bare Pod',
    obj: pod(custom({ searchPaths: ['$(NAMESPACE).svc.$(CLUSTER)', '$(HOST)'], options: ['ndots:2', 'edns0'] })),
    want: [
      'spec.dnsPolicy: "Custom": a stock API server refuses this value; only the kdns webhook accepts it (src/webhook/README.md). The form every API server keeps: metadata.annotations: {dns.kdns.io/policy: Custom, dns.kdns.io/search: "$(NAMESPACE).svc.$(CLUSTER),$(HOST)", dns.kdns.io/options: "ndots:2,edns0"}',
      'spec.dnsParams: every released API server drops this unknown field (and refuses the object under strict field validation, kubectl\'s default), so the kdns webhook never sees it. Use metadata.annotations: {dns.kdns.io/policy: Custom, dns.kdns.io/search: "$(NAMESPACE).svc.$(CLUSTER),$(HOST)", dns.kdns.io/options: "ndots:2,edns0"}',
    ],
  },
];

for (const c of warningCases) {
  test(`kdns form warnings: ${c.name}`, () => {
    const source = readPodSpec(c.obj);
    assert.ok(source !== undefined);
    assert.deepEqual(kdnsFormWarnings(source, { clusterDomain: 'cluster.local' }), c.want);
  });
}
