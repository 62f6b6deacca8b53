import { expectArgs, noBlockAllowed } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { AnyPlugin } from './handler.js';

/** `any`: no arguments, no block. */
export function parseAny(d: Directive): void {
  expectArgs(d, 0, 0);
  noBlockAllowed(d);
}

export const setup: SetupFn = (ctx) => {
  parseAny(ctx.directive);
  return new AnyPlugin();
};
