// dnsperf: its command line and what the bench reads from its report.

export interface DnsperfRun {
  port: number;
  file: string;
  /** Seconds (-l); undefined with `passes`. */
  seconds?: number;
  /** Times through the file (-n), for a warm-up pass. */
  passes?: number;
  clients: number;
  outstanding: number;
  threads: number;
  timeout: number;
  rate?: number | undefined;
}

export function dnsperfArgs(r: DnsperfRun): string[] {
  const args = ['-s', '127.0.0.1', '-p', String(r.port), '-d', r.file, '-c', String(r.clients), '-q', String(r.outstanding), '-T', String(r.threads), '-t', String(r.timeout)];
  if (r.seconds !== undefined) args.push('-l', String(r.seconds));
  if (r.passes !== undefined) args.push('-n', String(r.passes));
  if (r.rate !== undefined) args.push('-Q', String(r.rate));
  // One line per lost query otherwise: millions on a server that stops answering.
  args.push('-O', 'suppress=timeouts,unexpected,congestion,sockready');
  return args;
}

export interface DnsperfReport {
  sent: number;
  completed: number;
  lost: number;
  qps: number;
  /** Seconds dnsperf ran (its "Run time"). */
  runTime: number;
  avgLatencyMs: number;
  maxLatencyMs: number;
  /** Answers by RCODE name, as dnsperf counts them. */
  rcodes: Record<string, number>;
}

function field(out: string, label: string): string {
  const escaped = label.replace(/[()]/g, '\\$&');
  const m = new RegExp(`^[ \\t]*${escaped}:[ \\t]*(.+)$`, 'm').exec(out);
  if (!m) throw new Error(`dnsperf's report has no "${label}" line`);
  return (m[1] as string).trim();
}

function leadingNumber(text: string, label: string): number {
  const n = Number(text.split(/\s+/)[0]);
  if (!Number.isFinite(n)) throw new Error(`dnsperf's "${label}" is not a number: ${text}`);
  return n;
}

/** Seconds → milliseconds, kept to dnsperf's microseconds (no 0.8130000000000001). */
const seconds = (s: number): number => Math.round(s * 1e6) / 1e3;

/** The figures of dnsperf's closing statistics; throws naming the line it could not read. */
export function parseDnsperf(out: string): DnsperfReport {
  const num = (label: string): number => leadingNumber(field(out, label), label);
  // In the order dnsperf prints them, so an error names the first line missing.
  const sent = num('Queries sent');
  const completed = num('Queries completed');
  const lost = num('Queries lost');
  const rcodes: Record<string, number> = {};
  // "NOERROR 90012 (90.01%), NXDOMAIN 9988 (9.99%)"; absent when nothing was answered.
  const codes = /^[ \t]*Response codes:[ \t]*(.*)$/m.exec(out);
  for (const part of (codes?.[1] ?? '').split(',')) {
    const m = /^\s*([A-Z0-9]+)\s+(\d+)/.exec(part);
    if (m) rcodes[m[1] as string] = Number(m[2]);
  }
  const runTime = num('Run time (s)');
  const qps = num('Queries per second');
  const latency = field(out, 'Average Latency (s)');
  const max = /max\s+([\d.]+)/.exec(latency);
  return {
    sent,
    completed,
    lost,
    qps,
    runTime,
    avgLatencyMs: seconds(leadingNumber(latency, 'Average Latency (s)')),
    maxLatencyMs: max ? seconds(Number(max[1])) : Number.NaN,
    rcodes,
  };
}
