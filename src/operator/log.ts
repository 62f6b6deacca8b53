// The operator's own log, whose level the DNS resource's spec.operatorLogLevel sets while it
// runs, as OpenShift's DNS operator sets its logger's level on every reconcile: Normal → info
// (what changed, what failed), Debug → also each pass's outcome and each object left as it was,
// Trace → also every watch event. (OpenShift's DNS operator maps the three values to its logger's
// Info, Debug and Trace levels; the operators built on library-go map their own
// operatorLogLevel to klog verbosities 2, 4, 6 and 8 instead.)

import type { DNSLogLevel } from '../lib/cluster/dnsresource.js';

export type OperatorLogLevel = DNSLogLevel;

const RANK: Record<OperatorLogLevel, number> = { Normal: 0, Debug: 1, Trace: 2 };

export class OperatorLog {
  private current: OperatorLogLevel = 'Normal';

  constructor(private readonly write: (line: string) => void) {}

  get level(): OperatorLogLevel {
    return this.current;
  }

  /** Lines every level shows: changes made, problems, refusals. */
  readonly info = (line: string): void => this.write(line);

  /** Lines for Debug and Trace: each pass's outcome, what was left as it was and why. */
  readonly debug = (line: string): void => {
    if (RANK[this.current] >= RANK.Debug) this.write(`debug: ${line}`);
  };

  /** Lines for Trace only: every watch event. */
  readonly trace = (line: string): void => {
    if (RANK[this.current] >= RANK.Trace) this.write(`trace: ${line}`);
  };

  /** Sets the level from spec.operatorLogLevel; a change is logged once, at every level. */
  setLevel(level: OperatorLogLevel): void {
    if (level === this.current) return;
    const before = this.current;
    this.current = level;
    this.write(`operator log level ${before} → ${level} (spec.operatorLogLevel)`);
  }
}
