// `transfer [ZONES...] { to ADDRESS...  source ADDRESS }`.

import { expectArgs, invalidArg, noBlockAllowed, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { canonicalIP } from '../../lib/cluster/keys.js';
import type { Plugin, SetupFn } from '../../server/plugin.js';
import { splitHostPort } from '../pkg/upstreams.js';
import { TransferHub } from '../pkg/xfr.js';
import { zoneArgs } from '../pkg/zones.js';
import { TransferPlugin, type TransferConfig } from './handler.js';

export function parseTransfer(d: Directive, blockZones: readonly string[]): TransferConfig {
  const zones = d.args.length > 0 ? zoneArgs(d, d.args) : [...blockZones];
  const config: TransferConfig = { zones, to: [] };
  for (const prop of d.block ?? []) {
    noBlockAllowed(prop);
    switch (prop.name) {
      case 'to':
        // `to` may be given more than once; its addresses add up.
        for (const arg of expectArgs(prop, 1)) {
          if (arg === '*') {
            config.to.push('*');
            continue;
          }
          const hp = splitHostPort(arg, 53);
          if (typeof hp === 'string') invalidArg(prop, arg, hp);
          config.to.push({ host: canonicalIP(hp.host) ?? hp.host, port: hp.port });
        }
        break;
      case 'source': {
        const [addr] = expectArgs(prop, 1, 1) as [string];
        if (config.source !== undefined) throw CorefileError.at(prop, 'transfer: source already specified');
        const ip = canonicalIP(addr);
        if (ip === undefined) invalidArg(prop, addr, 'not an IP address');
        config.source = ip;
        break;
      }
      default:
        unknownProperty(prop, 'transfer');
    }
  }
  if (config.to.length === 0) throw CorefileError.at(d, `transfer: "to" is required`);
  return config;
}

/** The block's transfer plugin, once its first `transfer` directive set it up. */
function transferKey(block: { file: string; line: number }): string {
  return `transfer@${block.file}:${block.line}`;
}

export const setup: SetupFn = (ctx) => {
  const config = parseTransfer(ctx.directive, ctx.block.zones);
  const key = transferKey(ctx.block);
  const first = ctx.instance.get(key) as TransferPlugin | undefined;
  if (first) {
    // CoreDNS takes every `transfer` of a block together (longest zone wins): a second directive
    // adds its zones to the first one's plugin and stands in the chain doing nothing.
    first.configs.push(config);
    const passive: Plugin = { name: 'transfer' };
    return passive;
  }
  const plugin = new TransferPlugin([config], TransferHub.of(ctx.instance, ctx.block), ctx.shared.log.plugin('transfer'));
  ctx.instance.set(key, plugin);
  return plugin;
};
