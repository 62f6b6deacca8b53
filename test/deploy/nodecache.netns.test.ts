// deploy/nodecache as a node runs it: the DaemonSet's container, rendered by `kubectl
// kustomize`, started with its exact args in a network namespace standing for the node
// (hostNetwork) and a mount namespace holding its volumes as the kubelet mounts them (the
// node-local-dns ConfigMap's items, the emptyDir, the node's resolv.conf for dnsPolicy Default),
// the upstream Service's address in the variable the kubelet derives from services.yaml, and the
// image's iptables wrapper ahead of Debian's in PATH. Behind it: deploy/coredns's Corefile served by
// kdns on that address (moved off the API onto examples/cluster), and named as the node's
// resolver. Checked: the interface and the NOTRACK/ACCEPT rules, answers for cluster, reverse,
// external and ap.k8s.io names, the probe's health, the metrics port, a read-only /etc, and the
// teardown on SIGTERM.
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findObject, renderKustomization, repoRoot, rewrite, type RenderedObject } from '../util/deploy.js';
import { parseDig } from '../util/dig.js';
import { expectedSave, nodeLocalRules } from '../util/iptables.js';
import { kdnsCommand } from '../util/kdns.js';
import { waitFor } from '../util/net.js';
import { NetNs, Sandbox, netnsMissing, type Proc } from '../util/netns.js';
import { configMapDir, httpGetIn, namedIn, scratchDir } from '../util/pod.js';
import { parseExposition, value } from '../util/prom.js';
import { exampleZone } from '../util/upstream.js';
import { serviceHostEnv } from '../../src/nodecache/pillars.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsMissing('named', 'dig', 'iptables', 'kubectl');
const skip = reason && !IN_CI ? reason : false;

/** kube-dns-upstream's ClusterIP: where the cluster DNS listens. */
const UPSTREAM_SVC_IP = '10.96.0.11';
const NODE_RESOLVER = '10.0.0.53';

function dig(ns: NetNs, server: string, name: string, type = 'A'): { status: string; answers: string[]; raw: string } {
  const r = parseDig(ns.run(['dig', `@${server}`, name, type, '+time=3', '+tries=1']).stdout);
  return { status: r.status, answers: r.answer.map((a) => `${a.type} ${a.data}`), raw: r.raw };
}

/** A directory holding the image's iptables wrapper under the names deploy/nodecache.Dockerfile gives it, for the front of PATH. */
function imageIptables(): string {
  const bin = scratchDir('image-bin');
  chmodSync(bin, 0o755);
  copyFileSync(`${repoRoot}deploy/nodecache-image/iptables`, join(bin, 'iptables'));
  for (const n of ['iptables-save', 'iptables-restore', 'ip6tables', 'ip6tables-save', 'ip6tables-restore']) symlinkSync('iptables', join(bin, n));
  return bin;
}

/** deploy/coredns's Corefile on the upstream Service's address, with the cluster from a folder and the node's resolver. */
function clusterCorefile(nodeResolv: string): string {
  const corefile = findObject(renderKustomization('deploy/coredns'), 'ConfigMap', 'coredns')['data'].Corefile as string;
  let text = rewrite(corefile, '.:53 {', `.:53 {\n    bind ${UPSTREAM_SVC_IP}`);
  text = rewrite(text, 'health {', `health ${UPSTREAM_SVC_IP}:8080 {`);
  text = rewrite(text, 'forward . /etc/resolv.conf', `forward . ${NODE_RESOLVER}`);
  return rewrite(text, 'autopath ap.k8s.io /etc/resolv.conf', `autopath ap.k8s.io ${nodeResolv}`);
}

/** The node the namespace stands for. */
const NODE_NAME = 'node-1';

/** An env entry's value as the kubelet gives it: its value, or the pod field it names. */
function downwardValue(e: RenderedObject): string {
  if (typeof e['value'] === 'string') return e['value'];
  const field = e['valueFrom']?.fieldRef?.fieldPath;
  if (field === 'spec.nodeName') return NODE_NAME;
  throw new Error(`env ${e['name']}: no value this test knows how to give (${JSON.stringify(e['valueFrom'])})`);
}

describe('deploy/nodecache: the DaemonSet\'s container with its exact args, in a node-like namespace', { skip }, () => {
  let ns: NetNs;
  const background: Proc[] = [];
  let cache: Proc;
  let sandbox: Sandbox;
  let emptyDir: string;
  let container: RenderedObject;
  let localIP: string;

  before(async () => {
    const objs = renderKustomization('deploy/nodecache');
    const ds = findObject(objs, 'DaemonSet', 'node-local-dns');
    const pod = ds['spec'].template.spec as RenderedObject;
    container = pod['containers'][0] as RenderedObject;
    localIP = container['livenessProbe'].httpGet.host as string;
    const upstreamSvc = findObject(objs, 'Service', 'kube-dns-upstream');

    ns = NetNs.create('node');
    ns.addDummy('cluster0', [`${UPSTREAM_SVC_IP}/32`, `${NODE_RESOLVER}/32`]);
    background.push(await namedIn(ns, NODE_RESOLVER, { 'example.test': exampleZone() }));
    const dir = scratchDir('node');
    const nodeResolv = join(dir, 'resolv.conf');
    writeFileSync(nodeResolv, `nameserver ${NODE_RESOLVER}\nsearch corp.test\n`);
    writeFileSync(join(dir, 'Corefile'), clusterCorefile(nodeResolv));
    const clusterDns = ns.spawn([process.execPath, ...kdnsCommand(['serve', '--conf', join(dir, 'Corefile'), '--cluster', `${repoRoot}examples/cluster`])]);
    background.push(clusterDns);
    await waitFor(() => clusterDns.output().includes(`listening on ${UPSTREAM_SVC_IP}:53`) || clusterDns.child.exitCode !== null, 30_000, 100);
    assert.equal(clusterDns.child.exitCode, null, clusterDns.output());

    // The pod's volumes, as the kubelet mounts them.
    const binds: Record<string, string> = { '/etc/resolv.conf': nodeResolv };
    const volumes = new Map((pod['volumes'] as RenderedObject[]).map((v) => [v['name'] as string, v]));
    for (const m of container['volumeMounts'] as RenderedObject[]) {
      const v = volumes.get(m['name']);
      assert.ok(v, `volume ${m['name']}`);
      if (v['configMap']) {
        const cm = objs.find((o) => o['kind'] === 'ConfigMap' && o['metadata'].name === v['configMap'].name);
        if (!cm) {
          assert.equal(v['configMap'].optional, true, `ConfigMap ${v['configMap'].name} is not installed and not optional`);
          continue;
        }
        const items = (v['configMap'].items ?? Object.keys(cm['data']).map((key: string) => ({ key, path: key }))) as Array<{ key: string; path: string }>;
        binds[m['mountPath']] = configMapDir(Object.fromEntries(items.map((i) => [i.path, cm['data'][i.key] as string])));
      } else if (v['emptyDir']) {
        emptyDir = scratchDir('emptydir');
        binds[m['mountPath']] = emptyDir;
      }
    }
    sandbox = new Sandbox(binds);
    // The container's env as the kubelet fills it (NODE_NAME from the downward API), no API
    // server: the workloads plugin finds no in-cluster credentials, which must not stop DNS.
    const containerEnv = Object.fromEntries((container['env'] as RenderedObject[]).map((e) => [e['name'] as string, downwardValue(e)]));
    const env = { ...containerEnv, PATH: `${imageIptables()}:${process.env.PATH}`, [serviceHostEnv(upstreamSvc['metadata'].name)]: UPSTREAM_SVC_IP };
    cache = ns.spawn([process.execPath, ...kdnsCommand(container['args'] as string[])], { env, sandbox });
    await waitFor(() => cache.output().includes(`listening on ${localIP}:53`) || cache.child.exitCode !== null, 30_000, 100).catch(() => assert.fail(cache.output()));
    assert.equal(cache.child.exitCode, null, cache.output());
  });
  after(async () => {
    await cache?.stop();
    for (const p of background) await p.stop();
    ns?.delete();
  });

  test('the interface nodelocaldns holds the local address', () => {
    const links = JSON.parse(ns.must(['ip', '-j', 'addr', 'show', 'dev', 'nodelocaldns'])) as Array<{ addr_info: Array<{ local: string; prefixlen: number }> }>;
    assert.deepEqual(links.flatMap((l) => l.addr_info.filter((a) => !a.local.startsWith('fe80:')).map((a) => `${a.local}/${a.prefixlen}`)), ['169.254.20.10/32']);
  });

  test('NodeLocal DNSCache\'s NOTRACK/ACCEPT rules for it, DNS and the probe\'s port, through the image\'s iptables', async () => {
    assert.equal(container['livenessProbe'].httpGet.port, 8080);
    const rules = (): string[] => nodeLocalRules(ns.must(['iptables-save']));
    await waitFor(() => rules().length === 14, 10_000, 100).catch(() => undefined);
    assert.deepEqual(rules(), expectedSave(['169.254.20.10']));
  });

  const answers: Array<[string, string, string[]]> = [
    ['web.demo.svc.cluster.local', 'A', ['A 10.96.100.10']],
    ['10.100.96.10.in-addr.arpa', 'PTR', ['PTR web.demo.svc.cluster.local.']],
    ['www.example.test', 'A', ['A 192.0.2.1']],
    // ClusterFirstWithAutopath: the node's search path completes the pod's, the cluster DNS expands it.
    ['web.search.demo.cluster.local.ap.k8s.io', 'A', ['CNAME web.demo.svc.cluster.local.', 'A 10.96.100.10']],
  ];
  for (const [name, type, want] of answers) {
    test(`answers ${name} ${type}`, () => {
      const r = dig(ns, localIP, name, type);
      assert.deepEqual([r.status, r.answers], ['NOERROR', want], r.raw);
    });
  }

  test('health where the liveness probe asks, metrics on the scrape annotation\'s port', () => {
    const probe = container['livenessProbe'].httpGet;
    assert.equal(httpGetIn(ns, `http://${probe.host}:${probe.port}${probe.path}`).status, 200);
    // The pod's scrape annotation (no container ports: on the host network they would be host ports).
    const port = Number(findObject(renderKustomization('deploy/nodecache'), 'DaemonSet', 'node-local-dns')['spec'].template.metadata.annotations['prometheus.io/port']);
    const samples = parseExposition(httpGetIn(ns, `http://${localIP}:${port}/metrics`).body);
    assert.ok(value(samples, 'coredns_dns_requests_total', { server: `dns://${localIP}:53`, zone: 'cluster.local.' }) >= 1);
    assert.ok(value(samples, 'coredns_forward_requests_total', { to: `${UPSTREAM_SVC_IP}:53` }) >= 1);
    for (const errortype of ['iptables', 'iptables_lock', 'interface_add', 'interface_check', 'configmap']) {
      assert.equal(value(samples, 'coredns_nodecache_setup_errors_total', { errortype }), 0, errortype);
    }
  });

  test('outside a cluster the workloads plugin says why it cannot read pods, and DNS answers all the same', () => {
    assert.match(cache.output(), /\[ERROR\] plugin\/workloads: cannot read pods: not running in a cluster \(KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset\)/);
    assert.equal(dig(ns, localIP, 'web.demo.svc.cluster.local').status, 'NOERROR');
  });

  test('the filled-in Corefile goes to the emptyDir; nothing is written under /etc (readOnlyRootFilesystem)', () => {
    assert.equal(container['securityContext'].readOnlyRootFilesystem, true);
    assert.match(readFileSync(join(emptyDir, 'Corefile'), 'utf8'), new RegExp(`forward \\. ${UPSTREAM_SVC_IP.replaceAll('.', '\\.')} \\{`));
    // Only the mount points of the volumes under /etc.
    const mountPoints = Object.keys(sandbox.binds).filter((p) => p.startsWith('/etc/')).map((p) => p.split('/')[2]);
    assert.deepEqual(readdirSync(join(sandbox.scratch, 'etc-up')).filter((f) => !mountPoints.includes(f)), []);
  });

  test('SIGTERM: exit 0, rules and interface gone', async () => {
    assert.equal(await cache.stop(), 0, cache.output());
    assert.deepEqual(nodeLocalRules(ns.must(['iptables-save'])), ['*raw', '*filter']);
    assert.notEqual(ns.run(['ip', 'link', 'show', 'nodelocaldns']).status, 0);
  });
});
