import { CorefileError } from '../../corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { WhoamiPlugin } from './handler.js';

export const setup: SetupFn = (ctx) => {
  const d = ctx.directive;
  if (d.args.length > 0) throw CorefileError.at(d, `whoami takes no arguments (got "${d.args.join(' ')}")`);
  if (d.block !== undefined) throw CorefileError.at(d, 'whoami takes no block');
  return new WhoamiPlugin();
};
