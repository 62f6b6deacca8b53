// The Dockerfiles, read (no container engine needed): one per image, on the current Node.js
// LTS, the user each image runs as, files they copy that exist, the same node flags as
// `npm start`, and image names that are the ones the manifests (deploy/base/) use and the
// README tells users to build and push.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { baseImages, readRepoFile, repoRoot } from '../util/deploy.js';

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
}

const IMAGES: Image[] = [
  { dockerfile: 'deploy/Dockerfile', shortName: 'kdns', user: '65532:65532' },
  // Root, as NodeLocal DNSCache's image: the interface and iptables rules need NET_ADMIN, which
  // Kubernetes gives no non-root user; the DaemonSet drops every other capability.
  { dockerfile: 'deploy/nodecache.Dockerfile', shortName: 'kdns-nodecache', user: '0:0' },
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
      const tags = froms.map((l) => l.split(/\s+/)[1]!);
      assert.deepEqual(
        tags.filter((t) => !t.startsWith(`node:${NODE_LTS}-`) && !t.startsWith(`gcr.io/distroless/nodejs${NODE_LTS}-`)),
        [],
      );
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
      assert.deepEqual(sources.filter((s) => !existsSync(`${root}${s}`)), []);
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
});
