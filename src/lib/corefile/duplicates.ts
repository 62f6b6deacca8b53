// Two server blocks may not serve the same zone on the same transport, port and address: CoreDNS
// refuses to start with "cannot serve dns://example.org.:53 - it is already defined", and so
// does kdns, at parse time, so `kdns validate` catches it too.

import { CorefileError, type ServerBlock } from './ast.js';
import { keyPort, parseServerKey } from './key.js';

/** Listen addresses a block names with `bind` (as written; interface names are not resolved). */
export type ListenAddressesOf = (block: ServerBlock) => string[];

/**
 * The addresses of every `bind` line of the block. Without `bind` a block listens on every
 * address (""). Interface names are compared as written; the server, which resolves them,
 * checks again.
 */
export function bindAddresses(block: ServerBlock): string[] {
  const addresses = block.directives.filter((d) => d.name === 'bind').flatMap((d) => d.args.filter((a) => a !== ''));
  return addresses.length > 0 ? [...new Set(addresses)] : [''];
}

/** CoreDNS's spelling of a zone address: `dns://example.org.:53`, `... on 127.0.0.1` when bound. */
function zoneAddress(transport: string, zone: string, port: number, address: string): string {
  return `${transport}://${zone}:${port}${address === '' ? '' : ` on ${address}`}`;
}

/**
 * Throws CorefileError at the second block that serves a zone address already served. A block
 * with a `view` takes only the queries its view matches, so it may share a zone address with
 * others (split DNS), as in CoreDNS.
 */
export function checkDuplicateZones(blocks: readonly ServerBlock[], defaultPort: number, listenAddressesOf: ListenAddressesOf = bindAddresses): void {
  const firstAt = new Map<string, ServerBlock>();
  for (const block of blocks) {
    if (block.directives.some((d) => d.name === 'view')) continue;
    const addresses = listenAddressesOf(block);
    for (const raw of block.keys) {
      for (const key of parseServerKey(raw, defaultPort, block)) {
        for (const address of addresses) {
          const id = zoneAddress(key.transport, key.zone, keyPort(key, defaultPort), address);
          const first = firstAt.get(id);
          if (first) {
            throw CorefileError.at(block, `cannot serve ${id} - it is already defined (first at ${first.file}:${first.line})`);
          }
          firstAt.set(id, block);
        }
      }
    }
  }
}
