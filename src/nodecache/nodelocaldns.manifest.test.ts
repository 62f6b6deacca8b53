// kdns in place of the node-cache image of the stock nodelocaldns.yaml DaemonSet
// (kubernetes/kubernetes cluster/addons/dns/nodelocaldns), run with that container's exact
// `args:` in a network namespace standing for the node (hostNetwork) and a mount namespace
// holding its volumes: the node-local-dns ConfigMap at /etc/coredns (Corefile.base, the
// template after the install-time sed), the kube-dns ConfigMap at /etc/kube-dns, and the
// upstream Service's IP in KUBE_DNS_UPSTREAM_SERVICE_HOST. Behind it: a kdns cluster DNS on
// that IP and real named servers as the node's upstream and a stub domain's server.
// Checked: the rendered Corefile, the interface and iptables rules (iptables-save), answers
// from dig on both local addresses, the metrics, re-rendering on ConfigMap changes (an
// ap.k8s.io block added on top, stubDomains, a broken Corefile, a broken kube-dns ConfigMap),
// and the teardown on SIGTERM (or not, with -skipteardown).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { parseDig } from '../../test/util/dig.js';
import { expectedSave, nodeLocalRules } from '../../test/util/iptables.js';
import { kdnsCommand } from '../../test/util/kdns.js';
import { waitFor } from '../../test/util/net.js';
import { NetNs, Sandbox, netnsMissing, type Proc } from '../../test/util/netns.js';
import { configMapDir, httpGetIn, namedIn, scratchDir, updateConfigMap } from '../../test/util/pod.js';
import { parseExposition, value } from '../../test/util/prom.js';
import { STOCK_TEMPLATE } from '../../test/util/manifests.js';
import { exampleZone, zoneFile } from '../../test/util/upstream.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsMissing('named', 'dig', 'iptables');
const skip = reason && !IN_CI ? reason : false;

const FIXTURE = fileURLToPath(new URL('../plugins/autopath/testdata/cluster', import.meta.url));

const LOCAL_IP = '169.254.20.10';
const KUBE_DNS_IP = '10.96.0.10';
/** kube-dns-upstream's ClusterIP: where the cluster DNS (kdns) listens. */
const UPSTREAM_SVC_IP = '10.96.0.11';
const NODE_RESOLVER = '10.0.0.53';
const STUB_SERVER = '10.0.0.54';

/** The DaemonSet's args after the install-time sed (__PILLAR__LOCAL__DNS__, __PILLAR__DNS__SERVER__). */
const ARGS = ['-localip', `${LOCAL_IP},${KUBE_DNS_IP}`, '-conf', '/etc/Corefile', '-upstreamsvc', 'kube-dns-upstream', '-pidfile', '/run/node-cache/node-cache.pid'];

/** kdns's search-path block, added to the node-local-dns ConfigMap: available on top of the stock configuration. */
const AP_BLOCK = `ap.k8s.io:53 {
    errors
    cache {
            success 9984 30
            denial 9984 5
    }
    reload
    loop
    bind 169.254.20.10 10.96.0.10
    searchpath /etc/resolv.conf
    forward . __PILLAR__CLUSTER__DNS__ {
            force_tcp
    }
    prometheus :9253
    }`;

function dig(ns: NetNs, server: string, name: string, type = 'A'): { status: string; answers: string[]; raw: string } {
  const r = parseDig(ns.run(['dig', `@${server}`, name, type, '+time=3', '+tries=1']).stdout);
  return { status: r.status, answers: r.answer.map((a) => `${a.type} ${a.data}`), raw: r.raw };
}

describe('kdns with the args of the stock nodelocaldns.yaml DaemonSet, in a node-like namespace', { skip }, () => {
  let ns: NetNs;
  const background: Proc[] = [];
  let nodeLocalDns: string;
  let kubeDns: string;
  let sandbox: Sandbox;
  let tmp: string;
  let cache: Proc;
  const env = { PATH: process.env.PATH, KUBE_DNS_UPSTREAM_SERVICE_HOST: UPSTREAM_SVC_IP };
  const metrics = (): ReturnType<typeof parseExposition> => parseExposition(httpGetIn(ns, `http://${LOCAL_IP}:9353/metrics`).body);
  const iptablesRules = (): string[] => nodeLocalRules(ns.must(['iptables-save']));
  const addresses = (dev: string): string[] | undefined => {
    const r = ns.run(['ip', '-j', 'addr', 'show', 'dev', dev]);
    if (r.status !== 0) return undefined;
    const links = JSON.parse(r.stdout) as Array<{ addr_info: Array<{ local: string; prefixlen: number }> }>;
    return links.flatMap((l) => l.addr_info.filter((a) => !a.local.startsWith('fe80:')).map((a) => `${a.local}/${a.prefixlen}`));
  };
  const startCache = (args: readonly string[]): Proc => ns.spawn([process.execPath, ...kdnsCommand(args)], { env, sandbox });
  const listening = async (p: Proc): Promise<void> => {
    await waitFor(() => p.output().includes(`listening on ${LOCAL_IP}:53`) || p.child.exitCode !== null, 30_000, 100);
    assert.equal(p.child.exitCode, null, p.output());
  };

  before(async () => {
    ns = NetNs.create('node');
    ns.addDummy('cluster0', [`${UPSTREAM_SVC_IP}/32`, `${NODE_RESOLVER}/32`, `${STUB_SERVER}/32`]);
    background.push(await namedIn(ns, NODE_RESOLVER, { 'example.test': exampleZone() }));
    background.push(await namedIn(ns, STUB_SERVER, { 'stub.test': zoneFile('www IN A 192.0.2.77') }));
    const dir = scratchDir('clusterdns');
    const nodeResolv = join(dir, 'resolv.conf');
    writeFileSync(nodeResolv, `nameserver ${NODE_RESOLVER}\nsearch corp.test\n`);
    const clusterCorefile = join(dir, 'Corefile');
    writeFileSync(clusterCorefile, `.:53 {\n    bind ${UPSTREAM_SVC_IP}\n    autopath ap.k8s.io ${nodeResolv}\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        manifests ${FIXTURE}\n        fallthrough in-addr.arpa ip6.arpa\n    }\n    forward . ${NODE_RESOLVER}\n}\n`);
    const clusterDns = ns.spawn([process.execPath, ...kdnsCommand(['-conf', clusterCorefile])]);
    background.push(clusterDns);
    await waitFor(() => clusterDns.output().includes(`listening on ${UPSTREAM_SVC_IP}:53`) || clusterDns.child.exitCode !== null, 30_000, 100);
    nodeLocalDns = configMapDir({ 'Corefile.base': STOCK_TEMPLATE });
    kubeDns = configMapDir({ stubDomains: '', upstreamNameservers: '' });
    // The pidfile's folder, seen from the host (not /tmp itself: the checkout may live under it).
    tmp = scratchDir('tmp');
    sandbox = new Sandbox({ '/etc/coredns': nodeLocalDns, '/etc/kube-dns': kubeDns, '/etc/resolv.conf': nodeResolv, '/run/node-cache': tmp });
    cache = startCache(ARGS);
    await listening(cache);
  });
  after(async () => {
    await cache?.stop();
    for (const p of background) await p.stop();
    ns?.delete();
  });

  test('renders /etc/Corefile from the template: cluster DNS from KUBE_DNS_UPSTREAM_SERVICE_HOST, the rest to /etc/resolv.conf', () => {
    const rendered = readFileSync(sandbox.etcWritten('/etc/Corefile'), 'utf8');
    assert.equal(rendered, STOCK_TEMPLATE.replaceAll('__PILLAR__CLUSTER__DNS__', UPSTREAM_SVC_IP).replace('__PILLAR__UPSTREAM__SERVERS__', '/etc/resolv.conf'));
    assert.equal(readFileSync(join(tmp, 'node-cache.pid'), 'utf8').trim().length > 0, true);
  });

  test('sets up the nodelocaldns interface and the NOTRACK/ACCEPT rules for both addresses', async () => {
    assert.deepEqual(addresses('nodelocaldns'), [`${LOCAL_IP}/32`, `${KUBE_DNS_IP}/32`]);
    await waitFor(() => iptablesRules().length === 26, 10_000, 100).catch(() => undefined);
    assert.deepEqual(iptablesRules(), expectedSave([LOCAL_IP, KUBE_DNS_IP]));
  });

  const answers: Array<[string, string, string, string[]]> = [
    [LOCAL_IP, 'api.ns1.svc.cluster.local', 'A', ['A 10.96.1.10']],
    [KUBE_DNS_IP, 'db.otherns.svc.cluster.local', 'A', ['A 10.96.2.20']],
    [LOCAL_IP, '20.2.96.10.in-addr.arpa', 'PTR', ['PTR db.otherns.svc.cluster.local.']],
    [KUBE_DNS_IP, 'www.example.test', 'A', ['A 192.0.2.1']],
  ];
  for (const [server, name, type, want] of answers) {
    test(`answers ${name} ${type} on ${server}`, () => {
      const r = dig(ns, server, name, type);
      assert.deepEqual([r.status, r.answers], ['NOERROR', want], r.raw);
    });
  }

  test('health on the local address, metrics on :9253 and -metrics-listen-address (:9353)', () => {
    assert.deepEqual(httpGetIn(ns, `http://${LOCAL_IP}:8080/health`), { status: 200, body: 'OK' });
    const samples = metrics();
    for (const errortype of ['iptables', 'iptables_lock', 'interface_add', 'interface_check', 'configmap']) {
      assert.deepEqual(samples.filter((s) => s.name === 'coredns_nodecache_setup_errors_total' && s.labels.errortype === errortype).map((s) => s.value), [0], errortype);
    }
    assert.equal(value(samples, 'coredns_reload_failed_total'), 0);
    const corefileScrape = parseExposition(httpGetIn(ns, `http://${LOCAL_IP}:9253/metrics`).body);
    assert.ok(value(corefileScrape, 'coredns_dns_requests_total', { server: `dns://${LOCAL_IP}:53`, zone: 'cluster.local.' }) >= 1);
    assert.ok(value(corefileScrape, 'coredns_proxy_request_duration_seconds_count', { proxy_name: 'forward', to: `${UPSTREAM_SVC_IP}:53`, rcode: 'NOERROR' }) >= 1);
    assert.equal(value(corefileScrape, 'coredns_nodecache_setup_errors_total', { errortype: 'configmap' }), 0);
  });

  test('ConfigMap change: an ap.k8s.io block added to the template is rendered and served (search paths on top)', async () => {
    const name = 'db.otherns.search.ns1.cluster.local.ap.k8s.io';
    // Before: the "." block sends it to the node's resolver, which knows nothing of it.
    assert.notEqual(dig(ns, LOCAL_IP, name).status, 'NOERROR');
    updateConfigMap(nodeLocalDns, { 'Corefile.base': `${STOCK_TEMPLATE}${AP_BLOCK}\n` });
    const r = await waitFor(() => {
      const d = dig(ns, LOCAL_IP, name);
      return d.status === 'NOERROR' ? d : undefined;
    }, 20_000, 200);
    assert.deepEqual(r.answers, ['CNAME db.otherns.svc.cluster.local.', 'A 10.96.2.20']);
    assert.ok(readFileSync(sandbox.etcWritten('/etc/Corefile'), 'utf8').endsWith(`${AP_BLOCK.replaceAll('__PILLAR__CLUSTER__DNS__', UPSTREAM_SVC_IP)}\n`));
  });

  test('kube-dns ConfigMap change: a stub domain gets its own block', async () => {
    assert.notEqual(dig(ns, LOCAL_IP, 'www.stub.test').status, 'NOERROR');
    updateConfigMap(kubeDns, { stubDomains: `{"stub.test": ["${STUB_SERVER}"]}`, upstreamNameservers: '' });
    const r = await waitFor(() => {
      const d = dig(ns, LOCAL_IP, 'www.stub.test');
      return d.status === 'NOERROR' ? d : undefined;
    }, 20_000, 200);
    assert.deepEqual(r.answers, ['A 192.0.2.77']);
  });

  test('a ConfigMap that does not load: reload failure counted, the running configuration keeps answering', async () => {
    updateConfigMap(nodeLocalDns, { 'Corefile.base': `${STOCK_TEMPLATE}${AP_BLOCK.replace('searchpath', 'serchpath')}\n` });
    await waitFor(() => value(metrics(), 'coredns_reload_failed_total') === 1, 20_000, 200);
    await waitFor(() => /Restart failed: .*serchpath/.test(cache.output()), 5000, 100).catch(() => assert.fail(cache.output()));
    assert.equal(dig(ns, LOCAL_IP, 'db.otherns.search.ns1.cluster.local.ap.k8s.io').status, 'NOERROR');
  });

  test('a kube-dns ConfigMap that is not valid: a configmap setup error, nothing re-rendered', async () => {
    const before = readFileSync(sandbox.etcWritten('/etc/Corefile'), 'utf8');
    updateConfigMap(kubeDns, { stubDomains: '{"stub.test": [', upstreamNameservers: '' });
    await waitFor(() => value(metrics(), 'coredns_nodecache_setup_errors_total', { errortype: 'configmap' }) >= 1, 20_000, 200);
    assert.equal(readFileSync(sandbox.etcWritten('/etc/Corefile'), 'utf8'), before);
    assert.equal(dig(ns, LOCAL_IP, 'www.stub.test').status, 'NOERROR');
  });

  test('SIGTERM: exit 0, rules, interface and pidfile gone', async () => {
    assert.equal(await cache.stop(), 0, cache.output());
    assert.deepEqual(iptablesRules(), ['*raw', '*filter']);
    assert.equal(addresses('nodelocaldns'), undefined);
    assert.equal(existsSync(join(tmp, 'node-cache.pid')), false);
  });

  test('-skipteardown leaves rules and interface for the next pod, which takes them over and cleans up', async () => {
    updateConfigMap(nodeLocalDns, { 'Corefile.base': STOCK_TEMPLATE });
    const first = startCache([...ARGS, '-skipteardown']);
    await listening(first);
    // The kube-dns ConfigMap is still broken: counted, and the cache runs without it.
    assert.equal(value(metrics(), 'coredns_nodecache_setup_errors_total', { errortype: 'configmap' }), 1);
    await waitFor(() => iptablesRules().length === 26, 10_000, 100);
    assert.equal(await first.stop(), 0, first.output());
    assert.deepEqual(iptablesRules(), expectedSave([LOCAL_IP, KUBE_DNS_IP]));
    assert.deepEqual(addresses('nodelocaldns'), [`${LOCAL_IP}/32`, `${KUBE_DNS_IP}/32`]);
    cache = startCache(ARGS);
    await listening(cache);
    assert.deepEqual(dig(ns, LOCAL_IP, 'api.ns1.svc.cluster.local').answers, ['A 10.96.1.10']);
    // The rules were there: none added twice.
    assert.deepEqual(iptablesRules(), expectedSave([LOCAL_IP, KUBE_DNS_IP]));
    assert.equal(await cache.stop(), 0, cache.output());
    assert.deepEqual(iptablesRules(), ['*raw', '*filter']);
    assert.equal(addresses('nodelocaldns'), undefined);
  });

  test('-syncinterval: a rule and the interface someone deleted are put back', async () => {
    const p = startCache([...ARGS, '-syncinterval', '1']);
    try {
      await listening(p);
      await waitFor(() => iptablesRules().length === 26, 10_000, 100);
      ns.must(['iptables', '-t', 'raw', '-D', 'PREROUTING', '-p', 'udp', '-d', LOCAL_IP, '--dport', '53', '-j', 'NOTRACK', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: skip conntrack']);
      ns.must(['ip', 'link', 'del', 'nodelocaldns']);
      assert.equal(iptablesRules().length, 25);
      await waitFor(() => iptablesRules().length === 26 && addresses('nodelocaldns')?.length === 2, 10_000, 200);
      // Put back first in its chain (prepended), so only the set is compared.
      assert.deepEqual([...iptablesRules()].sort(), [...expectedSave([LOCAL_IP, KUBE_DNS_IP])].sort());
      assert.deepEqual(addresses('nodelocaldns'), [`${LOCAL_IP}/32`, `${KUBE_DNS_IP}/32`]);
      assert.deepEqual(dig(ns, LOCAL_IP, 'api.ns1.svc.cluster.local').answers, ['A 10.96.1.10']);
      assert.match(p.output(), /Added back nodelocaldns rule - -t raw PREROUTING -p udp -d 169\.254\.20\.10 --dport 53 -j NOTRACK/);
    } finally {
      assert.equal(await p.stop(), 0, p.output());
    }
    assert.deepEqual(iptablesRules(), ['*raw', '*filter']);
  });

  test('iptables held by another program: every rule counted as errortype iptables_lock, DNS served anyway', async () => {
    // In this pod only, iptables is a program that finds the xtables lock taken, as iptables does.
    const lockedIptables = join(scratchDir('iptables'), 'iptables');
    writeFileSync(lockedIptables, '#!/bin/sh\necho "Another app is currently holding the xtables lock. Stopped waiting after 5s." >&2\nexit 4\n', { mode: 0o755 });
    const locked = new Sandbox({ '/usr/sbin/iptables': lockedIptables, ...sandbox.binds });
    const p = ns.spawn([process.execPath, ...kdnsCommand(ARGS)], { env, sandbox: locked });
    try {
      await listening(p);
      await waitFor(() => value(metrics(), 'coredns_nodecache_setup_errors_total', { errortype: 'iptables_lock' }) === 24, 10_000, 200);
      assert.equal(value(metrics(), 'coredns_nodecache_setup_errors_total', { errortype: 'iptables' }), 0);
      assert.deepEqual(dig(ns, LOCAL_IP, 'api.ns1.svc.cluster.local').answers, ['A 10.96.1.10']);
      assert.deepEqual(iptablesRules(), ['*raw', '*filter']);
    } finally {
      assert.equal(await p.stop(), 0, p.output());
    }
  });
});
