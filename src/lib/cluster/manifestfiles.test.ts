import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isManifestFile, loadManifestDir } from './manifestfiles.js';

const fileNames: Array<[string, boolean]> = [
  ['a.yaml', true],
  ['a.YML', true],
  ['a.json', true],
  ['.a.yaml', false],
  ['a.yaml~', false],
  ['README.md', false],
];
for (const [name, expected] of fileNames) {
  test(`isManifestFile(${name}) = ${expected}`, () => assert.equal(isManifestFile(name), expected));
}

test('loadManifestDir reads subfolders in path order and skips other files', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kdns-manifests-'));
  try {
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'b.yaml'), 'apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n');
    await writeFile(join(dir, 'sub', 'a.json'), '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}');
    await writeFile(join(dir, 'notes.txt'), 'not: [yaml');
    await writeFile(join(dir, 'bad.yml'), 'kind: [\n');
    const results = await loadManifestDir(dir);
    assert.deepEqual(
      results.map((r) => [r.file.slice(dir.length + 1), r.objects.map((o) => o.metadata.name), r.errors.length]),
      [
        ['b.yaml', ['b'], 0],
        ['bad.yml', [], 1],
        ['sub/a.json', ['a'], 0],
      ],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
