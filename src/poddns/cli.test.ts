// The three pod DNS subcommands end to end (files, flags, exit codes, output), run in-process
// through commander with captured I/O.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { register as registerExplain } from '../cli/explain.js';
import { register as registerResolvconf } from '../cli/resolvconf.js';
import { runCli } from '../../test/util/cli.js';
import { register as registerValidate } from '../cli/validate.js';

const dir = mkdtempSync(join(tmpdir(), 'kdns-poddns-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const HOST = file('host.conf', 'nameserver 1.2.3.4\nsearch foo.com bar.com\noptions ndots:1\n');
const HOST_LONG = file('host-long.conf', 'nameserver 1.2.3.4\nsearch h1.example h2.example h3.example h4.example\n');
const HOST_BAD = file('host-bad.conf', 'nameserver 1.2.3.4\nnameserver\n');

const EXAMPLE = file(
  'custom.yaml',
  `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ns1}
spec:
  dnsPolicy: Custom
  dnsParams:
    custom:
      search: ["$(NAMESPACE).svc.$(CLUSTER)", my.dns.search.suffix, "$(HOST)"]
      options: ["ndots:2"]
  containers: [{name: c, image: nginx}]
`,
);

const deployment = (podSpec: string, name = 'web', kind = 'Deployment'): string => `apiVersion: apps/v1
kind: ${kind}
metadata: {name: ${name}, namespace: ns1}
spec:
  template:
    spec:
${podSpec
  .split('\n')
  .map((l) => `      ${l}`)
  .join('\n')}
      containers: [{name: c, image: nginx}]
`;

const SEARCH_PATHS = file('searchpaths.yaml', deployment('dnsPolicy: Custom\ndnsParams:\n  custom:\n    searchPaths: ["$(NAMESPACE).svc.$(CLUSTER)", "$HOST"]'));
const TRUNCATED = file('truncated.yaml', deployment('dnsPolicy: Custom\ndnsParams:\n  custom:\n    search: [a.example, b.example, c.example, "$(HOST)"]'));
const AUTOPATH = file('autopath.yaml', deployment('dnsPolicy: ClusterFirstWithAutopath'));
/** A Deployment whose pod template carries these annotations (YAML lines under `annotations:`). */
const annotatedDeployment = (annotations: string, name = 'web'): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ns1}
spec:
  template:
    metadata:
      annotations:
${annotations
  .split('\n')
  .map((l) => `        ${l}`)
  .join('\n')}
    spec:
      containers: [{name: c, image: nginx}]
`;
const ANNOTATED_AUTOPATH = file('annotated-autopath.yaml', annotatedDeployment('dns.kdns.io/policy: ClusterFirstWithAutopath'));
const ANNOTATED_CUSTOM = file(
  'annotated-custom.yaml',
  annotatedDeployment('dns.kdns.io/policy: Custom\ndns.kdns.io/search: "$(NAMESPACE).svc.$(CLUSTER), my.dns.search.suffix, $(HOST)"\ndns.kdns.io/options: ndots:2'),
);
const ANNOTATED_BAD = file('annotated-bad.yaml', annotatedDeployment('dns.kdns.io/policy: Custom\ndns.kdns.io/search: \'["$(HOST)", "a.example"]\'\ndns.kdns.io/options: ndots:16'));
const MUTATED = file(
  'mutated.yaml',
  `apiVersion: v1
kind: Pod
metadata:
  name: web-7d4f9-abcde
  namespace: ns1
  annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath, dns.kdns.io/mutated-from: ClusterFirstWithAutopath}
spec:
  dnsPolicy: None
  dnsConfig:
    nameservers: [169.254.20.10, 10.96.0.10]
    searches: [search.ns1.cluster.local.ap.k8s.io]
    options: [{name: ndots, value: "5"}]
  containers: [{name: c, image: nginx}]
`,
);
const POD_AUTOPATH = file('pod-autopath.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: ns1}\nspec:\n  dnsPolicy: ClusterFirstWithAutopath\n  containers: [{name: c, image: alpine}]\n');
const DEFAULT = file('default.yaml', deployment('dnsPolicy: Default'));
const PLAIN = file('plain.yaml', deployment(''));
const UNDERSCORE = file('underscore.yaml', deployment('dnsConfig:\n  searches: [a_b.example]'));
const TWO = file('two.yaml', `${deployment('', 'a')}---\n${deployment('', 'b')}`);
const SERVICE = file('service.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {clusterIP: 10.96.0.1}\n');
const BROKEN = file('broken.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n');
const CRONJOB_BAD = file(
  'cronjob.yaml',
  `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ns1}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          dnsPolicy: None
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
`,
);
const MIXED = file(
  'mixed.yaml',
  `${deployment('dnsConfig:\n  nameservers: [8.8.8.8]', 'good')}---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
apiVersion: operator.openshift.io/v1
kind: DNS
metadata: {name: default}
spec:
  servers:
  - name: inside
    zones: [cluster.local]
    forwardPlugin: {upstreams: [1.1.1.1]}
`,
);
const DNS_OK = file('dns.yaml', 'apiVersion: operator.openshift.io/v1\nkind: DNS\nmetadata: {name: default}\nspec: {}\n');
const OLD_UNDERSCORE = file('old.yaml', deployment('dnsConfig:\n  searches: [x_y.example]'));
const OLD_STRICT = file('old-strict.yaml', deployment('dnsConfig:\n  searches: [x.example]'));
const POD_PLAIN = file('pod.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: ns1}\nspec:\n  containers: [{name: c, image: alpine}]\n');
const CLUSTER_DIR = join(dir, 'cluster');
mkdirSync(CLUSTER_DIR);
writeFileSync(join(CLUSTER_DIR, 'svc.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: kubernetes, namespace: default}\nspec: {clusterIP: 10.96.0.1}\n');

interface Run {
  code: number;
  out: string;
  err: string;
}

function kdns(args: string[], stdin = ''): Promise<Run> {
  return runCli([registerResolvconf, registerValidate, registerExplain], args, stdin);
}

interface Case {
  name: string;
  args: string[];
  stdin?: string;
  code: number;
  /** Exact stdout, or strings it must contain. */
  out?: string | string[];
  /** Strings stderr must contain; undefined means stderr must be empty. */
  err?: string[];
}

const CDNS = ['--cluster-dns', '10.96.0.10'];

const cases: Case[] = [
  // --- kdns resolvconf
  {
    name: 'resolvconf: the issue example',
    args: ['resolvconf', '-f', EXAMPLE, '--host-resolv-conf', HOST, ...CDNS],
    code: 0,
    out: 'search ns1.svc.cluster.local my.dns.search.suffix foo.com bar.com\nnameserver 10.96.0.10\noptions ndots:2\n',
  },
  {
    name: 'resolvconf: the issue example as JSON',
    args: ['resolvconf', '-f', EXAMPLE, '--host-resolv-conf', HOST, ...CDNS, '-o', 'json'],
    code: 0,
    out: `${JSON.stringify({ nameservers: ['10.96.0.10'], searches: ['ns1.svc.cluster.local', 'my.dns.search.suffix', 'foo.com', 'bar.com'], options: ['ndots:2'], warnings: [] }, null, 2)}\n`,
  },
  {
    name: 'resolvconf: searchPaths and $HOST in a Deployment',
    args: ['resolvconf', '-f', SEARCH_PATHS, '--host-resolv-conf', HOST, ...CDNS],
    code: 0,
    out: 'search ns1.svc.cluster.local foo.com bar.com\nnameserver 10.96.0.10\n',
  },
  {
    name: 'resolvconf: more than 5 Custom paths are cut, the warning goes to stderr',
    args: ['resolvconf', '-f', TRUNCATED, '--host-resolv-conf', HOST_LONG, ...CDNS],
    code: 0,
    out: 'search a.example b.example c.example h1.example h2.example\nnameserver 10.96.0.10\n',
    err: ['warning: DNSConfigForming: Custom search paths exceeded 5', '(omitted: h3.example h4.example)'],
  },
  {
    name: 'resolvconf: in JSON the warnings are in the object, not on stderr',
    args: ['resolvconf', '-f', TRUNCATED, '--host-resolv-conf', HOST_LONG, ...CDNS, '-o', 'json'],
    code: 0,
    out: ['"warnings": [\n    "DNSConfigForming: Custom search paths exceeded 5'],
  },
  {
    name: 'resolvconf: a Deployment read from stdin, ClusterFirst by default',
    args: ['resolvconf', '-f', '-', '--host-resolv-conf', HOST, ...CDNS, '--cluster-domain', 'k8s.example'],
    stdin: deployment(''),
    code: 0,
    out: 'search ns1.svc.k8s.example svc.k8s.example k8s.example foo.com bar.com\nnameserver 10.96.0.10\noptions ndots:5\n',
  },
  {
    name: 'resolvconf: Default without a host file on an IPv6 node',
    args: ['resolvconf', '-f', DEFAULT, '--host-resolv-conf', '', '--node-ip', 'fd00::5'],
    code: 0,
    out: 'search .\nnameserver ::1\n',
  },
  {
    name: 'resolvconf: Autopath with the node-local cache',
    args: ['resolvconf', '-f', AUTOPATH, '--host-resolv-conf', HOST, ...CDNS, '--nodecache-ip', '169.254.20.10'],
    code: 0,
    out: 'search search.ns1.cluster.local.ap.k8s.io\nnameserver 169.254.20.10\nnameserver 10.96.0.10\noptions ndots:5\n',
  },
  {
    name: 'resolvconf: the annotation form gives what the literal form gives (autopath)',
    args: ['resolvconf', '-f', ANNOTATED_AUTOPATH, '--host-resolv-conf', HOST, ...CDNS, '--nodecache-ip', '169.254.20.10'],
    code: 0,
    out: 'search search.ns1.cluster.local.ap.k8s.io\nnameserver 169.254.20.10\nnameserver 10.96.0.10\noptions ndots:5\n',
  },
  {
    name: 'resolvconf: the annotation form gives what the literal form gives (Custom: the issue example)',
    args: ['resolvconf', '-f', ANNOTATED_CUSTOM, '--host-resolv-conf', HOST, ...CDNS],
    code: 0,
    out: 'search ns1.svc.cluster.local my.dns.search.suffix foo.com bar.com\nnameserver 10.96.0.10\noptions ndots:2\n',
  },
  {
    name: 'resolvconf: a pod the webhook rewrote keeps its None + dnsConfig',
    args: ['resolvconf', '-f', MUTATED, '--host-resolv-conf', HOST, ...CDNS, '--nodecache-ip', '169.254.20.99'],
    code: 0,
    out: 'search search.ns1.cluster.local.ap.k8s.io\nnameserver 169.254.20.10\nnameserver 10.96.0.10\noptions ndots:5\n',
  },
  {
    name: 'resolvconf: bad annotations get no resolv.conf, at the template\'s paths',
    args: ['resolvconf', '-f', ANNOTATED_BAD, '--host-resolv-conf', HOST, ...CDNS],
    code: 1,
    out: '',
    err: [
      'Deployment/web: spec.template.metadata.annotations[dns.kdns.io/search][0]: Invalid value: "$(HOST)": $(HOST) may only be the last entry\n',
      'Deployment/web: spec.template.metadata.annotations[dns.kdns.io/options][0]: Invalid value: "ndots:16": ndots must be no more than 15\n',
    ],
  },
  {
    name: 'resolvconf: without --cluster-dns ClusterFirst falls back to the host file, with a warning',
    args: ['resolvconf', '-f', PLAIN, '--host-resolv-conf', HOST],
    code: 0,
    out: 'search foo.com bar.com\nnameserver 1.2.3.4\noptions ndots:1\n',
    err: ['warning: MissingClusterDNS'],
  },
  {
    name: 'resolvconf: an invalid pod gets no resolv.conf (exit 1, API-server line)',
    args: ['resolvconf', '-f', UNDERSCORE, '--host-resolv-conf', HOST, ...CDNS],
    code: 1,
    out: '',
    err: ['Deployment/web: spec.template.spec.dnsConfig.searches[0]: Invalid value: "a_b.example": a lowercase RFC 1123 subdomain'],
  },
  {
    name: 'resolvconf: the relaxed gate lets it through',
    args: ['resolvconf', '-f', UNDERSCORE, '--host-resolv-conf', HOST, ...CDNS, '--feature-gates', 'RelaxedDNSSearchValidation=true'],
    code: 0,
    out: 'search ns1.svc.cluster.local svc.cluster.local cluster.local foo.com bar.com a_b.example\nnameserver 10.96.0.10\noptions ndots:5\n',
  },
  { name: 'resolvconf: an unknown feature gate is a usage error', args: ['resolvconf', '-f', PLAIN, '--feature-gates', 'NoSuchGate=true'], code: 2, out: '', err: ['unrecognized feature gate: NoSuchGate'] },
  { name: 'resolvconf: a gate value that is not a bool is a usage error', args: ['resolvconf', '-f', PLAIN, '--feature-gates', 'RelaxedDNSSearchValidation=yes'], code: 2, out: '', err: ['invalid value of RelaxedDNSSearchValidation=yes'] },
  { name: 'resolvconf: a bad --cluster-dns is a usage error', args: ['resolvconf', '-f', PLAIN, '--cluster-dns', '10.96.0'], code: 2, out: '', err: ['--cluster-dns: "10.96.0" is not an IP address'] },
  { name: 'resolvconf: more than two --node-ip is a usage error', args: ['resolvconf', '-f', PLAIN, '--node-ip', '1.1.1.1,2.2.2.2,3.3.3.3'], code: 2, out: '', err: ['--node-ip: at most 2 addresses'] },
  { name: 'resolvconf: -f is required', args: ['resolvconf', ...CDNS], code: 2, out: '', err: ["required option '-f, --filename <FILE>' not specified"] },
  { name: 'resolvconf: an unknown output format is a usage error', args: ['resolvconf', '-f', PLAIN, '-o', 'yaml'], code: 2, out: '', err: ['Allowed choices are text, json'] },
  { name: 'resolvconf: a missing host file is invalid input', args: ['resolvconf', '-f', PLAIN, '--host-resolv-conf', join(dir, 'nope.conf'), ...CDNS], code: 1, out: '', err: ['cannot read', 'ENOENT'] },
  { name: 'resolvconf: a bare nameserver line in the host file', args: ['resolvconf', '-f', PLAIN, '--host-resolv-conf', HOST_BAD, ...CDNS], code: 1, out: '', err: [`${HOST_BAD}:2: nameserver line has no address`] },
  { name: 'resolvconf: a file without a pod spec', args: ['resolvconf', '-f', SERVICE, ...CDNS], code: 1, out: '', err: ['no Pod or object with a pod template (found: Service)'] },
  { name: 'resolvconf: a file with two workloads', args: ['resolvconf', '-f', TWO, ...CDNS], code: 1, out: '', err: ['holds 2 objects with pod specs (Deployment/a, Deployment/b); give one'] },
  { name: 'resolvconf: broken YAML names file and line', args: ['resolvconf', '-f', BROKEN, ...CDNS], code: 1, out: '', err: [`${BROKEN}:4: YAML: Flow sequence`] },
  // --- kdns validate
  { name: 'validate: a valid Deployment prints nothing', args: ['validate', PLAIN], code: 0, out: '' },
  {
    name: 'validate: a CronJob error carries its full path',
    args: ['validate', CRONJOB_BAD],
    code: 1,
    out: 'CronJob/nightly: spec.jobTemplate.spec.template.spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None\n',
  },
  {
    name: 'validate: several documents, a kind without rules, and a DNS resource',
    args: ['validate', MIXED],
    code: 1,
    out: 'ConfigMap/settings: kind not supported by kdns validate\nDNS/default: spec.servers[0].zones[0]: Invalid value: "cluster.local": must not be the cluster domain "cluster.local" or under it: the cluster answers those names itself\n',
  },
  { name: 'validate: a valid DNS resource', args: ['validate', DNS_OK], code: 0, out: '' },
  { name: 'validate: several files', args: ['validate', PLAIN, UNDERSCORE], code: 1, out: ['Deployment/web: spec.template.spec.dnsConfig.searches[0]: Invalid value: "a_b.example"'] },
  { name: 'validate: an update of an object that used an underscore is relaxed (--old)', args: ['validate', '--old', OLD_UNDERSCORE, UNDERSCORE], code: 0, out: '' },
  { name: 'validate: an update of a strict object stays strict', args: ['validate', '--old', OLD_STRICT, UNDERSCORE], code: 1, out: ['searches[0]: Invalid value: "a_b.example"'] },
  { name: 'validate: the gate on', args: ['validate', '--feature-gates', 'RelaxedDNSSearchValidation=true', UNDERSCORE], code: 0, out: '' },
  { name: 'validate: stdin', args: ['validate', '-'], stdin: deployment('dnsPolicy: Nope'), code: 1, out: ['Deployment/web: spec.template.spec.dnsPolicy: Unsupported value: "Nope"'] },
  {
    name: 'validate: JSON output',
    args: ['validate', CRONJOB_BAD, '-o', 'json'],
    code: 1,
    out: ['"valid": false', '"kind": "CronJob"', '"field": "spec.jobTemplate.spec.template.spec.dnsConfig"', '"reason": "Required value"'],
  },
  // --api kdns (the default): the annotation form is valid; the literal form is valid with a warning
  { name: 'validate: the annotation form is valid and quiet', args: ['validate', ANNOTATED_AUTOPATH, ANNOTATED_CUSTOM], code: 0, out: '' },
  {
    name: 'validate: bad annotations, one line each',
    args: ['validate', ANNOTATED_BAD],
    code: 1,
    out:
      'Deployment/web: spec.template.metadata.annotations[dns.kdns.io/search][0]: Invalid value: "$(HOST)": $(HOST) may only be the last entry\n' +
      'Deployment/web: spec.template.metadata.annotations[dns.kdns.io/options][0]: Invalid value: "ndots:16": ndots must be no more than 15\n',
  },
  {
    name: 'validate: the literal autopath on a bare Pod: valid, a warning with the annotation form',
    args: ['validate', POD_AUTOPATH],
    code: 0,
    out: '',
    err: [
      'warning: Pod/client: spec.dnsPolicy: "ClusterFirstWithAutopath": a stock API server refuses this value; only the kdns webhook accepts it (src/webhook/README.md). The form every API server keeps: metadata.annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath}\n',
    ],
  },
  {
    name: 'validate: the literal autopath in a Deployment: a warning (the template itself is refused)',
    args: ['validate', AUTOPATH],
    code: 0,
    out: '',
    err: [
      'warning: Deployment/web: spec.template.spec.dnsPolicy: "ClusterFirstWithAutopath": the API server validates a pod template itself and refuses this value there, kdns webhook or not (the webhook rewrites Pods). Use spec.template.metadata.annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath}\n',
    ],
  },
  {
    name: 'validate: the literal Custom with dnsParams: two warnings',
    args: ['validate', EXAMPLE],
    code: 0,
    out: '',
    err: [
      'warning: Pod/web: spec.dnsPolicy: "Custom": a stock API server refuses this value; only the kdns webhook accepts it (src/webhook/README.md). The form every API server keeps: metadata.annotations: {dns.kdns.io/policy: Custom, dns.kdns.io/search: "$(NAMESPACE).svc.$(CLUSTER),my.dns.search.suffix,$(HOST)", dns.kdns.io/options: "ndots:2"}\n',
      "warning: Pod/web: spec.dnsParams: every released API server drops this unknown field (and refuses the object under strict field validation, kubectl's default), so the kdns webhook never sees it. Use metadata.annotations: {dns.kdns.io/policy: Custom, dns.kdns.io/search: \"$(NAMESPACE).svc.$(CLUSTER),my.dns.search.suffix,$(HOST)\", dns.kdns.io/options: \"ndots:2\"}\n",
    ],
  },
  // --api stock: what a released kube-apiserver says
  {
    name: 'validate --api stock: the literal autopath is an unsupported value',
    args: ['validate', '--api', 'stock', AUTOPATH],
    code: 1,
    out: 'Deployment/web: spec.template.spec.dnsPolicy: Unsupported value: "ClusterFirstWithAutopath": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"\n',
  },
  {
    name: 'validate --api stock: dnsParams is refused by strict decoding, alone',
    args: ['validate', '--api', 'stock', SEARCH_PATHS],
    code: 1,
    out: 'Deployment/web: Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.dnsParams"\n',
  },
  { name: 'validate --api stock: annotations are only annotations', args: ['validate', '--api', 'stock', ANNOTATED_BAD, ANNOTATED_AUTOPATH], code: 0, out: '' },
  {
    name: 'validate --api stock -o json',
    args: ['validate', '--api', 'stock', EXAMPLE, POD_AUTOPATH, '-o', 'json'],
    code: 1,
    out: `${JSON.stringify(
      {
        valid: false,
        api: 'stock',
        objects: [
          {
            file: EXAMPLE,
            line: 1,
            kind: 'Pod',
            name: 'web',
            namespace: 'ns1',
            errors: [
              {
                field: 'spec.dnsParams',
                reason: 'Unknown field',
                detail: 'strict decoding error',
                message: 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.dnsParams"',
              },
            ],
            warnings: [],
            valid: false,
          },
          {
            file: POD_AUTOPATH,
            line: 1,
            kind: 'Pod',
            name: 'client',
            namespace: 'ns1',
            errors: [
              {
                field: 'spec.dnsPolicy',
                reason: 'Unsupported value',
                value: 'ClusterFirstWithAutopath',
                detail: 'supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
                message: 'spec.dnsPolicy: Unsupported value: "ClusterFirstWithAutopath": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
              },
            ],
            warnings: [],
            valid: false,
          },
        ],
      },
      null,
      2,
    )}\n`,
  },
  {
    name: 'validate -o json (--api kdns): the warnings are in the object, not on stderr',
    args: ['validate', POD_AUTOPATH, '-o', 'json'],
    code: 0,
    out: [
      '"api": "kdns"',
      '"warnings": [\n        "spec.dnsPolicy: \\"ClusterFirstWithAutopath\\": a stock API server refuses this value; only the kdns webhook accepts it (src/webhook/README.md). The form every API server keeps: metadata.annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath}"\n      ]',
    ],
  },
  { name: 'validate: an unknown --api', args: ['validate', '--api', 'openshift', PLAIN], code: 2, out: '', err: ['Allowed choices are kdns, stock'] },
  { name: 'validate: a file is required', args: ['validate'], code: 2, out: '', err: ["missing required argument 'FILE'"] },
  { name: 'validate: an unknown gate', args: ['validate', '--feature-gates', 'X=true', PLAIN], code: 2, out: '', err: ['unrecognized feature gate: X'] },
  { name: 'validate: an unreadable file', args: ['validate', join(dir, 'missing.yaml')], code: 1, out: '', err: ['cannot read', 'ENOENT'] },
  // --- kdns explain
  {
    name: 'explain: a service name from a pod, both libcs, against a cluster directory',
    args: ['explain', '-f', POD_PLAIN, '--host-resolv-conf', HOST, ...CDNS, '--cluster', CLUSTER_DIR, 'kubernetes.default'],
    code: 0,
    out: [
      'Pod/client in namespace ns1, looking up "kubernetes.default"',
      'search ns1.svc.cluster.local svc.cluster.local cluster.local foo.com bar.com',
      '3  kubernetes.default.svc.cluster.local      A     10.96.0.10  answer',
      '=> answered by kubernetes.default.svc.cluster.local; 4 queries',
    ],
  },
  {
    name: 'explain: an external name without --cluster, musl only',
    args: ['explain', '-f', POD_PLAIN, '--host-resolv-conf', HOST, ...CDNS, '--libc', 'musl', '--answer', 'api.example.com', 'api.example.com'],
    code: 0,
    out: ['musl 1.2.3 (model): api.example.com has 2 dot(s) < ndots 5', '=> answered by api.example.com; 12 queries'],
  },
  {
    name: 'explain: --compare puts the policies side by side',
    args: ['explain', '-f', EXAMPLE, '--host-resolv-conf', HOST, ...CDNS, '--nodecache-ip', '169.254.20.10', '--compare', '--answer', 'api.example.com', 'api.example.com'],
    code: 0,
    out: ['ClusterFirst', 'Custom', 'ClusterFirstWithAutopath', 'glibc queries  12', 'dnsPolicy ClusterFirstWithAutopath: resolv.conf'],
  },
  {
    name: 'explain: --compare shows the annotations that ask for each kdns policy, under the template\'s metadata',
    args: ['explain', '-f', ANNOTATED_CUSTOM, '--host-resolv-conf', HOST, ...CDNS, '--nodecache-ip', '169.254.20.10', '--compare', '--answer', 'api.example.com', 'api.example.com'],
    code: 0,
    out: [
      'Deployment/web in namespace ns1, looking up "api.example.com"\n(Custom from the annotation spec.template.metadata.annotations[dns.kdns.io/policy])\n',
      '\n\nTo ask for a kdns policy (read by the kdns admission webhook; a stock API server refuses a kdns policy in spec.dnsPolicy):\n' +
        '  Custom                    spec.template.metadata.annotations: {dns.kdns.io/policy: Custom, dns.kdns.io/search: "$(NAMESPACE).svc.$(CLUSTER),my.dns.search.suffix,$(HOST)", dns.kdns.io/options: "ndots:2"}\n' +
        '  ClusterFirstWithAutopath  spec.template.metadata.annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath}\n\n',
      'glibc queries  12               2',
    ],
  },
  {
    name: 'explain: --compare as JSON: how to ask for each kdns policy',
    args: ['explain', '-f', POD_PLAIN, '--host-resolv-conf', HOST, ...CDNS, '--compare', '-o', 'json', 'x'],
    code: 0,
    out: ['"policy": "ClusterFirstWithAutopath",\n      "askWith": {\n        "metadataPath": "metadata",\n        "annotations": {\n          "dns.kdns.io/policy": "ClusterFirstWithAutopath"\n        }\n      },'],
  },
  {
    name: 'explain: the annotation form is explained like the literal form',
    args: ['explain', '-f', ANNOTATED_AUTOPATH, '--host-resolv-conf', HOST, ...CDNS, '--nodecache-ip', '169.254.20.10', '--libc', 'glibc', 'kubernetes.default'],
    code: 0,
    out: ['(ClusterFirstWithAutopath from the annotation spec.template.metadata.annotations[dns.kdns.io/policy])', 'dnsPolicy ClusterFirstWithAutopath: resolv.conf\n  search search.ns1.cluster.local.ap.k8s.io'],
  },
  {
    name: 'explain: JSON counts',
    args: ['explain', '-f', POD_PLAIN, '--host-resolv-conf', HOST, ...CDNS, '-o', 'json', 'nothing'],
    code: 0,
    out: ['"count": 12', '"result": "nxdomain"'],
  },
  { name: 'explain: an unknown --libc is a usage error', args: ['explain', '-f', POD_PLAIN, '--libc', 'uclibc', 'x'], code: 2, out: '', err: ['Allowed choices are glibc, musl'] },
  { name: 'explain: NAME is required', args: ['explain', '-f', POD_PLAIN], code: 2, out: '', err: ["missing required argument 'NAME'"] },
  { name: 'explain: a missing cluster directory', args: ['explain', '-f', POD_PLAIN, ...CDNS, '--host-resolv-conf', HOST, '--cluster', join(dir, 'none'), 'x'], code: 1, out: '', err: ['--cluster: cannot read'] },
];

for (const c of cases) {
  test(`cli: ${c.name}`, async () => {
    const r = await kdns(c.args, c.stdin);
    assert.equal(r.code, c.code, `exit code; stderr: ${r.err}`);
    if (typeof c.out === 'string') assert.equal(r.out, c.out);
    else for (const s of c.out ?? []) assert.ok(r.out.includes(s), `stdout lacks ${JSON.stringify(s)}:\n${r.out}`);
    if (c.err === undefined) assert.equal(r.err, '');
    else for (const s of c.err) assert.ok(r.err.includes(s), `stderr lacks ${JSON.stringify(s)}:\n${r.err}`);
  });
}
