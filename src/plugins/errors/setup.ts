import { argPosition, expectArgs, noBlockAllowed, parseDuration, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { BlockInfo, SetupFn } from '../../server/plugin.js';
import { ErrorsPlugin, type ConsolidateLevel, type ConsolidateRule, type ErrorsConfig } from './handler.js';

const LEVELS: readonly ConsolidateLevel[] = ['warning', 'error', 'info', 'debug'];

/** `consolidate DURATION REGEXP [LEVEL]` */
function parseConsolidate(prop: Directive): ConsolidateRule {
  const [period, source, level = 'error'] = expectArgs(prop, 2, 3) as [string, string, string?];
  const periodMs = parseDuration(period, argPosition(prop, 0), 'consolidate period', { minMs: 1 });
  let pattern: RegExp;
  try {
    pattern = new RegExp(source);
  } catch (e) {
    throw CorefileError.at(argPosition(prop, 1), `invalid regular expression "${source}" in consolidate: ${(e as Error).message}`);
  }
  if (!(LEVELS as readonly string[]).includes(level)) {
    throw CorefileError.at(argPosition(prop, 2), `unknown log level "${level}" in consolidate (expected ${LEVELS.join(', ')})`);
  }
  return { periodMs, pattern, source, level: level as ConsolidateLevel };
}

/** `errors [stdout] { stacktrace ; consolidate DURATION REGEXP [LEVEL] }` */
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
