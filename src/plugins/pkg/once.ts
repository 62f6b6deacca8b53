// Plugins CoreDNS allows once per server block refuse a second line naming it, with its position.
// Used by the setups of metadata, minimal, root, cancel, pprof, nsid, timeouts and local.
import { CorefileError } from '../../lib/corefile/ast.js';
import type { SetupContext } from '../../server/plugin.js';

export function oncePerBlock(ctx: SetupContext, plugin: string): void {
  const key = `${plugin}@once@${ctx.block.file}:${ctx.block.line}`;
  if (ctx.instance.has(key)) throw CorefileError.at(ctx.directive, `${plugin} can only be used once per server block`);
  ctx.instance.set(key, true);
}
