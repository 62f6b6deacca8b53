import { expectArgs, noBlockAllowed } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { WhoamiPlugin } from './handler.js';

/** `whoami`: no arguments, no block. */
export function parseWhoami(d: Directive): void {
  expectArgs(d, 0, 0);
  noBlockAllowed(d);
}

export const setup: SetupFn = (ctx) => {
  parseWhoami(ctx.directive);
  return new WhoamiPlugin();
};
