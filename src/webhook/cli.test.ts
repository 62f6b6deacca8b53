// `kdns webhook` as a process, as the Deployment runs it: its flags and settings file, the
// Secret and caBundle it creates against the API server, admissions through a stock API
// server's path, a settings reload, and a clean stop. Bad settings stop it at start.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runKdns, startKdns } from '../../test/util/kdns.js';
import { waitFor } from '../../test/util/net.js';
import { startWebhookRig } from '../../test/util/webhookrig.js';
import type { WebhookRig } from '../../test/util/webhookrig.js';

const dir = mkdtempSync(join(tmpdir(), 'kdns-webhook-cli-'));
const config = join(dir, 'config.yaml');

interface StartCase {
  name: string;
  file?: string;
  args: string[];
  code: number;
  stderr: string;
}

const START_CASES: StartCase[] = [
  { name: 'a settings file with a bad address', file: 'clusterDNS: [kube-dns]\n', args: ['--config', '{config}'], code: 1, stderr: '{config} (with flags): clusterDNS[0]: "kube-dns" is not an IP address\n' },
  { name: 'a settings file with an unknown key', file: 'clusterDNS: [10.96.0.10]\nnodeCache: 169.254.20.10\n', args: ['--config', '{config}'], code: 1, stderr: '{config}: nodeCache: unknown field (known: clusterDomain, clusterDNS, nodeCacheIP, nodeSearches)\n' },
  { name: 'no cluster DNS anywhere', args: [], code: 1, stderr: "flags: clusterDNS: required: the cluster DNS Service address (the kubelets' --cluster-dns)\n" },
  { name: 'a settings file that does not exist', args: ['--config', '{config}.missing'], code: 1, stderr: "{config}.missing: ENOENT: no such file or directory, open '{config}.missing'\n" },
  { name: 'a bad listen address', args: ['--cluster-dns', '10.96.0.10', '--listen', '9443'], code: 2, stderr: '--listen: want [HOST]:PORT, got "9443"\n' },
  { name: 'a certificate without its key', args: ['--cluster-dns', '10.96.0.10', '--namespace', 'kdns', '--tls-cert-file', '/tls/tls.crt'], code: 2, stderr: '--tls-cert-file and --tls-key-file go together\n' },
];

for (const c of START_CASES) {
  test(`kdns webhook at start: ${c.name}`, async () => {
    if (c.file !== undefined) writeFileSync(config, c.file);
    const r = await runKdns(['webhook', ...c.args.map((a) => a.replace('{config}', config))]);
    assert.equal(r.stderr.replaceAll(config, '{config}'), c.stderr);
    assert.equal(r.code, c.code);
  });
}

let rig: WebhookRig;
let webhook: ReturnType<typeof startKdns>;

before(async () => {
  rig = await startWebhookRig({ settings: { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'] }, variant: 'deploy/nodecache' }, 0);
  writeFileSync(config, 'clusterDomain: cluster.local\nclusterDNS: [10.96.0.10]\nnodeCacheIP: 169.254.20.10\n');
  webhook = startKdns(['webhook', '--kubeconfig', rig.kubeconfig, '--namespace', rig.namespace, '--config', config, '--config-poll-seconds', '0.2', '--listen', '127.0.0.1:0', '--health', '127.0.0.1:0', '--metrics', '127.0.0.1:0']);
  const port = await waitFor(() => /serving admission on 127\.0\.0\.1:(\d+)/.exec(webhook.output())?.[1], 30_000).catch(() => assert.fail(webhook.output()));
  rig.backends.push(Number(port));
  await rig.caBundleWritten();
});
after(async () => {
  await webhook?.stop();
  await rig?.close();
});

const AUTOPATH_POD = (name: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' } }, spec: { containers: [{ name: 'c', image: 'x' }] } });

test('kdns webhook: creates its Secret, writes the caBundle, and admits a pod', async () => {
  const secret = rig.api.get('/api/v1/secrets', rig.namespace, 'kdns-webhook-tls');
  assert.equal(secret?.['type'], 'kubernetes.io/tls');
  const r = await rig.createPod('ns1', AUTOPATH_POD('a'));
  assert.equal(r.code, 201, JSON.stringify(r.body));
  assert.deepEqual(r.body['spec'], {
    containers: [{ name: 'c', image: 'x' }],
    dnsPolicy: 'None',
    dnsConfig: { nameservers: ['169.254.20.10', '10.96.0.10'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: [{ name: 'ndots', value: '5' }] },
  });
  assert.deepEqual(rig.standIn.calls.map((c) => c.outcome), ['patched']);
});

test('kdns webhook: a changed settings file is used for the next pod; a bad one keeps the last good settings', async () => {
  // As the kubelet updates a mounted ConfigMap: a new file swapped in.
  writeFileSync(`${config}.new`, 'clusterDomain: cluster.local\nclusterDNS: [10.96.0.10]\n');
  renameSync(`${config}.new`, config);
  await waitFor(() => webhook.output().includes(`webhook: config reloaded from ${config}`), 10_000);
  const r = await rig.createPod('ns1', AUTOPATH_POD('b'));
  assert.deepEqual((r.body['spec'] as { dnsConfig: unknown }).dnsConfig, { nameservers: ['10.96.0.10'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: [{ name: 'ndots', value: '5' }] });
  writeFileSync(`${config}.new`, 'clusterDNS: [not-an-address]\n');
  renameSync(`${config}.new`, config);
  await waitFor(() => webhook.output().includes('webhook: config not reloaded, the last good one stays:'), 10_000);
  const after = await rig.createPod('ns1', AUTOPATH_POD('c'));
  assert.deepEqual((after.body['spec'] as { dnsConfig: unknown }).dnsConfig, { nameservers: ['10.96.0.10'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: [{ name: 'ndots', value: '5' }] });
});

test('kdns webhook: a pod that asks for nothing is never sent to it (matchConditions)', async () => {
  const before = rig.standIn.calls.length;
  const r = await rig.createPod('ns1', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
  assert.equal(r.code, 201);
  assert.equal(rig.standIn.calls.length, before);
});

test('kdns webhook: SIGTERM stops it cleanly', async () => {
  webhook.child.kill('SIGTERM');
  const code = await new Promise<number | null>((resolve) => webhook.child.once('exit', (c) => resolve(c)));
  assert.equal(code, 0, webhook.output());
});
