// `searchpath` setup: read the directive and the node's resolv.conf, build the handler.
import { CorefileError } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { readOrUndefined } from '../pkg/hostsearch.js';
import { parseSearchpath } from './config.js';
import { SearchpathPlugin } from './handler.js';

export const setup: SetupFn = (ctx) => {
  const once = `searchpath@${ctx.block.file}:${ctx.block.line}`;
  if (ctx.instance.has(once)) throw CorefileError.at(ctx.directive, 'searchpath can only be used once per server block');
  ctx.instance.set(once, true);
  return new SearchpathPlugin(parseSearchpath(ctx.directive, ctx.corefilePath, readOrUndefined));
};
