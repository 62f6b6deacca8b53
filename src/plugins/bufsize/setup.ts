import { CorefileError, type Directive } from '../../corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { BufsizePlugin, DEFAULT_BUFSIZE, MAX_BUFSIZE, MIN_BUFSIZE } from './handler.js';

/** `bufsize [SIZE]`: SIZE is a whole number of bytes from 512 to 4096 (RFC 6891's range of sense). */
export function parseBufsize(d: Directive): number {
  if (d.block !== undefined) throw CorefileError.at(d, 'bufsize takes no block');
  if (d.args.length > 1) throw CorefileError.at(d, `bufsize takes at most one argument, got ${d.args.length}`);
  const arg = d.args[0];
  if (arg === undefined) return DEFAULT_BUFSIZE;
  const size = /^[0-9]+$/.test(arg) ? Number(arg) : NaN;
  if (!Number.isInteger(size) || size < MIN_BUFSIZE || size > MAX_BUFSIZE) {
    throw CorefileError.at(d, `bufsize must be a number from ${MIN_BUFSIZE} to ${MAX_BUFSIZE}, got "${arg}"`);
  }
  return size;
}

export const setup: SetupFn = (ctx) => new BufsizePlugin(parseBufsize(ctx.directive));
