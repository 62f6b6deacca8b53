// Reading a manifest file for a reader that applies files incrementally (the directory source):
// per object its identity and a hash of its text, the object itself built only when asked for.
// A large JSON list is skimmed item by item (jsonlist.ts); anything else is parsed whole
// (manifesttext.ts) and reported the same way.

import { itemKind, jsonListItems } from './jsonlist.js';
import { collectObjects, parseManifests, type ManifestError } from './manifesttext.js';
import type { ClusterObject } from './types.js';

const NO_KINDS: ReadonlySet<string> = new Set();

/** 53-bit string hash (cyrb53): enough to tell whether an object's text changed. */
export function fingerprint(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** One object of a scanned file: its identity and content hash now, the object on demand. */
export interface ManifestEntry {
  kind: ClusterObject['kind'];
  namespace: string | undefined;
  name: string;
  fingerprint: number;
  load(): ClusterObject;
}

export interface ManifestScan {
  entries: ManifestEntry[];
  errors: ManifestError[];
}

/**
 * Like parseManifests, for a reader that applies files incrementally: each entry says which
 * object it is and hashes its content, and the object itself is built only when asked for.
 * A large JSON list (`kubectl get -o json`, 10,000 Services) is read item by item, so the whole
 * tree never exists at once and unchanged items are never materialized.
 */
export function scanManifests(text: string, file: string, skipKinds: ReadonlySet<string> = NO_KINDS): ManifestScan {
  const items = jsonListItems(text);
  if (items) {
    const entries: ManifestEntry[] = [];
    let ok = true;
    for (const [start, end] of items.ranges) {
      // Kinds the reader ignores (Pods unless `pods verified`) are not parsed at all: in a big
      // cluster they are most of the text.
      if (skipKinds.size > 0) {
        const kind = itemKind(text, start);
        if (kind !== undefined && skipKinds.has(kind)) continue;
      }
      const slice = text.slice(start, end);
      const obj = itemObject(slice, items.kind, items.apiVersion);
      if (obj === 'problem') {
        ok = false;
        break;
      }
      if (obj === undefined) continue;
      entries.push({
        kind: obj.kind,
        namespace: obj.metadata.namespace,
        name: obj.metadata.name,
        fingerprint: fingerprint(slice),
        load: () => itemObject(slice, items.kind, items.apiVersion) as ClusterObject,
      });
    }
    if (ok) return { entries, errors: [] };
  }
  const r = parseManifests(text, file, skipKinds);
  return {
    entries: r.objects.map((obj) => ({
      kind: obj.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      fingerprint: fingerprint(JSON.stringify(obj)),
      load: () => obj,
    })),
    errors: r.errors,
  };
}

/** One list item's text → the checked object, undefined for kinds we skip, 'problem' for errors. */
function itemObject(slice: string, listKind: string, listVersion: string | undefined): ClusterObject | undefined | 'problem' {
  let value: unknown;
  try {
    value = JSON.parse(slice);
  } catch {
    return 'problem';
  }
  // Read as a list of this one item, so it inherits the list's kind and apiVersion as it would in the whole list.
  const found = collectObjects({ kind: listKind, ...(listVersion !== undefined ? { apiVersion: listVersion } : {}), items: [value] });
  if (found.problems.length > 0) return 'problem';
  return found.objects[0];
}
