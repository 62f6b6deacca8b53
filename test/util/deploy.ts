// Test helpers for the checks of deploy/, examples/ and the README (test/deploy/*.test.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

/** The repository's root directory, with a trailing slash. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** A repository file's text. */
export const readRepoFile = (rel: string): string => readFileSync(`${repoRoot}${rel}`, 'utf8');

export interface BaseImage {
  /** The short name the manifests use (kdns, kdns-nodecache). */
  name: string;
  newName: string;
  newTag: string;
}

/** The images deploy/base/ maps the manifests' short names to. */
export function baseImages(): BaseImage[] {
  return (parse(readRepoFile('deploy/base/kustomization.yaml')) as { images: BaseImage[] }).images;
}

/** `name:tag` of every image deploy/base/ publishes. */
export function publishedImages(): Set<string> {
  return new Set(baseImages().map((i) => `${i.newName}:${i.newTag}`));
}

/** `text` with `from` replaced by `to`, failing when `from` is not there (the test must follow the file). */
export function rewrite(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `${JSON.stringify(from)} not found in:\n${text}`);
  return text.replace(from, to);
}

/** A rendered object, loosely typed: the tests' assertions are the type check. */
export type RenderedObject = Record<string, any>;

/** `kubectl kustomize DIR` (DIR relative to the repository root), parsed. */
export function renderKustomization(dir: string): RenderedObject[] {
  const r = spawnSync('kubectl', ['kustomize', `${repoRoot}${dir}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.stderr || r.error?.message}`);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as RenderedObject);
}

/**
 * `kubectl kustomize` of a throwaway overlay that adds `components` to the kustomization `dir`
 * (paths relative to the repository root), as a user's overlay does; parsed.
 */
export function renderWithComponents(dir: string, components: readonly string[]): RenderedObject[] {
  const overlay = mkdtempSync(join(tmpdir(), 'kdns-overlay-'));
  // kustomize takes only relative paths to other kustomizations.
  const rel = (p: string): string => relative(overlay, `${repoRoot}${p}`);
  try {
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      ['apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization', 'resources:', `  - ${rel(dir)}`, 'components:', ...components.map((c) => `  - ${rel(c)}`), ''].join('\n'),
    );
    const r = spawnSync('kubectl', ['kustomize', overlay], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} + ${components.join(' + ')} failed: ${r.stderr || r.error?.message}`);
    return parseAllDocuments(r.stdout).map((d) => d.toJS() as RenderedObject);
  } finally {
    rmSync(overlay, { recursive: true, force: true });
  }
}

/** The object of `kind` named `name` in a rendering. */
export function findObject(objs: readonly RenderedObject[], kind: string, name: string): RenderedObject {
  const o = objs.find((x) => x['kind'] === kind && x['metadata']?.name === name);
  assert.ok(o, `no ${kind} ${name}`);
  return o;
}
