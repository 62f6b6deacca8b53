// The file plugin: authoritative answers from RFC 1035 master files, one zone per origin,
// each reloaded on its own when its file changes.

import { RCode } from '../../lib/dns/types.js';
import type { Logger } from '../../server/log.js';
import type { Next, Plugin } from '../../server/plugin.js';
import { errorReply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { everyInterval } from '../pkg/filereload.js';
import { answerFromZone, closestOrigin, isZoneQuery } from '../pkg/zoneanswer.js';
import { ZoneSource } from '../pkg/zonesource.js';
import { serialAtOrAfter, type TransferHub, type Transferer } from '../pkg/xfr.js';
import type { ResourceRecord } from '../../lib/dns/types.js';

export const DEFAULT_RELOAD_MS = 60_000;

export interface FileConfig {
  /** Absolute path of the zone file. */
  path: string;
  /** Origins the file is loaded as (absolute, lower-case); each is its own zone. */
  origins: string[];
  /** How often the file is checked for changes; 0 = never. */
  reloadMs: number;
  /** Reload whenever the file changed, not only when its SOA serial did. */
  reloadByMtime: boolean;
  /** Zones where a name the zone lacks goes to the next plugin; undefined = off. */
  fallthrough?: string[];
}

export class FilePlugin implements Plugin, Transferer {
  readonly name = 'file';
  readonly sources: Map<string, ZoneSource>;
  private stopTimer?: () => void;
  /** The block's meeting point with `transfer`: told when a zone is (re)loaded, to send NOTIFY. */
  transfers?: TransferHub;

  constructor(
    readonly config: FileConfig,
    log: Logger,
  ) {
    this.sources = new Map(config.origins.map((o) => [o, new ZoneSource(config.path, o, log, config.reloadByMtime)]));
  }

  serve(req: DnsRequest, next: Next): ReturnType<Next> {
    if (!isZoneQuery(req)) return next(req);
    const origin = closestOrigin(this.sources, req.name);
    if (origin === undefined) return next(req);
    const zone = this.sources.get(origin)?.zone;
    if (!zone) return errorReply(req, RCode.SERVFAIL, new Error(`plugin/file: zone ${origin} is not loaded`));
    return answerFromZone(zone, req, next, this.config.fallthrough);
  }

  start(): void {
    this.stopTimer = everyInterval(this.config.reloadMs, () => this.refresh());
    // As CoreDNS: secondaries hear of every zone when the server starts (they may have missed
    // changes made while it was down).
    for (const [origin, source] of this.sources) if (source.zone) this.transfers?.changed(origin);
  }

  transfer(zone: string, serial: number | undefined): Iterable<ResourceRecord> | undefined {
    const z = this.sources.get(zone)?.zone;
    if (!z) return undefined;
    if (serial !== undefined && serialAtOrAfter(serial, z.serial)) return [z.soa];
    return z.transferRecords();
  }

  stop(): void {
    this.stopTimer?.();
    this.stopTimer = undefined;
  }

  /** Checks every zone's files now; resolves true when any zone was replaced. */
  async refresh(): Promise<boolean> {
    const results = await Promise.all(
      [...this.sources].map(async ([origin, s]) => {
        const replaced = await s.refresh();
        if (replaced) this.transfers?.changed(origin);
        return replaced;
      }),
    );
    return results.some(Boolean);
  }
}
