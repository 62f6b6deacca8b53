import { argPosition, expectArgs, noBlockAllowed, parseDuration, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { parseHttpAddress } from '../pkg/httpaddress.js';
import { HealthPlugin, type HealthConfig } from './handler.js';

export const DEFAULT_ADDRESS = ':8080';

/** `health [ADDRESS] { lameduck DURATION }` */
export function parseHealth(d: Directive): HealthConfig {
  const [text = DEFAULT_ADDRESS] = expectArgs(d, 0, 1);
  const address = parseHttpAddress(text);
  if (typeof address === 'string') throw CorefileError.at(d, `health: ${address}`);
  let lameduckMs = 0;
  for (const prop of d.block ?? []) {
    if (prop.name !== 'lameduck') unknownProperty(prop, 'health');
    noBlockAllowed(prop);
    const [duration] = expectArgs(prop, 1, 1) as [string];
    lameduckMs = parseDuration(duration, argPosition(prop, 0), 'lameduck');
  }
  return { address, lameduckMs };
}

export const setup: SetupFn = (ctx) => new HealthPlugin(parseHealth(ctx.directive), ctx.shared, ctx.shared.log.plugin('health'));
