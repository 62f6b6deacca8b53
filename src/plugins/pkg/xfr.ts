// What the `transfer` plugin asks of the plugins that hold zones (file, kubernetes): the records
// of a zone for an outgoing zone transfer, and word when a zone changed (to send NOTIFY). They
// meet in a per-block hub kept in the config instance, since `transfer` is set up before the
// plugins it transfers from (it runs ahead of them in the chain) and each side may be absent.

import type { ResourceRecord } from '../../lib/dns/types.js';
import type { BlockInfo } from '../../server/plugin.js';

/** A plugin whose zones can be transferred (CoreDNS's transfer.Transferer). */
export interface Transferer {
  /**
   * The records of `zone` (lower-case, absolute) for a transfer, or undefined when this plugin
   * does not hold exactly that zone (the next transferer is asked). For AXFR (`serial`
   * undefined), and for IXFR with a serial older than the zone's: the SOA, every other record,
   * and the SOA again. For IXFR with a serial that is the zone's or newer (RFC 1982): the SOA
   * alone ("you are up to date").
   */
  transfer(zone: string, serial: number | undefined): Iterable<ResourceRecord> | undefined;
}

/** Where the zone plugins of one server block and its `transfer` plugin find each other. */
export class TransferHub {
  readonly transferers: Transferer[] = [];
  private readonly listeners: Array<(zone: string) => void> = [];

  /** A zone plugin offers its zones. */
  offer(t: Transferer): void {
    this.transferers.push(t);
  }

  /** A zone plugin says `zone` now has new data (loaded at start, or reloaded). */
  changed(zone: string): void {
    for (const l of this.listeners) l(zone);
  }

  /** The transfer plugin listens for changed zones (to send NOTIFY). */
  onChange(listener: (zone: string) => void): void {
    this.listeners.push(listener);
  }

  /** The hub of `block` in this config instance, made on first use. */
  static of(instance: Map<string, unknown>, block: Pick<BlockInfo, 'file' | 'line'>): TransferHub {
    const key = `transfer-hub@${block.file}:${block.line}`;
    let hub = instance.get(key) as TransferHub | undefined;
    if (!hub) instance.set(key, (hub = new TransferHub()));
    return hub;
  }
}

/** RFC 1982: serial `a` is `b` or comes after it (a distance of exactly 2^31 is undefined: not after). */
export function serialAtOrAfter(a: number, b: number): boolean {
  return (a - b) >>> 0 < 0x80000000;
}
