// How many DNS replicas deploy/components/proportional-autoscaler gives a cluster: the linear
// formula of cluster-proportional-autoscaler (test/util/proportional.ts) case by case, then the
// README's table of cluster sizes computed from the parameters the component ships, so the
// figures the README states cannot drift from the ConfigMap.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { readRepoFile } from '../util/deploy.js';
import { type ClusterCount, type LinearParams, linearReplicas, parseLinearParams, uniformCluster } from '../util/proportional.js';

const params = (p: Partial<LinearParams>): LinearParams => ({
  coresPerReplica: 0,
  nodesPerReplica: 0,
  min: 1,
  max: 0,
  preventSinglePointFailure: false,
  includeUnschedulableNodes: false,
  ...p,
});

/** 10 nodes of 8 cores, 3 of them cordoned or NotReady. */
const partlyCordoned: ClusterCount = { totalNodes: 10, totalCores: 80, schedulableNodes: 7, schedulableCores: 56 };

describe('the linear formula', () => {
  const cases: Array<{ name: string; p: LinearParams; cluster: ClusterCount; replicas: number }> = [
    { name: 'upstream README\'s example: 4 nodes, 13 cores, 2 cores and 1 node a replica: the cores ask for more', p: params({ coresPerReplica: 2, nodesPerReplica: 1 }), cluster: { totalNodes: 4, totalCores: 13, schedulableNodes: 4, schedulableCores: 13 }, replicas: 7 },
    { name: 'the nodes ask for more', p: params({ coresPerReplica: 256, nodesPerReplica: 16 }), cluster: uniformCluster(100, 8), replicas: 7 },
    { name: 'a count just past a multiple rounds up', p: params({ nodesPerReplica: 16 }), cluster: uniformCluster(17, 4), replicas: 2 },
    { name: 'a count at a multiple does not', p: params({ nodesPerReplica: 16 }), cluster: uniformCluster(32, 4), replicas: 2 },
    { name: 'fractional per-replica figures', p: params({ nodesPerReplica: 2.5 }), cluster: uniformCluster(6, 4), replicas: 3 },
    { name: 'coresPerReplica alone', p: params({ coresPerReplica: 100 }), cluster: uniformCluster(3, 100), replicas: 3 },
    { name: 'min raises the count', p: params({ nodesPerReplica: 16, min: 3 }), cluster: uniformCluster(5, 4), replicas: 3 },
    { name: 'max caps it', p: params({ coresPerReplica: 1, max: 5 }), cluster: uniformCluster(4, 4), replicas: 5 },
    { name: 'preventSinglePointFailure: two replicas on two nodes', p: params({ nodesPerReplica: 16, preventSinglePointFailure: true }), cluster: uniformCluster(2, 4), replicas: 2 },
    { name: 'preventSinglePointFailure: one replica on a single node', p: params({ nodesPerReplica: 16, preventSinglePointFailure: true }), cluster: uniformCluster(1, 64), replicas: 1 },
    { name: 'preventSinglePointFailure wins over a max of 1', p: params({ nodesPerReplica: 16, max: 1, preventSinglePointFailure: true }), cluster: uniformCluster(3, 4), replicas: 2 },
    { name: 'without preventSinglePointFailure, one replica on several nodes', p: params({ nodesPerReplica: 16 }), cluster: uniformCluster(3, 4), replicas: 1 },
    { name: 'cordoned and NotReady nodes and their cores left out', p: params({ coresPerReplica: 8, nodesPerReplica: 1 }), cluster: partlyCordoned, replicas: 7 },
    { name: 'includeUnschedulableNodes counts them', p: params({ coresPerReplica: 8, nodesPerReplica: 1, includeUnschedulableNodes: true }), cluster: partlyCordoned, replicas: 10 },
    { name: 'no schedulable node: min', p: params({ coresPerReplica: 256, nodesPerReplica: 16, min: 2 }), cluster: { totalNodes: 3, totalCores: 12, schedulableNodes: 0, schedulableCores: 0 }, replicas: 2 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(linearReplicas(c.p, c.cluster), c.replicas);
    });
  }
});

describe('the linear parameters as the autoscaler reads them', () => {
  const cases: Array<{ name: string; json: string; result: LinearParams | RegExp }> = [
    { name: 'absent fields: min 1, no max, both switches off', json: '{"nodesPerReplica": 16}', result: params({ nodesPerReplica: 16 }) },
    { name: 'min 0 is 1', json: '{"coresPerReplica": 256, "min": 0}', result: params({ coresPerReplica: 256 }) },
    { name: 'neither per-replica figure', json: '{"min": 2}', result: /set coresPerReplica or nodesPerReplica/ },
    { name: 'a negative figure', json: '{"nodesPerReplica": -1}', result: /nodesPerReplica must not be negative/ },
    { name: 'max below min', json: '{"nodesPerReplica": 16, "min": 3, "max": 2}', result: /max \(2\) is below min \(3\)/ },
    { name: 'a misspelt parameter', json: '{"nodesPerReplica": 16, "preventSinglePointFailures": true}', result: /unknown parameter preventSinglePointFailures/ },
    { name: 'a number as a string', json: '{"nodesPerReplica": "16"}', result: /nodesPerReplica must be a number/ },
    { name: 'not JSON', json: 'nodesPerReplica: 16', result: /not JSON/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      if (c.result instanceof RegExp) assert.throws(() => parseLinearParams(c.json), c.result);
      else assert.deepEqual(parseLinearParams(c.json), c.result);
    });
  }
});

describe('README "Scaling with the cluster": the replicas it states are what the shipped parameters give', () => {
  const shipped = parseLinearParams(
    (parse(readRepoFile('deploy/components/proportional-autoscaler/configmap.yaml')) as { data: { linear: string } }).data.linear,
  );
  const readme = readRepoFile('README.md');
  const section = readme.slice(readme.indexOf('### Scaling with the cluster'), readme.indexOf('\n### ', readme.indexOf('### Scaling with the cluster') + 1));
  const rows = [...section.matchAll(/^\| ([\d,]+) nodes? × (\d+) cores \| (\d+) \|$/gm)].map((m) => ({
    nodes: Number(m[1]!.replaceAll(',', '')),
    cores: Number(m[2]),
    replicas: Number(m[3]),
    row: m[0],
  }));

  test('the table is there, with the sizes the issue asked about', () => {
    assert.deepEqual(
      rows.map((r) => `${r.nodes}x${r.cores}`),
      ['1x4', '3x4', '16x8', '100x8', '200x64', '1000x16'],
    );
  });
  for (const r of rows) {
    test(r.row, () => {
      assert.equal(linearReplicas(shipped, uniformCluster(r.nodes, r.cores)), r.replicas);
    });
  }
});
