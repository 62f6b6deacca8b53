// The files of a manifest folder: which names are manifests, the folder walked recursively in a
// fixed order, and each file read and parsed (manifesttext.ts). An unreadable file is an error
// value like a malformed one.

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseManifests, type ManifestResult } from './manifesttext.js';

export interface ManifestFileResult extends ManifestResult {
  file: string;
}

/** Files a manifest directory holds; anything else (README, editor backups) is not ours to read. */
export function isManifestFile(name: string): boolean {
  return !name.startsWith('.') && /\.(ya?ml|json)$/i.test(name);
}

/** Reads one file; an unreadable file is an error value like a malformed one. */
export async function loadManifestFile(path: string): Promise<ManifestFileResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return { file: path, objects: [], errors: [{ file: path, line: 0, message: `cannot read: ${(err as Error).message}` }] };
  }
  return { file: path, ...parseManifests(text, path) };
}

/**
 * Reads every manifest file in a directory and its subdirectories (sorted by path, so the
 * result does not depend on the file system's order). Hidden entries are skipped.
 */
export async function loadManifestDir(dir: string): Promise<ManifestFileResult[]> {
  const files = await listManifestFiles(dir);
  const results: ManifestFileResult[] = [];
  for (const f of files) results.push(await loadManifestFile(f));
  return results;
}

/** Manifest files under `dir`, recursively, sorted. Throws only when `dir` itself cannot be read. */
export async function listManifestFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, top: boolean): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (err) {
      if (top) throw err;
      return; // a subfolder removed while we walk: its files are simply gone
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p, false);
      else if ((e.isFile() || e.isSymbolicLink()) && isManifestFile(e.name)) out.push(p);
    }
  };
  await walk(dir, true);
  return out.sort();
}
