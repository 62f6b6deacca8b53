// log: one line per query, after the rest of the chain answered, in CoreDNS's formats.

import { isSubdomain } from '../../lib/dns/name.js';
import { RCode, RRType } from '../../lib/dns/types.js';
import type { Message } from '../../lib/dns/types.js';
import { finalizeReply } from '../../server/finalize.js';
import { PluginError, type MaybePromise, type Next, type Plugin } from '../../server/plugin.js';
import { errorReply, type Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { isPromise } from '../../server/promise.js';
import { render, type FormatPart, type LogEntry } from './format.js';

/** CoreDNS's response classes (plugin/pkg/response). */
export type ResponseClass = 'all' | 'success' | 'denial' | 'error';

export interface LogRule {
  /** Names at or below this zone are logged by this rule (absolute, lower-case). */
  scope: string;
  format: string;
  parts: FormatPart[];
  /** Classes to log; contains 'all' when every response is logged. */
  classes: ReadonlySet<ResponseClass>;
  /** Also log responses slower than this (0 = off), whatever their class. */
  minDurationMs: number;
}

const OPCODE_NOTIFY = 4;
const OPCODE_UPDATE = 5;

/**
 * The class of a response as CoreDNS types it: answers with NOERROR (or a referral) are success;
 * NXDOMAIN and NODATA that carry an SOA are denial; everything else (SERVFAIL, REFUSED, a bare
 * NXDOMAIN, zone transfers and updates) is error.
 */
export function classify(msg: Message): Exclude<ResponseClass, 'all'> {
  if (msg.opcode === OPCODE_UPDATE || msg.opcode === OPCODE_NOTIFY) return 'error';
  const qtype = msg.questions[0]?.type;
  if (qtype === RRType.AXFR || qtype === RRType.IXFR) return 'error';
  if (msg.answers.length > 0 && msg.rcode === RCode.NOERROR) return 'success';
  const soa = msg.authority.some((rr) => rr.type === RRType.SOA);
  if (soa && (msg.rcode === RCode.NOERROR || msg.rcode === RCode.NXDOMAIN)) return 'denial';
  if (msg.rcode === RCode.SERVFAIL || msg.rcode === RCode.NOTIMP) return 'error';
  if (msg.rcode === RCode.NOERROR) return 'success'; // includes referrals (NS in authority)
  return 'error';
}

/** Where a formatted line goes (the server's logger: `[INFO] <line>`). */
export type LineWriter = (line: string) => void;

export class LogPlugin implements Plugin {
  readonly name = 'log';

  constructor(
    readonly rules: LogRule[],
    private readonly write: LineWriter,
  ) {}

  /** The first rule whose scope holds the name (CoreDNS applies only one). */
  ruleFor(name: string): LogRule | undefined {
    for (const r of this.rules) {
      if (r.scope === '.' || isSubdomain(name, r.scope)) return r;
    }
    return undefined;
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const rule = this.ruleFor(req.name);
    if (!rule) return next(req);
    let result: MaybePromise<Reply | undefined>;
    try {
      result = next(req);
    } catch (e) {
      this.logOutcome(rule, req, undefined, e);
      throw e;
    }
    if (isPromise(result)) {
      return result.then(
        (reply) => {
          this.logOutcome(rule, req, reply, undefined);
          return reply;
        },
        (e: unknown) => {
          this.logOutcome(rule, req, undefined, e);
          throw e;
        },
      );
    }
    this.logOutcome(rule, req, result, undefined);
    return result;
  }

  /** Logs what the client gets: the reply, or the error reply the server makes when there is none. */
  private logOutcome(rule: LogRule, req: DnsRequest, reply: Reply | undefined, error: unknown): void {
    try {
      const durationNs = Number(process.hrtime.bigint() - req.received);
      const sent = reply ?? errorReply(req, error instanceof PluginError ? error.rcode : RCode.SERVFAIL);
      if (!this.wanted(rule, sent, durationNs)) return;
      const entry: LogEntry = { req, rcode: sent.rcode, wire: finalWire(req, sent), durationNs };
      this.write(render(rule.parts, entry));
    } catch {
      // A log line must never change the answer; a reply that cannot be encoded is the server's to report.
    }
  }

  private wanted(rule: LogRule, reply: Reply, durationNs: number): boolean {
    if (rule.classes.has('all')) return true;
    if (rule.classes.has(classify(reply.view()))) return true;
    return rule.minDurationMs > 0 && durationNs > rule.minDurationMs * 1e6;
  }
}

function finalWire(req: DnsRequest, reply: Reply): Buffer | undefined {
  try {
    return finalizeReply(req, reply);
  } catch {
    return undefined;
  }
}
