import { argPosition, expectArgs, noBlockAllowed, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { BlockInfo, SetupFn } from '../../server/plugin.js';
import { parseHttpAddress } from '../pkg/httpaddress.js';
import { ReadyPlugin, type MonitorMode, type ReadyConfig } from './handler.js';

export const DEFAULT_ADDRESS = ':8181';
const MODES: readonly MonitorMode[] = ['until-ready', 'continuously'];

/** `ready [ADDRESS] { monitor until-ready|continuously }` */
export function parseReady(d: Directive): ReadyConfig {
  const [text = DEFAULT_ADDRESS] = expectArgs(d, 0, 1);
  const address = parseHttpAddress(text);
  if (typeof address === 'string') throw CorefileError.at(d, `ready: ${address}`);
  let monitor: MonitorMode = 'until-ready';
  for (const prop of d.block ?? []) {
    if (prop.name !== 'monitor') unknownProperty(prop, 'ready');
    noBlockAllowed(prop);
    const [mode] = expectArgs(prop, 1, 1) as [string];
    if (!(MODES as readonly string[]).includes(mode)) {
      throw CorefileError.at(argPosition(prop, 0), `unknown monitor mode "${mode}" in ready block (expected ${MODES.join(' or ')})`);
    }
    monitor = mode as MonitorMode;
  }
  return { address, monitor };
}

/** CoreDNS allows one `ready` per server block. */
function claimBlock(instance: Map<string, unknown>, block: BlockInfo, d: Directive): void {
  const seen = (instance.get('ready|blocks') as Set<BlockInfo> | undefined) ?? new Set<BlockInfo>();
  instance.set('ready|blocks', seen);
  if (seen.has(block)) throw CorefileError.at(d, 'ready can only be used once per server block');
  seen.add(block);
}

export const setup: SetupFn = (ctx) => {
  const config = parseReady(ctx.directive);
  claimBlock(ctx.instance, ctx.block, ctx.directive);
  return new ReadyPlugin(config, ctx.shared, ctx.server, ctx.shared.log.plugin('ready'));
};
