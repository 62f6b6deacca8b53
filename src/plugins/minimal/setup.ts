import { expectArgs, noBlockAllowed } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { oncePerBlock } from '../pkg/once.js';
import { MinimalPlugin } from './handler.js';

/** `minimal`: no arguments, no block. */
export function parseMinimal(d: Directive): void {
  expectArgs(d, 0, 0);
  noBlockAllowed(d);
}

export const setup: SetupFn = (ctx) => {
  oncePerBlock(ctx, 'minimal');
  parseMinimal(ctx.directive);
  return new MinimalPlugin();
};
