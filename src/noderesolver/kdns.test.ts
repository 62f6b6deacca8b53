// node-resolver against kdns itself: a kdns server with the kubernetes plugin reading a manifest
// directory, a Service whose clusterIP changes, and the server going away.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../../test/util/server.js';
import { waitFor } from '../../test/util/net.js';
import { BEGIN_MARKER, END_MARKER } from './hostsblock.js';
import { serviceName, syncOnce } from './resolver.js';
import type { SyncOptions } from './resolver.js';

const service = (ip: string, ipv6?: string): string => `apiVersion: v1
kind: Namespace
metadata: {name: openshift-image-registry}
---
apiVersion: v1
kind: Service
metadata: {name: image-registry, namespace: openshift-image-registry}
spec:
  type: ClusterIP
  clusterIP: ${ip}
  clusterIPs: [${ip}${ipv6 ? `, "${ipv6}"` : ''}]
  ipFamilies: [IPv4${ipv6 ? ', IPv6' : ''}]
  ports: [{name: https, port: 5000, protocol: TCP}]
`;

const NAMES = 'image-registry.openshift-image-registry.svc image-registry.openshift-image-registry.svc.cluster.local';
const OTHER = '127.0.0.1 localhost\n';

test('node-resolver keeps the registry Service in a hosts file, served by kdns (kubernetes plugin)', async () => {
  const cluster = mkdtempSync(join(tmpdir(), 'kdns-nr-cluster-'));
  writeFileSync(join(cluster, 'registry.yaml'), service('172.30.0.5', 'fd02::5'));
  const srv = await startTestServer('.:{PORT} {\n\tbind 127.0.0.1\n\tkubernetes cluster.local\n}\n', { clusterDir: cluster });
  const dir = mkdtempSync(join(tmpdir(), 'kdns-nr-hosts-'));
  const hosts = join(dir, 'hosts');
  writeFileSync(hosts, OTHER);
  const logs: string[] = [];
  const opts: SyncOptions = {
    services: [serviceName('image-registry.openshift-image-registry.svc', 'cluster.local')],
    nameserver: { host: '127.0.0.1', port: srv.port },
    hostsFile: hosts,
    lockFile: join(dir, 'lock'),
    lookup: { timeoutMs: 300, attempts: 1 },
    log: (l) => logs.push(l),
  };
  const block = (...ips: string[]): string => `${OTHER}${BEGIN_MARKER}\n${ips.map((ip) => `${ip} ${NAMES}\n`).join('')}${END_MARKER}\n`;
  try {
    // A lookup may miss its 300 ms on a loaded machine; the next sync asks again, as the agent's loop does.
    await waitFor(async () => {
      await syncOnce(opts);
      return readFileSync(hosts, 'utf8') === block('172.30.0.5', 'fd02::5');
    }, 10_000, 100);

    // The Service gets a new address (deleted and re-created): the file follows.
    writeFileSync(join(cluster, 'registry.yaml'), service('172.30.0.9'));
    await waitFor(async () => {
      await syncOnce(opts);
      return readFileSync(hosts, 'utf8') === block('172.30.0.9');
    }, 10_000, 100);
    assert.ok(logs.includes(`${hosts}: removed 172.30.0.5 ${NAMES}`));
    assert.ok(logs.includes(`${hosts}: added 172.30.0.9 ${NAMES}`));
  } finally {
    await srv.stop();
  }
  // The server is gone: the entry stays.
  const r = await syncOnce(opts);
  assert.equal(r.failures.length, 2);
  assert.equal(readFileSync(hosts, 'utf8'), block('172.30.0.9'));
});
