import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toPodInfo } from '../../lib/cluster/convert.js';
import type { PodInfo } from '../../lib/cluster/records.js';
import type { OwnerReference } from '../../lib/cluster/types.js';
import { RCode, RRType } from '../../lib/dns/types.js';
import { Accounting, OTHER_WORKLOAD, podSearchList, type PodIndex } from './accounting.js';
import { buildReport } from './report.js';

const ZONE = 'cluster.local.';

function podInfo(name: string, namespace: string, ip: string, owner?: OwnerReference, opts: { hostNetwork?: boolean; phase?: 'Running' | 'Succeeded'; terminating?: boolean; labels?: Record<string, string> } = {}): PodInfo {
  return toPodInfo({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, ...(owner ? { ownerReferences: [owner] } : {}), ...(opts.labels ? { labels: opts.labels } : {}), ...(opts.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: opts.hostNetwork ? { hostNetwork: true } : {},
    status: { phase: opts.phase ?? 'Running', podIP: ip },
  });
}

class Index implements PodIndex {
  readonly byIp = new Map<string, PodInfo[]>();
  add(p: PodInfo): this {
    for (const ip of p.ips) this.byIp.set(ip, [...(this.byIp.get(ip) ?? []), p]);
    return this;
  }
  podsByIP(ip: string): readonly PodInfo[] {
    return this.byIp.get(ip) ?? [];
  }
}

const API = podInfo('api-5f-x', 'shop', '10.1.0.5', { kind: 'ReplicaSet', name: 'api-5f', controller: true }, { labels: { 'pod-template-hash': '5f' } });

function accounting(maxSeries = 50, hostSearch: string[] = []): Accounting {
  return new Accounting({ maxSeries, zone: ZONE, hostSearch });
}

type Q = [name: string, type: 'A' | 'AAAA' | 'SRV', rcode: 'NOERROR' | 'NXDOMAIN'];
const TYPE = { A: RRType.A, AAAA: RRType.AAAA, SRV: RRType.SRV };

function play(acc: Accounting, index: PodIndex, ip: string, queries: readonly Q[]): void {
  for (const [name, type, rcode] of queries) acc.record(acc.client(ip, index), name, TYPE[type], RCode[rcode]);
}

/** The candidates glibc sends for `name` with ndots:5 from namespace shop, each answered NXDOMAIN until `found`. */
function walk(name: string, type: 'A' | 'AAAA', search: readonly string[], found: number): Q[] {
  const candidates = [...search.map((s) => `${name}.${s}`), `${name}.`];
  return candidates.slice(0, found + 1).map((c, i) => [c, type, i === found ? 'NOERROR' : 'NXDOMAIN'] as Q);
}

describe('search-list expansion: lookups, expansions and queries per lookup', () => {
  const search = podSearchList('shop', ZONE, []);
  const withHost = podSearchList('shop', ZONE, ['corp.test.']);
  // `autopath`: whether the workload is seen to use ClusterFirstWithAutopath (false when not given).
  const cases: Array<{ name: string; hostSearch?: string[]; queries: Q[]; lookups: [number, number]; queries_: [number, number]; expansions: number; autopath?: boolean }> = [
    { name: 'external name, ClusterFirst ndots:5: 3 denials then the name', queries: walk('www.example.com', 'A', search, 3), lookups: [1, 0], queries_: [4, 0], expansions: 3 },
    {
      name: 'A and AAAA side by side (glibc): each family walks on its own',
      queries: walk('www.example.com', 'A', search, 3).flatMap((q, i) => [q, walk('www.example.com', 'AAAA', search, 3)[i] as Q]),
      lookups: [1, 1],
      queries_: [4, 4],
      expansions: 6,
    },
    { name: 'host search domain too: 5 queries', hostSearch: ['corp.test.'], queries: walk('www.example.com', 'A', withHost, 4), lookups: [1, 0], queries_: [5, 0], expansions: 4 },
    { name: 'service in the own namespace: found first', queries: [['db.shop.svc.cluster.local.', 'A', 'NOERROR']], lookups: [1, 0], queries_: [1, 0], expansions: 0 },
    { name: 'service in another namespace: found second', queries: walk('db.other', 'A', search, 1), lookups: [1, 0], queries_: [2, 0], expansions: 1 },
    { name: 'ndots reached: the name as given first, answered', queries: [['a.b.c.d.e.example.com.', 'A', 'NOERROR']], lookups: [1, 0], queries_: [1, 0], expansions: 0 },
    {
      name: 'ndots reached, as given denied, then the search list',
      queries: [['a.b.c.d.e.example.com.', 'A', 'NXDOMAIN'], ['a.b.c.d.e.example.com.shop.svc.cluster.local.', 'A', 'NXDOMAIN']],
      lookups: [1, 0],
      queries_: [2, 0],
      expansions: 1,
    },
    {
      name: 'the same lookup twice is two lookups',
      queries: [...walk('www.example.com', 'A', search, 3), ...walk('www.example.com', 'A', search, 3)],
      lookups: [2, 0],
      queries_: [8, 0],
      expansions: 6,
    },
    {
      name: 'autopath: one query per lookup',
      queries: [['www.example.com.search.shop.cluster.local.ap.k8s.io.', 'A', 'NOERROR'], ['x.org.search.shop.cluster.local.ap.k8s.io.', 'A', 'NOERROR']],
      lookups: [2, 0],
      queries_: [2, 0],
      expansions: 0,
      autopath: true,
    },
    {
      name: 'autopath, a name that exists nowhere: the name as given follows the denial',
      queries: [['nothing.example.com.search.shop.cluster.local.ap.k8s.io.', 'A', 'NXDOMAIN'], ['nothing.example.com.', 'A', 'NXDOMAIN']],
      lookups: [1, 0],
      queries_: [2, 0],
      expansions: 1,
      autopath: true,
    },
    {
      name: 'autopath, then a name asked as given: still autopath',
      queries: [['www.example.com.search.shop.cluster.local.ap.k8s.io.', 'A', 'NOERROR'], ['a.b.c.d.e.example.com.', 'A', 'NOERROR']],
      lookups: [2, 0],
      queries_: [2, 0],
      expansions: 0,
      autopath: true,
    },
    {
      name: 'autopath, then a ClusterFirst walk (rolled back): no longer autopath',
      queries: [['www.example.com.search.shop.cluster.local.ap.k8s.io.', 'A', 'NOERROR'], ...walk('www.example.com', 'A', search, 3)],
      lookups: [2, 0],
      queries_: [5, 0],
      expansions: 3,
      autopath: false,
    },
    { name: 'other types count as queries, not lookups', queries: [['_http._tcp.api.shop.svc.cluster.local.', 'SRV', 'NOERROR']], lookups: [0, 0], queries_: [0, 0], expansions: 0 },
    {
      name: 'a candidate out of order starts a new lookup',
      queries: [['x.svc.cluster.local.', 'A', 'NXDOMAIN'], ['x.shop.svc.cluster.local.', 'A', 'NXDOMAIN']],
      lookups: [2, 0],
      queries_: [2, 0],
      expansions: 0,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const acc = accounting(50, c.hostSearch ?? []);
      play(acc, new Index().add(API), '10.1.0.5', c.queries);
      const w = acc.workloads.get('shop/Deployment/api');
      assert.ok(w);
      assert.deepEqual([...w.lookups], c.lookups);
      assert.deepEqual([...w.familyQueries], c.queries_);
      assert.equal(w.expansions, c.expansions);
      assert.equal(w.queries, c.queries.length);
      assert.equal(w.autopath, c.autopath ?? false);
    });
  }
});

describe('attribution by client IP', () => {
  test('rcodes are counted per workload', () => {
    const acc = accounting();
    play(acc, new Index().add(API), '10.1.0.5', walk('www.example.com', 'A', podSearchList('shop', ZONE, []), 3));
    const w = acc.workloads.get('shop/Deployment/api');
    assert.deepEqual([...(w?.total ?? [])], [1, 3, 0, 0, 0, 3]);
  });

  const cases: Array<{ name: string; pods: PodInfo[]; ip: string; want: string }> = [
    { name: 'bare pod: itself', pods: [podInfo('debug', 'ns1', '10.1.0.9')], ip: '10.1.0.9', want: 'ns1/Pod/debug' },
    { name: 'StatefulSet pod', pods: [podInfo('db-0', 'data', '10.1.0.7', { kind: 'StatefulSet', name: 'db', controller: true })], ip: '10.1.0.7', want: 'data/StatefulSet/db' },
    { name: 'unknown IP', pods: [], ip: '10.9.9.9', want: '/Unknown/_unknown' },
    { name: 'hostNetwork pod', pods: [podInfo('kube-proxy-a', 'kube-system', '192.168.1.10', { kind: 'DaemonSet', name: 'kube-proxy', controller: true }, { hostNetwork: true })], ip: '192.168.1.10', want: '/HostNetwork/_hostNetwork' },
    {
      name: 'an IP reused: the running pod, not the terminating one',
      pods: [podInfo('old-1', 'ns1', '10.1.0.3', undefined, { terminating: true }), podInfo('new-1', 'ns2', '10.1.0.3')],
      ip: '10.1.0.3',
      want: 'ns2/Pod/new-1',
    },
    { name: 'IPv6 client written differently', pods: [podInfo('v6', 'ns1', 'fd00::5')], ip: 'fd00:0::5', want: 'ns1/Pod/v6' },
    { name: 'IPv4-mapped IPv6 source', pods: [podInfo('v4', 'ns1', '10.1.0.4')], ip: '::ffff:10.1.0.4', want: 'ns1/Pod/v4' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const acc = accounting();
      const index = new Index();
      for (const p of c.pods) index.add(p);
      play(acc, index, c.ip, [['x.example.com.', 'A', 'NOERROR']]);
      const counted = [...acc.workloads.entries()].filter(([, w]) => w.queries > 0).map(([k]) => k);
      assert.deepEqual(counted, [c.want]);
    });
  }

  test('a pod that changes IP is followed; its old IP becomes unknown', () => {
    const acc = accounting();
    const before = new Index().add(podInfo('w-0', 'ns1', '10.1.0.20', { kind: 'StatefulSet', name: 'w', controller: true }));
    play(acc, before, '10.1.0.20', [['a.example.com.', 'A', 'NOERROR']]);
    const after = new Index().add(podInfo('w-0', 'ns1', '10.1.0.21', { kind: 'StatefulSet', name: 'w', controller: true }));
    play(acc, after, '10.1.0.21', [['a.example.com.', 'A', 'NOERROR']]);
    play(acc, after, '10.1.0.20', [['a.example.com.', 'A', 'NOERROR']]);
    assert.equal(acc.workloads.get('ns1/StatefulSet/w')?.queries, 2);
    assert.equal(acc.workloads.get('/Unknown/_unknown')?.queries, 1);
  });

  test('a tick forgets the clients of pods the index no longer holds', () => {
    const acc = accounting();
    const index = new Index().add(podInfo('w-0', 'ns1', '10.1.0.20', { kind: 'StatefulSet', name: 'w', controller: true }));
    play(acc, index, '10.1.0.20', [['a.example.com.', 'A', 'NOERROR']]);
    acc.advance(1000);
    assert.equal(acc.knownPods, 1);
    index.byIp.clear();
    acc.advance(11_000);
    assert.equal(acc.knownPods, 0);
  });
});

describe('bounded Prometheus cardinality', () => {
  function busy(n: number): { acc: Accounting; index: Index } {
    const index = new Index();
    const acc = accounting(3);
    for (let i = 0; i < n; i++) {
      const ip = `10.2.0.${i + 1}`;
      index.add(podInfo(`p${i}`, 'load', ip, { kind: 'StatefulSet', name: `s${i}`, controller: true }));
      // Workload i sends i+1 queries: the busiest are the last ones.
      for (let k = 0; k <= i; k++) play(acc, index, ip, [[`n${k}.example.com.`, 'A', 'NOERROR']]);
    }
    return { acc, index };
  }

  test('at most max_workloads series, the busiest; the rest summed as _other', () => {
    const { acc } = busy(6);
    const rows = acc.seriesValues().map((r) => [r.id.workload, r.values[0]]);
    assert.deepEqual(rows, [
      ['s3', 4],
      ['s4', 5],
      ['s5', 6],
      [OTHER_WORKLOAD, 1 + 2 + 3],
    ]);
  });

  test('later counts go to the series of their workload', () => {
    const { acc, index } = busy(6);
    acc.seriesValues();
    play(acc, index, '10.2.0.6', [['z.example.com.', 'A', 'NXDOMAIN']]);
    play(acc, index, '10.2.0.1', [['z.example.com.', 'A', 'NOERROR']]);
    const rows = new Map(acc.seriesValues().map((r) => [r.id.workload, [...r.values]]));
    assert.deepEqual(rows.get('s5'), [6, 1, 0, 0, 0, 0]);
    assert.deepEqual(rows.get(OTHER_WORKLOAD), [7, 0, 0, 0, 0, 0]);
  });

  test('what a scrape showed under _other stays there when the workload gets its own series', () => {
    const { acc, index } = busy(6);
    acc.configure({ maxSeries: 0, zone: ZONE, hostSearch: [] });
    assert.deepEqual(acc.seriesValues().map((r) => [r.id.workload, r.values[0]]), [[OTHER_WORKLOAD, 21]]);
    acc.configure({ maxSeries: 1, zone: ZONE, hostSearch: [] });
    play(acc, index, '10.2.0.6', [['z.example.com.', 'A', 'NOERROR']]);
    assert.deepEqual(
      acc.seriesValues().map((r) => [r.id.workload, r.values[0]]),
      [
        ['s5', 1],
        [OTHER_WORKLOAD, 21],
      ],
    );
  });

  test('lowering max_workloads by a reload releases the quietest', () => {
    const { acc } = busy(6);
    acc.advance(1000);
    acc.configure({ maxSeries: 1, zone: ZONE, hostSearch: [] });
    acc.advance(11_000);
    assert.deepEqual(
      acc.seriesValues().map((r) => r.id.workload),
      ['s5', OTHER_WORKLOAD],
    );
  });
});

describe('the report window keeps the queries made before a workload\'s first tick', () => {
  // The accounting starts at 0 and ticks every 10 s; API's pod makes 4 queries at `at`, the
  // report is read at `readAt` with a 60 s window: [workload, queries, qps] of every row.
  const cases: Array<{ what: string; at: number; ticks: number[]; readAt: number; want: Array<[string, number, string]> }> = [
    { what: 'before the first tick, read before it: every count, no rate yet', at: 2_000, ticks: [], readAt: 5_000, want: [['api', 4, '0.00']] },
    { what: 'before the first tick, read after it: counted since the start', at: 2_000, ticks: [10_000], readAt: 11_000, want: [['api', 4, '0.36']] },
    { what: 'between two ticks, read after the second: counted since the first', at: 12_000, ticks: [10_000, 20_000], readAt: 21_000, want: [['api', 4, '0.36']] },
    { what: 'older than the window: gone', at: 2_000, ticks: [10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000], readAt: 71_000, want: [] },
  ];
  for (const c of cases) {
    test(c.what, () => {
      const acc = new Accounting({ maxSeries: 50, zone: ZONE, hostSearch: [] }, 0);
      const index = new Index().add(API);
      for (const t of c.ticks.filter((t) => t < c.at)) acc.advance(t);
      play(acc, index, '10.1.0.5', [['a.example.com.', 'A', 'NOERROR'], ['b.example.com.', 'A', 'NOERROR'], ['c.example.com.', 'A', 'NOERROR'], ['d.example.com.', 'A', 'NOERROR']]);
      for (const t of c.ticks.filter((t) => t >= c.at)) acc.advance(t);
      const report = buildReport(acc, 60_000, c.readAt);
      assert.deepEqual(
        report.workloads.map((w) => [w.workload, w.queries, w.qps.toFixed(2)]),
        c.want,
      );
    });
  }
});
