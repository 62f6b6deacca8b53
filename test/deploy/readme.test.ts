// The README's install and swap-in commands: every overlay it applies is a kustomization the
// manifests test renders and validates, every file it names exists, and each `kubectl set
// image` it gives, run offline (--local) on the stock manifest's shape, changes exactly that
// container's image to the one deploy/Dockerfile or deploy/nodecache.Dockerfile builds and
// keeps what the image needs to start; the metrics it lists are served.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { dig } from '../util/dig.js';
import { runKdns, startKdns } from '../util/kdns.js';
import { freePort, waitFor } from '../util/net.js';
import { parseExposition } from '../util/prom.js';
import { publishedImages, repoRoot } from '../util/deploy.js';
import { missing } from '../util/upstream.js';

const root = repoRoot;
const readme = readFileSync(`${root}README.md`, 'utf8');

// A loose view of parsed YAML: the assertions are the type check.
type Obj = Record<string, any>;

const published = publishedImages();

describe('README', () => {
  test('every overlay it applies, deletes or renders is a kustomization', () => {
    const dirs = [...readme.matchAll(/kubectl (?:apply -k|delete -k|kustomize) ([\w./-]+)/g)].map((m) => m[1]!.replace(/\/$/, ''));
    assert.ok(dirs.length >= 5);
    assert.deepEqual(
      dirs.filter((d) => !/^kind: Kustomization$/m.test(existsSync(`${root}${d}/kustomization.yaml`) ? readFileSync(`${root}${d}/kustomization.yaml`, 'utf8') : '')),
      [],
    );
  });

  test('every file and folder of the repository it names exists', () => {
    const paths = [...readme.matchAll(/`((?:deploy|examples|docs|src)\/[^`\s<]*)`/g)].map((m) => m[1]!);
    assert.ok(paths.length >= 10);
    assert.deepEqual(paths.filter((p) => !existsSync(`${root}${p}`)), []);
  });
});

describe('README one-shot kdns commands', () => {
  const commands = [...readme.matchAll(/^npx kdns ((?:validate|operator render) [^#\n]*?)\s*(?:#.*)?$/gm)].map((m) => m[1]!.split(/\s+/));
  test('there are some', () => {
    assert.ok(commands.length >= 2);
  });
  for (const argv of commands) {
    test(`kdns ${argv.join(' ')} succeeds`, async () => {
      const r = await runKdns(argv.map((a) => (a.startsWith('examples/') ? `${root}${a}` : a)));
      assert.equal(r.code, 0, r.stderr);
    });
  }
});

interface Swap {
  /** The README's command, up to the image. */
  command: RegExp;
  fixture: string;
  container: string;
  /** What the swapped container must keep for the image to start. */
  keeps: (container: Obj) => void;
}

const swaps: Swap[] = [
  {
    command: /^ *kubectl -n kube-system set image deployment\/coredns (coredns)=(\S+)$/m,
    fixture: 'kubeadm-coredns.yaml',
    container: 'coredns',
    keeps: (c) => {
      // The kdns binary carries cap_net_bind_service: the pod must leave it in the bounding set.
      assert.deepEqual(c['securityContext'].capabilities.add, ['NET_BIND_SERVICE']);
      assert.deepEqual(c['args'], ['-conf', '/etc/coredns/Corefile']);
    },
  },
  {
    command: /^ *kubectl -n kube-system set image daemonset\/node-local-dns (node-cache)=(\S+)$/m,
    fixture: 'nodelocaldns.yaml',
    container: 'node-cache',
    keeps: (c) => {
      assert.deepEqual(c['securityContext'].capabilities.add, ['NET_ADMIN']);
      assert.deepEqual(c['args'], ['-localip', '169.254.20.10,10.96.0.10', '-conf', '/etc/Corefile', '-upstreamsvc', 'kube-dns-upstream']);
    },
  },
];

describe('README swap-in commands, offline on the stock manifests', { skip: missing('kubectl', 'kubernetes-client') }, () => {
  for (const s of swaps) {
    test(`${s.fixture}: only the ${s.container} container's image changes, to a published kdns image`, () => {
      const m = s.command.exec(readme);
      assert.ok(m, `README lacks ${s.command}`);
      const image = m[2]!;
      assert.ok(published.has(image), `${image} is not an image deploy/base/ publishes`);
      const file = `${root}test/deploy/testdata/${s.fixture}`;
      const r = spawnSync('kubectl', ['set', 'image', '--local', '-f', file, '-o', 'json', `${m[1]}=${image}`], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const after = JSON.parse(r.stdout) as Obj;
      const before = parse(readFileSync(file, 'utf8')) as Obj;
      const container = after['spec'].template.spec.containers.find((c: Obj) => c['name'] === s.container);
      assert.equal(container['image'], image);
      before['spec'].template.spec.containers.find((c: Obj) => c['name'] === s.container)['image'] = image;
      // kubectl writes the empty creationTimestamp every object it prints has.
      delete after['spec'].template.metadata.creationTimestamp;
      assert.deepEqual(after['spec'], before['spec']);
      s.keeps(container);
    });
  }

  test('the rollback commands undo the same workloads', () => {
    assert.match(readme, /^kubectl -n kube-system rollout undo deployment\/coredns$/m);
    assert.match(readme, /^kubectl -n kube-system rollout undo daemonset\/node-local-dns$/m);
  });
});

describe('README: the metrics it lists are served', { skip: missing('dig', 'bind9-dnsutils') }, () => {
  const section = readme.slice(readme.indexOf('### Metrics'), readme.indexOf('###', readme.indexOf('### Metrics') + 4));
  const names = [...section.matchAll(/`(coredns_\w+)`/g)].map((m) => m[1]!);

  test('by kdns serve, once a query was answered from the cluster, from the cache, and forwarded to an upstream that answers and to one that fails its health check', async () => {
    assert.ok(names.length >= 8, section);
    const [port, metrics, dead, up] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const dir = mkdtempSync(join(tmpdir(), 'kdns-readme-metrics-'));
    writeFileSync(
      join(dir, 'Corefile'),
      `.:${port} {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:${metrics}\n    cache 30\n    kubernetes cluster.local {\n        manifests ${root}examples/cluster\n    }\n}\n` +
        `dead.test:${port} {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:${metrics}\n    forward . 127.0.0.1:${dead} {\n        health_check 100ms\n    }\n}\n` +
        // An upstream that answers: a whoami server block of the same process.
        `live.test:${port} {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:${metrics}\n    forward . 127.0.0.1:${up}\n}\n.:${up} {\n    bind 127.0.0.1\n    whoami\n}\n`,
    );
    const kdns = startKdns(['serve', '--conf', join(dir, 'Corefile')]);
    try {
      await waitFor(() => kdns.output().includes(`listening on 127.0.0.1:${port}`) || kdns.child.exitCode !== null, 20_000).catch(() => assert.fail(kdns.output()));
      for (let i = 0; i < 2; i++) await dig('web.demo.svc.cluster.local', 'A', { port });
      await dig('www.dead.test', 'A', { port });
      await dig('www.live.test', 'A', { port });
      const served = async (): Promise<Set<string>> => new Set(parseExposition(await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text()).map((s) => s.name.replace(/_(bucket|sum|count)$/, '')));
      await waitFor(async () => (await served()).has('coredns_forward_healthcheck_failure_count_total'), 10_000).catch(() => undefined);
      const have = await served();
      assert.deepEqual(names.filter((n) => !have.has(n)), []);
      assert.ok(have.has('process_resident_memory_bytes'), 'the process metrics');
    } finally {
      await kdns.stop();
    }
  });
});
