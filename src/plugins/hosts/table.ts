// What the plugin serves, merged from the hosts file and the Corefile's inline entries.
//
// Precedence follows CoreDNS: neither source hides the other. A name's addresses are the
// file's followed by the inline ones (each address once), and a reverse name lists every host
// name given for that address, file first.

import { formatIPv4, formatIPv6 } from '../../lib/dns/ip.js';
import { firstLabelEnd, ipToReverseName } from '../../lib/dns/name.js';
import { inZones } from '../pkg/zones.js';
import type { HostAddress, HostsLine } from './hostsfile.js';

export interface NameAddresses {
  v4: Uint8Array[];
  v6: Uint8Array[];
}

export interface HostsTable {
  /** Lower-case absolute name → its addresses. */
  names: Map<string, NameAddresses>;
  /** Lower-case reverse name (…in-addr.arpa. / …ip6.arpa.) → host names, for PTR. */
  reverse: Map<string, string[]>;
  /** (name, address) pairs: the figure coredns_hosts_entries reports. */
  entries: number;
}

export interface TableOptions {
  /** Zones the plugin answers for; names outside them are left out. */
  zones: readonly string[];
  /** Generate PTR records (off with `no_reverse`). */
  autoReverse: boolean;
}

/** `*.example.org.`: a name whose leftmost label is `*` stands for every name one label below its parent. */
export function isWildcardName(name: string): boolean {
  return name.startsWith('*.');
}

/**
 * The wildcard that could stand for `name`: its first label replaced by `*`
 * (`*.example.org.` for `www.example.org.`); undefined for the root and for top-level names'
 * parent (`.`), where no wildcard is served. Escaped dots (`\.`) belong to their label.
 */
export function wildcardFor(name: string): string | undefined {
  const i = firstLabelEnd(name);
  if (i < 0 || i >= name.length - 1) return undefined;
  return `*${name.slice(i)}`;
}

export function addressText(a: HostAddress): string {
  return a.family === 4 ? formatIPv4(a.bytes) : formatIPv6(a.bytes);
}

/** Insertion-ordered sets while merging: lists of 100k names (ad-block hosts files) stay linear. */
interface Building {
  v4: Map<string, Uint8Array>;
  v6: Map<string, Uint8Array>;
}

/** Merges the sources in order (file first, then inline). */
export function buildTable(sources: ReadonlyArray<readonly HostsLine[]>, opts: TableOptions): HostsTable {
  const names = new Map<string, Building>();
  const reverse = new Map<string, Set<string>>();
  let entries = 0;
  for (const lines of sources) {
    for (const entry of lines) {
      const text = addressText(entry.address);
      const reverseName = opts.autoReverse ? ipToReverseName(text) : undefined;
      for (const name of entry.names) {
        if (!inZones(name, opts.zones)) continue;
        let addrs = names.get(name);
        if (!addrs) {
          addrs = { v4: new Map(), v6: new Map() };
          names.set(name, addrs);
        }
        const family = entry.address.family === 4 ? addrs.v4 : addrs.v6;
        if (!family.has(text)) {
          family.set(text, entry.address.bytes);
          entries++;
        }
        // A wildcard stands for names nobody wrote down: no PTR points at it (as CoreDNS).
        if (reverseName === undefined || isWildcardName(name)) continue;
        let targets = reverse.get(reverseName);
        if (!targets) {
          targets = new Set();
          reverse.set(reverseName, targets);
        }
        targets.add(name);
      }
    }
  }
  const table: HostsTable = { names: new Map(), reverse: new Map(), entries };
  for (const [name, b] of names) table.names.set(name, { v4: [...b.v4.values()], v6: [...b.v6.values()] });
  for (const [rev, targets] of reverse) table.reverse.set(rev, [...targets]);
  return table;
}
