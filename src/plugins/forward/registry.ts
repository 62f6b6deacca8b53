// The forward plugins of one server block, for the loop plugin of the same block, which probes
// their upstreams and marks the ones that send our queries back to us. Kept in the config
// instance's map, so a reload starts from a clean slate.
import type { BlockInfo } from '../../server/plugin.js';
import type { Forwarder } from './handler.js';

export interface BlockForwarders {
  readonly forwarders: Forwarder[];
}

function key(block: BlockInfo): string {
  return `forward@${block.file}:${block.line}`;
}

/** The block's list, created empty on first ask (loop sets up before forward). */
export function blockForwarders(instance: Map<string, unknown>, block: BlockInfo): BlockForwarders {
  let entry = instance.get(key(block)) as BlockForwarders | undefined;
  if (!entry) {
    entry = { forwarders: [] };
    instance.set(key(block), entry);
  }
  return entry;
}
