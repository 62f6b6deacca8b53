// `timeouts { read DURATION  write DURATION  idle DURATION }`: the server's TCP/DoT/DoH read,
// write and idle timeouts, each between 1s and 24h as in CoreDNS. kdns's TCP connections have
// their own idle limit (see the server's TCP limits); the values are checked and accepted.
import { argPosition, blockProperties, duplicateProperty, expectArgs, parseDuration, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { oncePerBlock } from '../pkg/once.js';

export interface Timeouts {
  readMs?: number;
  writeMs?: number;
  idleMs?: number;
}

const KEYS = { read: 'readMs', write: 'writeMs', idle: 'idleMs' } as const;

export function parseTimeouts(d: Directive): Timeouts {
  expectArgs(d, 0, 0);
  if (!d.block || d.block.length === 0) throw CorefileError.at(d, 'timeouts needs a block with at least one of read, write or idle');
  const out: Timeouts = {};
  for (const p of blockProperties(d, 'timeouts')) {
    if (!(p.name in KEYS)) unknownProperty(p, 'timeouts');
    const key = KEYS[p.name as keyof typeof KEYS];
    if (out[key] !== undefined) duplicateProperty(p, 'timeouts');
    out[key] = parseDuration(expectArgs(p, 1, 1)[0] as string, argPosition(p, 0), `timeouts ${p.name}`, { minMs: 1000, maxMs: 86_400_000 });
  }
  return out;
}

export const setup: SetupFn = (ctx) => {
  oncePerBlock(ctx, 'timeouts');
  parseTimeouts(ctx.directive);
  return { name: 'timeouts' };
};
