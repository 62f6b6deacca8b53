// Which plain-DNS addresses a parent holds for its worker: the UDP and TCP listeners a Corefile
// or node-cache's flags name, worked out without loading any plugin (the parent stays small).
// Anything this misses the worker binds itself, as without a parent; only those sockets then
// close with a worker that dies.

import { isIP } from 'node:net';
import { parseBind, type InterfaceTable } from '../plugins/pkg/bindaddresses.js';
import { parseMultisocket } from '../plugins/pkg/multisocket.js';
import type { ServerBlock } from '../lib/corefile/ast.js';
import { keyPort, parseCorefile, parseServerKey } from '../lib/corefile/parser.js';

/** An address and port served over UDP and TCP; address '' is every address. */
export interface ListenSlot {
  address: string;
  port: number;
  /** How many workers serve it, each on sockets of its own (`multisocket`); 1 when absent. */
  workers?: number;
}

/** Slots in first-seen order without repeats; a slot named twice gets the larger worker count. */
function unique(slots: readonly ListenSlot[]): ListenSlot[] {
  const seen = new Map<string, ListenSlot>();
  for (const s of slots) {
    const key = `${s.address} ${s.port}`;
    const before = seen.get(key);
    seen.set(key, before && (before.workers ?? 1) > (s.workers ?? 1) ? before : s);
  }
  return [...seen.values()];
}

/** How many workers the slots need: the most any of them has. */
export function workersFor(slots: readonly ListenSlot[]): number {
  return slots.reduce((most, s) => Math.max(most, s.workers ?? 1), 1);
}

/** A block's `multisocket` count (1 without the directive; `cpus` for one without a number). */
function blockWorkers(block: ServerBlock, cpus: number): number {
  const d = block.directives.find((x) => x.name === 'multisocket');
  return d ? parseMultisocket(d, cpus) : 1;
}

/** The largest `multisocket` count of a Corefile (1 without one): the node cache's worker count. */
export function corefileWorkers(text: string, opts: { file: string; baseDir: string; cpus: number }): number {
  return parseCorefile(text, { file: opts.file, baseDir: opts.baseDir }).reduce((most, b) => Math.max(most, blockWorkers(b, opts.cpus)), 1);
}

/**
 * The plain-DNS (dns://) listeners of a Corefile: each block's port on each of its `bind`
 * addresses, or on every address without `bind`. Blocks of other transports (tls://, https://)
 * and port 0 are left to the worker. Throws the parser's CorefileError for a bad file (the
 * caller then holds nothing and lets the worker report it).
 */
export function corefileListenSlots(text: string, opts: { file: string; baseDir: string; defaultPort: number; interfaces: InterfaceTable; cpus: number }): ListenSlot[] {
  const slots: ListenSlot[] = [];
  for (const block of parseCorefile(text, { file: opts.file, baseDir: opts.baseDir })) {
    const keys = block.keys.flatMap((k) => parseServerKey(k, opts.defaultPort, block));
    if (keys.some((k) => k.transport !== 'dns')) continue;
    const binds = block.directives.filter((d) => d.name === 'bind').flatMap((d) => parseBind(d, opts.interfaces));
    const addresses = binds.length > 0 ? binds : [''];
    const workers = blockWorkers(block, opts.cpus);
    for (const key of keys) {
      const port = keyPort(key, opts.defaultPort);
      if (port === 0) continue;
      for (const address of addresses) slots.push({ address, port, workers });
    }
  }
  return unique(slots);
}

/** node-cache's listeners: every -localip address on its port. */
export function localIPSlots(localIPs: readonly string[], port: number, workers = 1): ListenSlot[] {
  return unique(localIPs.filter((ip) => isIP(ip) !== 0).map((address) => ({ address, port, workers })));
}
