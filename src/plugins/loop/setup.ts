import { expectArgs, noBlockAllowed } from '../../lib/corefile/args.js';
import { CorefileError } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { blockForwarders } from '../pkg/forwarders.js';
import { LoopPlugin, type ProbeTable } from './handler.js';

export const setup: SetupFn = (ctx) => {
  const d = ctx.directive;
  expectArgs(d, 0, 0);
  noBlockAllowed(d);
  const once = `loop@${ctx.block.file}:${ctx.block.line}`;
  if (ctx.instance.has(once)) throw CorefileError.at(d, 'loop can only be used once per server block');
  ctx.instance.set(once, true);
  const probes = ctx.shared.singleton<ProbeTable>('loop/probes', () => new Map());
  return new LoopPlugin(ctx.block, blockForwarders(ctx.instance, ctx.block), probes, ctx.shared.log.plugin('loop'));
};
