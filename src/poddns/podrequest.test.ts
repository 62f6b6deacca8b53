import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FieldPath, formatFieldError } from '../lib/cluster/field.js';
import type { PodSpec } from '../lib/cluster/types.js';
import { effectivePodSpec, parseAnnotationList, readPodDNSRequest } from './podrequest.js';
import type { PodDNSRequest } from './podrequest.js';

// The API server's strict search-name message, written out so a change in wording fails here.
const STRICT =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const ALLOWED = '"ClusterFirstWithAutopath", "Custom", "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"';
const NEEDS_SEARCH = 'Required value: must be set when the policy is Custom (the search list: a comma- or space-separated list, or a JSON array of strings; "" for none)';

const POD_PATHS = { metadata: FieldPath.root('metadata'), spec: FieldPath.root('spec') };
const DEPLOYMENT_PATHS = { metadata: FieldPath.root('spec', 'template', 'metadata'), spec: FieldPath.root('spec', 'template', 'spec') };

interface Case {
  name: string;
  annotations?: Record<string, string>;
  spec?: PodSpec;
  namespacePolicy?: string;
  namespace?: string;
  paths?: { metadata: FieldPath; spec: FieldPath };
  want: { policy: PodDNSRequest['policy']; source: PodDNSRequest['source']; custom?: PodDNSRequest['custom']; customSearchPath?: string; mutatedFrom?: string; errors: string[] };
}

const cases: Case[] = [
  // --- where the policy comes from
  { name: 'nothing asked', want: { policy: undefined, source: 'none', errors: [] } },
  { name: 'the annotation asks for autopath', annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }, want: { policy: 'ClusterFirstWithAutopath', source: 'annotation', errors: [] } },
  { name: 'the literal spec asks for autopath', spec: { dnsPolicy: 'ClusterFirstWithAutopath' }, want: { policy: 'ClusterFirstWithAutopath', source: 'spec', errors: [] } },
  { name: 'the namespace label asks for autopath', spec: { dnsPolicy: 'ClusterFirst' }, namespacePolicy: 'ClusterFirstWithAutopath', want: { policy: 'ClusterFirstWithAutopath', source: 'namespace', errors: [] } },
  {
    name: 'the annotation wins over the namespace label',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'a.example' },
    namespacePolicy: 'ClusterFirstWithAutopath',
    want: { policy: 'Custom', source: 'annotation', custom: { search: ['a.example'] }, customSearchPath: 'metadata.annotations[dns.kdns.io/search]', errors: [] },
  },
  { name: 'the literal spec wins over the namespace label', spec: { dnsPolicy: 'ClusterFirstWithAutopath' }, namespacePolicy: 'Custom', want: { policy: 'ClusterFirstWithAutopath', source: 'spec', errors: [] } },
  { name: 'a stock policy in the annotation opts out of the namespace label', annotations: { 'dns.kdns.io/policy': 'ClusterFirst' }, namespacePolicy: 'ClusterFirstWithAutopath', want: { policy: undefined, source: 'annotation', errors: [] } },
  { name: 'the annotation and the literal spec agreeing', annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }, spec: { dnsPolicy: 'ClusterFirstWithAutopath' }, want: { policy: 'ClusterFirstWithAutopath', source: 'annotation', errors: [] } },
  { name: 'an explicit dnsPolicy Default is not overridden by the namespace label', spec: { dnsPolicy: 'Default' }, namespacePolicy: 'ClusterFirstWithAutopath', want: { policy: undefined, source: 'none', errors: [] } },
  { name: 'a stock namespace label asks for nothing', namespacePolicy: 'ClusterFirst', want: { policy: undefined, source: 'none', errors: [] } },
  {
    name: 'a pod the webhook already rewrote',
    annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath', 'dns.kdns.io/mutated-from': 'ClusterFirstWithAutopath' },
    spec: { dnsPolicy: 'None', dnsConfig: { nameservers: ['169.254.20.10'] } },
    want: { policy: 'ClusterFirstWithAutopath', source: 'annotation', mutatedFrom: 'ClusterFirstWithAutopath', errors: [] },
  },
  // --- the policy's errors
  {
    name: 'an unknown policy in the annotation',
    annotations: { 'dns.kdns.io/policy': 'Autopath', 'dns.kdns.io/search': 'a.example' },
    want: { policy: undefined, source: 'annotation', errors: [`metadata.annotations[dns.kdns.io/policy]: Unsupported value: "Autopath": supported values: ${ALLOWED}`] },
  },
  {
    name: 'an unknown policy in the namespace label',
    namespacePolicy: 'autopath',
    want: { policy: undefined, source: 'namespace', errors: [`namespace.metadata.labels[dns.kdns.io/policy]: Unsupported value: "autopath": supported values: ${ALLOWED}`] },
  },
  {
    name: 'the annotation and the literal spec disagreeing',
    annotations: { 'dns.kdns.io/policy': 'ClusterFirst' },
    spec: { dnsPolicy: 'ClusterFirstWithAutopath' },
    want: { policy: undefined, source: 'annotation', errors: ['metadata.annotations[dns.kdns.io/policy]: Invalid value: "ClusterFirst": conflicts with dnsPolicy "ClusterFirstWithAutopath": ask for the policy in one place'] },
  },
  {
    name: 'a kdns annotation on a pod with an explicit stock policy',
    annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' },
    spec: { dnsPolicy: 'Default' },
    want: { policy: 'ClusterFirstWithAutopath', source: 'annotation', errors: ['metadata.annotations[dns.kdns.io/policy]: Invalid value: "ClusterFirstWithAutopath": conflicts with dnsPolicy "Default": ask for the policy in one place'] },
  },
  {
    name: 'search and options annotations without Custom',
    annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath', 'dns.kdns.io/search': 'a.example', 'dns.kdns.io/options': 'ndots:2' },
    want: {
      policy: 'ClusterFirstWithAutopath',
      source: 'annotation',
      errors: [
        'metadata.annotations[dns.kdns.io/search]: Forbidden: may only be set when the policy is Custom (dns.kdns.io/policy: Custom)',
        'metadata.annotations[dns.kdns.io/options]: Forbidden: may only be set when the policy is Custom (dns.kdns.io/policy: Custom)',
      ],
    },
  },
  {
    name: 'dnsParams without Custom',
    spec: { dnsParams: { custom: { search: ['a.example'] } } },
    want: { policy: undefined, source: 'none', errors: ['spec.dnsParams: Forbidden: may only be set when `dnsPolicy` is Custom'] },
  },
  // --- Custom's parameters
  {
    name: 'Custom from the annotations, both list forms',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '["$(NAMESPACE).svc.$(CLUSTER)", "corp.example", "$(HOST)"]', 'dns.kdns.io/options': 'ndots:2, edns0' },
    want: {
      policy: 'Custom',
      source: 'annotation',
      custom: { search: ['$(NAMESPACE).svc.$(CLUSTER)', 'corp.example', '$(HOST)'], options: ['ndots:2', 'edns0'] },
      customSearchPath: 'metadata.annotations[dns.kdns.io/search]',
      errors: [],
    },
  },
  {
    name: 'Custom from the literal spec and dnsParams',
    spec: { dnsPolicy: 'Custom', dnsParams: { custom: { searchPaths: ['a.example'] } } },
    want: { policy: 'Custom', source: 'spec', custom: { searchPaths: ['a.example'] }, customSearchPath: 'spec.dnsParams.custom.searchPaths', errors: [] },
  },
  {
    name: 'the literal Custom with the annotations (a bare Pod on a real API server)',
    annotations: { 'dns.kdns.io/search': 'a.example b.example' },
    spec: { dnsPolicy: 'Custom' },
    want: { policy: 'Custom', source: 'spec', custom: { search: ['a.example', 'b.example'] }, customSearchPath: 'metadata.annotations[dns.kdns.io/search]', errors: [] },
  },
  {
    name: 'an empty search annotation is an empty list',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '' },
    want: { policy: 'Custom', source: 'annotation', custom: { search: [] }, customSearchPath: 'metadata.annotations[dns.kdns.io/search]', errors: [] },
  },
  { name: 'Custom without search annotation nor dnsParams', annotations: { 'dns.kdns.io/policy': 'Custom' }, want: { policy: 'Custom', source: 'annotation', errors: [`metadata.annotations[dns.kdns.io/search]: ${NEEDS_SEARCH}`] } },
  {
    name: 'Custom with only the options annotation',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/options': 'ndots:2' },
    want: { policy: 'Custom', source: 'annotation', custom: { options: ['ndots:2'] }, customSearchPath: 'metadata.annotations[dns.kdns.io/search]', errors: [`metadata.annotations[dns.kdns.io/search]: ${NEEDS_SEARCH}`] },
  },
  {
    name: 'the literal Custom with an empty dnsParams',
    spec: { dnsPolicy: 'Custom', dnsParams: {} },
    want: { policy: 'Custom', source: 'spec', errors: ['spec.dnsParams.custom: Required value: must provide `dnsParams.custom` when `dnsPolicy` is Custom'] },
  },
  {
    name: 'annotations and dnsParams both set',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'a.example' },
    spec: { dnsParams: { custom: { search: ['b.example'] } } },
    want: {
      policy: 'Custom',
      source: 'annotation',
      custom: { search: ['a.example'] },
      customSearchPath: 'metadata.annotations[dns.kdns.io/search]',
      errors: ['spec.dnsParams: Forbidden: may not be set together with the dns.kdns.io/search and dns.kdns.io/options annotations (they replace it)'],
    },
  },
  {
    name: 'a search annotation that is not valid JSON',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '["a.example",' },
    want: {
      policy: 'Custom',
      source: 'annotation',
      custom: {},
      customSearchPath: 'metadata.annotations[dns.kdns.io/search]',
      errors: [
        `metadata.annotations[dns.kdns.io/search]: Invalid value: "[\\"a.example\\",": must be a comma- or space-separated list, or a JSON array of strings (${jsonError('["a.example",')})`,
      ],
    },
  },
  {
    name: 'an options annotation with a non-string item',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'a.example', 'dns.kdns.io/options': '["ndots:2", 5]' },
    want: {
      policy: 'Custom',
      source: 'annotation',
      custom: { search: ['a.example'] },
      customSearchPath: 'metadata.annotations[dns.kdns.io/search]',
      errors: ['metadata.annotations[dns.kdns.io/options][1]: Invalid value: 5: must be a string'],
    },
  },
  {
    name: 'a $ label that is not a substitution',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'abc$(NAMESPACE)1234.svc' },
    want: {
      policy: 'Custom',
      source: 'annotation',
      custom: { search: ['abc$(NAMESPACE)1234.svc'] },
      customSearchPath: 'metadata.annotations[dns.kdns.io/search]',
      errors: [
        `metadata.annotations[dns.kdns.io/search][0]: Invalid value: "abc$(NAMESPACE)1234.svc": a label containing '$' must be exactly $(NAMESPACE) or $(CLUSTER), and $(HOST) must be a whole entry (found "abc$(NAMESPACE)1234")`,
      ],
    },
  },
  {
    name: '$(HOST) not last',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '$(HOST),a.example' },
    want: {
      policy: 'Custom',
      source: 'annotation',
      custom: { search: ['$(HOST)', 'a.example'] },
      customSearchPath: 'metadata.annotations[dns.kdns.io/search]',
      errors: ['metadata.annotations[dns.kdns.io/search][0]: Invalid value: "$(HOST)": $(HOST) may only be the last entry'],
    },
  },
  {
    name: 'more than 5 static search paths',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'a.x b.x c.x d.x e.x f.x $(HOST)' },
    want: {
      policy: 'Custom',
      source: 'annotation',
      custom: { search: ['a.x', 'b.x', 'c.x', 'd.x', 'e.x', 'f.x', '$(HOST)'] },
      customSearchPath: 'metadata.annotations[dns.kdns.io/search]',
      errors: ['metadata.annotations[dns.kdns.io/search]: Too many: 6: must have at most 5 items besides $(HOST)'],
    },
  },
  {
    name: 'ndots above 15',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'a.example', 'dns.kdns.io/options': 'edns0,ndots:16' },
    want: {
      policy: 'Custom',
      source: 'annotation',
      custom: { search: ['a.example'], options: ['edns0', 'ndots:16'] },
      customSearchPath: 'metadata.annotations[dns.kdns.io/search]',
      errors: ['metadata.annotations[dns.kdns.io/options][1]: Invalid value: "ndots:16": ndots must be no more than 15'],
    },
  },
  {
    name: 'a search entry invalid after substitution, in a Deployment template',
    annotations: { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': '$(NAMESPACE).Corp' },
    namespace: 'team',
    paths: DEPLOYMENT_PATHS,
    want: {
      policy: 'Custom',
      source: 'annotation',
      custom: { search: ['$(NAMESPACE).Corp'] },
      customSearchPath: 'spec.template.metadata.annotations[dns.kdns.io/search]',
      errors: [`spec.template.metadata.annotations[dns.kdns.io/search][0]: Invalid value: "team.Corp": ${STRICT}`],
    },
  },
];

function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected invalid JSON');
}

for (const c of cases) {
  test(`readPodDNSRequest: ${c.name}`, () => {
    const request = readPodDNSRequest({ ...(c.annotations !== undefined ? { annotations: c.annotations } : {}) }, c.spec ?? {}, c.paths ?? POD_PATHS, {
      relaxedSearch: false,
      clusterDomain: 'cluster.local',
      ...(c.namespacePolicy !== undefined ? { namespacePolicy: c.namespacePolicy } : {}),
      ...(c.namespace !== undefined ? { namespace: c.namespace } : {}),
    });
    const got = {
      policy: request.policy,
      source: request.source,
      ...(request.custom !== undefined ? { custom: request.custom } : {}),
      ...(request.customSearchPath !== undefined ? { customSearchPath: request.customSearchPath.toString() } : {}),
      ...(request.mutatedFrom !== undefined ? { mutatedFrom: request.mutatedFrom } : {}),
      errors: request.errors.map(formatFieldError),
    };
    assert.deepEqual(got, c.want);
  });
}

const listCases: Array<{ value: string; want: string[] | undefined }> = [
  { value: 'a.example,b.example', want: ['a.example', 'b.example'] },
  { value: ' a.example  b.example\n', want: ['a.example', 'b.example'] },
  { value: 'a.example, ,b.example,', want: ['a.example', 'b.example'] },
  { value: '["a b", "c"]', want: ['a b', 'c'] },
  { value: '[1]', want: undefined },
  { value: '', want: [] },
];

for (const c of listCases) {
  test(`parseAnnotationList: ${JSON.stringify(c.value)}`, () => {
    assert.deepEqual(parseAnnotationList(c.value, FieldPath.root('x')).items, c.want);
  });
}

const effectiveCases: Array<{ name: string; request: PodDNSRequest; spec: PodSpec; want: PodSpec }> = [
  { name: 'nothing asked: unchanged', request: { policy: undefined, source: 'none', errors: [] }, spec: { dnsPolicy: 'ClusterFirst', hostNetwork: false }, want: { dnsPolicy: 'ClusterFirst', hostNetwork: false } },
  {
    name: 'autopath: the policy, dnsConfig kept',
    request: { policy: 'ClusterFirstWithAutopath', source: 'annotation', errors: [] },
    spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { options: [{ name: 'edns0' }] } },
    want: { dnsPolicy: 'ClusterFirstWithAutopath', dnsConfig: { options: [{ name: 'edns0' }] } },
  },
  {
    name: 'Custom: the params from the annotations replace dnsParams',
    request: { policy: 'Custom', source: 'annotation', custom: { search: ['a.example'], options: ['ndots:2'] }, errors: [] },
    spec: { dnsPolicy: 'ClusterFirst', dnsParams: { custom: { search: ['b.example'] } } },
    want: { dnsPolicy: 'Custom', dnsParams: { custom: { search: ['a.example'], options: ['ndots:2'] } } },
  },
  {
    name: 'a rewritten pod: unchanged',
    request: { policy: 'ClusterFirstWithAutopath', source: 'annotation', mutatedFrom: 'ClusterFirstWithAutopath', errors: [] },
    spec: { dnsPolicy: 'None', dnsConfig: { nameservers: ['169.254.20.10'] } },
    want: { dnsPolicy: 'None', dnsConfig: { nameservers: ['169.254.20.10'] } },
  },
];

for (const c of effectiveCases) {
  test(`effectivePodSpec: ${c.name}`, () => {
    assert.deepEqual(effectivePodSpec(c.request, c.spec), c.want);
  });
}
