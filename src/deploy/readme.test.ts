// The README's install and swap-in commands: every overlay it applies is a kustomization the
// manifests test renders and validates, every file it names exists, and each `kubectl set
// image` it gives, run offline (--local) on the stock manifest's shape, changes exactly that
// container's image to the one deploy/Dockerfile or deploy/nodecache.Dockerfile builds and
// keeps what the image needs to start.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { runKdns } from '../testutil/kdns.js';
import { publishedImages, repoRoot } from '../testutil/deploy.js';
import { missing } from '../testutil/upstream.js';

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
      const file = `${root}src/deploy/testdata/${s.fixture}`;
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
