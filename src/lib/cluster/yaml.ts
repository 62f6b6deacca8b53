// Multi-document YAML (JSON is YAML too) read the way every kdns reader needs it: one document
// at a time, so a 50 MB `kubectl get -o yaml` dump never has more than one tree alive; each
// document with the line it starts on; a broken document as where and the first line of what
// its first error is; and the parser loaded on first use (its code is ~0.9 MiB of heap, and a server fed
// `-o json` dumps or the API never needs it).
// Used by the cluster manifest reader (manifesttext.ts), the operator's input files
// (src/operator/io.ts) and the objects `kdns resolvconf|validate|explain` read (src/poddns/input.ts).

import { createRequire } from 'node:module';
import type { Document } from 'yaml';

type Yaml = typeof import('yaml');
let yamlModule: Yaml | undefined;

function yaml(): Yaml {
  yamlModule ??= createRequire(import.meta.url)('yaml') as Yaml;
  return yamlModule;
}

export interface YamlDocument {
  /** The document as parsed: a key can be read before the rest is converted (`doc.get('kind')`). */
  doc: Document.Parsed;
  /** 1-based line where the document's content starts (where the document starts when it has none). */
  line: number;
  /**
   * The first error of a broken document (later ones are mostly the parser's echo of it): its
   * offset and line as the parser reports them (an unterminated construct at the end of the
   * text), and `YAML: ` with the first line of the parser's message.
   */
  error?: { offset: number; line: number; message: string };
  /** The 1-based line of an offset in the text. */
  lineOf(offset: number): number;
}

function firstLine(s: string): string {
  const nl = s.indexOf('\n');
  return nl < 0 ? s : s.slice(0, nl);
}

/** The documents of `text` in order, each parsed only when the iteration reaches it. */
export function* yamlDocuments(text: string): Generator<YamlDocument> {
  const { Composer, LineCounter, Parser } = yaml();
  const lineCounter = new LineCounter();
  const lineOf = (offset: number): number => lineCounter.linePos(offset).line;
  const composer = new Composer({ prettyErrors: false });
  for (const doc of composer.compose(new Parser(lineCounter.addNewLine).parse(text))) {
    const line = lineOf(doc.contents?.range?.[0] ?? doc.range[0]);
    const err = doc.errors[0];
    if (err === undefined) {
      yield { doc, line, lineOf };
      continue;
    }
    const offset = err.pos[0];
    yield { doc, line, lineOf, error: { offset, line: lineOf(offset), message: `YAML: ${firstLine(err.message)}` } };
  }
}

/** A document as plain data, aliases expanded (at most 100, against alias bombs). */
export function yamlValue(document: YamlDocument): unknown {
  return document.doc.toJS({ maxAliasCount: 100 });
}

/** The line of the deepest node on `path` that exists (the field itself, or the object holding it). */
export function lineOfPath(document: YamlDocument, path: ReadonlyArray<string | number>): number {
  const { doc, lineOf } = document;
  for (let n = path.length; n >= 0; n--) {
    const node: unknown = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (yaml().isNode(node) && node.range) return lineOf(node.range[0]);
  }
  return 1;
}
