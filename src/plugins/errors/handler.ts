// errors: logs the errors behind answers (a PluginError thrown by a later plugin, or a reply that
// carries `error`), one line each, or grouped per period when they match a `consolidate` pattern.

import { formatDuration } from '../../lib/corefile/args.js';
import { typeName } from '../../lib/dns/rr.js';
import type { Logger } from '../../server/log.js';
import { PluginError, type MaybePromise, type Next, type Plugin } from '../../server/plugin.js';
import type { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { isPromise } from '../../server/promise.js';

export type ConsolidateLevel = 'error' | 'warning' | 'info' | 'debug';

export interface ConsolidateRule {
  periodMs: number;
  pattern: RegExp;
  /** The expression as written (RegExp.source would show `/` escaped). */
  source: string;
  level: ConsolidateLevel;
  /** Log the first error of a period as it comes (at `level`); the summary then only when more followed. */
  showFirst: boolean;
}

export interface ErrorsConfig {
  consolidate: ConsolidateRule[];
  /** Accepted for CoreDNS compatibility; the server always logs the stack of a recovered exception. */
  stacktrace: boolean;
}

/** `<rcode> <qname> <qtype>: <message>`, CoreDNS's error line (after `plugin/errors: `). */
export function errorLine(rcode: number, req: DnsRequest, message: string): string {
  return `${rcode} ${req.name} ${typeName(req.qtype)}: ${message}`;
}

function emitAt(log: Logger, level: ConsolidateLevel, line: string): void {
  if (level === 'error') log.error(line);
  else if (level === 'warning') log.warn(line);
  else if (level === 'info') log.info(line);
  else log.debug(line);
}

/**
 * Counts matching errors; the first one of a quiet spell starts the period, and at its end one
 * line says how many there were. With show_first the first one is also logged as it comes, and
 * a period that saw only that one ends without a summary (it would repeat the line).
 */
export class Consolidator {
  private count = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly rule: ConsolidateRule,
    private readonly log: Logger,
  ) {}

  /** Counts one error; true when it opened the period and show_first wants it logged now. */
  add(): boolean {
    this.count++;
    if (this.timer !== undefined) return false;
    this.timer = setTimeout(() => this.flush(), this.rule.periodMs);
    // A pending summary is no reason to keep a stopping process alive; stop() flushes it.
    this.timer.unref();
    return this.rule.showFirst;
  }

  /** Logs the summary of the current period (if any) and starts afresh. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const n = this.count;
    this.count = 0;
    if (n > 1 || (n === 1 && !this.rule.showFirst)) emitAt(this.log, this.rule.level, `${n} errors like '${this.rule.source}' occurred in last ${formatDuration(this.rule.periodMs)}`);
  }
}

export class ErrorsPlugin implements Plugin {
  readonly name = 'errors';
  private readonly consolidators: Consolidator[];
  private stopped = false;

  constructor(
    readonly config: ErrorsConfig,
    private readonly log: Logger,
  ) {
    this.consolidators = config.consolidate.map((r) => new Consolidator(r, log));
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    let result: MaybePromise<Reply | undefined>;
    try {
      result = next(req);
    } catch (e) {
      this.reportThrown(req, e);
      throw e;
    }
    if (isPromise(result)) {
      return result.then(
        (reply) => {
          if (reply?.error) this.report(req, reply.rcode, reply.error.message);
          return reply;
        },
        (e: unknown) => {
          this.reportThrown(req, e);
          throw e;
        },
      );
    }
    if (result?.error) this.report(req, result.rcode, result.error.message);
    return result;
  }

  /**
   * Only PluginErrors: anything else thrown is a bug, which the server logs (with its stack) and
   * counts as a panic, as CoreDNS's recover does; logging it here too would say it twice.
   */
  private reportThrown(req: DnsRequest, e: unknown): void {
    if (e instanceof PluginError) this.report(req, e.rcode, e.message);
  }

  report(req: DnsRequest, rcode: number, message: string): void {
    if (!this.stopped) {
      // The first pattern that matches takes the error (CoreDNS's order).
      const group = this.consolidators.find((c) => c.rule.pattern.test(message));
      if (group) {
        if (group.add()) emitAt(this.log, group.rule.level, errorLine(rcode, req, message));
        return;
      }
    }
    this.log.error(errorLine(rcode, req, message));
  }

  /** Retired config or shutdown: say now what the open periods counted. */
  stop(): void {
    this.stopped = true;
    for (const c of this.consolidators) c.flush();
  }
}
