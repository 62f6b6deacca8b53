// The side-by-side tables: per workload, every server's figures (medians over repetitions),
// then kdns's CPU per query and QPS divided by each peer's from the same session.
//
//   node --import tsx bench/summarize.ts .bench/results-….jsonl [more.jsonl …]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { cpuListMembers } from './procstat.js';
import type { RunResult } from './results.js';

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export interface Row {
  workload: string;
  server: string;
  label: string;
  kind: 'kdns' | 'peer';
  threads: number;
  /** CPUs the server was pinned to (SERVER_CPUS). */
  serverCpus: number;
  /** True when the server's CPUs and dnsperf's overlap (LOAD_CPUS): their busy time is then both's. */
  cpusShared: boolean;
  runs: number;
  failed: string[];
  qps: number[];
  cpuUs: number[];
  rssMiB: number[];
  completed: number;
  lost: number;
  sent: number;
  rcodes: Record<string, number>;
  serverShare: number[];
  /** CPU time others used on the server's CPUs during the load, % of one CPU. */
  others: number[];
  loadBusy: number[];
  checks: string[];
  notes: string[];
  /** Each run's CPU shares of the server's processes, %, largest first. */
  processShares: number[][];
}

/** A server with another thread count is another row: sessions with 1 and 2 threads summarized together stay apart. */
function serverKey(r: { server: string; threads: number }): string {
  return `${r.server}\u0000${r.threads}`;
}

/** Runs grouped by workload and server (and its thread count), in the order they first appear. */
export function groupRuns(results: readonly RunResult[]): Row[] {
  const rows = new Map<string, Row>();
  for (const r of results) {
    const key = `${r.workload}\u0000${serverKey(r)}`;
    let row = rows.get(key);
    if (!row) {
      const pinned = cpuListMembers(r.context.serverCpus);
      const loadPinned = cpuListMembers(r.context.loadCpus);
      row = { workload: r.workload, server: r.server, label: r.label, kind: r.kind, threads: r.threads, serverCpus: pinned.length, cpusShared: pinned.some((c) => loadPinned.includes(c)), runs: 0, failed: [], qps: [], cpuUs: [], rssMiB: [], completed: 0, lost: 0, sent: 0, rcodes: {}, serverShare: [], others: [], loadBusy: [], checks: [], notes: [], processShares: [] };
      rows.set(key, row);
    }
    row.runs++;
    if (r.error !== undefined) {
      row.failed.push(r.error);
      continue;
    }
    row.qps.push(r.qps);
    row.cpuUs.push(r.cpuUsPerQuery);
    row.rssMiB.push(r.rssKiB / 1024);
    row.completed += r.completed;
    row.lost += r.lost;
    row.sent += r.sent;
    for (const [code, n] of Object.entries(r.rcodes)) row.rcodes[code] = (row.rcodes[code] ?? 0) + n;
    const serverCpus = cpuListMembers(r.context.serverCpus).length;
    row.serverShare.push(r.serverShare);
    row.others.push(Math.max(0, r.serverBusy * serverCpus - r.serverShare));
    row.loadBusy.push(r.loadBusy);
    if (!row.checks.includes(r.checks)) row.checks.push(r.checks);
    if (r.note !== undefined && !row.notes.includes(r.note)) row.notes.push(r.note);
    if (r.processCpuShares !== undefined) row.processShares.push(r.processCpuShares);
  }
  return [...rows.values()];
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const fixed = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** "median" for one run, "median (min–max)" for several. */
function spread(xs: readonly number[], format: (n: number) => string): string {
  if (xs.length === 0) return '–';
  if (xs.length === 1) return format(xs[0] as number);
  return `${format(median(xs))} (${format(Math.min(...xs))}–${format(Math.max(...xs))})`;
}

/** A peer's row names its threads; kdns's label already says its workers ("kdns ×2"). */
function rowName(r: Row): string {
  return r.threads > 1 && r.kind === 'peer' ? `${r.label} (${r.threads} ${r.server.startsWith('kresd') ? 'processes' : 'threads'})` : r.label;
}

function percentOf(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(part > 0 && part < whole / 1000 ? 3 : 1)}%` : '–';
}

function rcodeCell(r: Row, code: string): string {
  const n = r.rcodes[code] ?? 0;
  return r.completed > 0 ? `${int(n)} (${percentOf(n, r.completed)})` : '–';
}

function otherRcodes(r: Row): string {
  const others = Object.entries(r.rcodes).filter(([c]) => c !== 'NOERROR' && c !== 'NXDOMAIN');
  return others.length === 0 ? '0' : others.map(([c, n]) => `${c} ${int(n)}`).join(', ');
}

/**
 * What limited the run: the server's CPU (it used all it can: one CPU per thread, at most its
 * CPUs), dnsperf's (the QPS is then only a lower bound for the server), and whether other
 * processes took a share of the server's CPU. When the server and dnsperf share CPUs, the
 * others' share cannot be told from dnsperf's: only how busy those CPUs were is said.
 */
export function limit(r: Row): string {
  const usable = 95 * Math.max(1, Math.min(r.threads, r.serverCpus));
  if (r.cpusShared) {
    const busy = median(r.loadBusy);
    return [median(r.serverShare) >= usable ? 'server' : '', `CPUs shared with dnsperf, ${busy.toFixed(0)}% busy`].filter(Boolean).join(', ');
  }
  const parts = [median(r.serverShare) >= usable ? 'server' : '', median(r.loadBusy) >= 95 ? 'dnsperf' : ''].filter(Boolean);
  const others = median(r.others);
  if (others >= 10) parts.push(`others took ${others.toFixed(0)}% of its CPU`);
  return parts.length > 0 ? parts.join(', ') : '–';
}

/**
 * "CPU by process 52/47/1%" for a server of several processes (kdns's parent and workers, kresd's
 * instances): whether the kernel spread the queries over their sockets. Medians over the runs;
 * undefined for one process.
 */
export function processSharesNote(r: Row): string | undefined {
  const n = Math.max(0, ...r.processShares.map((s) => s.length));
  if (n < 2) return undefined;
  const medians = Array.from({ length: n }, (_, i) => median(r.processShares.map((s) => s[i] ?? 0)));
  return `CPU by process ${medians.map((m) => m.toFixed(0)).join('/')}%`;
}

function workloadTable(rows: readonly Row[]): string[] {
  const out = [
    '| server | QPS | CPU µs/query | RSS MiB | answered | NOERROR | NXDOMAIN | other | lost | server CPU % | dnsperf CPU % | limited by | checks |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of rows) {
    if (r.qps.length === 0) {
      out.push(`| ${rowName(r)} | failed: ${r.failed[0]?.replace(/\|/g, '/') ?? ''} |  |  |  |  |  |  |  |  |  |  |  |`);
      continue;
    }
    const checks = r.checks.join(' / ').replace(/\|/g, '/');
    const spreadNote = processSharesNote(r);
    const notes = [...r.notes, ...(spreadNote ? [spreadNote] : []), ...(r.failed.length > 0 ? [`${r.failed.length} of ${r.runs} runs failed`] : [])];
    out.push(
      `| ${rowName(r)}${notes.length > 0 ? ` (${notes.join('; ')})` : ''} | ${spread(r.qps, int)} | ${spread(r.cpuUs, (n) => fixed(n, 1))} | ${fixed(median(r.rssMiB), 1)} | ${int(r.completed)} | ${rcodeCell(r, 'NOERROR')} | ${rcodeCell(r, 'NXDOMAIN')} | ${otherRcodes(r)} | ${int(r.lost)} (${percentOf(r.lost, r.sent)}) | ${fixed(median(r.serverShare), 0)} | ${fixed(median(r.loadBusy), 0)} | ${limit(r)} | ${checks} |`,
    );
  }
  return out;
}

/**
 * kdns's figure over each peer's, per workload: for CPU per query below 1 means kdns spends
 * less; for QPS above 1 means kdns answered more.
 */
export function ratioTable(rows: readonly Row[], figure: 'cpuUs' | 'qps'): string[] {
  const workloads = [...new Set(rows.map((r) => r.workload))];
  const peers = [...new Map(rows.filter((r) => r.kind === 'peer').map((r) => [serverKey(r), rowName(r)])).entries()];
  const kdnsRows = rows.filter((r) => r.kind === 'kdns' && r[figure].length > 0);
  if (peers.length === 0 || kdnsRows.length === 0) return [];
  const out = [`| workload | kdns | ${peers.map(([, name]) => `÷ ${name}`).join(' | ')} |`, `|---|---|${peers.map(() => '---:').join('|')}|`];
  for (const w of workloads) {
    for (const k of kdnsRows.filter((r) => r.workload === w)) {
      const cells = peers.map(([id]) => {
        const p = rows.find((r) => r.workload === w && serverKey(r) === id);
        const mine = median(k[figure]);
        const theirs = p ? median(p[figure]) : Number.NaN;
        return theirs > 0 ? fixed(mine / theirs, 2) : '–';
      });
      out.push(`| ${w} | ${rowName(k)} | ${cells.join(' | ')} |`);
    }
  }
  return out;
}

export function summarize(results: readonly RunResult[]): string {
  if (results.length === 0) return 'no results\n';
  const c = (results[0] as RunResult).context;
  const reps = Math.max(...results.map((r) => r.rep));
  const rows = groupRuns(results);
  const sessions = [...new Set(results.map((r) => r.context.session))];
  const out = [
    `## kdns bench, ${sessions.join(' and ')}`,
    '',
    ...(sessions.length > 1 ? [`Results of ${sessions.length} sessions, each row from the one that ran it; the settings below are the first's.`, ''] : []),
    `kdns ${c.kdns}; node ${c.nodes.join(', ')}; ${c.dnsperf}; ${c.services.toLocaleString('en-US')} Services; host ${c.host}.`,
    `Each run: the server pinned to CPU ${c.serverCpus}, dnsperf (and the forwarding upstream) to CPU ${c.loadCpus}, ` +
      `${c.netns ? 'in a network namespace of its own (loopback only)' : 'on 127.0.0.1'}; ${c.durationS} s of load, ` +
      `dnsperf -c ${c.clients} -q ${c.outstanding}${(c.dnsperfThreads ?? 1) > 1 ? ` -T ${c.dnsperfThreads}` : ''}${c.rate !== null ? ` -Q ${c.rate}` : ', no rate limit'}; ` +
      `${reps > 1 ? `${reps} repetitions, medians (min–max)` : 'one repetition'}.`,
    '',
  ];
  for (const w of [...new Set(rows.map((r) => r.workload))]) {
    out.push(`### ${w}`, '', ...workloadTable(rows.filter((r) => r.workload === w)), '');
  }
  const cpu = ratioTable(rows, 'cpuUs');
  if (cpu.length > 0) out.push('### kdns CPU µs per query ÷ the peer\'s (below 1: kdns spends less per query)', '', ...cpu, '');
  const qps = ratioTable(rows, 'qps');
  if (qps.length > 0) out.push('### kdns QPS ÷ the peer\'s (above 1: kdns answered more)', '', ...qps, '');
  return `${out.join('\n')}`;
}

export function readResults(paths: readonly string[]): RunResult[] {
  const out: RunResult[] = [];
  for (const path of paths) {
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (line.trim() === '') return;
        try {
          out.push(JSON.parse(line) as RunResult);
        } catch {
          throw new Error(`${path}:${i + 1}: not a JSON result line`);
        }
      });
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write('usage: node --import tsx bench/summarize.ts RESULTS.jsonl [...]\n');
    process.exit(2);
  }
  try {
    process.stdout.write(`${summarize(readResults(files))}\n`);
  } catch (e) {
    process.stderr.write(`summarize: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
