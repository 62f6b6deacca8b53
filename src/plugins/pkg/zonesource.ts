// A zone read from a master file on disk, and kept current: the file (and every file it
// $INCLUDEs) is checked for changes; a changed file is parsed again and replaces the zone
// only when it parses cleanly and, as in CoreDNS, its SOA serial changed (or, with
// `reload_by_mtime`, whenever the file changed). A file that fails to parse leaves the old
// zone serving and logs `file:line: why`. Used by the file and auto plugins: one source per
// zone file.

import { readFileSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { typeName } from '../../lib/dns/rr.js';
import { parseZoneFile } from '../../lib/dns/zonefile.js';
import type { Logger } from '../../server/log.js';
import { Zone } from './zone.js';

interface FileStamp {
  path: string;
  mtimeMs: number;
  size: number;
}

export interface LoadedZone {
  zone: Zone;
  /** The zone file and every file it included, as they were when read. */
  stamps: FileStamp[];
  /** What was loaded but not as written (`file:line: why`). */
  warnings: string[];
}

function stampOf(path: string): FileStamp {
  const st = statSync(path);
  return { path, mtimeMs: st.mtimeMs, size: st.size };
}

/** DNSSEC records a signed zone holds: kdns serves zones unsigned, so it passes over them. */
const DNSSEC_TYPES: ReadonlySet<number> = new Set([46 /* RRSIG */, 47 /* NSEC */, 50 /* NSEC3 */, 51 /* NSEC3PARAM */]);

/** Reads and parses a zone file with its $INCLUDEs (relative to the including file). Throws on any problem. */
export function loadZoneFile(path: string, origin: string): LoadedZone {
  const stamps: FileStamp[] = [stampOf(path)];
  const text = readFileSync(path, 'latin1');
  const skipped = new Map<string, { count: number; first: string }>();
  const entries = parseZoneFile(text, {
    origin,
    file: path,
    skip: {
      types: DNSSEC_TYPES,
      found: (type, file, line) => {
        const name = typeName(type);
        const seen = skipped.get(name);
        if (seen) seen.count++;
        else skipped.set(name, { count: 1, first: `${file}:${line}` });
      },
    },
    readInclude: (target, from) => {
      const full = isAbsolute(target) ? target : resolve(dirname(from), target);
      stamps.push(stampOf(full));
      return { text: readFileSync(full, 'latin1'), file: full };
    },
  });
  const warnings = [...skipped].map(([type, s]) => `${s.first}: ${s.count} ${type} record(s) skipped: kdns serves zones unsigned`);
  return { zone: Zone.build(origin, entries, path, warnings), stamps, warnings };
}

async function changed(stamps: readonly FileStamp[]): Promise<boolean> {
  for (const s of stamps) {
    try {
      const st = await stat(s.path);
      if (st.mtimeMs !== s.mtimeMs || st.size !== s.size) return true;
    } catch {
      return true;
    }
  }
  return false;
}

export class ZoneSource {
  private loaded?: LoadedZone;
  private inFlight?: Promise<boolean>;
  /** So a broken file is reported once per change, not every interval. */
  private lastProblem?: string;

  constructor(
    readonly path: string,
    readonly origin: string,
    private readonly log: Logger,
    private readonly byMtime = false,
  ) {}

  /** The zone being served; undefined until a file was read (queries then get SERVFAIL). */
  get zone(): Zone | undefined {
    return this.loaded?.zone;
  }

  /** First load, at setup: throws what went wrong. */
  loadNow(): void {
    this.loaded = this.warned(loadZoneFile(this.path, this.origin));
  }

  private warned(loaded: LoadedZone): LoadedZone {
    for (const w of loaded.warnings) this.log.warn(`zone ${this.origin}: ${w}`);
    return loaded;
  }

  /** Checks the files and reloads when they changed. Resolves true when a new zone is served. Never rejects. */
  refresh(): Promise<boolean> {
    this.inFlight ??= this.refreshOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async refreshOnce(): Promise<boolean> {
    if (this.loaded && !(await changed(this.loaded.stamps))) return false;
    let next: LoadedZone;
    try {
      next = loadZoneFile(this.path, this.origin);
    } catch (e) {
      this.report(`zone ${this.origin}: ${(e as Error).message}; ${this.loaded ? 'keeping the zone loaded before' : 'not serving it'}`);
      return false;
    }
    this.lastProblem = undefined;
    const old = this.loaded;
    if (old && !this.byMtime && old.zone.serial === next.zone.serial) {
      // CoreDNS's rule: a zone changes when its serial does. Keep the new stamps so the
      // unchanged file is not parsed again every interval.
      this.loaded = { zone: old.zone, stamps: next.stamps, warnings: [] };
      this.log.info(`zone ${this.origin} in ${this.path} changed on disk but its SOA serial is still ${old.zone.serial}: not reloaded`);
      return false;
    }
    this.loaded = this.warned(next);
    this.log.info(`loaded zone ${this.origin} from ${this.path} with SOA serial ${next.zone.serial}`);
    return true;
  }

  private report(problem: string): void {
    if (this.lastProblem === problem) return;
    this.lastProblem = problem;
    this.log.error(problem);
  }
}
