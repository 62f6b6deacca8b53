// workloads in a block without the kubernetes plugin, as in a node-local cache: the plugin reads
// the pods of its node itself (from an HTTP server speaking the Kubernetes list/watch protocol,
// or from a folder of manifests), real dig sends from the pods' addresses, forward sends the
// queries on to an upstream kdns, and the report at /api/workloads says who asked.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakeApiServer, type ApiObject } from '../../../test/util/fakeapi.js';
import { dig } from '../../../test/util/dig.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

const PODS = '/api/v1/pods';
const NODE_SELECTOR = 'status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown,spec.nodeName=node-a';

/** shop/api (a Deployment's pod) on node-a at 127.0.0.41; shop/web-0 (a StatefulSet's) on node-b at 127.0.0.42. */
const api41: ApiObject = {
  metadata: {
    name: 'api-5f7c9-abcde',
    namespace: 'shop',
    labels: { 'pod-template-hash': '5f7c9' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'api-5f7c9', controller: true, uid: 'u1' }],
  },
  spec: { nodeName: 'node-a' },
  status: { phase: 'Running', podIP: '127.0.0.41' },
};
const web42: ApiObject = {
  metadata: { name: 'web-0', namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', controller: true, uid: 'u2' }] },
  spec: { nodeName: 'node-b' },
  status: { phase: 'Running', podIP: '127.0.0.42' },
};
const db43: ApiObject = {
  metadata: { name: 'db-0', namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', controller: true, uid: 'u3' }] },
  spec: { nodeName: 'node-a' },
  status: { phase: 'Running', podIP: '127.0.0.43' },
};

/** A node cache's Corefile: workloads (reading pods as `source` says) in front of forward. */
function cacheCorefile(reportPort: number, upstreamPort: number, source: string[]): string {
  const props = source.map((l) => `        ${l}\n`).join('');
  return `.:{PORT} {\n    bind 127.0.0.1\n    workloads 127.0.0.1:${reportPort} {\n${props}    }\n    forward . 127.0.0.1:${upstreamPort}\n}\n`;
}

/** The same pods as manifests, with objects a pods-only reader ignores. */
const MANIFESTS = `apiVersion: v1
kind: Namespace
metadata: { name: shop }
---
apiVersion: v1
kind: Service
metadata: { name: api, namespace: shop }
spec: { clusterIP: 10.96.0.20, ports: [{ port: 80 }] }
---
${[api41, web42].map((p) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...p })).join('\n---\n')}
`;

/** The cluster DNS behind the cache: www.example.com exists, every other name does not. */
async function startUpstream(): Promise<TestServer> {
  return startTestServer(`.:{PORT} {
    bind 127.0.0.1
    template IN A www.example.com {
        answer "{{ .Name }} 60 IN A 192.0.2.10"
    }
    template ANY ANY {
        rcode NXDOMAIN
    }
}
`);
}

/** A ClusterFirst pod in shop looking up www.example.com: three search candidates, then the name. */
async function walk(port: number, from: string): Promise<string[]> {
  const statuses: string[] = [];
  for (const name of ['www.example.com.shop.svc.cluster.local', 'www.example.com.svc.cluster.local', 'www.example.com.cluster.local', 'www.example.com']) {
    statuses.push((await dig(name, 'A', { port, args: ['-b', from] })).status);
  }
  return statuses;
}

type Row = [namespace: unknown, kind: unknown, workload: unknown, queries: unknown, lookups: unknown, amplification: unknown];

async function report(port: number): Promise<Row[]> {
  const res = await fetch(`http://127.0.0.1:${port}/api/workloads`);
  assert.equal(res.status, 200);
  const body = (await res.json()) as { workloads: Array<Record<string, unknown>> };
  return body.workloads.map((w) => [w['namespace'], w['kind'], w['workload'], w['queries'], w['lookups'], w['amplification']]);
}

describe('workloads without kubernetes: pods of one node from the API', () => {
  let api: FakeApiServer;
  let url: string;
  let upstream: TestServer;
  let cache: TestServer;
  let reportPort: number;
  before(async () => {
    api = new FakeApiServer();
    api.seed(PODS, [api41, web42]);
    url = await api.listen();
    upstream = await startUpstream();
    reportPort = await freePort();
    // As in deploy/nodecache: the cluster zone and `.` in blocks of their own, one report address.
    const workloads = `workloads 127.0.0.1:${reportPort} {
        endpoint ${url}
        node node-a
    }`;
    cache = await startTestServer(`cluster.local:{PORT} {
    bind 127.0.0.1
    ${workloads}
    forward . 127.0.0.1:${upstream.port}
}
.:{PORT} {
    bind 127.0.0.1
    ${workloads}
    forward . 127.0.0.1:${upstream.port}
}
`);
    // The watch follows the list: once it is open, the pods are known.
    await waitFor(() => api.openWatches(PODS) === 1, 5000);
  });
  after(async () => {
    await cache?.stop();
    await upstream?.stop();
    await api?.close();
  });

  test('a pod on node-a counts for its Deployment, its search walk across both blocks as one lookup', async () => {
    assert.deepEqual(await walk(cache.port, '127.0.0.41'), ['NXDOMAIN', 'NXDOMAIN', 'NXDOMAIN', 'NOERROR']);
    assert.deepEqual(await report(reportPort), [['shop', 'Deployment', 'api', 4, 1, 4]]);
  });

  test('a pod on node-b is not known: its address counts as _unknown', async () => {
    assert.equal((await dig('www.example.com', 'A', { port: cache.port, args: ['-b', '127.0.0.42'] })).status, 'NOERROR');
    assert.deepEqual(await report(reportPort), [
      ['shop', 'Deployment', 'api', 4, 1, 4],
      ['', 'Unknown', '_unknown', 1, 1, 1],
    ]);
  });

  test('the two blocks share one watch of the Pod resource alone, filtered to node-a by the API server', () => {
    assert.deepEqual(
      api.requests.map((r) => `${r.watch ? 'watch' : 'list'} ${r.path} ${r.params['fieldSelector']}`),
      [`list ${PODS} ${NODE_SELECTOR}`, `watch ${PODS} ${NODE_SELECTOR}`],
    );
    assert.deepEqual(
      cache.logs.filter((l) => l.includes('plugin/workloads')),
      [`[INFO] plugin/workloads: 1 pods on node node-a from Kubernetes API ${url}`],
    );
  });

  test('a reload keeps the source: no new list, the pods still known, the counts kept', async () => {
    assert.equal(await cache.server.reload(), true);
    assert.equal(api.requests.length, 2);
    assert.equal(api.openWatches(PODS), 1);
    assert.equal((await dig('www.example.com', 'A', { port: cache.port, args: ['-b', '127.0.0.41'] })).status, 'NOERROR');
    assert.deepEqual(await report(reportPort), [
      ['shop', 'Deployment', 'api', 5, 2, 2.5],
      ['', 'Unknown', '_unknown', 1, 1, 1],
    ]);
  });

  test('a pod that starts on node-a later is counted for its workload once the watch reports it', async () => {
    api.add(PODS, db43);
    await waitFor(async () => {
      await dig('db.shop.svc.cluster.local', 'A', { port: cache.port, args: ['-b', '127.0.0.43'] });
      return (await report(reportPort)).some((r) => r[2] === 'db');
    }, 5000);
    const db = (await report(reportPort)).find((r) => r[2] === 'db');
    assert.deepEqual(db?.slice(0, 3), ['shop', 'StatefulSet', 'db']);
  });
});

describe('workloads without kubernetes: pods of one node from manifests', () => {
  let upstream: TestServer;
  let cache: TestServer;
  let reportPort: number;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-workloads-node-'));
    writeFileSync(join(dir, 'cluster.yaml'), MANIFESTS);
    upstream = await startUpstream();
    reportPort = await freePort();
    cache = await startTestServer(cacheCorefile(reportPort, upstream.port, [`manifests ${dir}`, `node node-a`]));
    // The folder is read in the background: wait for the log line that says what it holds.
    await waitFor(() => cache.logs.some((l) => l.includes('plugin/workloads: 1 pods on node node-a from directory')), 5000);
  });
  after(async () => {
    await cache?.stop();
    await upstream?.stop();
  });

  test('a pod on node-a counts for its Deployment, a pod on node-b as _unknown', async () => {
    assert.deepEqual(await walk(cache.port, '127.0.0.41'), ['NXDOMAIN', 'NXDOMAIN', 'NXDOMAIN', 'NOERROR']);
    assert.equal((await dig('www.example.com', 'A', { port: cache.port, args: ['-b', '127.0.0.42'] })).status, 'NOERROR');
    assert.deepEqual(await report(reportPort), [
      ['shop', 'Deployment', 'api', 4, 1, 4],
      ['', 'Unknown', '_unknown', 1, 1, 1],
    ]);
  });
});

describe('workloads without kubernetes: a source that fails never stops DNS', () => {
  test('the API refuses (403): answers go on, clients are _unknown, the list is retried until it works', async () => {
    const api = new FakeApiServer();
    api.seed(PODS, [api41]);
    api.requestFailures.push({
      pathSuffix: PODS,
      method: 'GET',
      code: 403,
      reason: 'Forbidden',
      message: 'pods is forbidden: User "system:serviceaccount:kube-system:node-local-dns" cannot list resource "pods" in API group "" at the cluster scope',
      times: 1,
    });
    const url = await api.listen();
    const upstream = await startUpstream();
    const reportPort = await freePort();
    const cache = await startTestServer(cacheCorefile(reportPort, upstream.port, [`endpoint ${url}`, `node node-a`]));
    try {
      await waitFor(() => cache.logs.some((l) => l.includes('403')), 5000);
      assert.equal((await dig('www.example.com', 'A', { port: cache.port, args: ['-b', '127.0.0.41'] })).status, 'NOERROR');
      assert.deepEqual(await report(reportPort), [['', 'Unknown', '_unknown', 1, 1, 1]]);
      assert.ok(
        cache.logs.some((l) => l.startsWith('[WARNING] plugin/workloads: /api/v1/pods: list /api/v1/pods: HTTP 403: pods is forbidden') && /retrying in \d+ ms$/.test(l)),
        cache.logs.join('\n'),
      );
      // The retry (after its backoff) lists the pods.
      await waitFor(() => api.openWatches(PODS) === 1, 10_000);
      assert.equal((await dig('www.example.com', 'A', { port: cache.port, args: ['-b', '127.0.0.41'] })).status, 'NOERROR');
      assert.deepEqual((await report(reportPort)).find((r) => r[2] === 'api'), ['shop', 'Deployment', 'api', 1, 1, 1]);
    } finally {
      await cache.stop();
      await upstream.stop();
      await api.close();
    }
  });

  test('no credentials to read pods with: kdns starts and answers, says why, and tries again later', async () => {
    const upstream = await startUpstream();
    const reportPort = await freePort();
    const cache = await startTestServer(cacheCorefile(reportPort, upstream.port, [`kubeconfig /nonexistent/kubeconfig`]));
    try {
      assert.equal((await dig('www.example.com', 'A', { port: cache.port, args: ['-b', '127.0.0.41'] })).status, 'NOERROR');
      assert.deepEqual(await report(reportPort), [['', 'Unknown', '_unknown', 1, 1, 1]]);
      assert.ok(
        cache.logs.includes('[ERROR] plugin/workloads: cannot read pods: kubeconfig /nonexistent/kubeconfig does not exist; every client counts as _unknown; retrying in 2000 ms'),
        cache.logs.join('\n'),
      );
      await waitFor(() => cache.logs.some((l) => l.endsWith('retrying in 4000 ms')), 5000);
    } finally {
      await cache.stop();
      await upstream.stop();
    }
  });
});
