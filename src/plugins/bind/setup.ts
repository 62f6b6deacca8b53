import { networkInterfaces } from 'node:os';
import { CorefileError, type Directive } from '../../corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { BindPlugin, expandBindArgument, mergeAddresses, type InterfaceTable } from './handler.js';

function expandAll(args: readonly string[], at: Directive, interfaces: InterfaceTable): string[] {
  return mergeAddresses(
    ...args.map((arg) => {
      const addrs = expandBindArgument(arg, interfaces);
      if (addrs === undefined) throw CorefileError.at(at, `bind: "${arg}" is neither an IP address nor the name of a network interface`);
      return addrs;
    }),
  );
}

/**
 * `bind ADDRESS|IFACE ... { except ADDRESS|IFACE ... }`: the addresses this one directive
 * contributes (several bind lines in a block add up; `except` only trims its own line).
 */
export function parseBind(d: Directive, interfaces: InterfaceTable): string[] {
  if (d.args.length === 0) throw CorefileError.at(d, 'bind needs at least one address or interface name');
  const wanted = expandAll(d.args, d, interfaces);
  const excluded = new Set<string>();
  for (const prop of d.block ?? []) {
    if (prop.name !== 'except') throw CorefileError.at(prop, `unknown property "${prop.name}" in bind block`);
    if (prop.args.length === 0) throw CorefileError.at(prop, 'except needs at least one address or interface name');
    for (const a of expandAll(prop.args, prop, interfaces)) excluded.add(a);
  }
  const kept = wanted.filter((a) => !excluded.has(a));
  if (kept.length === 0) throw CorefileError.at(d, 'bind: every address is excluded, nothing is left to listen on');
  return kept;
}

export const setup: SetupFn = (ctx) => {
  const addresses = parseBind(ctx.directive, networkInterfaces());
  const settings = ctx.block.settings;
  settings.listenAddresses = mergeAddresses(settings.listenAddresses, addresses);
  return new BindPlugin(addresses);
};
