import { CorefileError } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { serverLabel } from '../pkg/metrics.js';
import { CachePlugin } from './handler.js';
import { cacheCells } from './metrics.js';
import { parseCache } from './options.js';

export const setup: SetupFn = (ctx) => {
  const once = `cache@${ctx.block.file}:${ctx.block.line}`;
  if (ctx.instance.has(once)) throw CorefileError.at(ctx.directive, 'cache can only be used once per server block');
  ctx.instance.set(once, true);
  const options = parseCache(ctx.directive, ctx.block.zones);
  const server = serverLabel(ctx.block.settings.listenAddresses[0] ?? '', ctx.block.port);
  return new CachePlugin(options, cacheCells(ctx.shared.metrics, server, options.zones.join(',')));
};
