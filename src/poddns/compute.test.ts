import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computePodDNS } from './compute.js';
import { parseHostResolvConf } from './resolvconf.js';
import { CLUSTER_DNS, COMPUTE_CASES, HOST } from './testdata/compute-cases.js';

for (const c of COMPUTE_CASES) {
  test(`compute: ${c.name}`, () => {
    const hostText = c.host === undefined ? HOST : c.host;
    const host = hostText === null ? null : parseHostResolvConf(hostText).config;
    const got = computePodDNS(
      { spec: c.spec, namespace: c.namespace ?? 'ns1' },
      {
        host,
        clusterDNS: c.clusterDNS ?? CLUSTER_DNS,
        clusterDomain: c.clusterDomain ?? 'cluster.local',
        nodeIPs: c.nodeIPs ?? [],
        ...(c.nodecacheIP !== undefined ? { nodecacheIP: c.nodecacheIP } : {}),
      },
    );
    assert.deepEqual(got.config, c.want);
    const expected = c.warnings ?? [];
    assert.equal(got.warnings.length, c.warningCount ?? expected.length, got.warnings.join('\n'));
    for (const w of expected) assert.ok(got.warnings.some((g) => g.includes(w)), `no warning contains ${JSON.stringify(w)}: ${got.warnings.join(' | ')}`);
  });
}
