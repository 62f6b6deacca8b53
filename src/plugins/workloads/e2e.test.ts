// workloads inside a running kdns: pods of a manifest directory at loopback addresses, real dig
// sending from those addresses, the counts read back from the Prometheus endpoint.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dumpDom, hasChromium } from '../../../test/util/chromium.js';
import { dig } from '../../../test/util/dig.js';
import { runKdns } from '../../../test/util/kdns.js';
import { freePort } from '../../../test/util/net.js';
import { parseExposition, value } from '../../../test/util/prom.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

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
# A pod the kdns webhook rewrote from ClusterFirstWithAutopath: its spec says None.
apiVersion: v1
kind: Pod
metadata:
  name: web-6b8d4-fghij
  namespace: shop
  labels: { pod-template-hash: 6b8d4 }
  annotations: { dns.kdns.io/policy: ClusterFirstWithAutopath, dns.kdns.io/mutated-from: ClusterFirstWithAutopath }
  ownerReferences: [{ apiVersion: apps/v1, kind: ReplicaSet, name: web-6b8d4, controller: true, uid: u3 }]
spec:
  dnsPolicy: None
  dnsConfig: { nameservers: [169.254.20.10], searches: [search.shop.cluster.local.ap.k8s.io], options: [{ name: ndots, value: "5" }] }
status: { phase: Running, podIP: 127.0.0.24 }
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
    // web (rewritten to None by the webhook) walks through autopath: the autopath name, then the
    // name as given (this block has no autopath plugin: the names count, not the answers).
    for (const name of ['nothing.example.com.search.shop.cluster.local.ap.k8s.io', 'nothing.example.com']) {
      await dig(name, 'A', { port: s.port, args: ['-b', '127.0.0.24'] });
    }
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
    const rows = body.workloads.map((w) => [w['namespace'], w['kind'], w['workload'], w['queries'], w['lookups'], w['amplification'], w['autopath'], w['suggestion']]);
    assert.deepEqual(rows, [
      [
        'shop',
        'Deployment',
        'api',
        4,
        1,
        4,
        false,
        'search list makes 4.0 queries per lookup: try ClusterFirstWithAutopath, spec.template.metadata.annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath} (kdns explain -f deploy/api.yaml www.example.com --compare)',
      ],
      ['shop', 'StatefulSet', 'db', 2, 2, 1, false, ''],
      // Already on autopath (rewritten by the webhook): 2 queries for a name that exists nowhere, nothing to suggest.
      ['shop', 'Deployment', 'web', 2, 1, 2, true, ''],
      ['', 'Unknown', '_unknown', 1, 1, 1, false, ''],
    ]);
  });

  test('kdns top prints the table, sorted as asked', async () => {
    const r = await runKdns(['top', '--server', `127.0.0.1:${reportPort}`, '--sort', 'amplification']);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    const [table, note] = r.stdout.split('\n\n');
    const lines = (table ?? '').split('\n').map((l) => l.split(/\s{2,}/).slice(0, 5));
    assert.deepEqual(lines, [
      ['NAMESPACE', 'WORKLOAD', 'QPS', 'NXDOMAIN', 'AMPLIFICATION'],
      ['shop', 'deployment/api', '0.0', '75%', '4.0'],
      ['shop', 'deployment/web', '0.0', '0%', '2.0'],
      ['shop', 'statefulset/db', '0.0', '0%', '1.0'],
      ['-', '_unknown', '0.0', '0%', '1.0'],
    ]);
    assert.ok(
      (table ?? '').split('\n')[1]?.endsWith('search list makes 4.0 queries per lookup: try ClusterFirstWithAutopath, spec.template.metadata.annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath}'),
      table,
    );
    assert.equal(note, 'A suggested dns.kdns.io/policy annotation is read by the kdns admission webhook; a stock API server refuses a kdns policy in spec.dnsPolicy.\n');
  });

  test('kdns top -o wide: the autopath column and the command that checks the suggestion', async () => {
    const r = await runKdns(['top', '--server', `127.0.0.1:${reportPort}`, '-o', 'wide']);
    assert.equal(r.code, 0);
    const lines = r.stdout.split('\n\n')[0]?.split('\n').map((l) => l.split(/\s{2,}/)) ?? [];
    assert.deepEqual(lines[0], ['NAMESPACE', 'WORKLOAD', 'QPS', 'NXDOMAIN', 'AMPLIFICATION', 'A', 'AAAA', 'AUTOPATH', 'SUGGESTION']);
    assert.deepEqual(lines.slice(1).map((l) => [l[1], l[7]]), [
      ['deployment/api', '-'],
      ['statefulset/db', '-'],
      ['deployment/web', 'yes'],
      ['_unknown', '-'],
    ]);
    assert.ok(lines[1]?.[8]?.endsWith('(kdns explain -f deploy/api.yaml www.example.com --compare)'), lines[1]?.[8]);
  });

  test('kdns top -o json: the report', async () => {
    const r = await runKdns(['top', '--server', `http://127.0.0.1:${reportPort}`, '-o', 'json']);
    assert.equal(r.code, 0);
    const body = JSON.parse(r.stdout) as { workloads: Array<{ workload: string }> };
    assert.deepEqual(
      body.workloads.map((w) => w.workload),
      ['api', 'db', 'web', '_unknown'],
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
    assert.deepEqual(rows(dom), [['shop/statefulset/db', '4.0']], /<div id="status"[^<]*<\/div>/.exec(dom)?.[0] ?? dom);
    // The advice is the annotation on the StatefulSet's pod template, never the literal dnsPolicy.
    assert.match(
      dom,
      /<td class="autopath">-<\/td><td class="suggestion">search list makes 4\.0 queries per lookup: try ClusterFirstWithAutopath, spec\.template\.metadata\.annotations: \{dns\.kdns\.io\/policy: ClusterFirstWithAutopath\} \(kdns explain -f sts\/db\.yaml www\.example\.com --compare\)<\/td>/,
    );
    assert.match(dom, /<p id="note">Autopath: the workload's lookups go through ClusterFirstWithAutopath, whichever way its pods asked for it\. A suggested policy is asked for with the dns\.kdns\.io\/policy annotation on the pod template, read by the kdns admission webhook; a stock API server refuses a kdns policy in spec\.dnsPolicy\.<\/p>/);
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
