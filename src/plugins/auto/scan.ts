// Which zone files a directory holds: every file below it (recursively, symlinks followed)
// whose name matches the regexp, with the origin the template makes of the match.

import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fqdn, isValidDomainName, lowerName } from '../../lib/dns/name.js';

/**
 * The origin for a file name, or undefined when the regexp does not match it (unanchored, as
 * CoreDNS's Go regexp). `{N}` in the template is the N-th group of the match.
 */
export function originFor(re: RegExp, template: string, fileName: string): string | undefined {
  const m = re.exec(fileName);
  if (!m) return undefined;
  const text = template.replace(/\{([0-9]+)\}/g, (_, n: string) => m[Number(n)] ?? '');
  if (text === '' || !isValidDomainName(text)) return undefined;
  return lowerName(fqdn(text));
}

export interface ScanResult {
  /** origin → path of its zone file. */
  zones: Map<string, string>;
  /** Things a user should hear about: unreadable folders, two files for one origin. */
  warnings: string[];
}

/** Every file below `dir` in name order, as filepath.Walk visits them. */
function* filesBelow(dir: string, warnings: string[]): Generator<string> {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (e) {
    warnings.push(`error reading ${dir}: ${(e as Error).message}`);
    return;
  }
  for (const name of names) {
    // The kubelet's ConfigMap volume holds each file three times: the key's symlink, `..data`
    // (a symlink to the current version) and the timestamped `..2026_…` folder it points at.
    // Only the keys are the user's; the rest would name every zone twice more.
    if (name.startsWith('..')) continue;
    const path = join(dir, name);
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      continue; // a dangling symlink or a file gone since readdir
    }
    if (isDir) yield* filesBelow(path, warnings);
    else yield path;
  }
}

export function scanDirectory(dir: string, re: RegExp, template: string): ScanResult {
  const zones = new Map<string, string>();
  const warnings: string[] = [];
  let root = dir;
  try {
    // A ConfigMap mount is a symlink to a folder: walk what it points at.
    root = realpathSync(dir);
  } catch {
    warnings.push(`directory ${dir} does not exist`);
    return { zones, warnings };
  }
  for (const path of filesBelow(root, warnings)) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const origin = originFor(re, template, name);
    if (origin === undefined) continue;
    const previous = zones.get(origin);
    if (previous !== undefined) {
      warnings.push(`several zone files match origin ${origin}: using ${previous}, not ${path}`);
      continue;
    }
    zones.set(origin, path);
  }
  return { zones, warnings };
}
