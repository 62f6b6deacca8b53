// Which plain-DNS addresses a parent holds for its worker: the UDP and TCP listeners a Corefile
// or node-cache's flags name, worked out without loading any plugin (the parent stays small).
// Anything this misses the worker binds itself, as without a parent; only those sockets then
// close with a worker that dies.

import { isIP } from 'node:net';
import { parseBind, type InterfaceTable } from '../plugins/pkg/bindaddresses.js';
import { keyPort, parseCorefile, parseServerKey } from '../lib/corefile/parser.js';

/** An address and port served over UDP and TCP; address '' is every address. */
export interface ListenSlot {
  address: string;
  port: number;
}

/** Slots in first-seen order without repeats. */
function unique(slots: readonly ListenSlot[]): ListenSlot[] {
  const seen = new Map<string, ListenSlot>();
  for (const s of slots) seen.set(`${s.address} ${s.port}`, s);
  return [...seen.values()];
}

/**
 * The plain-DNS (dns://) listeners of a Corefile: each block's port on each of its `bind`
 * addresses, or on every address without `bind`. Blocks of other transports (tls://, https://)
 * and port 0 are left to the worker. Throws the parser's CorefileError for a bad file (the
 * caller then holds nothing and lets the worker report it).
 */
export function corefileListenSlots(text: string, opts: { file: string; baseDir: string; defaultPort: number; interfaces: InterfaceTable }): ListenSlot[] {
  const slots: ListenSlot[] = [];
  for (const block of parseCorefile(text, { file: opts.file, baseDir: opts.baseDir })) {
    const keys = block.keys.flatMap((k) => parseServerKey(k, opts.defaultPort, block));
    if (keys.some((k) => k.transport !== 'dns')) continue;
    const binds = block.directives.filter((d) => d.name === 'bind').flatMap((d) => parseBind(d, opts.interfaces));
    const addresses = binds.length > 0 ? binds : [''];
    for (const key of keys) {
      const port = keyPort(key, opts.defaultPort);
      if (port === 0) continue;
      for (const address of addresses) slots.push({ address, port });
    }
  }
  return unique(slots);
}

/** node-cache's listeners: every -localip address on its port. */
export function localIPSlots(localIPs: readonly string[], port: number): ListenSlot[] {
  return unique(localIPs.filter((ip) => isIP(ip) !== 0).map((address) => ({ address, port })));
}
