// Corefile text from data, so the operator (and `kdns validate`) can build a Corefile as values
// and print it. The layout is the one of CoreDNS's docs: a blank line between server blocks,
// one tab per nesting level. Parsing the text gives back the same keys, names, args and blocks.

import type { ServerBlock, Directive } from './ast.js';

export interface RenderDirective {
  name: string;
  args: string[];
  /** Present (possibly empty) to print a `{ }` block. */
  block?: RenderDirective[];
}

export interface RenderBlock {
  keys: string[];
  directives: RenderDirective[];
}

/**
 * A word as the lexer will read it back: bare when it can be, else in quotes with `"` escaped.
 * Quoting cannot express a backslash right before a quote or at the very end (Caddy reads `\"`
 * as a quote either way), so such a word is refused rather than printed wrong.
 */
export function quoteWord(word: string): string {
  const bare = word !== '' && word !== '{' && word !== '}' && !word.startsWith('"') && !/[\s#"\u0085]/u.test(word);
  if (bare) return word;
  if (/\\("|$)/.test(word)) {
    throw new Error(`cannot write ${JSON.stringify(word)} in a Corefile: it needs quotes, and a backslash before a quote or at the end cannot be quoted`);
  }
  return `"${word.replaceAll('"', '\\"')}"`;
}

function renderDirectives(directives: readonly RenderDirective[], depth: number, out: string[]): void {
  const indent = '\t'.repeat(depth);
  for (const d of directives) {
    const line = indent + [d.name, ...d.args].map(quoteWord).join(' ');
    if (d.block === undefined) {
      out.push(line);
      continue;
    }
    out.push(`${line} {`);
    renderDirectives(d.block, depth + 1, out);
    out.push(`${indent}}`);
  }
}

/** Canonical Corefile text of the blocks (ends with a newline; "" for no blocks). */
export function renderCorefile(blocks: readonly RenderBlock[]): string {
  return blocks
    .map((b) => {
      if (b.keys.length === 0) throw new Error('cannot write a server block without keys');
      for (const k of b.keys) {
        // Either would read back as something else: two keys, or a snippet definition.
        if (k.includes(',') || /^\(.*\)$/s.test(k)) throw new Error(`cannot write server block key ${JSON.stringify(k)}`);
      }
      const out = [`${b.keys.map(quoteWord).join(' ')} {`];
      renderDirectives(b.directives, 1, out);
      out.push('}');
      return out.join('\n') + '\n';
    })
    .join('\n');
}

function toRenderDirective(d: Directive): RenderDirective {
  const out: RenderDirective = { name: d.name, args: [...d.args] };
  if (d.block) out.block = d.block.map(toRenderDirective);
  return out;
}

/** The parsed blocks without positions: what renderCorefile takes (e.g. to print a Corefile canonically). */
export function toRenderBlocks(blocks: readonly ServerBlock[]): RenderBlock[] {
  return blocks.map((b) => ({ keys: [...b.keys], directives: b.directives.map(toRenderDirective) }));
}
