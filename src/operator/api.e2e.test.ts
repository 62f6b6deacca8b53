// `kdns operator run --kubeconfig` as a process against kdns's stand-in for kube-apiserver, on a
// kubeadm-like cluster (kube-dns holds 10.96.0.10, no DNS resource yet): the operator creates
// DNS "default", applies its objects with an address that does not collide (also in the admission
// webhook's settings), and puts back a
// hand edit of the Corefile and of the node selector through its watches, without waiting for
// the resync.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer, OPERATOR_RESOURCES } from '../../test/util/fakeapi.js';
import { runKdns, startKdns } from '../../test/util/kdns.js';
import { writeKubeconfig } from '../../test/util/kubeconfig.js';
import { waitFor } from '../../test/util/net.js';

type Obj = Record<string, any>; // A loose view of JSON bodies; the assertions are the type check.

const NS = 'kdns';

async function kubectlEdit(url: string, path: string, patch: unknown): Promise<void> {
  const r = await fetch(`${url}${path}?fieldManager=kubectl-edit`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify(patch) });
  assert.equal(r.status, 200, await r.text());
}

function seedKubeadm(api: FakeApiServer): void {
  api.seed('/api/v1/services', [{ metadata: { name: 'kube-dns', namespace: 'kube-system' }, spec: { clusterIP: '10.96.0.10', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] } }]);
  api.seed('/api/v1/nodes', [{ metadata: { name: 'node-1', labels: { 'kubernetes.io/os': 'linux' } }, spec: {} }]);
}

test('kdns operator run --kubeconfig: creates DNS default, no address collision, hand edits put back within one reconcile', { timeout: 60_000 }, async (t) => {
  const api = new FakeApiServer(OPERATOR_RESOURCES, { bookmarkIntervalMs: 1000 });
  seedKubeadm(api);
  const url = await api.listen();
  const operator = startKdns(['operator', 'run', '--kubeconfig', writeKubeconfig(url), '--namespace', NS, '--resync', '10m']);
  const context = (): string => `\n--- operator:\n${operator.output()}`;
  const cm = (): Obj | undefined => api.get('/api/v1/configmaps', NS, 'dns-default');
  const ds = (): Obj | undefined => api.get('/apis/apps/v1/daemonsets', NS, 'dns-default');
  try {
    await waitFor(() => api.get('/api/v1/services', NS, 'dns-default') && api.get('/apis/apps/v1/daemonsets', NS, 'node-resolver') && api.get('/api/v1/configmaps', NS, 'kdns-webhook'), 20_000).catch((e: Error) =>
      assert.fail(`${e.message}${context()}`),
    );
    assert.deepEqual(api.get('/apis/operator.openshift.io/v1/dnses', undefined, 'default')?.['spec'], {}, 'created by the operator');
    const ip = (api.get('/api/v1/services', NS, 'dns-default') as Obj)['spec'].clusterIP as string;
    assert.notEqual(ip, '10.96.0.10');
    const args = (api.get('/apis/apps/v1/daemonsets', NS, 'node-resolver') as Obj)['spec'].template.spec.containers[0].args as string[];
    assert.equal(args[args.indexOf('--nameserver') + 1], ip);
    const webhookSettings = (api.get('/api/v1/configmaps', NS, 'kdns-webhook') as Obj)['data']['config.yaml'] as string;
    assert.deepEqual(webhookSettings.split('\n').slice(1), ['clusterDomain: cluster.local', `clusterDNS: [${ip}]`, '']);
    await waitFor(() => api.openWatches('/api/v1/configmaps') === 1 && api.openWatches('/apis/apps/v1/daemonsets') === 1, 10_000);

    const corefile = cm()?.['data'].Corefile as string;
    const edited = Date.now();
    await kubectlEdit(url, `/api/v1/namespaces/${NS}/configmaps/dns-default`, { data: { Corefile: '.:5353 {\n  forward . 8.8.8.8\n}\n' } });
    await waitFor(() => cm()?.['data'].Corefile === corefile, 10_000).catch((e: Error) => assert.fail(`${e.message}${context()}`));
    const corefileMs = Date.now() - edited;

    const selector = ds()?.['spec'].template.spec.nodeSelector as Record<string, string>;
    const edited2 = Date.now();
    await kubectlEdit(url, `/apis/apps/v1/namespaces/${NS}/daemonsets/dns-default`, { spec: { template: { spec: { nodeSelector: { ...selector, 'example.com/pool': 'dns' } } } } });
    await waitFor(() => JSON.stringify(ds()?.['spec'].template.spec.nodeSelector) === JSON.stringify(selector), 10_000).catch((e: Error) => assert.fail(`${e.message}${context()}`));
    const selectorMs = Date.now() - edited2;
    // Generous bounds for a loaded machine; the figures go to the log of the test run.
    t.diagnostic(`hand edit put back: Corefile ${corefileMs} ms, nodeSelector ${selectorMs} ms`);
    assert.ok(corefileMs < 5000 && selectorMs < 5000, `${corefileMs} ms, ${selectorMs} ms`);
    assert.match(operator.output(), /ConfigMap\/dns-default: data\.Corefile was changed by another client/);
  } finally {
    await operator.stop();
    await api.close();
  }
});

test('kdns operator run --once --no-create-default: no DNS resource, none created, exit 1', async () => {
  const api = new FakeApiServer(OPERATOR_RESOURCES);
  seedKubeadm(api);
  const url = await api.listen();
  try {
    const r = await runKdns(['operator', 'run', '--kubeconfig', writeKubeconfig(url), '--once', '--no-create-default']);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(api.get('/apis/operator.openshift.io/v1/dnses', undefined, 'default'), undefined);
    assert.match(r.stderr, /no DNS resource named "default": nothing to do/);
  } finally {
    await api.close();
  }
});

test('kdns operator run --help names --service-cidr with its default and --no-create-default', async () => {
  const r = await runKdns(['operator', 'run', '--help']);
  assert.equal(r.code, 0);
  const help = r.stdout.replace(/\s+/g, ' ');
  assert.match(help, /--service-cidr <cidr> service network: the DNS Service gets its 10th address, as on OpenShift \(default: against an API server, the address the Service already has, else one the API server allocates; with --cluster and for render, 10\.96\.0\.0\/12\)/);
  assert.match(help, /--no-create-default against an API server: do not create the DNS resource "default"/);
});
