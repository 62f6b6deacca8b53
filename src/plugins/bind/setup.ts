import { networkInterfaces } from 'node:os';
import { expectArgs, invalidArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { BindPlugin, expandBindArgument, mergeAddresses, type InterfaceTable } from './handler.js';

function expandAll(d: Directive, interfaces: InterfaceTable): string[] {
  return mergeAddresses(
    ...d.args.map((arg) => expandBindArgument(arg, interfaces) ?? invalidArg(d, arg, 'neither an IP address nor a network interface of this machine')),
  );
}

/**
 * `bind ADDRESS|IFACE ... { except ADDRESS|IFACE ... }`: the addresses this one directive
 * contributes (several bind lines in a block add up; `except` only trims its own line).
 */
export function parseBind(d: Directive, interfaces: InterfaceTable): string[] {
  expectArgs(d, 1);
  const wanted = expandAll(d, interfaces);
  const excluded = new Set<string>();
  for (const prop of d.block ?? []) {
    if (prop.name !== 'except') unknownProperty(prop, 'bind');
    expectArgs(prop, 1);
    for (const a of expandAll(prop, interfaces)) excluded.add(a);
  }
  const kept = wanted.filter((a) => !excluded.has(a));
  if (kept.length === 0) throw CorefileError.at(d, 'every address of "bind" is excluded by "except": nothing is left to listen on');
  return kept;
}

export const setup: SetupFn = (ctx) => {
  const addresses = parseBind(ctx.directive, networkInterfaces());
  const settings = ctx.block.settings;
  settings.listenAddresses = mergeAddresses(settings.listenAddresses, addresses);
  return new BindPlugin(addresses);
};
