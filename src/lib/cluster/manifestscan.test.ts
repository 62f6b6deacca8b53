import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fingerprint, scanManifests } from './manifestscan.js';
import { parseManifests } from './manifesttext.js';

const scanCases: Array<{ name: string; text: string; fastPath: boolean }> = [
  {
    name: 'kubectl -o json List is read item by item',
    text: JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a' }, spec: { clusterIP: '10.0.0.1' } }, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }] }, null, 1),
    fastPath: true,
  },
  {
    name: 'typed API list with escapes and nested brackets in strings',
    text: '{"kind":"ServiceList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"b","namespace":"x","annotations":{"note":"a \\"quoted\\" ]} text"}},"spec":{"clusterIP":"None"}}]}',
    fastPath: true,
  },
  {
    name: 'an empty list',
    text: '{"kind":"List","apiVersion":"v1","items":[]}',
    fastPath: true,
  },
  {
    name: 'a bad item falls back to the full parse, which says where',
    text: '{"kind":"List","apiVersion":"v1","items":[\n{"apiVersion":"v1","kind":"Service","metadata":{"name":"c"},"spec":{"clusterIP":"nope"}}\n]}',
    fastPath: false,
  },
  {
    name: 'a single JSON object is not a list: full parse',
    text: '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"z"}}',
    fastPath: false,
  },
  {
    name: 'YAML: full parse',
    text: 'apiVersion: v1\nkind: Namespace\nmetadata: {name: y}\n',
    fastPath: false,
  },
];

for (const c of scanCases) {
  test(`scanManifests: ${c.name}`, () => {
    const full = parseManifests(c.text, 'f.json');
    const scan = scanManifests(c.text, 'f.json');
    assert.deepEqual(scan.errors, full.errors);
    assert.deepEqual(scan.entries.map((e) => e.load()), full.objects);
    assert.deepEqual(
      scan.entries.map((e) => `${e.kind} ${e.namespace ?? ''}/${e.name}`),
      full.objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`),
    );
    // The fast path hashes an item's own text, the full parse its JSON: tells which one ran.
    const viaText = scan.entries.length > 0 && scan.entries.every((e, i) => e.fingerprint !== fingerprint(JSON.stringify(full.objects[i])));
    assert.equal(viaText || (c.fastPath && scan.entries.length === 0), c.fastPath);
  });
}

const skipCases: Array<{ name: string; listKind?: string; items: string[]; entries: string[] }> = [
  {
    name: 'skipped kinds are left out, the rest read',
    items: ['{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"x"}}', '{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"x"},"spec":{"clusterIP":"None"}}'],
    entries: ['Service x/s'],
  },
  {
    name: 'kind found after other keys',
    items: ['{"metadata":{"name":"p","namespace":"x","labels":{"kind":"Service"}},"status":{"phase":"Running"},"kind":"Pod","apiVersion":"v1"}'],
    entries: [],
  },
  {
    name: 'a skipped item that would not pass validation does not fail the file',
    items: ['{"apiVersion":"v1","kind":"Pod","metadata":{"name":7}}', '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}'],
    entries: ['Namespace /x'],
  },
  {
    name: 'an item without its own kind is read (the list kind decides)',
    listKind: 'NamespaceList',
    items: ['{"metadata":{"name":"x"}}'],
    entries: ['Namespace /x'],
  },
];

for (const c of skipCases) {
  test(`scanManifests with skipped kinds: ${c.name}`, () => {
    const text = `{"kind":"${c.listKind ?? 'List'}","apiVersion":"v1","items":[${c.items.join(',')}]}`;
    const scan = scanManifests(text, 'f.json', new Set(['Pod']));
    assert.deepEqual(scan.errors, []);
    assert.deepEqual(scan.entries.map((e) => `${e.kind} ${e.namespace ?? ''}/${e.name}`), c.entries);
  });
}

const yamlSkipCases: Array<{ name: string; text: string; entries: string[]; errors: string[] }> = [
  {
    name: 'skipped documents are left out, the rest read',
    text: 'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: x}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n',
    entries: ['Namespace /x'],
    errors: [],
  },
  {
    name: 'an error after skipped documents keeps its line number',
    text: '---\nkind: Pod\napiVersion: v1\nmetadata:\n  name: p\n---\nkind: "Pod"\nmetadata: {name: q}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: [\n',
    entries: [],
    errors: ['f.yaml:12'],
  },
  {
    name: 'a skipped document that would not parse does not fail the file',
    text: 'apiVersion: v1\nkind: Pod\nmetadata: {name: [\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n',
    entries: ['Namespace /x'],
    errors: [],
  },
  {
    name: 'kind only nested (a label) does not skip the document',
    text: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n  labels:\n    kind: Pod\n',
    entries: ['Namespace /x'],
    errors: [],
  },
  {
    name: 'a flow-style skipped document is skipped too',
    text: '{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: x}}\n---\n{apiVersion: v1, kind: Namespace, metadata: {name: y}}\n',
    entries: ['Namespace /y'],
    errors: [],
  },
  {
    name: 'a List of skipped kinds is read as a list, its items skipped',
    text: 'apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: p, namespace: x}\n',
    entries: ['Pod x/p'],
    errors: [],
  },
];

for (const c of yamlSkipCases) {
  test(`scanManifests (YAML) with skipped kinds: ${c.name}`, () => {
    const scan = scanManifests(c.text, 'f.yaml', new Set(['Pod']));
    assert.deepEqual(scan.errors.map((e) => `${e.file}:${e.line}`), c.errors);
    assert.deepEqual(scan.entries.map((e) => `${e.kind} ${e.namespace ?? ''}/${e.name}`), c.entries);
  });
}
