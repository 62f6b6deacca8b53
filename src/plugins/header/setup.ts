import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { argPosition, expectArgs } from '../../lib/corefile/args.js';
import type { SetupFn } from '../../server/plugin.js';
import { HeaderPlugin, type FlagRule, type HeaderFlag } from './handler.js';

const FLAGS: readonly string[] = ['aa', 'ra', 'rd'];

/** `header { query|response set|clear FLAGS... }`, one rule per line, at least one line. */
export function parseHeader(d: Directive): { query: FlagRule[]; response: FlagRule[] } {
  expectArgs(d, 0, 0);
  const query: FlagRule[] = [];
  const response: FlagRule[] = [];
  for (const line of d.block ?? []) {
    const selector = line.name.toLowerCase();
    if (selector !== 'query' && selector !== 'response') throw CorefileError.at(line, `invalid header selector "${line.name}" (expected query or response)`);
    const [action, ...flags] = expectArgs(line, 2) as [string, ...string[]];
    if (action !== 'set' && action !== 'clear') throw CorefileError.at(argPosition(line, 0), `invalid header action "${action}" (expected set or clear)`);
    for (const [i, f] of flags.entries()) {
      const flag = f.toLowerCase();
      if (!FLAGS.includes(flag)) throw CorefileError.at(argPosition(line, i + 1), `unknown header flag "${f}" (expected aa, ra or rd)`);
      (selector === 'query' ? query : response).push({ flag: flag as HeaderFlag, set: action === 'set' });
    }
  }
  if (query.length === 0 && response.length === 0) throw CorefileError.at(d, 'header needs a block with at least one rule ("response set ra")');
  return { query, response };
}

export const setup: SetupFn = (ctx) => {
  const { query, response } = parseHeader(ctx.directive);
  return new HeaderPlugin(query, response);
};
