// The hosts plugin: answers A, AAAA and PTR from a hosts file plus inline Corefile entries,
// re-reading the file when it changes.

import { readFile, stat } from 'node:fs/promises';
import type { Gauge } from 'prom-client';
import { RCode, RRType } from '../../lib/dns/types.js';
import type { Logger } from '../../server/log.js';
import type { Next, Plugin } from '../../server/plugin.js';
import type { DnsRequest } from '../../server/request.js';
import { fallsThrough } from '../pkg/fallthrough.js';
import { inZones } from '../pkg/zones.js';
import { NO_RECORDS, encodeIndex, wireReply, type AnswerIndex, type EncodedName } from './answers.js';
import { parseHostsText, type HostsLine } from './hostsfile.js';
import { buildTable, wildcardFor } from './table.js';

/** The answers of the wildcard that stands for `name`, if the table has one. */
function wildcardAnswer(index: AnswerIndex, name: string): EncodedName | undefined {
  const wildcard = wildcardFor(name);
  return wildcard === undefined ? undefined : index.names.get(wildcard);
}

export const DEFAULT_HOSTS_PATH = '/etc/hosts';
export const DEFAULT_TTL = 3600;
export const DEFAULT_RELOAD_MS = 5000;

export interface HostsConfig {
  /** Absolute path of the hosts file. */
  path: string;
  /** Zones answered for (absolute, lower-case). */
  zones: string[];
  ttl: number;
  /** Generate PTR records for every address (false with `no_reverse`). */
  autoReverse: boolean;
  /** How often the file is checked for changes; 0 = never. */
  reloadMs: number;
  /** Zones where an unknown name goes to the next plugin; undefined = fallthrough is off. */
  fallthrough?: string[];
  /** Entries written in the Corefile block. */
  inline: HostsLine[];
}

export interface HostsMetrics {
  entries: Gauge;
  reloadTimestamp: Gauge;
}

export interface HostsDeps {
  log: Logger;
  metrics?: HostsMetrics;
  /** Wall clock in ms (tests pin it). */
  now?: () => number;
}

interface FileStamp {
  mtimeMs: number;
  size: number;
}

export class HostsPlugin implements Plugin {
  readonly name = 'hosts';
  private index: AnswerIndex;
  private fileLines: readonly HostsLine[] = [];
  private stamp?: FileStamp;
  private timer?: NodeJS.Timeout;
  private inFlight?: Promise<boolean>;
  /** So a missing or unusable file is reported once, not every reload interval. */
  private lastProblem?: string;

  constructor(
    readonly config: HostsConfig,
    private readonly deps: HostsDeps,
  ) {
    this.index = this.rebuild();
  }

  serve(req: DnsRequest, next: Next): ReturnType<Next> {
    const q = req.query;
    // Any class is answered as IN, as CoreDNS does (the server refuses other classes unless
    // chaos or forward opened it to them).
    if (q.qdcount !== 1) return next(req);
    const index = this.index;
    if (q.qtype === RRType.PTR) {
      // PTR is answered for any reverse name we know, whatever the zones, and passed on
      // otherwise: without an SOA we cannot deny that an address exists.
      const ptr = index.reverse.get(q.name);
      return ptr ? wireReply(req, RCode.NOERROR, ptr) : next(req);
    }
    // A name written down is answered as written, for both types; only names nobody wrote
    // down are answered by a wildcard one label up (*.example.org. for www.example.org.).
    const known = index.names.get(q.name) ?? (index.wildcards ? wildcardAnswer(index, q.name) : undefined);
    if (known) {
      const rrs = q.qtype === RRType.A ? known.a : q.qtype === RRType.AAAA ? known.aaaa : NO_RECORDS;
      return wireReply(req, RCode.NOERROR, rrs);
    }
    if (!inZones(q.name, this.config.zones) || this.fallsThrough(q.name)) return next(req);
    return wireReply(req, RCode.NXDOMAIN, NO_RECORDS);
  }

  fallsThrough(name: string): boolean {
    return fallsThrough(this.config.fallthrough, name);
  }

  async start(): Promise<void> {
    await this.refresh();
    if (this.config.reloadMs > 0) {
      this.timer = setInterval(() => void this.refresh(), this.config.reloadMs);
      // The listeners keep the process alive; this timer must not keep a stopping one alive.
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Number of (name, address) pairs served. */
  get entries(): number {
    return this.index.entries;
  }

  /**
   * Re-reads the hosts file if its modification time or size changed (or it appeared or
   * went away). Resolves true when the data served changed. Never rejects.
   */
  refresh(): Promise<boolean> {
    this.inFlight ??= this.refreshOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async refreshOnce(): Promise<boolean> {
    const path = this.config.path;
    let st;
    try {
      st = await stat(path);
    } catch {
      this.report(`hosts file ${path} does not exist${this.config.inline.length > 0 ? '; serving the inline entries only' : ''}`);
      return this.replaceFile(undefined, []);
    }
    if (!st.isFile()) {
      this.report(`hosts file ${path} is not a regular file`);
      return this.replaceFile(undefined, []);
    }
    if (this.stamp && this.stamp.mtimeMs === st.mtimeMs && this.stamp.size === st.size) return false;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      this.report(`cannot read hosts file ${path}: ${(e as Error).message}`);
      return false;
    }
    const parsed = parseHostsText(text);
    this.lastProblem = undefined;
    if (parsed.skipped.length > 0) {
      this.deps.log.warn(`${path}: ignored ${parsed.skipped.length} unusable line(s), first ${parsed.skipped[0]}`);
    }
    return this.replaceFile({ mtimeMs: st.mtimeMs, size: st.size }, parsed.lines);
  }

  private report(problem: string): void {
    if (this.lastProblem === problem) return;
    this.lastProblem = problem;
    this.deps.log.warn(problem);
  }

  private replaceFile(stamp: FileStamp | undefined, lines: readonly HostsLine[]): boolean {
    if (stamp === undefined && this.stamp === undefined && this.fileLines.length === 0) return false;
    this.stamp = stamp;
    this.fileLines = lines;
    this.index = this.rebuild();
    this.deps.metrics?.reloadTimestamp.set((this.deps.now ?? Date.now)() / 1000);
    return true;
  }

  private rebuild(): AnswerIndex {
    const table = buildTable([this.fileLines, this.config.inline], { zones: this.config.zones, autoReverse: this.config.autoReverse });
    const index = encodeIndex(table, this.config.ttl);
    this.deps.metrics?.entries.set(index.entries);
    return index;
  }
}
