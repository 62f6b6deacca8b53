// The amplification kdns reports against the real thing: real glibc and musl look a name up from
// pods' IPs (test/util/realclient: each pod a loopback source address) through a running kdns, under ClusterFirst and under
// ClusterFirstWithAutopath. What the workloads report says per lookup must equal what the model
// behind `kdns explain` predicts for the same resolv.conf and name, and what the client sent.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PodSpec } from '../../lib/cluster/types.js';
import { computePodDNS, type NodeDNSSettings } from '../../poddns/compute.js';
import { autopathOracle, zoneMapOracle } from '../../poddns/oracle.js';
import { predictLookup, type Libc } from '../../poddns/queries.js';
import { parseHostResolvConf, renderResolvConf } from '../../poddns/resolvconf.js';
import { freePort } from '../../../test/util/net.js';
import { loadRealClient, type RealClientHarness, type Recorder } from '../../../test/util/realclient.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

const loaded = await loadRealClient();
const skip = loaded.skip;

const HOST = 'nameserver 192.168.0.2\nsearch corp.example\noptions ndots:1\n';
const UPSTREAM = { 'www.example.com': { A: ['192.0.2.10'], AAAA: ['2001:db8::10'] } };

interface Case {
  name: string;
  libc: Libc;
  policy: 'ClusterFirst' | 'ClusterFirstWithAutopath';
  lookup: string;
  /** The pod (a StatefulSet of its own) and the loopback address it sends from. */
  workload: string;
  ip: string;
  /** Written out: queries per lookup (per address family). */
  want: number;
}

// ClusterFirst: ns1.svc.cluster.local, svc.cluster.local, cluster.local, corp.example, then the
// name: 5 per family. Autopath: one query per family, kdns walks the list.
const cases: Case[] = [
  { name: 'glibc, ClusterFirst, external name', libc: 'glibc', policy: 'ClusterFirst', lookup: 'www.example.com', workload: 'cf-glibc', ip: '127.0.0.41', want: 5 },
  { name: 'musl, ClusterFirst, external name', libc: 'musl', policy: 'ClusterFirst', lookup: 'www.example.com', workload: 'cf-musl', ip: '127.0.0.42', want: 5 },
  { name: 'glibc, ClusterFirstWithAutopath, external name', libc: 'glibc', policy: 'ClusterFirstWithAutopath', lookup: 'www.example.com', workload: 'ap-glibc', ip: '127.0.0.43', want: 1 },
  { name: 'musl, ClusterFirstWithAutopath, external name', libc: 'musl', policy: 'ClusterFirstWithAutopath', lookup: 'www.example.com', workload: 'ap-musl', ip: '127.0.0.44', want: 1 },
  { name: 'glibc, ClusterFirstWithAutopath, a name that exists nowhere', libc: 'glibc', policy: 'ClusterFirstWithAutopath', lookup: 'nothing.example.com', workload: 'ap-nx-glibc', ip: '127.0.0.46', want: 2 },
  { name: 'musl, ClusterFirst, a name that exists nowhere', libc: 'musl', policy: 'ClusterFirst', lookup: 'nothing.example.com', workload: 'cf-nx-musl', ip: '127.0.0.47', want: 5 },
  { name: 'glibc, ClusterFirst, service in another namespace', libc: 'glibc', policy: 'ClusterFirst', lookup: 'db.ns2', workload: 'svc-glibc', ip: '127.0.0.45', want: 2 },
];

function manifests(): string {
  const pods = cases.map(
    (c) => `apiVersion: v1
kind: Pod
metadata:
  name: ${c.workload}-0
  namespace: ns1
  ownerReferences: [{ apiVersion: apps/v1, kind: StatefulSet, name: ${c.workload}, controller: true, uid: u-${c.workload} }]
spec: { dnsPolicy: ${c.policy} }
status: { phase: Running, podIP: ${c.ip} }
`,
  );
  const rest = `apiVersion: v1
kind: Namespace
metadata: { name: ns1 }
---
apiVersion: v1
kind: Namespace
metadata: { name: ns2 }
---
apiVersion: v1
kind: Service
metadata: { name: db, namespace: ns2 }
spec: { clusterIP: 10.96.0.20, ports: [{ port: 5432 }] }
`;
  return [rest, ...pods].join('---\n');
}

function resolvConfFor(policy: string): string {
  const node: NodeDNSSettings = { host: parseHostResolvConf(HOST).config, clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', nodeIPs: [] };
  const spec: PodSpec = { dnsPolicy: policy };
  return renderResolvConf(computePodDNS({ spec, namespace: 'ns1' }, node).config);
}

describe('workloads amplification matches kdns explain and real glibc and musl', { skip }, () => {
  let harness: RealClientHarness;
  let upstream: Recorder;
  let s: TestServer;
  let reportPort: number;
  let autopathPort: number;
  before(async () => {
    assert.ok(loaded.harness, loaded.reason);
    harness = loaded.harness;
    upstream = await harness.startRecorder({ zone: UPSTREAM });
    const dir = mkdtempSync(join(tmpdir(), 'kdns-workloads-rc-'));
    writeFileSync(join(dir, 'cluster.yaml'), manifests());
    reportPort = await freePort();
    autopathPort = await freePort();
    // Two blocks: a plain one (a ClusterFirst pod walks its list) and one with autopath (which
    // would also shorten a ClusterFirst pod's walk), sharing the cluster and the accounting.
    s = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    workloads 127.0.0.1:${reportPort} {
        search corp.example
    }
    kubernetes cluster.local {
        manifests ${dir}
        pods verified
    }
    forward . 127.0.0.1:${upstream.port}
}
.:${autopathPort} {
    bind 127.0.0.1
    workloads 127.0.0.1:${reportPort} {
        search corp.example
    }
    autopath @kubernetes {
        resolv_conf host-resolv.conf
    }
    kubernetes cluster.local {
        manifests ${dir}
        pods verified
    }
    forward . 127.0.0.1:${upstream.port}
}
`,
      { files: { 'host-resolv.conf': HOST } },
    );
  });
  after(async () => {
    await s?.stop();
    await upstream?.close();
  });

  for (const c of cases) {
    test(c.name, async () => {
      const resolvConf = resolvConfFor(c.policy);
      const oracle = autopathOracle(zoneMapOracle({ ...UPSTREAM, 'db.ns2.svc.cluster.local': { A: ['10.96.0.20'] } }), 'cluster.local');
      const predicted = predictLookup(resolvConf, c.lookup, c.libc, oracle);
      const sent = await harness.runClient({ resolvConf, name: c.lookup, libc: c.libc, server: `127.0.0.1:${c.policy === 'ClusterFirst' ? s.port : autopathPort}`, source: c.ip });
      assert.equal(sent.status, predicted.result === 'resolved' ? 0 : 2, sent.stderr);
      const res = await fetch(`http://127.0.0.1:${reportPort}/api/workloads`);
      const report = (await res.json()) as { workloads: Array<{ workload: string; amplification: number | null; amplificationA: number | null; amplificationAAAA: number | null; lookups: number }> };
      const row = report.workloads.find((w) => w.workload === c.workload);
      // One lookup per family (AF_UNSPEC asks A and AAAA).
      assert.deepEqual(
        { lookups: row?.lookups, amplification: row?.amplification, A: row?.amplificationA, AAAA: row?.amplificationAAAA },
        { lookups: 2, amplification: c.want, A: c.want, AAAA: c.want },
      );
      assert.equal(predicted.queries.length / 2, c.want, 'kdns explain model');
      assert.equal(sent.queries.length / 2, c.want, 'what the client sent');
    });
  }
});
