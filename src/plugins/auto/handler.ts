// The auto plugin: serves every zone file found in a directory, picking up new files,
// dropping removed ones, and reloading changed ones (by SOA serial, as the file plugin).

import type { Logger } from '../../server/log.js';
import type { Next, Plugin } from '../../server/plugin.js';
import type { DnsRequest } from '../../server/request.js';
import { everyInterval } from '../pkg/filereload.js';
import { answerFromZone, closestOrigin, isZoneQuery } from '../pkg/zoneanswer.js';
import { inZones } from '../pkg/zones.js';
import { ZoneSource } from '../pkg/zonesource.js';
import { scanDirectory } from './scan.js';

export const DEFAULT_RELOAD_MS = 60_000;
export const DEFAULT_REGEXP = 'db\\.(.*)';
export const DEFAULT_TEMPLATE = '{1}';

export interface AutoConfig {
  /** Zones the plugin answers for (absolute, lower-case): queries outside them go on. */
  zones: string[];
  /** Absolute path of the folder of zone files. */
  directory: string;
  /** Matches file names (unanchored); its groups fill the template. */
  regexp: RegExp;
  /** The origin, with `{N}` for the N-th group of the match. */
  template: string;
  /** How often the folder is scanned and zones reloaded; 0 = never. */
  reloadMs: number;
}

export class AutoPlugin implements Plugin {
  readonly name = 'auto';
  /** origin → its zone, for every file found (even outside `zones`, as CoreDNS). */
  readonly sources = new Map<string, ZoneSource>();
  private stopTimer?: () => void;
  private inFlight?: Promise<void>;
  private lastWarnings = new Set<string>();

  constructor(
    readonly config: AutoConfig,
    private readonly log: Logger,
  ) {}

  serve(req: DnsRequest, next: Next): ReturnType<Next> {
    if (!isZoneQuery(req) || !inZones(req.name, this.config.zones)) return next(req);
    const origin = closestOrigin(this.sources, req.name);
    const zone = origin === undefined ? undefined : this.sources.get(origin)?.zone;
    if (!zone) return next(req);
    return answerFromZone(zone, req, next, undefined);
  }

  /** Scans the folder: new files are loaded, removed ones dropped. Parse errors are logged and the file skipped. */
  scan(): void {
    const { zones, warnings } = scanDirectory(this.config.directory, this.config.regexp, this.config.template);
    const problems = new Set(warnings);
    for (const [origin, source] of this.sources) {
      if (zones.get(origin) !== source.path) {
        this.sources.delete(origin);
        this.log.info(`deleting zone ${origin}`);
      }
    }
    for (const [origin, path] of zones) {
      if (this.sources.has(origin)) continue;
      const source = new ZoneSource(path, origin, this.log);
      try {
        source.loadNow();
      } catch (e) {
        problems.add(`parse zone ${origin}: ${(e as Error).message}`);
        continue;
      }
      this.sources.set(origin, source);
      this.log.info(`inserting zone ${origin} from ${path}`);
    }
    // A problem is logged when it first appears, not at every scan.
    for (const p of problems) if (!this.lastWarnings.has(p)) this.log.warn(p);
    this.lastWarnings = problems;
  }

  /** A scan and a reload of every zone whose files changed. Never rejects. */
  refresh(): Promise<void> {
    this.inFlight ??= (async () => {
      try {
        this.scan();
        await Promise.all([...this.sources.values()].map((s) => s.refresh()));
      } catch (e) {
        this.log.error(`scanning ${this.config.directory}: ${(e as Error).message}`);
      }
    })().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  start(): void {
    this.stopTimer = everyInterval(this.config.reloadMs, () => this.refresh());
  }

  stop(): void {
    this.stopTimer?.();
    this.stopTimer = undefined;
  }
}
