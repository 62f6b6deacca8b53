// The Dockerfiles, read (no container engine needed): one per image, on the current Node.js
// LTS, base images that are build arguments with today's bases as defaults, one build stage
// for both that compiles the production code only (npm run build), the user each image runs
// as, files they copy that exist, the same node flags as `npm start`, and image names that are
// the ones the manifests (deploy/base/) use and the README tells users to build and push.
// Also the pure pieces of the podman run (test/deploy/images.podman.test.ts): which paths are
// test code, capability masks, and a manifest's container as `podman run` flags.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { describe, test } from 'node:test';
import { baseImages, readRepoFile, repoRoot } from '../util/deploy.js';
import { capNames, manifestContainer, podmanRunArgs, testCodeIn } from '../util/podman.js';

const root = repoRoot;
const read = readRepoFile;

/** Node.js 26 'Lithium' has been the Active LTS line since 2026-10-28 (Node 24 is in maintenance). */
const NODE_LTS = 26;

interface Image {
  dockerfile: string;
  /** The short name the manifests use, which deploy/base/ maps to the published image. */
  shortName: string;
  /** The user the final stage runs as. */
  user: string;
  /** The base images' build arguments and their defaults: the bases a plain `docker build` uses. */
  baseArgs: Record<string, string>;
}

const IMAGES: Image[] = [
  {
    dockerfile: 'deploy/Dockerfile',
    shortName: 'kdns',
    user: '65532:65532',
    baseArgs: { BUILD_BASE: 'node:26-trixie-slim', RUNTIME_BASE: 'gcr.io/distroless/nodejs26-debian13:nonroot' },
  },
  // Root, as NodeLocal DNSCache's image: the interface and iptables rules need NET_ADMIN, which
  // Kubernetes gives no non-root user; the DaemonSet drops every other capability.
  {
    dockerfile: 'deploy/nodecache.Dockerfile',
    shortName: 'kdns-nodecache',
    user: '0:0',
    baseArgs: { BUILD_BASE: 'node:26-trixie-slim', RUNTIME_BASE: 'node:26-trixie-slim' },
  },
];

const pkg = JSON.parse(read('package.json')) as { version: string; scripts: Record<string, string> };
const base = { images: baseImages() };
const published = (shortName: string): string => {
  const i = base.images.find((x) => x.name === shortName);
  assert.ok(i, `deploy/base/ does not map ${shortName}`);
  return `${i.newName}:${i.newTag}`;
};

/** Instruction lines (comments and blanks dropped, continuations joined). */
function instructions(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** Whether a COPY source matches something in the repository: a path, or a `*` pattern in its last part. */
function copied(source: string): boolean {
  if (!source.includes('*')) return existsSync(`${root}${source}`);
  const dir = dirname(source);
  const pattern = new RegExp(`^${basename(source).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*')}$`);
  return readdirSync(`${root}${dir === '.' ? '' : `${dir}/`}`).some((f) => pattern.test(f));
}

/** The `ARG NAME=default` lines before the first FROM: the arguments FROM lines may use. */
function globalArgs(lines: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of lines) {
    if (/^FROM\s/i.test(l)) break;
    const m = /^ARG\s+(\w+)=(\S+)$/.exec(l);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** A FROM line's image with ${NAME} replaced by its default. */
const fromImage = (line: string, args: Record<string, string>): string =>
  line.split(/\s+/)[1]!.replace(/\$\{(\w+)\}/g, (_, n: string) => {
    assert.ok(n in args, `FROM uses \${${n}}, which no ARG before the first FROM declares`);
    return args[n]!;
  });

/** The build stage's instructions: from its FROM to the next FROM. */
function buildStage(lines: readonly string[]): string[] {
  const start = lines.findIndex((l) => /^FROM\s.*\sAS build$/i.test(l));
  assert.ok(start >= 0, 'a stage named build');
  const end = lines.findIndex((l, i) => i > start && /^FROM\s/i.test(l));
  return lines.slice(start, end);
}

describe('Dockerfiles', () => {
  test('deploy/base/ maps exactly the images there are Dockerfiles for', () => {
    assert.deepEqual(base.images.map((i) => i.name).sort(), IMAGES.map((i) => i.shortName).sort());
  });

  for (const image of IMAGES) {
    const text = read(image.dockerfile);
    const lines = instructions(text);
    const froms = lines.filter((l) => /^FROM\s/i.test(l));
    const finalStage = lines.slice(lines.lastIndexOf(froms[froms.length - 1]!));

    test(`${image.dockerfile}: every stage on Node.js ${NODE_LTS}, the current LTS`, () => {
      assert.ok(froms.length >= 2, 'a build stage and a runtime stage');
      const tags = froms.map((l) => fromImage(l, globalArgs(lines)));
      assert.deepEqual(
        tags.filter((t) => !t.startsWith(`node:${NODE_LTS}-`) && !t.startsWith(`gcr.io/distroless/nodejs${NODE_LTS}-`)),
        [],
      );
    });

    test(`${image.dockerfile}: the base images are build arguments, today's bases by default`, () => {
      assert.deepEqual(globalArgs(lines), image.baseArgs);
      assert.deepEqual(froms, ['FROM ${BUILD_BASE} AS build', 'FROM ${RUNTIME_BASE}']);
    });

    test(`${image.dockerfile}: the build stage compiles with npm run build (the production code) and the native socket required`, () => {
      const stage = buildStage(lines);
      assert.ok(stage.includes('COPY package.json package-lock.json tsconfig*.json ./'), 'every tsconfig: npm run build may name any of them');
      const compile = stage.filter((l) => /\btsc\b|npm run build/.test(l));
      assert.deepEqual(compile, ['RUN npm run build && KDNS_NATIVE=required node scripts/build-native.mjs && npm prune --omit=dev']);
    });

    test(`${image.dockerfile}: runs as ${image.user}`, () => {
      const users = finalStage.filter((l) => /^USER\s/i.test(l));
      assert.equal(users[users.length - 1], `USER ${image.user}`);
    });

    test(`${image.dockerfile}: the files it copies from the repository exist`, () => {
      const sources = lines
        .filter((l) => /^COPY\s/i.test(l) && !/--from=/.test(l))
        .flatMap((l) => l.split(/\s+/).slice(1, -1).filter((a) => !a.startsWith('--')));
      assert.ok(sources.length > 0);
      assert.deepEqual(sources.filter((s) => !copied(s)), []);
      assert.ok(!lines.some((l) => /^ADD\s+https?:/i.test(l)), 'no remote ADD');
    });

    test(`${image.dockerfile}: exec-form entrypoint with the node flags of npm start`, () => {
      const entry = finalStage.find((l) => l.startsWith('ENTRYPOINT '));
      assert.ok(entry, 'ENTRYPOINT in the final stage');
      const argv = JSON.parse(entry.slice('ENTRYPOINT '.length)) as string[];
      const startFlags = pkg.scripts['start']!.split(' ').filter((a) => a.startsWith('--') && a !== '--conf');
      assert.deepEqual(argv.slice(1), [...startFlags, '/app/bin/kdns']);
    });

    test(`${image.dockerfile}: builds the image the manifests use, tagged with the package version`, () => {
      const build = /^#\s+docker build -f (\S+) -t (\S+) \.$/m.exec(text);
      assert.ok(build, 'a "docker build -f … -t … ." line in the header');
      assert.equal(build[1], image.dockerfile);
      assert.equal(build[2], published(image.shortName));
      assert.equal(build[2].split(':').pop(), pkg.version);
      assert.match(text, new RegExp(`^#\\s+docker push ${build[2].replaceAll('.', '\\.')}$`, 'm'));
    });

    test(`${image.dockerfile}: the README gives the same build and push commands`, () => {
      const readme = read('README.md');
      const tag = published(image.shortName);
      assert.ok(readme.includes(`docker build -f ${image.dockerfile} -t ${tag} .`), `README lacks the build command for ${tag}`);
      assert.ok(readme.includes(`docker push ${tag}`), `README lacks the push command for ${tag}`);
    });
  }

  test('both Dockerfiles have one build stage, instruction for instruction: one build serves both images', () => {
    const [kdns, nodecache] = IMAGES.map((i) => buildStage(instructions(read(i.dockerfile))));
    assert.deepEqual(nodecache, kdns!.slice(0, nodecache!.length));
    assert.deepEqual(kdns!.slice(nodecache!.length), ['RUN cp /usr/local/bin/node /src/node && setcap cap_net_bind_service=+ep /src/node']);
  });

  test('the README names the base images\' build arguments', () => {
    const readme = read('README.md');
    for (const arg of ['BUILD_BASE', 'RUNTIME_BASE']) assert.ok(readme.includes(`--build-arg ${arg}=`), `README lacks --build-arg ${arg}=`);
  });
});

describe('test code in an image listing', () => {
  const cases: Array<[string, boolean]> = [
    ['app/dist/cli/main.js', false],
    ['app/dist/dns/message.d.ts', false],
    ['app/dist/plugins/hosts/hosts.js.map', false],
    ['app/examples/operator/invalid/bad-zone.yaml', false],
    ['app/dist/testing.js', false],
    ['app/dist/cli/help.test.js', true],
    ['app/dist/cli/help.test.d.ts', true],
    ['app/dist/cli/help.test.js.map', true],
    ['app/dist/testutil', true],
    ['app/dist/testutil/dig.js', true],
    ['app/dist/test/util/dig.js', true],
    ['app/dist/plugins/kubernetes/testdata/cluster.yaml', true],
    ['app/dist/cluster/fakeapi.js', true],
    ['app/dist/dns/testkit.d.ts', true],
    ['app/dist/plugins/cache/bench.js', true],
    ['app/dist/plugins/prometheus/scrapebench.js.map', true],
  ];
  for (const [path, isTest] of cases) {
    test(`${path}: ${isTest ? 'test code' : 'not test code'}`, () => {
      assert.deepEqual(testCodeIn([path]), isTest ? [path] : []);
    });
  }
});

describe('capability masks of /proc/<pid>/status', () => {
  const cases: Array<[string, string[]]> = [
    ['0000000000000000', []],
    ['0000000000000400', ['NET_BIND_SERVICE']],
    ['0000000000001400', ['NET_ADMIN', 'NET_BIND_SERVICE']],
    ['0000000000002000', ['NET_RAW']],
    ['0000010000000000', ['CAP_40']],
  ];
  for (const [mask, names] of cases) {
    test(`${mask} → ${names.join(', ') || 'none'}`, () => assert.deepEqual(capNames(mask), names));
  }
});

describe('a manifest container as podman run flags', () => {
  const coredns = manifestContainer('deploy/coredns/deployment.yaml', 'Deployment', 'coredns', 'coredns');
  const nodeCache = manifestContainer('deploy/nodecache/daemonset.yaml', 'DaemonSet', 'node-local-dns', 'node-cache');

  test('the coredns Deployment: read-only root without tmpfs, no privilege escalation, NET_BIND_SERVICE alone, the ConfigMap read-only, its args', () => {
    assert.deepEqual(podmanRunArgs({ name: 'c', image: 'img', ...coredns, network: 'none', volumes: { 'config-volume': '/h/cm' } }), [
      '--name', 'c', '--network', 'none',
      '--read-only', '--read-only-tmpfs=false',
      '--security-opt', 'no-new-privileges',
      '--cap-drop', 'ALL', '--cap-add', 'NET_BIND_SERVICE',
      '-v', '/h/cm:/etc/coredns:ro',
      'img', 'serve', '--conf', '/etc/coredns/Corefile',
    ]);
  });

  test('the node-local-dns DaemonSet: root, NET_ADMIN and NET_BIND_SERVICE, NODE_NAME given, the Service variable added, writable hostPath and emptyDir', () => {
    const volumes = { 'xtables-lock': '/h/lock', 'config-volume': '/h/cm', 'kube-dns-config': '/h/kd', corefile: '/h/run' };
    assert.deepEqual(
      podmanRunArgs({ name: 'n', image: 'img', ...nodeCache, network: 'ns:/run/netns/x', volumes, env: { NODE_NAME: 'node-a', KUBE_DNS_UPSTREAM_SERVICE_HOST: '10.0.0.1' } }),
      [
        '--name', 'n', '--network', 'ns:/run/netns/x',
        '--user', '0:0',
        '--read-only', '--read-only-tmpfs=false',
        '--security-opt', 'no-new-privileges',
        '--cap-drop', 'ALL', '--cap-add', 'NET_ADMIN', '--cap-add', 'NET_BIND_SERVICE',
        '-e', 'NODE_NAME=node-a', '-e', 'KUBE_DNS_UPSTREAM_SERVICE_HOST=10.0.0.1',
        '-v', '/h/lock:/run/xtables.lock', '-v', '/h/cm:/etc/coredns:ro', '-v', '/h/kd:/etc/kube-dns:ro', '-v', '/h/run:/run/node-cache',
        'img', 'node-cache', '-localip', '169.254.20.10', '-conf', '/run/node-cache/Corefile', '-upstreamsvc', 'kube-dns-upstream',
      ],
    );
  });

  const errors: Array<[string, () => unknown, RegExp]> = [
    ['a volume without a host path', () => podmanRunArgs({ name: 'c', image: 'img', ...coredns, network: 'none', volumes: {} }), /volumeMounts config-volume \(\/etc\/coredns\): give the host path/],
    ['an env value from the pod not given', () => podmanRunArgs({ name: 'n', image: 'img', ...nodeCache, network: 'none', volumes: { 'xtables-lock': '/a', 'config-volume': '/b', 'kube-dns-config': '/c', corefile: '/d' } }), /env NODE_NAME: from spec\.nodeName: give its value/],
    [
      'a securityContext field with no translation',
      () => podmanRunArgs({ name: 'c', image: 'img', pod: coredns.pod, container: { ...coredns.container, securityContext: { privileged: true } as never }, network: 'none', volumes: { 'config-volume': '/h' } }),
      /securityContext: privileged has no podman translation/,
    ],
  ];
  for (const [what, call, message] of errors) {
    test(`${what}: a clear error`, () => assert.throws(call, message));
  }
});
