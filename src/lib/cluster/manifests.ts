// Reading Kubernetes manifests: the YAML/JSON that `kubectl get -o yaml|json` writes and that
// people keep in folders. Multi-document YAML, `kind: List` and typed lists (`ServiceList`, as
// the API serves them) are unwrapped; kinds kdns does not read are skipped silently; every
// problem comes back as a value naming file and line, never as a throw.

import { readdir, readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { lineOfPath, yamlDocuments, yamlValue } from './yaml.js';
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

export interface ManifestFileResult extends ManifestResult {
  file: string;
}

/** `file:line: message`, the form compilers and linters use, so editors can jump to it. */
export function formatManifestError(e: ManifestError): string {
  return e.line > 0 ? `${e.file}:${e.line}: ${e.message}` : `${e.file}: ${e.message}`;
}

/** Files a manifest directory holds; anything else (README, editor backups) is not ours to read. */
export function isManifestFile(name: string): boolean {
  return !name.startsWith('.') && /\.(ya?ml|json)$/i.test(name);
}

type Segment = string | number;

interface Problem {
  path: Segment[];
  message: string;
}

/** Which apiVersions carry each kind; the same kind name in another group (Knative `Service`) is not ours. */
const KNOWN_KINDS: Record<string, readonly string[]> = {
  Namespace: ['v1'],
  Service: ['v1'],
  Endpoints: ['v1'],
  Pod: ['v1'],
  Node: ['v1'],
  EndpointSlice: ['discovery.k8s.io/v1', 'discovery.k8s.io/v1beta1'],
  ServiceImport: ['multicluster.x-k8s.io/v1alpha1'],
};

/** Every kind a manifest directory is read for (a reader that wants few ignores the rest). */
export const MANIFEST_KINDS: readonly string[] = Object.keys(KNOWN_KINDS);

const CLUSTER_SCOPED = new Set(['Namespace', 'Node']);

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
  const out: Collected = { objects: [], problems: [] };
  collectList({ kind: listKind, ...(listVersion !== undefined ? { apiVersion: listVersion } : {}), items: [value] }, listKind, out);
  if (out.problems.length > 0) return 'problem';
  return out.objects[0];
}

interface JsonList {
  kind: string;
  apiVersion: string | undefined;
  /** [start, end) of each element of the top-level "items" array. */
  ranges: Array<[number, number]>;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** A position in JSON text, for skimming it without building values. */
interface Cursor {
  readonly text: string;
  p: number;
}

function skipWs(c: Cursor): void {
  while (c.p < c.text.length && WS.has(c.text.charCodeAt(c.p))) c.p++;
}

function skipString(c: Cursor): boolean {
  c.p++; // opening quote
  while (c.p < c.text.length) {
    const ch = c.text.charCodeAt(c.p);
    if (ch === 0x5c) c.p += 2;
    else if (ch === 0x22) {
      c.p++;
      return true;
    } else c.p++;
  }
  return false;
}

function skipValue(c: Cursor): boolean {
  const text = c.text;
  const first = text.charCodeAt(c.p);
  if (first === 0x22) return skipString(c);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    while (c.p < text.length) {
      const d = text.charCodeAt(c.p);
      if (d === 0x22) {
        if (!skipString(c)) return false;
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) {
          c.p++;
          return true;
        }
      }
      c.p++;
    }
    return false;
  }
  const start = c.p;
  while (c.p < text.length && !WS.has(text.charCodeAt(c.p)) && !',}]'.includes(text[c.p] as string)) c.p++;
  return c.p > start;
}

/** What a member callback tells walkObject: go on, stop here (fine), or the text is not what we read. */
type Walk = 'next' | 'stop' | 'invalid';

/**
 * Walks the members of the object at the cursor: `member` gets each key with the cursor at its
 * value and leaves it after the value. 'invalid' for anything but an object (or a member that
 * says so); otherwise the cursor ends after the object, or where `member` stopped.
 */
function walkObject(c: Cursor, member: (key: string) => Walk): Walk {
  skipWs(c);
  if (c.text.charCodeAt(c.p) !== 0x7b) return 'invalid';
  c.p++;
  skipWs(c);
  if (c.text.charCodeAt(c.p) === 0x7d) {
    c.p++;
    return 'next';
  }
  for (;;) {
    skipWs(c);
    if (c.text.charCodeAt(c.p) !== 0x22) return 'invalid';
    const keyStart = c.p;
    if (!skipString(c)) return 'invalid';
    let key: string;
    try {
      key = JSON.parse(c.text.slice(keyStart, c.p)) as string;
    } catch {
      return 'invalid';
    }
    skipWs(c);
    if (c.text.charCodeAt(c.p) !== 0x3a) return 'invalid';
    c.p++;
    skipWs(c);
    const went = member(key);
    if (went !== 'next') return went;
    skipWs(c);
    const ch = c.text.charCodeAt(c.p++);
    if (ch === 0x7d) return 'next';
    if (ch !== 0x2c) return 'invalid';
  }
}

/** The value at the cursor, parsed, when it is a string; the cursor ends after it either way. */
function stringValue(c: Cursor): string | undefined | 'invalid' {
  const start = c.p;
  if (!skipValue(c)) return 'invalid';
  try {
    const v: unknown = JSON.parse(c.text.slice(start, c.p));
    return typeof v === 'string' ? v : undefined;
  } catch {
    return 'invalid';
  }
}

/**
 * Finds the items of a top-level JSON object `{"kind": "...List", ..., "items": [...]}` without
 * parsing them. undefined when the text is not exactly that (then the ordinary parse decides).
 */
function jsonListItems(text: string): JsonList | undefined {
  const c: Cursor = { text, p: 0 };
  let kind: string | undefined;
  let apiVersion: string | undefined;
  let ranges: Array<[number, number]> | undefined;
  const walked = walkObject(c, (key) => {
    if (key === 'items' && text.charCodeAt(c.p) === 0x5b) {
      c.p++;
      ranges = [];
      skipWs(c);
      if (text.charCodeAt(c.p) === 0x5d) {
        c.p++;
        return 'next';
      }
      for (;;) {
        skipWs(c);
        const start = c.p;
        if (!skipValue(c)) return 'invalid';
        ranges.push([start, c.p]);
        skipWs(c);
        const ch = text.charCodeAt(c.p++);
        if (ch === 0x5d) return 'next';
        if (ch !== 0x2c) return 'invalid';
      }
    }
    if (key !== 'kind' && key !== 'apiVersion') return skipValue(c) ? 'next' : 'invalid';
    const v = stringValue(c);
    if (v === 'invalid') return 'invalid';
    if (key === 'kind') kind = v;
    else apiVersion = v;
    return 'next';
  });
  skipWs(c);
  if (walked !== 'next' || c.p !== text.length || ranges === undefined || kind === undefined || !kind.endsWith('List')) return undefined;
  return { kind, apiVersion, ranges };
}

/** An item's own `kind`, read without parsing the rest of it (usually its first or second key). */
function itemKind(text: string, start: number): string | undefined {
  const c: Cursor = { text, p: start };
  let kind: string | undefined;
  walkObject(c, (key) => {
    if (key !== 'kind') return skipValue(c) ? 'next' : 'invalid';
    const v = stringValue(c);
    if (typeof v === 'string') kind = v;
    return 'stop';
  });
  return kind;
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

interface Collected {
  objects: ClusterObject[];
  problems: Problem[];
}

/** One document's value → the objects it holds (unwrapping lists) and what is wrong with them. */
function collectObjects(value: unknown): Collected {
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
  if (!isRecord(value)) {
    out.problems.push({ path: at, message: 'expected a Kubernetes object (a mapping with apiVersion and kind)' });
    return;
  }
  const kind = value['kind'];
  const apiVersion = value['apiVersion'];
  if (typeof kind !== 'string' || kind === '') {
    out.problems.push({ path: [...at, 'kind'], message: 'kind: Required value: every object needs a kind' });
    return;
  }
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    out.problems.push({ path: [...at, 'apiVersion'], message: `${kind}: apiVersion: Required value` });
    return;
  }
  // hasOwn: a kind such as "constructor" must not find Object.prototype's members.
  if (!Object.hasOwn(KNOWN_KINDS, kind) || !KNOWN_KINDS[kind]?.includes(apiVersion)) return; // not a kind kdns reads
  const problems: Problem[] = [];
  const check = new Checker(value, problems);
  check.meta(!CLUSTER_SCOPED.has(kind));
  SPEC_CHECKS[kind]?.(check);
  if (problems.length > 0) {
    const who = describe(kind, value);
    for (const p of problems) out.problems.push({ path: [...at, ...p.path], message: `${who}: ${p.message}` });
    return;
  }
  out.objects.push(value as unknown as ClusterObject);
}

function describe(kind: string, obj: Record<string, unknown>): string {
  const meta = obj['metadata'];
  if (!isRecord(meta) || typeof meta['name'] !== 'string') return kind;
  return typeof meta['namespace'] === 'string' ? `${kind} ${meta['namespace']}/${meta['name']}` : `${kind} ${meta['name']}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pathText(path: Segment[]): string {
  let s = '';
  for (const seg of path) s += typeof seg === 'number' ? `[${seg}]` : s === '' ? seg : `.${seg}`;
  return s;
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
}

/**
 * Shape checks for the fields kdns reads, reported the way the API server words them. Only
 * what DNS and the operator rely on is checked: other fields pass through untouched so that
 * pod validation (poddns) sees them as written.
 */
class Checker {
  constructor(
    private readonly root: Record<string, unknown>,
    private readonly problems: Problem[],
  ) {}

  get(path: Segment[]): unknown {
    let v: unknown = this.root;
    for (const seg of path) {
      if (typeof seg === 'number') v = Array.isArray(v) ? v[seg] : undefined;
      else v = isRecord(v) ? v[seg] : undefined;
    }
    return v;
  }

  fail(path: Segment[], value: unknown, detail: string): void {
    const shown = value === undefined ? '' : ` ${show(value)}`;
    this.problems.push({ path, message: `${pathText(path)}: Invalid value:${shown}: ${detail}` });
  }

  require(path: Segment[], detail = ''): void {
    this.problems.push({ path, message: `${pathText(path)}: Required value${detail ? `: ${detail}` : ''}` });
  }

  /** Present and an object (or absent when optional). Returns whether it is an object. */
  object(path: Segment[], optional = true): boolean {
    const v = this.get(path);
    if (v === undefined || v === null) {
      if (!optional) this.require(path);
      return false;
    }
    if (!isRecord(v)) {
      this.fail(path, v, 'must be an object');
      return false;
    }
    return true;
  }

  /** Each element of an optional list: calls `each` with the element's path. */
  list(path: Segment[], each?: (at: Segment[]) => void): void {
    const v = this.get(path);
    if (v === undefined || v === null) return;
    if (!Array.isArray(v)) {
      this.fail(path, v, 'must be a list');
      return;
    }
    if (each) for (let i = 0; i < v.length; i++) each([...path, i]);
  }

  string(path: Segment[], optional = true): void {
    const v = this.get(path);
    if (v === undefined || v === null) {
      if (!optional) this.require(path);
      return;
    }
    if (typeof v !== 'string') this.fail(path, v, 'must be a string');
  }

  boolean(path: Segment[]): void {
    const v = this.get(path);
    if (v !== undefined && v !== null && typeof v !== 'boolean') this.fail(path, v, 'must be true or false');
  }

  oneOf(path: Segment[], allowed: readonly string[], optional = true): void {
    const v = this.get(path);
    if (v === undefined || v === null || v === '') {
      if (!optional) this.require(path);
      return;
    }
    if (typeof v !== 'string' || !allowed.includes(v)) {
      this.problems.push({
        path,
        message: `${pathText(path)}: Unsupported value: ${show(v)}: supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
      });
    }
  }

  port(path: Segment[], optional: boolean): void {
    const v = this.get(path);
    if (v === undefined || v === null) {
      if (!optional) this.require(path);
      return;
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) {
      this.fail(path, v, 'must be between 1 and 65535, inclusive');
    }
  }

  ip(path: Segment[], optional = true, extra: readonly string[] = []): void {
    const v = this.get(path);
    if (v === undefined || v === null) {
      if (!optional) this.require(path);
      return;
    }
    if (typeof v !== 'string' || (!extra.includes(v) && isIP(v) === 0)) {
      this.fail(path, v, 'must be a valid IP address');
    }
  }

  stringMap(path: Segment[]): void {
    if (!this.object(path)) return;
    const m = this.get(path) as Record<string, unknown>;
    for (const [k, v] of Object.entries(m)) {
      if (typeof v !== 'string') this.fail([...path, k], v, 'must be a string');
    }
  }

  /** metadata; namespaced objects without a namespace land in "default", as `kubectl apply` does. */
  meta(namespaced: boolean): void {
    if (!this.object(['metadata'], false)) return;
    const meta = this.get(['metadata']) as Record<string, unknown>;
    const name = meta['name'];
    if (typeof name !== 'string' || name === '') {
      if (name === undefined || name === '') this.require(['metadata', 'name'], 'name or generateName is required');
      else this.fail(['metadata', 'name'], name, 'must be a string');
    }
    this.string(['metadata', 'namespace']);
    if (namespaced && (meta['namespace'] === undefined || meta['namespace'] === '')) meta['namespace'] = 'default';
    if (!namespaced) delete meta['namespace'];
    this.stringMap(['metadata', 'labels']);
    this.stringMap(['metadata', 'annotations']);
  }

  ports(path: Segment[], servicePort: boolean): void {
    this.list(path, (at) => {
      if (!this.object(at, false)) return;
      this.string([...at, 'name']);
      this.oneOf([...at, 'protocol'], PROTOCOLS);
      this.port([...at, 'port'], !servicePort);
    });
  }
}

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;

const SPEC_CHECKS: Record<string, (c: Checker) => void> = {
  Service(c) {
    if (!c.object(['spec'], false)) return;
    c.oneOf(['spec', 'type'], ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName']);
    c.ip(['spec', 'clusterIP'], true, ['None', '']);
    c.list(['spec', 'clusterIPs'], (at) => c.ip(at, false, ['None']));
    c.list(['spec', 'ipFamilies'], (at) => c.oneOf(at, ['IPv4', 'IPv6'], false));
    c.string(['spec', 'externalName']);
    if (c.get(['spec', 'type']) === 'ExternalName' && !c.get(['spec', 'externalName'])) {
      c.require(['spec', 'externalName'], 'an ExternalName service needs one');
    }
    c.ports(['spec', 'ports'], true);
    c.boolean(['spec', 'publishNotReadyAddresses']);
    c.list(['spec', 'externalIPs'], (at) => c.ip(at, false));
    if (c.object(['status']) && c.object(['status', 'loadBalancer'])) {
      c.list(['status', 'loadBalancer', 'ingress'], (at) => {
        if (!c.object(at, false)) return;
        c.ip([...at, 'ip']);
        c.string([...at, 'hostname']);
      });
    }
  },
  ServiceImport(c) {
    if (!c.object(['spec'])) return;
    c.oneOf(['spec', 'type'], ['ClusterSetIP', 'Headless']);
    c.list(['spec', 'ips'], (at) => c.ip(at, false));
    c.ports(['spec', 'ports'], true);
  },
  EndpointSlice(c) {
    c.oneOf(['addressType'], ['IPv4', 'IPv6', 'FQDN'], false);
    const family = c.get(['addressType']);
    c.list(['endpoints'], (at) => {
      if (!c.object(at, false)) return;
      const addrs = [...at, 'addresses'];
      if (!Array.isArray(c.get(addrs))) c.require(addrs);
      else if (family === 'FQDN') c.list(addrs, (a) => c.string(a, false));
      else c.list(addrs, (a) => c.ip(a, false));
      if (c.object([...at, 'conditions'])) {
        for (const cond of ['ready', 'serving', 'terminating']) c.boolean([...at, 'conditions', cond]);
      }
      c.string([...at, 'hostname']);
      c.string([...at, 'nodeName']);
      c.object([...at, 'targetRef']);
    });
    c.ports(['ports'], false);
  },
  Endpoints(c) {
    c.list(['subsets'], (at) => {
      if (!c.object(at, false)) return;
      for (const group of ['addresses', 'notReadyAddresses']) {
        c.list([...at, group], (a) => {
          if (!c.object(a, false)) return;
          c.ip([...a, 'ip'], false);
          c.string([...a, 'hostname']);
          c.object([...a, 'targetRef']);
        });
      }
      c.ports([...at, 'ports'], false);
    });
  },
  Pod(c) {
    c.object(['spec']);
    if (!c.object(['status'])) return;
    c.string(['status', 'phase']);
    c.ip(['status', 'podIP'], true, ['']);
    c.list(['status', 'podIPs'], (at) => {
      if (c.object(at, false)) c.ip([...at, 'ip'], false);
    });
  },
  Node(c) {
    if (c.object(['spec'])) {
      c.boolean(['spec', 'unschedulable']);
      c.list(['spec', 'taints'], (at) => {
        if (!c.object(at, false)) return;
        c.string([...at, 'key'], false);
        c.string([...at, 'value']);
        c.oneOf([...at, 'effect'], ['NoSchedule', 'PreferNoSchedule', 'NoExecute'], false);
      });
    }
  },
};

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
