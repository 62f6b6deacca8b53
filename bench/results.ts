// One run's figures, as the runner appends them (one JSON object per line) to the results file
// and as the summary reads them back.

export interface RunContext {
  /** When the session started (UTC, ISO 8601). */
  session: string;
  kdns: string;
  /** `node --version` of each of NODES. */
  nodes: string[];
  dnsperf: string;
  durationS: number;
  clients: number;
  outstanding: number;
  /** dnsperf -T (absent in results written before it was recorded: 1). */
  dnsperfThreads?: number;
  rate: number | null;
  serverCpus: string;
  loadCpus: string;
  netns: boolean;
  services: number;
  host: string;
}

export interface RunResult {
  context: RunContext;
  rep: number;
  workload: string;
  server: string;
  label: string;
  kind: 'kdns' | 'peer';
  threads: number;
  /** Set when the run could not be measured; the figures below are then 0. */
  error?: string;
  qps: number;
  sent: number;
  completed: number;
  lost: number;
  rcodes: Record<string, number>;
  avgLatencyMs: number;
  maxLatencyMs: number;
  /** Server CPU (utime + stime of its processes) during the measured load, seconds. */
  cpuSeconds: number;
  /** cpuSeconds per answered query, µs. */
  cpuUsPerQuery: number;
  /** Resident memory of the server's processes right after the load, KiB. */
  rssKiB: number;
  /** Their peak resident memory, KiB. */
  hwmKiB: number;
  /** Each process's share of cpuSeconds, %, largest first (absent in results written before it was recorded). */
  processCpuShares?: number[];
  /** The server's own CPU time over the load's wall time, % of one CPU. */
  serverShare: number;
  /** How busy the server's CPUs and dnsperf's were during the load (anyone's work), % of their time. */
  serverBusy: number;
  loadBusy: number;
  /** 'ok', 'n/a' (a server that does not serve the fixture's data) or what failed. */
  checks: string;
  note?: string;
}

export function emptyFigures(): Omit<RunResult, 'context' | 'rep' | 'workload' | 'server' | 'label' | 'kind' | 'threads' | 'checks'> {
  return { qps: 0, sent: 0, completed: 0, lost: 0, rcodes: {}, avgLatencyMs: 0, maxLatencyMs: 0, cpuSeconds: 0, cpuUsPerQuery: 0, rssKiB: 0, hwmKiB: 0, serverShare: 0, serverBusy: 0, loadBusy: 0 };
}
