import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lineOfPath, yamlDocuments, yamlValue } from './yaml.js';

test('yamlDocuments: each document with its value and the line its content starts on', () => {
  const cases: Array<{ name: string; text: string; want: Array<{ line: number; value: unknown }> }> = [
    { name: 'one document', text: 'kind: Pod\n', want: [{ line: 1, value: { kind: 'Pod' } }] },
    {
      name: 'several, separated by ---',
      text: 'kind: Pod\n---\n# a comment\nkind: Service\n---\n',
      want: [
        { line: 1, value: { kind: 'Pod' } },
        { line: 4, value: { kind: 'Service' } },
        { line: 5, value: null },
      ],
    },
    { name: 'JSON', text: '\n{"kind": "Node", "items": [1, 2]}\n', want: [{ line: 2, value: { kind: 'Node', items: [1, 2] } }] },
    { name: 'aliases expanded', text: 'a: &x [1]\nb: *x\n', want: [{ line: 1, value: { a: [1], b: [1] } }] },
    { name: 'nothing at all', text: '', want: [] },
  ];
  for (const c of cases) {
    const got = [...yamlDocuments(c.text)].map((d) => ({ line: d.line, value: yamlValue(d), error: d.error }));
    assert.deepEqual(got, c.want.map((w) => ({ ...w, error: undefined })), c.name);
  }
});

test('yamlDocuments: a broken document is its first error, where the parser puts it; the rest still read', () => {
  const cases: Array<{ name: string; text: string; want: Array<{ offset: number; line: number; message: string } | undefined> }> = [
    { name: 'a duplicate key', text: 'a: 1\na: 2\n', want: [{ offset: 5, line: 2, message: 'YAML: Map keys must be unique' }] },
    {
      name: 'the second of three documents',
      text: 'kind: Pod\n---\na: b: c\n---\nkind: Node\n',
      want: [undefined, { offset: 17, line: 3, message: 'YAML: Nested mappings are not allowed in compact mappings' }, undefined],
    },
    { name: 'unterminated: at the end of the text', text: 'a: "open\n', want: [{ offset: 9, line: 2, message: 'YAML: Missing closing "quote' }] },
  ];
  for (const c of cases) assert.deepEqual([...yamlDocuments(c.text)].map((d) => d.error), c.want, c.name);
});

test('lineOfPath: the line of the deepest node on the path that exists', () => {
  const [document] = [...yamlDocuments('kind: Service\nspec:\n  ports:\n    - port: 80\n      name: http\n')];
  assert.ok(document);
  const cases: Array<{ path: Array<string | number>; line: number }> = [
    { path: [], line: 1 },
    { path: ['spec'], line: 3 },
    { path: ['spec', 'ports', 0, 'name'], line: 5 },
    { path: ['spec', 'ports', 0, 'missing'], line: 4 },
    { path: ['nothing', 'here'], line: 1 },
  ];
  for (const c of cases) assert.equal(lineOfPath(document, c.path), c.line, c.path.join('.'));
});
