// `kdns top`: which workloads make the DNS load, from a running kdns's workloads endpoint, as a
// table like `kubectl top`.

import { Option, type Command } from 'commander';
import { POLICY_ANNOTATION, WEBHOOK_NOTE } from '../poddns/annotations.js';
import type { WorkloadRow, WorkloadsReport } from '../plugins/workloads/report.js';
import { CliError, EXIT_OK, EXIT_USAGE } from './exit.js';
import { processIO, runAction, type CliIO } from './resolvconf.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:9155';
const REPORT_PATH = '/api/workloads';

export type SortKey = 'qps' | 'amplification' | 'nxdomain';

interface TopOptions {
  server: string;
  sort: SortKey;
  output: 'text' | 'wide' | 'json';
}

const SORTERS: Readonly<Record<SortKey, (a: WorkloadRow, b: WorkloadRow) => number>> = {
  qps: (a, b) => b.qps - a.qps,
  amplification: (a, b) => (b.amplification ?? 0) - (a.amplification ?? 0) || b.qps - a.qps,
  nxdomain: (a, b) => b.nxdomainShare - a.nxdomainShare || b.qps - a.qps,
};

function fixed(n: number | null, digits: number): string {
  return n === null ? '-' : n.toFixed(digits);
}

/** Columns padded to their widest cell, two spaces apart, as kubectl prints them. */
export function renderTable(rows: readonly string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] as number))).join('   ').trimEnd()).join('\n') + '\n';
}

function workloadName(r: WorkloadRow): string {
  return r.workload.startsWith('_') ? r.workload : `${r.kind.toLowerCase()}/${r.workload}`;
}

/**
 * The table for a report, sorted; `wide` adds the per-family amplification, whether the workload
 * already uses autopath, and the `kdns explain` command of the suggestion. A suggestion names
 * the annotation to add, so a note under the table says what reads it.
 */
export function formatTop(report: WorkloadsReport, sort: SortKey, wide: boolean): string {
  const rows = [...report.workloads].sort(SORTERS[sort]);
  if (rows.length === 0) return `No DNS queries in the last ${report.windowSeconds}s.\n`;
  const header = ['NAMESPACE', 'WORKLOAD', 'QPS', 'NXDOMAIN', 'AMPLIFICATION', ...(wide ? ['A', 'AAAA', 'AUTOPATH'] : []), 'SUGGESTION'];
  const body = rows.map((r) => [
    r.namespace === '' ? '-' : r.namespace,
    workloadName(r),
    fixed(r.qps, 1),
    `${Math.round(r.nxdomainShare * 100)}%`,
    fixed(r.amplification, 1),
    // A report from an older kdns has no autopath field.
    ...(wide ? [fixed(r.amplificationA, 1), fixed(r.amplificationAAAA, 1), r.autopath === true ? 'yes' : '-'] : []),
    wide ? r.suggestion : r.suggestion.replace(/ \(kdns explain .*\)$/, ''),
  ]);
  const note = rows.some((r) => r.suggestion !== '') ? `\nA suggested ${POLICY_ANNOTATION} annotation is ${WEBHOOK_NOTE}.\n` : '';
  return renderTable([header, ...body]) + note;
}

export function reportUrl(server: string): URL {
  let url: URL;
  try {
    url = new URL(server.includes('://') ? server : `http://${server}`);
  } catch {
    throw new CliError(`--server: ${JSON.stringify(server)} is not a URL`, EXIT_USAGE);
  }
  url.pathname = REPORT_PATH;
  return url;
}

async function fetchReport(url: URL): Promise<WorkloadsReport> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  } catch (e) {
    throw new CliError(`cannot reach ${url.origin}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message} (is the workloads plugin in the Corefile, listening there?)`);
  }
  if (!res.ok) throw new CliError(`${url}: HTTP ${res.status}${res.status === 404 ? ' (no workloads plugin at this address?)' : ''}`);
  const body = (await res.json()) as WorkloadsReport;
  if (!Array.isArray(body.workloads)) throw new CliError(`${url}: not a workloads report`);
  return body;
}

async function top(opts: TopOptions, io: CliIO): Promise<number> {
  const report = await fetchReport(reportUrl(opts.server));
  if (opts.output === 'json') {
    io.out(`${JSON.stringify({ ...report, workloads: [...report.workloads].sort(SORTERS[opts.sort]) }, null, 2)}\n`);
  } else {
    io.out(formatTop(report, opts.sort, opts.output === 'wide'));
  }
  return EXIT_OK;
}

export function register(program: Command, io: CliIO = processIO): void {
  program
    .command('top')
    .description('show which workloads send DNS queries, how many per lookup, and what to change (from a running kdns with the workloads plugin)')
    .option('--server <URL>', 'the workloads endpoint of a kdns (the workloads plugin\'s address)', DEFAULT_SERVER)
    .addOption(new Option('--sort <KEY>', 'sort by').choices(['qps', 'amplification', 'nxdomain']).default('qps'))
    .addOption(new Option('-o, --output <FORMAT>', 'output format').choices(['text', 'wide', 'json']).default('text'))
    .addHelpText(
      'after',
      `
Examples (the workloads plugin in the Corefile of deploy/coredns; a node cache counts the pods of
its own node: port-forward that node's node-local-dns pod instead):
  kubectl -n kube-system port-forward deployment/coredns 9155 &
  kdns top
  kdns top --sort amplification -o wide`,
    )
    .action(async (opts: TopOptions) => runAction(io, 'top', () => top(opts, io)));
}
