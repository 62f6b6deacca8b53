import { argPosition, expectArgs, noBlockAllowed, parseIntArg } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { BufsizePlugin, DEFAULT_BUFSIZE, MAX_BUFSIZE, MIN_BUFSIZE } from './handler.js';

/** `bufsize [SIZE]`: SIZE is a whole number of bytes from 512 to 4096 (RFC 6891's range of sense). */
export function parseBufsize(d: Directive): number {
  noBlockAllowed(d);
  const [arg] = expectArgs(d, 0, 1);
  if (arg === undefined) return DEFAULT_BUFSIZE;
  return parseIntArg(arg, argPosition(d, 0), { what: 'bufsize', min: MIN_BUFSIZE, max: MAX_BUFSIZE });
}

export const setup: SetupFn = (ctx) => new BufsizePlugin(parseBufsize(ctx.directive));
