// `cancel [TIMEOUT]`: CoreDNS gives each query a context that is cancelled after TIMEOUT
// (default 5001ms), so plugins stop work a client has given up on. kdns's plugins carry their
// own deadlines (forward's read timeout, the API watch), so the directive checks its value and
// changes nothing.
import { argPosition, expectArgs, noBlockAllowed, parseDuration } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { oncePerBlock } from '../pkg/once.js';

export const DEFAULT_CANCEL_MS = 5001;

export function parseCancel(d: Directive): number {
  noBlockAllowed(d);
  const [text] = expectArgs(d, 0, 1);
  if (text === undefined) return DEFAULT_CANCEL_MS;
  return parseDuration(text, argPosition(d, 0), 'cancel timeout', { minMs: 1 });
}

export const setup: SetupFn = (ctx) => {
  oncePerBlock(ctx, 'cancel');
  parseCancel(ctx.directive);
  return { name: 'cancel' };
};
