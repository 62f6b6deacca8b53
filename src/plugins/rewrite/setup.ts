import { noBlockAllowed } from '../../lib/corefile/args.js';
import { CorefileError, type Directive, type Position } from '../../lib/corefile/ast.js';
import type { Plugin, SetupFn } from '../../server/plugin.js';
import { RewritePlugin } from './handler.js';
import { parseRule, RuleError, type Rule } from './rules.js';

/** The words of one rule and the line each sits on. */
interface RuleWords {
  words: string[];
  lines: number[];
}

/**
 * `rewrite [stop|continue] FIELD ...` on one line, or `rewrite [stop|continue] { ... }` with the
 * rule's words spread over the block's lines (as CoreDNS reads a block: all its words, in order,
 * make one rule).
 */
export function ruleWords(d: Directive): RuleWords {
  const words = [...d.args];
  const lines = d.args.map((_, i) => d.argLines[i] ?? d.line);
  if (d.block === undefined) return { words, lines };
  if (d.args.length >= 2) throw CorefileError.at(d, 'a rewrite rule written on its line takes no block');
  for (const line of d.block) {
    noBlockAllowed(line);
    for (const [i, w] of [line.name, ...line.args].entries()) {
      words.push(w);
      lines.push(i === 0 ? line.line : (line.argLines[i - 1] ?? line.line));
    }
  }
  return { words, lines };
}

/** One `rewrite` directive as a rule; a mistake is a CorefileError on the line of the culprit word. */
export function parseRewrite(d: Directive): Rule {
  const { words, lines } = ruleWords(d);
  try {
    return parseRule(words);
  } catch (e) {
    if (!(e instanceof RuleError)) throw e;
    const pos: Position = { file: d.file, line: (e.arg !== undefined ? lines[e.arg] : undefined) ?? d.line };
    throw CorefileError.at(pos, `invalid rewrite rule: ${e.message}`);
  }
}

/** A later `rewrite` of a block: its rule joined the block's first one, so it serves nothing itself. */
const JOINED: Plugin = { name: 'rewrite' };

export const setup: SetupFn = (ctx) => {
  const rule = parseRewrite(ctx.directive);
  // All rewrites of a block are one rule list, so `stop` ends the list and response rules run
  // last-first across rules, as in CoreDNS.
  const key = `rewrite@${ctx.block.file}:${ctx.block.line}`;
  const existing = ctx.instance.get(key) as RewritePlugin | undefined;
  if (existing) {
    existing.rules.push(rule);
    return JOINED;
  }
  const plugin = new RewritePlugin();
  plugin.rules.push(rule);
  ctx.instance.set(key, plugin);
  return plugin;
};
