// One manifest file's text → the objects kdns reads and what is wrong with the rest: the YAML
// or JSON that `kubectl get -o yaml|json` writes. Multi-document YAML, `kind: List` and typed
// lists (`ServiceList`, as the API serves them) are unwrapped; kinds kdns does not read are
// skipped silently; every problem comes back as a value naming file and line, never as a throw.

import { lineOfPath, yamlDocuments, yamlValue } from './yaml.js';
import { checkObject, isRecord, type Problem, type Segment } from './objectcheck.js';
import type { ClusterObject } from './types.js';

export interface ManifestError {
  file: string;
  /** 1-based; 0 when the problem is with the file as a whole (unreadable). */
  line: number;
  message: string;
}

export interface ManifestResult {
  objects: ClusterObject[];
  errors: ManifestError[];
}

/** `file:line: message`, the form compilers and linters use, so editors can jump to it. */
export function formatManifestError(e: ManifestError): string {
  return e.line > 0 ? `${e.file}:${e.line}: ${e.message}` : `${e.file}: ${e.message}`;
}

const NO_KINDS: ReadonlySet<string> = new Set();

/**
 * Parses one file's text. `file` is only used in error messages; documents whose kind is in
 * `skipKinds` are passed over unread.
 */
export function parseManifests(text: string, file: string, skipKinds: ReadonlySet<string> = NO_KINDS): ManifestResult {
  const trimmed = text.trimStart();
  // JSON.parse is an order of magnitude faster than the YAML parser on the large `-o json`
  // dumps a real cluster produces; YAML (a superset) only runs when JSON fails or to find lines.
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    let value: unknown;
    let parsed = false;
    try {
      value = JSON.parse(text);
      parsed = true;
    } catch {
      // Not strict JSON (comments, trailing commas, or broken): the YAML path reports where.
    }
    if (parsed) {
      const found = collectObjects(value);
      if (found.problems.length === 0) return { objects: found.objects, errors: [] };
    }
  }
  return parseYaml(text, file, skipKinds);
}

function parseYaml(text: string, file: string, skipKinds: ReadonlySet<string> = NO_KINDS): ManifestResult {
  const result: ManifestResult = { objects: [], errors: [] };
  text = blankSkippedDocuments(text, skipKinds);
  const lastContent = text.trimEnd().length;
  for (const document of yamlDocuments(text)) {
    if (document.error) {
      // Unterminated constructs are reported at the end of the text; the last line with
      // something on it is where the reader should look.
      const at = Math.min(document.error.offset, Math.max(0, lastContent - 1));
      result.errors.push({ file, line: document.lineOf(at), message: document.error.message });
      continue;
    }
    // Kinds the reader ignores (Pods unless `pods verified`) are never converted or checked.
    if (skipKinds.size > 0) {
      const kind: unknown = document.doc.get('kind');
      if (typeof kind === 'string' && skipKinds.has(kind)) continue;
    }
    const found = collectObjects(yamlValue(document));
    result.objects.push(...found.objects);
    for (const p of found.problems) {
      result.errors.push({ file, line: lineOfPath(document, p.path), message: p.message });
    }
  }
  return result;
}

/** A line `---` that starts a YAML document (YAML forbids it inside content at column 0). */
const DOCUMENT_START = /^---(?=[ \t]|\r?$)/gm;
/** A block-style document's top-level `kind:`, as kubectl writes it. */
const TOP_LEVEL_KIND = /^kind:[ \t]*(["']?)([A-Za-z]+)\1[ \t]*(?:#.*)?\r?$/m;

/**
 * Empties, line for line, the documents whose top-level `kind:` is one the reader skips, so the
 * YAML parser never lexes them (in a `kubectl get pods -o yaml` dump they are nearly all of
 * it) and every other line keeps its number for error messages.
 */
function blankSkippedDocuments(text: string, skipKinds: ReadonlySet<string>): string {
  if (skipKinds.size === 0) return text;
  const starts = [0];
  for (const m of text.matchAll(DOCUMENT_START)) if (m.index > 0) starts.push(m.index);
  const parts: string[] = [];
  let blanked = false;
  for (let i = 0; i < starts.length; i++) {
    const doc = text.slice(starts[i], starts[i + 1] ?? text.length);
    const kind = TOP_LEVEL_KIND.exec(doc)?.[2];
    if (kind === undefined || !skipKinds.has(kind)) {
      parts.push(doc);
      continue;
    }
    blanked = true;
    const firstBreak = doc.indexOf('\n');
    const head = doc.startsWith('---') ? '---' : '';
    parts.push(head + '\n'.repeat(countLines(doc, firstBreak)));
  }
  return blanked ? parts.join('') : text;
}

/** Line breaks in `s` from `from` on. */
function countLines(s: string, from: number): number {
  let n = 0;
  for (let i = from; i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

export interface Collected {
  objects: ClusterObject[];
  problems: Problem[];
}

/** One document's value → the objects it holds (unwrapping lists) and what is wrong with them. */
export function collectObjects(value: unknown): Collected {
  const out: Collected = { objects: [], problems: [] };
  // A document with only comments or `---` parses to null: nothing to read, nothing wrong.
  if (value === null || value === undefined) return out;
  if (!isRecord(value)) {
    out.problems.push({ path: [], message: 'expected a Kubernetes object (a mapping with apiVersion and kind)' });
    return out;
  }
  const kind = value['kind'];
  if (typeof kind === 'string' && kind.endsWith('List') && 'items' in value) {
    collectList(value, kind, out);
    return out;
  }
  addObject(value, [], out);
  return out;
}

function collectList(list: Record<string, unknown>, kind: string, out: Collected): void {
  const items = list['items'];
  if (items === null) return;
  if (!Array.isArray(items)) {
    out.problems.push({ path: ['items'], message: `${kind}: items: Invalid value: must be a list` });
    return;
  }
  // Typed lists from the API (`ServiceList`) leave kind/apiVersion off their items.
  const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
  const listVersion = typeof list['apiVersion'] === 'string' ? list['apiVersion'] : undefined;
  items.forEach((item, i) => {
    if (isRecord(item) && itemKind !== undefined) {
      item['kind'] ??= itemKind;
      if (listVersion !== undefined) item['apiVersion'] ??= listVersion;
    }
    addObject(item, ['items', i], out);
  });
}

function addObject(value: unknown, at: Segment[], out: Collected): void {
  const checked = checkObject(value);
  if (checked === undefined) return; // not a kind kdns reads
  if (Array.isArray(checked)) {
    for (const p of checked) out.problems.push({ path: [...at, ...p.path], message: p.message });
    return;
  }
  out.objects.push(checked);
}
