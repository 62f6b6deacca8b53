import { argPosition, expectArgs, noBlockAllowed, parseDuration, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { BlockInfo, SetupFn } from '../../server/plugin.js';
import { ErrorsPlugin, type ConsolidateLevel, type ConsolidateRule, type ErrorsConfig } from './handler.js';

const LEVELS: readonly ConsolidateLevel[] = ['warning', 'error', 'info', 'debug'];
/** CoreDNS's limit on a consolidate expression, kept so that a Corefile it refuses is refused here too. */
export const MAX_REGEXP_LENGTH = 10_000;

/** The words after REGEXP: `[LEVEL] [show_first]`, in that order, each at most once. */
function parseConsolidateOptions(prop: Directive, words: readonly string[]): { level: ConsolidateLevel; showFirst: boolean } {
  let level: ConsolidateLevel | undefined;
  let showFirst = false;
  words.forEach((word, i) => {
    const at = argPosition(prop, i + 2);
    if ((LEVELS as readonly string[]).includes(word)) {
      if (level !== undefined) throw CorefileError.at(at, `consolidate takes one log level, got "${level}" and "${word}"`);
      if (showFirst) throw CorefileError.at(at, `log level "${word}" must come before show_first in consolidate`);
      level = word as ConsolidateLevel;
    } else if (word === 'show_first') {
      showFirst = true;
    } else {
      throw CorefileError.at(at, `unknown option "${word}" in consolidate (expected a log level: ${LEVELS.join(', ')}; or show_first)`);
    }
  });
  return { level: level ?? 'error', showFirst };
}

/** `consolidate DURATION REGEXP [LEVEL] [show_first]` */
function parseConsolidate(prop: Directive): ConsolidateRule {
  const [period, source, ...options] = expectArgs(prop, 2, 4) as [string, string, ...string[]];
  const periodMs = parseDuration(period, argPosition(prop, 0), 'consolidate period', { minMs: 1 });
  if (source.length > MAX_REGEXP_LENGTH) throw CorefileError.at(argPosition(prop, 1), `regular expression in consolidate is too long: ${source.length} characters (at most ${MAX_REGEXP_LENGTH})`);
  let pattern: RegExp;
  try {
    pattern = new RegExp(source);
  } catch (e) {
    throw CorefileError.at(argPosition(prop, 1), `invalid regular expression "${source}" in consolidate: ${(e as Error).message}`);
  }
  return { periodMs, pattern, source, ...parseConsolidateOptions(prop, options) };
}

/** `errors [stdout] { stacktrace ; consolidate DURATION REGEXP [LEVEL] [show_first] }` */
export function parseErrors(d: Directive): ErrorsConfig {
  const [target] = expectArgs(d, 0, 1);
  if (target !== undefined && target !== 'stdout') throw CorefileError.at(d, `invalid log target for errors: "${target}" (only stdout)`);
  const config: ErrorsConfig = { consolidate: [], stacktrace: false };
  for (const prop of d.block ?? []) {
    switch (prop.name) {
      case 'stacktrace':
      case 'panicRecoveryStacktrace':
        expectArgs(prop, 0, 0);
        noBlockAllowed(prop);
        config.stacktrace = true;
        break;
      case 'consolidate':
        noBlockAllowed(prop);
        config.consolidate.push(parseConsolidate(prop));
        break;
      default:
        unknownProperty(prop, 'errors');
    }
  }
  return config;
}

/** CoreDNS allows one `errors` per server block. */
function claimBlock(instance: Map<string, unknown>, block: BlockInfo, d: Directive): void {
  const seen = (instance.get('errors|blocks') as Set<BlockInfo> | undefined) ?? new Set<BlockInfo>();
  instance.set('errors|blocks', seen);
  if (seen.has(block)) throw CorefileError.at(d, 'errors can only be used once per server block');
  seen.add(block);
}

export const setup: SetupFn = (ctx) => {
  const config = parseErrors(ctx.directive);
  claimBlock(ctx.instance, ctx.block, ctx.directive);
  return new ErrorsPlugin(config, ctx.shared.log.plugin('errors'));
};
