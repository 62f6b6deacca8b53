// kdns as node-cache on a dual-stack node: today's nodelocaldns.yaml (testdata/nodelocaldns-today.yaml)
// installed for both families, -localip holding the link-local IPv4 address, a unique local IPv6
// one and the kube-dns Service's address of each family, the ConfigMap's bind lines left for the
// cache to fill in from -localip and its health line on the IPv4 address. Run in a network
// namespace standing for the node and a mount namespace holding the ConfigMap, in front of a
// kdns cluster DNS reached over IPv6 (an IPv6-primary cluster's kube-dns-upstream). Checked: the
// interface holds all four addresses; iptables-save has the IPv4 addresses' rules and
// ip6tables-save the IPv6 ones'; dig over UDP and TCP on each address; and SIGTERM takes both
// families' rules and every address away.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { repoRoot, type RenderedObject } from '../util/deploy.js';
import { parseDig } from '../util/dig.js';
import { expectedSave, nodeLocalRules } from '../util/iptables.js';
import { kdnsCommand } from '../util/kdns.js';
import { waitFor } from '../util/net.js';
import { NetNs, Sandbox, netnsMissing, type Proc } from '../util/netns.js';
import { configMapDir, httpGetIn, scratchDir } from '../util/pod.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsMissing('dig', 'iptables', 'ip6tables');
const skip = reason && !IN_CI ? reason : false;

const LOCAL_V4 = '169.254.20.10';
const LOCAL_V6 = 'fd00::10';
const KUBE_DNS_V4 = '10.96.0.10';
const KUBE_DNS_V6 = 'fd00:10:96::a';
/** kube-dns-upstream's ClusterIP (IPv6-primary cluster): where the cluster DNS listens. */
const UPSTREAM_SVC_V6 = 'fd00:10:96::b';
const UPSTREAM_SVC_V4 = '10.96.0.11';

const manifest = parseAllDocuments(readFileSync(`${repoRoot}test/deploy/testdata/nodelocaldns-today.yaml`, 'utf8')).map((d) => d.toJS() as RenderedObject);
/** The install for both families: the cluster domain, the probe's address; bind lines filled in by the cache from -localip. */
const template = (manifest.find((o) => o['kind'] === 'ConfigMap')!['data'].Corefile as string)
  .replaceAll('__PILLAR__DNS__DOMAIN__', 'cluster.local')
  .replace('health __PILLAR__LOCAL__DNS__:8080', `health ${LOCAL_V4}:8080`);
const stockArgs = manifest.find((o) => o['kind'] === 'DaemonSet')!['spec'].template.spec.containers[0]['args'] as string[];
/** The DaemonSet's args with both families' addresses (the pidfile left out: it is not what this test is about). */
const args = ['-localip', [LOCAL_V4, LOCAL_V6, KUBE_DNS_V4, KUBE_DNS_V6].join(','), ...stockArgs.slice(2, 6)];

function dig(ns: NetNs, server: string, name: string, tcp: boolean): { status: string; answers: string[]; raw: string } {
  const r = parseDig(ns.run(['dig', `@${server}`, name, 'A', '+time=3', '+tries=1', ...(tcp ? ['+tcp'] : [])]).stdout);
  return { status: r.status, answers: r.answer.map((a) => `${a.type} ${a.data}`), raw: r.raw };
}

describe('kdns as node-cache with IPv4 and IPv6 local addresses, in a node-like namespace', { skip }, () => {
  let ns: NetNs;
  let clusterDns: Proc;
  let cache: Proc;
  let sandbox: Sandbox;
  const saved = (tool: 'iptables-save' | 'ip6tables-save'): string[] => nodeLocalRules(ns.must([tool]));
  /** Every global address in the namespace, by interface. */
  const addresses = (): string[] => {
    const links = JSON.parse(ns.must(['ip', '-j', 'addr', 'show'])) as Array<{ ifname: string; addr_info: Array<{ local: string; prefixlen: number; scope: string }> }>;
    return links.flatMap((l) => l.addr_info.filter((a) => a.scope === 'global').map((a) => `${l.ifname} ${a.local}/${a.prefixlen}`));
  };

  before(async () => {
    ns = NetNs.create('dualstack');
    // The cluster's IPv6 addresses usable at once, not after duplicate address detection (the cache's own get nodad).
    ns.must(['sysctl', '-q', '-w', 'net.ipv6.conf.default.accept_dad=0']);
    ns.addDummy('cluster0', [`${UPSTREAM_SVC_V4}/32`, `${UPSTREAM_SVC_V6}/128`]);
    const dir = scratchDir('clusterdns');
    const clusterCorefile = join(dir, 'Corefile');
    writeFileSync(clusterCorefile, `.:53 {\n    bind ${UPSTREAM_SVC_V4} ${UPSTREAM_SVC_V6}\n    kubernetes cluster.local {\n        manifests ${repoRoot}examples/cluster\n    }\n}\n`);
    clusterDns = ns.spawn([process.execPath, ...kdnsCommand(['-conf', clusterCorefile])]);
    await waitFor(() => clusterDns.output().includes(`listening on ${UPSTREAM_SVC_V4}:53`) || clusterDns.child.exitCode !== null, 30_000, 100);
    assert.equal(clusterDns.child.exitCode, null, clusterDns.output());
    const nodeResolv = join(dir, 'resolv.conf');
    writeFileSync(nodeResolv, `nameserver ${UPSTREAM_SVC_V4}\n`);
    sandbox = new Sandbox({ '/etc/coredns': configMapDir({ 'Corefile.base': template }), '/etc/resolv.conf': nodeResolv });
    cache = ns.spawn([process.execPath, ...kdnsCommand(args)], { env: { PATH: process.env.PATH, KUBE_DNS_UPSTREAM_SERVICE_HOST: UPSTREAM_SVC_V6 }, sandbox });
    await waitFor(() => cache.output().includes(`listening on ${LOCAL_V4}:53`) || cache.child.exitCode !== null, 30_000, 100).catch(() => assert.fail(cache.output()));
    assert.equal(cache.child.exitCode, null, cache.output());
  });
  after(async () => {
    await cache?.stop();
    await clusterDns?.stop();
    ns?.delete();
  });

  test('the rendered Corefile binds both families and forwards to the IPv6 cluster DNS', () => {
    const rendered = readFileSync(sandbox.etcWritten('/etc/Corefile'), 'utf8');
    assert.equal(rendered.split(`bind ${LOCAL_V4} ${LOCAL_V6} ${KUBE_DNS_V4} ${KUBE_DNS_V6} \n`).length - 1, 4, rendered);
    assert.equal(rendered.split(`forward . ${UPSTREAM_SVC_V6} {\n`).length - 1, 3, rendered);
  });

  test('the interface holds the four addresses, /32 and /128', () => {
    assert.deepEqual(
      addresses().filter((a) => a.startsWith('nodelocaldns ')),
      ['nodelocaldns 169.254.20.10/32', 'nodelocaldns 10.96.0.10/32', 'nodelocaldns fd00:10:96::a/128', 'nodelocaldns fd00::10/128'],
    );
  });

  test('iptables-save: the IPv4 addresses\' rules; ip6tables-save: the IPv6 addresses\'', async () => {
    await waitFor(() => saved('iptables-save').length === 26 && saved('ip6tables-save').length === 26, 10_000, 100).catch(() => undefined);
    assert.deepEqual(saved('iptables-save'), expectedSave([LOCAL_V4, KUBE_DNS_V4]));
    assert.deepEqual(saved('ip6tables-save'), expectedSave([LOCAL_V6, KUBE_DNS_V6]));
  });

  for (const server of [LOCAL_V4, LOCAL_V6, KUBE_DNS_V4, KUBE_DNS_V6]) {
    for (const tcp of [false, true]) {
      test(`answers on ${server} over ${tcp ? 'TCP' : 'UDP'}`, () => {
        const r = dig(ns, server, 'web.demo.svc.cluster.local', tcp);
        assert.deepEqual([r.status, r.answers], ['NOERROR', ['A 10.96.100.10']], r.raw);
      });
    }
  }

  test('health on the IPv4 address, where the liveness probe asks', () => {
    assert.deepEqual(httpGetIn(ns, `http://${LOCAL_V4}:8080/health`), { status: 200, body: 'OK' });
  });

  test('SIGTERM: exit 0; both families\' rules, the interface and its addresses gone', async () => {
    assert.equal(await cache.stop(), 0, cache.output());
    assert.deepEqual(saved('iptables-save'), ['*raw', '*filter']);
    assert.deepEqual(saved('ip6tables-save'), ['*raw', '*filter']);
    assert.notEqual(ns.run(['ip', 'link', 'show', 'nodelocaldns']).status, 0);
    assert.deepEqual(addresses(), ['cluster0 10.96.0.11/32', 'cluster0 fd00:10:96::b/128']);
  });
});
