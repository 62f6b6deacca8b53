import { argPosition, blockProperties, expectArgs, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import { parseReload } from '../pkg/filereload.js';
import { normalizeZones } from '../pkg/zones.js';
import { AutoPlugin, DEFAULT_REGEXP, DEFAULT_RELOAD_MS, DEFAULT_TEMPLATE, type AutoConfig } from './handler.js';

const MAX_REGEXP_LENGTH = 10_000;

/** The regexp of `directory DIR REGEXP TEMPLATE`: valid, not huge, with at least one group. */
function compileRegexp(prop: Directive, text: string): RegExp {
  const at = argPosition(prop, 1);
  if (text.length > MAX_REGEXP_LENGTH) throw CorefileError.at(at, `regexp for directory is longer than ${MAX_REGEXP_LENGTH} characters`);
  let re: RegExp;
  try {
    re = new RegExp(text);
  } catch (e) {
    throw CorefileError.at(at, `invalid regexp "${text}" for directory: ${(e as Error).message.replace(/^Invalid regular expression: /, '')}`);
  }
  // Groups in the pattern: an alternative that matches the empty string shows them all.
  const groups = (new RegExp(`${text}|`).exec('') as RegExpExecArray).length - 1;
  if (groups === 0) throw CorefileError.at(at, `regexp "${text}" for directory needs at least one (group) for the origin template`);
  return re;
}

/** `auto [ZONES...] { directory DIR [REGEXP ORIGIN_TEMPLATE]  reload DURATION }`. */
export function parseAuto(d: Directive, blockZones: readonly string[], corefilePath: string): AutoConfig {
  const zones = d.args.length > 0 ? d.args.flatMap((z) => normalizeZones(z, d)) : [...blockZones];
  let directory: string | undefined;
  let regexp = new RegExp(DEFAULT_REGEXP);
  let template = DEFAULT_TEMPLATE;
  let reloadMs = DEFAULT_RELOAD_MS;
  for (const prop of blockProperties(d, 'auto')) {
    switch (prop.name) {
      case 'directory': {
        const args = expectArgs(prop, 1, 3);
        if (args.length === 2) throw CorefileError.at(prop, `directory: REGEXP "${args[1]}" needs an ORIGIN_TEMPLATE after it (e.g. {1})`);
        directory = corefileRelative(args[0] as string, corefilePath);
        if (args.length === 3) {
          regexp = compileRegexp(prop, args[1] as string);
          template = args[2] as string;
        }
        break;
      }
      case 'reload':
        reloadMs = parseReload(prop);
        break;
      case 'upstream':
        // Accepted and ignored, as CoreDNS does.
        break;
      default:
        unknownProperty(prop, 'auto');
    }
  }
  if (directory === undefined) throw CorefileError.at(d, 'auto needs a "directory DIR" line in its block');
  return { zones, directory, regexp, template, reloadMs };
}

export const setup: SetupFn = (ctx) => {
  const plugin = new AutoPlugin(parseAuto(ctx.directive, ctx.block.zones, ctx.corefilePath), ctx.shared.log.plugin('auto'));
  plugin.scan();
  return plugin;
};
