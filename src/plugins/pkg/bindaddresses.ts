// The local addresses a server block's `bind` lines stand for: the bind plugin's setup and the
// parent that holds a worker's sockets (src/supervisor/plan.ts) read them the same way.

import { isIP } from 'node:net';
import type { NetworkInterfaceInfo } from 'node:os';
import { expectArgs, invalidArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';

export type InterfaceTable = NodeJS.Dict<NetworkInterfaceInfo[]>;

/**
 * Link-local addresses (fe80::/10, 169.254/16) need a zone to bind to and are never what a
 * DNS server should serve on, so an interface name does not bring them in (as in CoreDNS).
 */
export function isLinkLocal(address: string): boolean {
  const a = address.toLowerCase();
  return /^fe[89ab][0-9a-f]:/.test(a) || a.startsWith('169.254.');
}

/**
 * One spelling per address ("0:0::1" → "::1"), so repeats and `except` match however the
 * address was written. The URL parser is Node's built-in IPv6 canonicaliser.
 */
export function canonicalIp(address: string): string {
  if (isIP(address) !== 6) return address;
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/** The addresses an argument stands for: an interface's usable addresses, or the IP itself. */
export function expandBindArgument(arg: string, interfaces: InterfaceTable): string[] | undefined {
  const iface = interfaces[arg];
  if (iface !== undefined) return iface.map((i) => canonicalIp(i.address)).filter((a) => !isLinkLocal(a));
  if (isIP(arg) !== 0) return [canonicalIp(arg)];
  return undefined;
}

/** Merges address lists keeping first-seen order and dropping repeats. */
export function mergeAddresses(...lists: readonly string[][]): string[] {
  return [...new Set(lists.flat())];
}

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
