import { expectArgs, parseDuration, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { fqdn, lowerName } from '../../lib/dns/name.js';
import type { BlockInfo, Plugin, SetupFn } from '../../server/plugin.js';
import { COMBINED_FORMAT, COMMON_FORMAT, compileFormat } from './format.js';
import { LogPlugin, type LogRule, type ResponseClass } from './handler.js';

const CLASSES: readonly ResponseClass[] = ['all', 'success', 'denial', 'error'];
/** `minDuration` without a value. */
const DEFAULT_MIN_DURATION_MS = 100;

/** `{common}` and `{combined}` name the two stock formats; anything else is the format itself. */
function formatFromArg(arg: string): string {
  if (arg === '{common}') return COMMON_FORMAT;
  if (arg === '{combined}') return COMBINED_FORMAT;
  return arg;
}

interface BlockOptions {
  classes: Set<ResponseClass>;
  minDurationMs: number;
}

function parseBlock(d: Directive): BlockOptions {
  const classes = new Set<ResponseClass>();
  let minDurationMs = 0;
  for (const prop of d.block ?? []) {
    switch (prop.name) {
      case 'class':
        for (const c of expectArgs(prop, 1)) {
          if (!(CLASSES as readonly string[]).includes(c)) {
            throw CorefileError.at(prop, `unknown response class "${c}" in log block (expected ${CLASSES.join(', ')})`);
          }
          classes.add(c as ResponseClass);
        }
        break;
      case 'minDuration': {
        const [text] = expectArgs(prop, 0, 1);
        minDurationMs = text === undefined ? DEFAULT_MIN_DURATION_MS : parseDuration(text, prop, 'minDuration');
        break;
      }
      default:
        unknownProperty(prop, 'log');
    }
  }
  if (classes.size === 0) classes.add('all');
  return { classes, minDurationMs };
}

/**
 * `log [NAMES...] [FORMAT] { class CLASSES... ; minDuration [DURATION] }`: one rule per name
 * (default "."). With two or more arguments the last one is the format when it holds a `{`.
 */
export function parseLog(d: Directive): LogRule[] {
  let names = [...d.args];
  let format = COMMON_FORMAT;
  const last = names[names.length - 1];
  if (names.length >= 2 && last !== undefined && last.includes('{')) {
    format = formatFromArg(last);
    names = names.slice(0, -1);
  }
  if (names.length === 0) names = ['.'];
  const { classes, minDurationMs } = parseBlock(d);
  const parts = compileFormat(format);
  return names.map((n) => ({ scope: lowerName(fqdn(n)), format, parts, classes, minDurationMs }));
}

/**
 * Several `log` lines in one server block make one logger with all their rules, in order, as in
 * CoreDNS (a query is logged once, by the first rule that covers its name).
 */
export const setup: SetupFn = (ctx) => {
  const rules = parseLog(ctx.directive);
  const byBlock = (ctx.instance.get('log|by-block') as Map<BlockInfo, LogPlugin> | undefined) ?? new Map<BlockInfo, LogPlugin>();
  ctx.instance.set('log|by-block', byBlock);
  const first = byBlock.get(ctx.block);
  if (first) {
    first.rules.push(...rules);
    const inert: Plugin = { name: 'log' };
    return inert;
  }
  const log = ctx.shared.log;
  const plugin = new LogPlugin(rules, (line) => log.info(line));
  byBlock.set(ctx.block, plugin);
  return plugin;
};
