// workloads inside a running kdns: pods of a manifest directory at loopback addresses, real dig
// sending from those addresses, the counts read back from the Prometheus endpoint.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dumpDom, hasChromium } from '../../testutil/chromium.js';
import { dig } from '../../testutil/dig.js';
import { runKdns } from '../../testutil/kdns.js';
import { freePort } from '../../testutil/net.js';
import { parseExposition, value } from '../../testutil/prom.js';
import { startTestServer, type TestServer } from '../../testutil/server.js';

const PODS = `apiVersion: v1
kind: Namespace
metadata: { name: shop }
---
apiVersion: v1
kind: Pod
metadata:
  name: api-5f7c9-abcde
  namespace: shop
  labels: { pod-template-hash: 5f7c9 }
  ownerReferences: [{ apiVersion: apps/v1, kind: ReplicaSet, name: api-5f7c9, controller: true, uid: u1 }]
status: { phase: Running, podIP: 127.0.0.21 }
---
apiVersion: v1
kind: Pod
metadata:
  name: db-0
  namespace: shop
  ownerReferences: [{ apiVersion: apps/v1, kind: StatefulSet, name: db, controller: true, uid: u2 }]
status: { phase: Running, podIP: 127.0.0.22 }
---
apiVersion: v1
kind: Service
metadata: { name: db, namespace: shop }
spec: { clusterIP: 10.96.0.20, ports: [{ port: 5432 }] }
`;

/** A manifest directory holding PODS. */
function podsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-workloads-'));
  writeFileSync(join(dir, 'cluster.yaml'), PODS);
  return dir;
}

describe('workloads end to end', () => {
  let s: TestServer;
  let metricsPort: number;
  let reportPort: number;
  before(async () => {
    const dir = podsDir();
    metricsPort = await freePort();
    reportPort = await freePort();
    s = await startTestServer(`.:{PORT} {
    bind 127.0.0.1
    prometheus 127.0.0.1:${metricsPort}
    workloads 127.0.0.1:${reportPort} {
        max_workloads 1
    }
    kubernetes cluster.local {
        manifests ${dir}
        pods verified
    }
}
`);
    // api walks its search list for an external name (ndots:5): three denials, then the name.
    for (const name of ['www.example.com.shop.svc.cluster.local', 'www.example.com.svc.cluster.local', 'www.example.com.cluster.local', 'www.example.com']) {
      await dig(name, 'A', { port: s.port, args: ['-b', '127.0.0.21'] });
    }
    // db finds a service at the first candidate, twice; an unknown client asks once.
    await dig('db.shop.svc.cluster.local', 'A', { port: s.port, args: ['-b', '127.0.0.22'] });
    await dig('db.shop.svc.cluster.local', 'A', { port: s.port, args: ['-b', '127.0.0.22'] });
    await dig('db.shop.svc.cluster.local', 'A', { port: s.port, args: ['-b', '127.0.0.23'] });
  });
  after(async () => {
    await s?.stop();
  });

  async function scrape(): Promise<ReturnType<typeof parseExposition>> {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    return parseExposition(await res.text());
  }

  test('the one series goes to the busiest workload, the rest are _other', async () => {
    const m = await scrape();
    assert.equal(value(m, 'kdns_workload_queries_total', { namespace: 'shop', workload: 'api', kind: 'Deployment', rcode: 'NXDOMAIN' }), 3);
    assert.equal(value(m, 'kdns_workload_search_expansions_total', { namespace: 'shop', workload: 'api', kind: 'Deployment' }), 3);
    // No forward: the name as given fails.
    assert.equal(value(m, 'kdns_workload_queries_total', { namespace: 'shop', workload: 'api', kind: 'Deployment', rcode: 'SERVFAIL' }), 1);
    assert.equal(value(m, 'kdns_workload_amplification', { namespace: 'shop', workload: 'api', kind: 'Deployment', family: 'A' }), 4);
    // db (2) and the unknown client (1), all answered.
    assert.equal(value(m, 'kdns_workload_queries_total', { workload: '_other', rcode: 'NOERROR' }), 3);
  });

  test('the JSON endpoint lists every workload, busiest first, with its amplification and a suggestion', async () => {
    const res = await fetch(`http://127.0.0.1:${reportPort}/api/workloads`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { workloads: Array<Record<string, unknown>> };
    const rows = body.workloads.map((w) => [w['namespace'], w['kind'], w['workload'], w['queries'], w['lookups'], w['amplification'], w['nxdomainShare']]);
    assert.deepEqual(rows, [
      ['shop', 'Deployment', 'api', 4, 1, 4, 0.75],
      ['shop', 'StatefulSet', 'db', 2, 2, 1, 0],
      ['', 'Unknown', '_unknown', 1, 1, 1, 0],
    ]);
    assert.equal(body.workloads[0]?.['suggestion'], 'search list makes 4.0 queries per lookup: try dnsPolicy ClusterFirstWithAutopath (kdns explain -f deploy/api.yaml www.example.com --compare)');
    assert.equal(body.workloads[1]?.['suggestion'], '');
  });

  test('kdns top prints the table, sorted as asked', async () => {
    const r = await runKdns(['top', '--server', `127.0.0.1:${reportPort}`, '--sort', 'amplification']);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => l.split(/\s{2,}/).slice(0, 5));
    assert.deepEqual(lines, [
      ['NAMESPACE', 'WORKLOAD', 'QPS', 'NXDOMAIN', 'AMPLIFICATION'],
      ['shop', 'deployment/api', '0.0', '75%', '4.0'],
      ['shop', 'statefulset/db', '0.0', '0%', '1.0'],
      ['-', '_unknown', '0.0', '0%', '1.0'],
    ]);
    assert.match(r.stdout, /try dnsPolicy ClusterFirstWithAutopath/);
  });

  test('kdns top -o json: the report', async () => {
    const r = await runKdns(['top', '--server', `http://127.0.0.1:${reportPort}`, '-o', 'json']);
    assert.equal(r.code, 0);
    const body = JSON.parse(r.stdout) as { workloads: Array<{ workload: string }> };
    assert.deepEqual(
      body.workloads.map((w) => w.workload),
      ['api', 'db', '_unknown'],
    );
  });
});

const chromiumSkip = !hasChromium() && process.env.CI !== 'true' ? 'needs Chromium: apt-get install chromium' : false;

describe('workloads live page in headless Chromium', { skip: chromiumSkip }, () => {
  let s: TestServer;
  let pagePort: number;
  before(async () => {
    const dir = podsDir();
    pagePort = await freePort();
    s = await startTestServer(`.:{PORT} {
    bind 127.0.0.1
    workloads 127.0.0.1:${pagePort}
    kubernetes cluster.local {
        manifests ${dir}
        pods verified
    }
}
`);
  });
  after(async () => {
    await s?.stop();
  });

  /** Rows of the page's table: workload, amplification cell. */
  function rows(dom: string): string[][] {
    return [...dom.matchAll(/<tr data-workload="([^"]+)"[^>]*>.*?<td class="num amp">([^<]*)<\/td>/g)].map((m) => [m[1] as string, m[2] as string]);
  }

  test('it loads, shows the workload the test made noisy, and keeps reading the report', async () => {
    // db walks the search list for an external name: its row must say 4.0 queries per lookup.
    for (const name of ['www.example.com.shop.svc.cluster.local', 'www.example.com.svc.cluster.local', 'www.example.com.cluster.local', 'www.example.com']) {
      await dig(name, 'A', { port: s.port, args: ['-b', '127.0.0.22'] });
    }
    const dom = await dumpDom(`http://127.0.0.1:${pagePort}/`, 7000);
    assert.deepEqual(rows(dom), [['shop/statefulset/db', '4.0']]);
    assert.match(dom, /<tr data-workload="shop\/statefulset\/db" class="hot">/);
    const refreshes = Number(/data-refreshes="(\d+)"/.exec(dom)?.[1]);
    // One read at load, then one every 2 s of the 7 s budget.
    assert.ok(refreshes >= 3, `the page read the report ${refreshes} times`);
    assert.match(dom, /rates over the last 60 s - 1 workloads/);
  });

  test('the charts draw a point per 10 s tick once two ticks have passed', async () => {
    // Queries between two ticks of the server's 10 s clock make one point of each chart.
    const walk = async (): Promise<void> => {
      for (const name of ['www.example.com.shop.svc.cluster.local', 'www.example.com.svc.cluster.local', 'www.example.com.cluster.local', 'www.example.com']) {
        await dig(name, 'A', { port: s.port, args: ['-b', '127.0.0.22'] });
      }
    };
    for (let i = 0; i < 4; i++) {
      await walk();
      await new Promise((resolve) => setTimeout(resolve, 6_000));
    }
    const dom = await dumpDom(`http://127.0.0.1:${pagePort}/`, 3000);
    const points = (id: string): number => Number(new RegExp(`<svg id="${id}"[^>]*data-points="(\\d+)"`).exec(dom)?.[1]);
    assert.ok(points('qps') >= 1, `QPS chart: ${points('qps')} points`);
    assert.ok(points('amp') >= 1, `amplification chart: ${points('amp')} points`);
  });
});

describe('workloads: the pod index it needs', () => {
  test('a kubernetes block that does not watch pods is a Corefile error naming the fix', async () => {
    const dir = podsDir();
    const port = await freePort();
    await assert.rejects(
      startTestServer(`.:{PORT} {
    bind 127.0.0.1
    workloads 127.0.0.1:${port}
    kubernetes cluster.local {
        manifests ${dir}
    }
}
`),
      /Corefile:3: workloads needs "pods verified" in the kubernetes block to know which pod has which IP/,
    );
  });
});

describe('kdns top: errors', () => {
  test('nothing listening: exit 1 and says where it looked', async () => {
    const port = await freePort();
    const r = await runKdns(['top', '--server', `127.0.0.1:${port}`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`kdns top: cannot reach http://127.0.0.1:${port}`));
  });
  test('a bad --sort is a usage error', async () => {
    const r = await runKdns(['top', '--sort', 'size']);
    assert.equal(r.code, 2);
  });
});
