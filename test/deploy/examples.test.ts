// The README's local example of the node cache with autopath, run as the README says (ports
// moved to free loopback ones, and the node's resolvers to a port nothing listens on, so no
// query leaves loopback): a ClusterFirstWithAutopath pod's resolv.conf, and its first query
// through `kdns nodecache` in front of `kdns serve`.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { repoRoot, rewrite } from '../util/deploy.js';
import { answers, dig } from '../util/dig.js';
import { runKdns, startKdns } from '../util/kdns.js';
import { freePort, waitFor } from '../util/net.js';
import { missing } from '../util/upstream.js';

const root = repoRoot;
const example = (name: string): string => `${root}examples/nodecache/${name}`;

/** The README's shell commands that start with `prefix`, continuation lines joined, `&` and comments dropped, as argv. */
function readmeCommands(prefix: string): string[][] {
  const text = readFileSync(`${root}README.md`, 'utf8').replace(/\\\n\s*/g, ' ');
  return text
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .map((l) => l.replace(/\s*#.*$/, '').replace(/\s*&$/, '').split(/\s+/));
}
const readmeCommand = (prefix: string): string[] => {
  const found = readmeCommands(prefix);
  assert.equal(found.length, 1, `one README command starting ${JSON.stringify(prefix)}`);
  return found[0]!;
};

describe('examples/nodecache', () => {
  test('pod.yaml: one search path under ap.k8s.io, the node cache as nameserver', async () => {
    const argv = readmeCommand('npx kdns resolvconf -f examples/nodecache/pod.yaml');
    const r = await runKdns(argv.slice(2).map((a) => (a === 'examples/nodecache/pod.yaml' ? example('pod.yaml') : a)));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'search search.demo.cluster.local.ap.k8s.io\nnameserver 169.254.20.10\nnameserver 10.96.0.10\noptions ndots:5\n');
  });

  /** examples/nodecache/Corefile served on free loopback ports, answering for the demo cluster. */
  async function startClusterDNS(): Promise<{ port: number; dead: number; resolv: string; dir: string; stop: () => Promise<void> }> {
    const [port, dead] = await Promise.all([freePort(), freePort()]);
    const dir = mkdtempSync(join(tmpdir(), 'kdns-example-nodecache-'));
    const resolv = join(dir, 'resolv.conf');
    writeFileSync(resolv, `nameserver 127.0.0.1\nsearch corp.test\n`);
    let corefile = readFileSync(example('Corefile'), 'utf8');
    corefile = rewrite(corefile, '.:1053 {', `.:${port} {`);
    corefile = rewrite(corefile, 'manifests ../cluster', `manifests ${root}examples/cluster`);
    corefile = rewrite(corefile, 'autopath ap.k8s.io /etc/resolv.conf', `autopath ap.k8s.io ${resolv}`);
    corefile = rewrite(corefile, 'forward . /etc/resolv.conf', `forward . 127.0.0.1:${dead}`);
    writeFileSync(join(dir, 'Corefile'), corefile);
    const serve = startKdns(['serve', '--conf', join(dir, 'Corefile')]);
    await waitFor(async () => (await dig('web.demo.svc.cluster.local', 'A', { port }).catch(() => undefined))?.status === 'NOERROR', 20_000);
    return { port, dead, resolv, dir, stop: serve.stop };
  }

  const AUTOPATH_ANSWER = ['A 10.96.100.10', 'CNAME web.demo.svc.cluster.local.'];

  test('the README\'s commands: a short name answered in one query through the node cache', { skip: missing('dig', 'bind9-dnsutils') }, async () => {
    assert.deepEqual(readmeCommand('npx kdns serve --conf examples/nodecache/Corefile'), ['npx', 'kdns', 'serve', '--conf', 'examples/nodecache/Corefile']);
    const cluster = await startClusterDNS();
    const [cache, health, metrics] = await Promise.all([freePort(), freePort(), freePort()]);
    // The README's command, on free ports and with this test's resolv.conf as the node's.
    const ports: Record<string, number> = { '1053': cluster.port, '1054': cache, '8081': health, '9254': metrics };
    const args = readmeCommand('npx kdns nodecache')
      .slice(2)
      .map((a) => a.replace(/(?<=^|:)(1053|1054|8081|9254)$/, (p) => String(ports[p])));
    assert.deepEqual(args.filter((a) => /^(1053|1054|8081|9254)$|:(1053|1054|8081|9254)$/.test(a)), []);
    const nodecache = startKdns([...args, '--upstream', `127.0.0.1:${cluster.dead}`, '--resolv-conf', cluster.resolv]);
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${health}/health`).catch(() => undefined))?.status === 200, 20_000);
      const digArgs = readmeCommand('dig @127.0.0.1 -p 1054');
      assert.equal(digArgs[4], 'web.search.demo.cluster.local.ap.k8s.io');
      assert.deepEqual(answers(await dig(digArgs[4], 'A', { port: cache })), AUTOPATH_ANSWER);
      assert.deepEqual(answers(await dig('db.search.demo.cluster.local.ap.k8s.io', 'A', { port: cache })).length, 4);
    } finally {
      await Promise.all([nodecache.stop(), cluster.stop()]);
    }
  });

  test('the README\'s ap.k8s.io block for the node-local-dns ConfigMap, placeholders filled in, expands a short name', { skip: missing('dig', 'bind9-dnsutils') }, async () => {
    const block = /```corefile\n([\s\S]*?)```/.exec(readFileSync(`${root}README.md`, 'utf8'))?.[1];
    assert.ok(block, 'a corefile block in the README');
    const cluster = await startClusterDNS();
    const [cache, metrics] = await Promise.all([freePort(), freePort()]);
    let text = block.replace(/^ {3}/gm, '');
    text = rewrite(text, 'ap.k8s.io:53 {', `ap.k8s.io:${cache} {`);
    // As node-cache fills them: its local address, no kube-dns address, the upstream Service.
    text = rewrite(text, '__PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__', '127.0.0.1 ');
    text = rewrite(text, '__PILLAR__CLUSTER__DNS__', `127.0.0.1:${cluster.port}`);
    text = rewrite(text, 'searchpath /etc/resolv.conf', `searchpath ${cluster.resolv}`);
    text = rewrite(text, 'prometheus :9253', `prometheus 127.0.0.1:${metrics}`);
    writeFileSync(join(cluster.dir, 'Corefile.nodecache'), text);
    const nodecache = startKdns(['serve', '--conf', join(cluster.dir, 'Corefile.nodecache')]);
    try {
      await waitFor(async () => (await dig('web.search.demo.cluster.local.ap.k8s.io', 'A', { port: cache }).catch(() => undefined))?.status === 'NOERROR', 20_000);
      assert.deepEqual(answers(await dig('web.search.demo.cluster.local.ap.k8s.io', 'A', { port: cache })), AUTOPATH_ANSWER);
    } finally {
      await Promise.all([nodecache.stop(), cluster.stop()]);
    }
  });
});

describe('the demo under CoreDNS\'s command line', { skip: missing('dig', 'bind9-dnsutils') }, () => {
  test('the README\'s `npx kdns -conf examples/Corefile -dns.port 1053` answers for the demo cluster', async () => {
    const argv = readmeCommand('npx kdns -conf');
    assert.deepEqual(argv, ['npx', 'kdns', '-conf', 'examples/Corefile', '-dns.port', '1053']);
    const [port, health, ready, metrics] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    let corefile = readFileSync(`${root}examples/Corefile`, 'utf8');
    corefile = rewrite(corefile, '.:1053 {', `.:${port} {`);
    corefile = rewrite(corefile, 'health 127.0.0.1:8080', `health 127.0.0.1:${health}`);
    corefile = rewrite(corefile, 'ready 127.0.0.1:8181', `ready 127.0.0.1:${ready}`);
    corefile = rewrite(corefile, 'prometheus 127.0.0.1:9153', `prometheus 127.0.0.1:${metrics}`);
    corefile = rewrite(corefile, 'manifests cluster', `manifests ${root}examples/cluster`);
    const dir = mkdtempSync(join(tmpdir(), 'kdns-example-coredns-'));
    writeFileSync(join(dir, 'Corefile'), corefile);
    const kdns = startKdns(argv.slice(2).map((a) => (a === 'examples/Corefile' ? join(dir, 'Corefile') : a === '1053' ? String(port) : a)));
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${ready}/ready`).catch(() => undefined))?.status === 200, 20_000).catch(() => assert.fail(kdns.output()));
      assert.deepEqual(answers(await dig('web.demo.svc.cluster.local', 'A', { port })), ['A 10.96.100.10']);
    } finally {
      await kdns.stop();
    }
  });
});
