import { blockProperties, expectArgs, invalidArg, unknownProperty } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import { counter } from '../../server/metrics.js';
import type { SetupFn } from '../../server/plugin.js';
import { oncePerBlock } from '../pkg/once.js';
import { LocalPlugin } from './handler.js';

/** `local { localhost_prefix on|off }`: whether localhost.example.org. is answered too (default on). */
export function parseLocal(d: Directive): { localhostPrefix: boolean } {
  expectArgs(d, 0, 0);
  let localhostPrefix = true;
  for (const p of blockProperties(d, 'local')) {
    if (p.name !== 'localhost_prefix') unknownProperty(p, 'local');
    const v = expectArgs(p, 1, 1)[0] as string;
    if (v !== 'on' && v !== 'off') invalidArg(p, v, 'expected on or off');
    localhostPrefix = v === 'on';
  }
  return { localhostPrefix };
}

export const setup: SetupFn = (ctx) => {
  oncePerBlock(ctx, 'local');
  const { localhostPrefix } = parseLocal(ctx.directive);
  const requests = counter(ctx.shared.metrics, 'coredns_local_localhost_requests_total', 'Counter of localhost.<domain> requests.');
  return new LocalPlugin(localhostPrefix, requests);
};
