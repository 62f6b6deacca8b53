import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { SetupFn } from '../../server/plugin.js';
import { blockForwarders } from '../pkg/forwarders.js';
import { blockTaps } from '../pkg/taps.js';
import { Forwarder } from './handler.js';
import { forwardMetrics } from './metrics.js';
import { parseForward } from './options.js';

function readOrUndefined(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

export const setup: SetupFn = (ctx) => {
  const base = dirname(ctx.corefilePath);
  const options = parseForward(ctx.directive, readOrUndefined, (p) => (isAbsolute(p) ? p : resolve(base, p)));
  const forwarder = new Forwarder(options, forwardMetrics(ctx.shared.metrics), ctx.shared.log.plugin('forward'), undefined, blockTaps(ctx.instance, ctx.block));
  blockForwarders(ctx.instance, ctx.block).forwarders.push(forwarder);
  return forwarder;
};
