import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { checkCorefile } from '../../server/check.js';
import { createLogger } from '../../server/log.js';
import { assertCorefileError, directiveIn } from '../../../test/util/corefile.js';
import { parseWorkloads } from './setup.js';

describe('workloads: Corefile', () => {
  const good: Array<{ name: string; body: string; want: { address: string; host: string | undefined; port: number; maxSeries: number; hostSearch: string[] } }> = [
    { name: 'defaults: loopback 9155, 50 series', body: 'workloads', want: { address: 'localhost:9155', host: '127.0.0.1', port: 9155, maxSeries: 50, hostSearch: [] } },
    { name: 'an address', body: 'workloads :9200', want: { address: ':9200', host: undefined, port: 9200, maxSeries: 50, hostSearch: [] } },
    {
      name: 'max_workloads and host search domains',
      body: 'workloads {\n max_workloads 5\n search Corp.Example.com lab.test.\n}',
      want: { address: 'localhost:9155', host: '127.0.0.1', port: 9155, maxSeries: 5, hostSearch: ['corp.example.com.', 'lab.test.'] },
    },
  ];
  for (const c of good) {
    test(c.name, () => {
      const cfg = parseWorkloads(directiveIn(c.body));
      assert.deepEqual({ address: cfg.address.text, host: cfg.address.host, port: cfg.address.port, maxSeries: cfg.maxSeries, hostSearch: cfg.hostSearch }, c.want);
    });
  }

  const bad: Array<{ name: string; body: string; message: string }> = [
    { name: 'two addresses', body: 'workloads :1 :2', message: 'Corefile:2: workloads takes at most one address, got 2 arguments' },
    { name: 'address without port', body: 'workloads localhost', message: 'Corefile:2: workloads: address localhost: missing port in address' },
    { name: 'max_workloads not a number', body: 'workloads {\n max_workloads lots\n}', message: 'Corefile:3: max_workloads: "lots" is not a whole number from 0 to 10000' },
    { name: 'max_workloads too large', body: 'workloads {\n max_workloads 20000\n}', message: 'Corefile:3: max_workloads: "20000" is not a whole number from 0 to 10000' },
    { name: 'unknown option', body: 'workloads {\n max_workload 5\n}', message: 'Corefile:3: unknown property "max_workload" in workloads block' },
  ];
  for (const c of bad) test(c.name, () => assertCorefileError(() => parseWorkloads(directiveIn(c.body)), c.message));
});

describe('workloads: a source of pods of its own (a block without kubernetes)', () => {
  const API = { kind: 'api', resyncMs: 0 };
  const good: Array<{ name: string; body: string; want: { source: unknown; nodeName: string | undefined } }> = [
    { name: 'no source: the kubernetes plugin\'s pods, if any', body: 'workloads', want: { source: undefined, nodeName: undefined } },
    { name: 'incluster: the service account', body: 'workloads {\n incluster\n}', want: { source: API, nodeName: undefined } },
    { name: 'incluster on one node', body: 'workloads :9155 {\n incluster\n node node-a\n}', want: { source: API, nodeName: 'node-a' } },
    { name: 'endpoint', body: 'workloads {\n endpoint http://127.0.0.1:8001\n}', want: { source: { ...API, endpoint: 'http://127.0.0.1:8001' }, nodeName: undefined } },
    {
      name: 'endpoint with tls, paths from the Corefile\'s folder',
      body: 'workloads {\n endpoint https://10.0.0.1:6443\n tls client.crt client.key /pki/ca.crt\n}',
      want: { source: { ...API, endpoint: 'https://10.0.0.1:6443', tls: { cert: '/etc/kdns/client.crt', key: '/etc/kdns/client.key', ca: '/pki/ca.crt' } }, nodeName: undefined },
    },
    { name: 'kubeconfig', body: 'workloads {\n kubeconfig kube/config\n}', want: { source: { ...API, kubeconfig: { path: '/etc/kdns/kube/config' } }, nodeName: undefined } },
    { name: 'kubeconfig with a context', body: 'workloads {\n kubeconfig /root/.kube/config kind-kind\n node kind-worker\n}', want: { source: { ...API, kubeconfig: { path: '/root/.kube/config', context: 'kind-kind' } }, nodeName: 'kind-worker' } },
    { name: 'manifests', body: 'workloads {\n manifests cluster\n node node-a.example\n}', want: { source: { kind: 'directory', dir: '/etc/kdns/cluster' }, nodeName: 'node-a.example' } },
  ];
  for (const c of good) {
    test(c.name, () => {
      const cfg = parseWorkloads(directiveIn(c.body), '/etc/kdns/Corefile');
      assert.deepEqual({ source: cfg.source, nodeName: cfg.nodeName }, c.want);
    });
  }

  const bad: Array<{ name: string; body: string; message: string }> = [
    { name: 'incluster takes no argument', body: 'workloads {\n incluster yes\n}', message: 'Corefile:3: wrong argument count for "incluster": expected no arguments, got 1' },
    { name: 'endpoint not a URL', body: 'workloads {\n endpoint 127.0.0.1:8001\n}', message: 'Corefile:3: invalid argument "127.0.0.1:8001" for "endpoint": expected an http:// or https:// URL' },
    { name: 'tls short of an argument', body: 'workloads {\n endpoint https://h\n tls a b\n}', message: 'Corefile:4: wrong argument count for "tls": expected 3, got 2' },
    { name: 'tls without endpoint', body: 'workloads {\n incluster\n tls a b c\n}', message: 'Corefile:4: tls goes with endpoint (kubeconfig and incluster carry their own credentials)' },
    { name: 'kubeconfig with three arguments', body: 'workloads {\n kubeconfig a b c\n}', message: 'Corefile:3: wrong argument count for "kubeconfig": expected at most 2, got 3' },
    { name: 'manifests without a folder', body: 'workloads {\n manifests\n}', message: 'Corefile:3: wrong argument count for "manifests": expected 1, got 0' },
    { name: 'two sources: manifests and endpoint', body: 'workloads {\n manifests /c\n endpoint http://h\n}', message: 'Corefile:4: endpoint cannot be combined with manifests (one source per block)' },
    { name: 'two sources: incluster and kubeconfig', body: 'workloads {\n incluster\n kubeconfig /k\n}', message: 'Corefile:4: kubeconfig cannot be combined with incluster (one source per block)' },
    { name: 'a source twice', body: 'workloads {\n incluster\n incluster\n}', message: 'Corefile:4: duplicate property "incluster" in workloads block' },
    { name: 'node twice', body: 'workloads {\n incluster\n node a\n node b\n}', message: 'Corefile:5: duplicate property "node" in workloads block' },
    { name: 'node without a source', body: 'workloads {\n node node-a\n}', message: 'Corefile:3: node needs a source of pods: incluster, endpoint, kubeconfig or manifests' },
    { name: 'node without a name', body: 'workloads {\n incluster\n node\n}', message: 'Corefile:4: wrong argument count for "node": expected 1, got 0' },
    { name: 'node not a node name', body: 'workloads {\n incluster\n node Node_A\n}', message: 'Corefile:4: node: "Node_A" is not a node name (a lowercase RFC 1123 subdomain)' },
    { name: 'node with a comma (it would widen the field selector)', body: 'workloads {\n incluster\n node a,spec.nodeName!=b\n}', message: 'Corefile:4: node: "a,spec.nodeName!=b" is not a node name (a lowercase RFC 1123 subdomain)' },
  ];
  for (const c of bad) test(c.name, () => assertCorefileError(() => parseWorkloads(directiveIn(c.body), '/etc/kdns/Corefile'), c.message));

  const env: Array<{ name: string; env: Record<string, string>; want: string | RegExp }> = [
    { name: 'node {$NODE_NAME} takes the variable (the DaemonSet sets it from spec.nodeName)', env: { NODE_NAME: 'ip-10-0-1-7.ec2.internal' }, want: 'ip-10-0-1-7.ec2.internal' },
    { name: 'node {$NODE_NAME} unset is an error, not every node\'s pods', env: {}, want: /^Corefile:4: node: the name is empty \(an unset environment variable\? In a DaemonSet, set NODE_NAME from the field spec\.nodeName\)$/ },
  ];
  for (const c of env) {
    test(c.name, () => {
      const d = parseCorefile('.:53 {\n  workloads {\n    incluster\n    node {$NODE_NAME}\n  }\n}\n', { file: 'Corefile', baseDir: tmpdir(), env: c.env })[0]?.directives[0] as Directive;
      if (typeof c.want === 'string') assert.equal(parseWorkloads(d).nodeName, c.want);
      else assert.throws(() => parseWorkloads(d), (e: unknown) => e instanceof CorefileError && (c.want as RegExp).test(e.message));
    });
  }
});

describe('workloads: the source and the block (kdns serve --check)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-workloads-setup-'));
  const cases: Array<{ name: string; corefile: string; error?: string }> = [
    { name: 'a block without kubernetes: a source of its own', corefile: '.:53 {\n    workloads {\n        incluster\n        node node-a\n    }\n    forward . 127.0.0.1\n}\n' },
    { name: 'a block with kubernetes and no source: its pods', corefile: `.:53 {\n    workloads\n    kubernetes cluster.local {\n        manifests ${dir}\n        pods verified\n    }\n}\n` },
    {
      name: 'a block with kubernetes and a source: an error at the source line',
      corefile: `.:53 {\n    workloads {\n        max_workloads 10\n        endpoint http://127.0.0.1:8001\n    }\n    kubernetes cluster.local {\n        manifests ${dir}\n        pods verified\n    }\n}\n`,
      error: 'Corefile:4: workloads: endpoint is for a block without kubernetes; this block\'s kubernetes plugin already knows its pods (use "pods verified" there)',
    },
    {
      name: 'kubernetes after workloads in the file is the same block',
      corefile: `.:53 {\n    kubernetes cluster.local {\n        manifests ${dir}\n        pods verified\n    }\n    workloads {\n        manifests ${dir}\n    }\n}\n`,
      error: 'Corefile:7: workloads: manifests is for a block without kubernetes; this block\'s kubernetes plugin already knows its pods (use "pods verified" there)',
    },
    {
      name: 'a manifests folder that does not exist',
      corefile: `.:53 {\n    workloads {\n        manifests ${dir}/nope\n    }\n}\n`,
      error: `Corefile:3: workloads: manifests directory ${dir}/nope: does not exist`,
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const run = checkCorefile('Corefile', c.corefile, { defaultPort: 53 }, createLogger(() => undefined));
      if (c.error === undefined) await run;
      else {
        await assert.rejects(run, (e: unknown) => {
          assert.ok(e instanceof CorefileError, String(e));
          assert.equal(e.message, c.error);
          return true;
        });
      }
    });
  }
});

test('the README\'s Corefiles load (kdns serve --check, NODE_NAME set as the DaemonSet sets it)', async () => {
  const readme = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
  const corefiles = [...readme.matchAll(/~~~ corefile\n([\s\S]*?)~~~/g)].map((m) => m[1] as string);
  assert.equal(corefiles.length, 2);
  const cluster = mkdtempSync(join(tmpdir(), 'kdns-workloads-readme-'));
  const before = process.env['NODE_NAME'];
  process.env['NODE_NAME'] = 'node-a';
  try {
    for (const text of corefiles) await checkCorefile('Corefile', text, { defaultPort: 53, clusterDir: cluster }, createLogger(() => undefined));
  } finally {
    if (before === undefined) delete process.env['NODE_NAME'];
    else process.env['NODE_NAME'] = before;
  }
});
