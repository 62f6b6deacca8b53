// kdns in the node-cache container of today's nodelocaldns.yaml (testdata/nodelocaldns-today.yaml:
// the node-local-dns ConfigMap and the DaemonSet's container, node-cache 1.26.4), its
// placeholders filled in by the install instructions' sed (iptables mode), started with the
// container's exact args in a network namespace standing for the node (hostNetwork) and a mount
// namespace holding its volumes as the kubelet mounts them (the ConfigMap's item at
// /etc/coredns/Corefile.base, the optional kube-dns ConfigMap absent so an empty directory, the
// node's resolv.conf for dnsPolicy Default) and a /tmp of its own for -pidfile (an overlay: node
// and the checkout may live under the host's /tmp). Behind it: a kdns cluster DNS on
// the kube-dns-upstream address and named as the node's resolver. Checked: the rendered Corefile,
// the pidfile, answers on both local addresses, the probe, the metrics port, the rules, the
// teardown; then the same DaemonSet written for today's node-cache flags: `prometheus
// __PROMETHEUS__ENDPOINT__` in the ConfigMap and -prometheus-listen-address in the args.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { repoRoot, type RenderedObject } from '../util/deploy.js';
import { parseDig } from '../util/dig.js';
import { expectedSave, nodeLocalRules } from '../util/iptables.js';
import { kdnsCommand } from '../util/kdns.js';
import { waitFor } from '../util/net.js';
import { NetNs, Sandbox, netnsMissing, type Proc } from '../util/netns.js';
import { configMapDir, httpGetIn, namedIn, scratchDir } from '../util/pod.js';
import { parseExposition, value } from '../util/prom.js';
import { exampleZone } from '../util/upstream.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsMissing('named', 'dig', 'iptables');
const skip = reason && !IN_CI ? reason : false;

const LOCAL_DNS = '169.254.20.10';
const KUBE_DNS = '10.96.0.10';
/** kube-dns-upstream's ClusterIP: where the cluster DNS listens. */
const UPSTREAM_SVC_IP = '10.96.0.11';
const NODE_RESOLVER = '10.0.0.53';

/** The install instructions' substitution for iptables mode: local address, cluster domain, kube-dns IP. */
function installSed(text: string): string {
  return text.replaceAll('__PILLAR__LOCAL__DNS__', LOCAL_DNS).replaceAll('__PILLAR__DNS__DOMAIN__', 'cluster.local').replaceAll('__PILLAR__DNS__SERVER__', KUBE_DNS);
}

const manifest = parseAllDocuments(installSed(readFileSync(`${repoRoot}test/deploy/testdata/nodelocaldns-today.yaml`, 'utf8'))).map((d) => d.toJS() as RenderedObject);
const template = manifest.find((o) => o['kind'] === 'ConfigMap')!['data'].Corefile as string;
const container = manifest.find((o) => o['kind'] === 'DaemonSet')!['spec'].template.spec.containers[0] as RenderedObject;
const args = container['args'] as string[];

/** The private /tmps' directories on /dev/shm, removed after the tests. */
const privateTmps: string[] = [];

/**
 * `cmd` with a /tmp of its own: an overlay on the host's /tmp (what is there stays visible)
 * whose writes go to `upper`, which lives on /dev/shm because an overlay's upper directory
 * may not lie inside its lower one.
 */
function withPrivateTmp(cmd: readonly string[]): { cmd: string[]; upper: string } {
  const dir = mkdtempSync('/dev/shm/kdns-tmp-');
  privateTmps.push(dir);
  const upper = join(dir, 'up');
  mkdirSync(upper);
  mkdirSync(join(dir, 'work'));
  const mount = `mount -t overlay overlay -o lowerdir=/tmp,upperdir=${upper},workdir=${join(dir, 'work')} /tmp && exec "$@"`;
  return { cmd: ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', mount, 'private-tmp', ...cmd], upper };
}

function dig(ns: NetNs, server: string, name: string, type = 'A'): { status: string; answers: string[]; raw: string } {
  const r = parseDig(ns.run(['dig', `@${server}`, name, type, '+time=3', '+tries=1']).stdout);
  return { status: r.status, answers: r.answer.map((a) => `${a.type} ${a.data}`), raw: r.raw };
}

describe("kdns in today's nodelocaldns.yaml node-cache container, exact args, in a node-like namespace", { skip }, () => {
  let ns: NetNs;
  const background: Proc[] = [];
  let sandbox: Sandbox;
  let tmp: string;
  let cache: Proc;
  const env = { PATH: process.env.PATH, KUBE_DNS_UPSTREAM_SERVICE_HOST: UPSTREAM_SVC_IP };
  let nodeResolv: string;
  const rules = (): string[] => nodeLocalRules(ns.must(['iptables-save']));
  const start = async (argv: readonly string[], configMap: string): Promise<Proc> => {
    // The node-local-dns ConfigMap's one item, as the volume maps it; kube-dns's is optional and absent.
    const mount = (container['volumeMounts'] as RenderedObject[]).find((m) => m['mountPath'] === '/etc/coredns');
    assert.equal(mount?.['name'], 'config-volume');
    sandbox = new Sandbox({ '/etc/coredns': configMapDir({ 'Corefile.base': configMap }), '/etc/kube-dns': configMapDir({}), '/etc/resolv.conf': nodeResolv });
    // Inside the sandbox: its overlays' upper directories are under the host's /tmp, which an overlay's upper may not be.
    const run = withPrivateTmp([process.execPath, ...kdnsCommand(argv)]);
    tmp = run.upper;
    const p = ns.spawn(run.cmd, { env, sandbox });
    await waitFor(() => p.output().includes(`listening on ${LOCAL_DNS}:53`) || p.child.exitCode !== null, 30_000, 100).catch(() => assert.fail(p.output()));
    assert.equal(p.child.exitCode, null, p.output());
    return p;
  };

  before(async () => {
    ns = NetNs.create('today');
    ns.addDummy('cluster0', [`${UPSTREAM_SVC_IP}/32`, `${NODE_RESOLVER}/32`]);
    background.push(await namedIn(ns, NODE_RESOLVER, { 'example.test': exampleZone() }));
    const dir = scratchDir('clusterdns');
    nodeResolv = join(dir, 'resolv.conf');
    writeFileSync(nodeResolv, `nameserver ${NODE_RESOLVER}\n`);
    const clusterCorefile = join(dir, 'Corefile');
    writeFileSync(clusterCorefile, `.:53 {\n    bind ${UPSTREAM_SVC_IP}\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        manifests ${repoRoot}examples/cluster\n        fallthrough in-addr.arpa ip6.arpa\n    }\n    forward . ${NODE_RESOLVER}\n}\n`);
    const clusterDns = ns.spawn([process.execPath, ...kdnsCommand(['-conf', clusterCorefile])]);
    background.push(clusterDns);
    await waitFor(() => clusterDns.output().includes(`listening on ${UPSTREAM_SVC_IP}:53`) || clusterDns.child.exitCode !== null, 30_000, 100);
    assert.equal(clusterDns.child.exitCode, null, clusterDns.output());
    cache = await start(args, template);
  });
  after(async () => {
    await cache?.stop();
    for (const p of background) await p.stop();
    ns?.delete();
    for (const dir of privateTmps) rmSync(dir, { recursive: true, force: true });
  });

  test('the args are the DaemonSet\'s, sed applied', () => {
    assert.deepEqual(args, ['-localip', '169.254.20.10,10.96.0.10', '-conf', '/etc/Corefile', '-upstreamsvc', 'kube-dns-upstream', '-pidfile', '/tmp/node-cache.pid']);
  });

  test('/etc/Corefile: the template with the cluster DNS from KUBE_DNS_UPSTREAM_SERVICE_HOST and /etc/resolv.conf; the pidfile in /tmp', () => {
    const rendered = readFileSync(sandbox.etcWritten('/etc/Corefile'), 'utf8');
    assert.equal(rendered, template.replaceAll('__PILLAR__CLUSTER__DNS__', '10.96.0.11').replace('__PILLAR__UPSTREAM__SERVERS__', '/etc/resolv.conf'));
    assert.match(rendered, /^cluster\.local:53 \{\n/);
    assert.match(readFileSync(join(tmp, 'node-cache.pid'), 'utf8'), /^[0-9]+\n?$/);
  });

  const answers: Array<[string, string, string, string[]]> = [
    [LOCAL_DNS, 'web.demo.svc.cluster.local', 'A', ['A 10.96.100.10']],
    [KUBE_DNS, 'web.demo.svc.cluster.local', 'A', ['A 10.96.100.10']],
    [LOCAL_DNS, '10.100.96.10.in-addr.arpa', 'PTR', ['PTR web.demo.svc.cluster.local.']],
    [KUBE_DNS, 'www.example.test', 'A', ['A 192.0.2.1']],
  ];
  for (const [server, name, type, want] of answers) {
    test(`answers ${name} ${type} on ${server}`, () => {
      const r = dig(ns, server, name, type);
      assert.deepEqual([r.status, r.answers], ['NOERROR', want], r.raw);
    });
  }

  test('the liveness probe\'s /health, the metrics port on every address, the rules for both local addresses', async () => {
    const probe = container['livenessProbe'].httpGet;
    assert.equal(httpGetIn(ns, `http://${probe.host}:${probe.port}${probe.path}`).status, 200);
    const port = (container['ports'] as RenderedObject[]).find((p) => p['name'] === 'metrics')!['containerPort'];
    for (const host of [LOCAL_DNS, '127.0.0.1']) {
      const samples = parseExposition(httpGetIn(ns, `http://${host}:${port}/metrics`).body);
      assert.ok(value(samples, 'coredns_dns_requests_total', { server: `dns://${LOCAL_DNS}:53`, zone: 'cluster.local.' }) >= 1, host);
    }
    await waitFor(() => rules().length === 26, 10_000, 100).catch(() => undefined);
    assert.deepEqual(rules(), expectedSave([LOCAL_DNS, KUBE_DNS]));
  });

  test('SIGTERM: exit 0; rules, interface and pidfile gone', async () => {
    assert.equal(await cache.stop(), 0, cache.output());
    assert.deepEqual(rules(), ['*raw', '*filter']);
    assert.notEqual(ns.run(['ip', 'link', 'show', 'nodelocaldns']).status, 0);
    assert.equal(existsSync(join(tmp, 'node-cache.pid')), false);
  });

  test('written for today\'s node-cache: `prometheus __PROMETHEUS__ENDPOINT__` and -prometheus-listen-address put the metrics on the local address only', async () => {
    const withEndpoint = template.replaceAll('prometheus :9253', 'prometheus __PROMETHEUS__ENDPOINT__');
    assert.equal(withEndpoint.split('__PROMETHEUS__ENDPOINT__').length - 1, 4);
    cache = await start([...args, '-prometheus-listen-address', `${LOCAL_DNS}:9253`], withEndpoint);
    assert.equal(readFileSync(sandbox.etcWritten('/etc/Corefile'), 'utf8').split(`prometheus ${LOCAL_DNS}:9253\n`).length - 1, 4);
    assert.deepEqual(dig(ns, LOCAL_DNS, 'web.demo.svc.cluster.local').answers, ['A 10.96.100.10']);
    const samples = parseExposition(httpGetIn(ns, `http://${LOCAL_DNS}:9253/metrics`).body);
    assert.ok(value(samples, 'coredns_dns_requests_total', { server: `dns://${LOCAL_DNS}:53`, zone: 'cluster.local.' }) >= 1);
    assert.equal(httpGetIn(ns, 'http://127.0.0.1:9253/metrics').status, 0);
    assert.equal(await cache.stop(), 0, cache.output());
    assert.deepEqual(rules(), ['*raw', '*filter']);
  });
});
