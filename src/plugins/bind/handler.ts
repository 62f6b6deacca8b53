// Works out which local addresses a server block listens on. `bind` answers no queries: its
// whole effect is the list it leaves in the block's settings for the listeners.

import { isIP } from 'node:net';
import type { NetworkInterfaceInfo } from 'node:os';
import type { Plugin } from '../../server/plugin.js';

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

export class BindPlugin implements Plugin {
  readonly name = 'bind';

  constructor(readonly addresses: readonly string[]) {}
}
