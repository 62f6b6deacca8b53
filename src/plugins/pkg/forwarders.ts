// The forward plugins of one server block, for the loop plugin of the same block, which probes
// their upstreams and marks the ones that send our queries back to us. Kept in the config
// instance's map, so a reload starts from a clean slate. forward adds itself; loop reads the
// list through the narrow view below, so it needs nothing else of forward.
import type { DnsClient } from '../../lib/dnsclient/client.js';
import type { BlockInfo } from '../../server/plugin.js';

/** What loop needs of one upstream of forward: to probe it directly, name it, and stop using it. */
export interface ProbedUpstream {
  /** "ip:port", as forward's metrics and logs name it. */
  readonly label: string;
  readonly client: Pick<DnsClient, 'exchange'>;
  /** Set by the loop plugin: this upstream sends our queries back to us. */
  looping?: string;
}

/** What loop needs of one forward plugin: its upstreams, its zone and transport, which are still used. */
export interface BlockForwarder {
  readonly upstreams: readonly ProbedUpstream[];
  readonly options: { readonly from: string; readonly forceTcp: boolean };
  /** Upstreams queries may go to: all but those loop found sending our queries back to us. */
  usable(): readonly ProbedUpstream[];
}

export interface BlockForwarders {
  readonly forwarders: BlockForwarder[];
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
