// What `kdns top` and the page show: per workload rates over a recent window and a suggestion.

import { policyAnnotationHint } from '../../poddns/annotations.js';
import { POD_SPEC_PATHS } from '../../poddns/workload.js';
import type { Accounting, Sample, WorkloadStats } from './accounting.js';

export interface WindowCounts {
  seconds: number;
  queries: number;
  nxdomain: number;
  lookups: [number, number];
  familyQueries: [number, number];
}

/**
 * Counts since the oldest sample no older than `ms` (all counts when there is no sample yet). The
 * time the workload's counts were zero, before its first sample, is the oldest sample of all:
 * without it, the queries a workload made before its first tick left the window at that tick,
 * the moment they were first sampled (the report then showed none of them).
 */
export function windowOf(w: WorkloadStats, ms: number, now = Date.now()): WindowCounts {
  const first = w.samples[0];
  const zero: Sample | undefined = first !== undefined && w.zeroAt !== undefined && w.zeroAt < first.at ? { at: w.zeroAt, queries: 0, nxdomain: 0, lookups: [0, 0], familyQueries: [0, 0] } : undefined;
  let from: Sample | undefined;
  for (const s of zero === undefined ? w.samples : [zero, ...w.samples]) {
    if (now - s.at <= ms + 1000) {
      from = s;
      break;
    }
  }
  const q = w.queries;
  if (!from) return { seconds: 0, queries: q, nxdomain: w.nxdomain, lookups: [w.lookups[0] as number, w.lookups[1] as number], familyQueries: [w.familyQueries[0] as number, w.familyQueries[1] as number] };
  return {
    seconds: (now - from.at) / 1000,
    queries: q - from.queries,
    nxdomain: w.nxdomain - from.nxdomain,
    lookups: [(w.lookups[0] as number) - from.lookups[0], (w.lookups[1] as number) - from.lookups[1]],
    familyQueries: [(w.familyQueries[0] as number) - from.familyQueries[0], (w.familyQueries[1] as number) - from.familyQueries[1]],
  };
}

/** Queries per lookup, undefined without lookups. */
export function amplification(lookups: number, queries: number): number | undefined {
  return lookups > 0 ? queries / lookups : undefined;
}

export interface WorkloadRow {
  namespace: string;
  kind: string;
  workload: string;
  /** Queries per second over the window (0 when the window is shorter than a second). */
  qps: number;
  queries: number;
  lookups: number;
  nxdomainShare: number;
  /** Queries per lookup over A and AAAA together, and per family. */
  amplification: number | null;
  amplificationA: number | null;
  amplificationAAAA: number | null;
  /**
   * Its pods look names up through autopath (ClusterFirstWithAutopath), as seen in their queries:
   * whether asked by annotation, namespace label or the literal dnsPolicy, and also for pods the
   * kdns webhook rewrote to `dnsPolicy: None` (dns.kdns.io/mutated-from).
   */
  autopath: boolean;
  suggestion: string;
}

/** How often the live page reads the report again. */
export const REPORT_POLL_MS = 2000;

/** Above this many queries per lookup, suggest a change. */
const WORTH_SUGGESTING = 1.5;

const KIND_ABBREV: Readonly<Record<string, string>> = { Deployment: 'deploy', StatefulSet: 'sts', DaemonSet: 'ds', CronJob: 'cronjob', Job: 'job', Pod: 'pod', ReplicaSet: 'rs' };

/**
 * Where a workload kind keeps its pods' metadata, the place for the policy annotation. Kinds
 * kdns does not know (other controllers) are taken to have a pod template at `spec.template`.
 */
export function podMetadataPath(kind: string): string {
  const spec = POD_SPEC_PATHS[kind] ?? ['spec', 'template', 'spec'];
  return [...spec.slice(0, -1), 'metadata'].join('.');
}

/**
 * What to change, with the command that checks it; empty when the workload walks no search list
 * or already uses autopath. The change is the annotation (read by the kdns webhook), never the
 * literal dnsPolicy, which a stock API server refuses.
 */
export function suggestionFor(row: Pick<WorkloadRow, 'namespace' | 'kind' | 'workload' | 'amplification' | 'autopath'>, name: string): string {
  const a = row.amplification;
  if (a === null || a < WORTH_SUGGESTING || row.workload.startsWith('_') || row.autopath) return '';
  const file = `${KIND_ABBREV[row.kind] ?? row.kind.toLowerCase()}/${row.workload}.yaml`;
  const change = policyAnnotationHint('ClusterFirstWithAutopath', podMetadataPath(row.kind));
  return `search list makes ${a.toFixed(1)} queries per lookup: try ClusterFirstWithAutopath, ${change} (kdns explain -f ${file} ${name === '' ? 'NAME' : name} --compare)`;
}

export function rowOf(w: WorkloadStats, windowMs: number, now = Date.now()): WorkloadRow {
  const win = windowOf(w, windowMs, now);
  const lookups = win.lookups[0] + win.lookups[1];
  const amp = amplification(lookups, win.familyQueries[0] + win.familyQueries[1]);
  const row = {
    namespace: w.namespace,
    kind: w.kind,
    workload: w.workload,
    qps: win.seconds >= 1 ? win.queries / win.seconds : 0,
    queries: win.queries,
    lookups,
    nxdomainShare: win.queries > 0 ? win.nxdomain / win.queries : 0,
    amplification: amp ?? null,
    amplificationA: amplification(win.lookups[0], win.familyQueries[0]) ?? null,
    amplificationAAAA: amplification(win.lookups[1], win.familyQueries[1]) ?? null,
    autopath: w.autopath,
    suggestion: '',
  };
  row.suggestion = suggestionFor(row, w.lastExpanded);
  return row;
}

export interface HistoryPoint {
  /** ms since the epoch. */
  t: number;
  qps: number;
  amplification: number | null;
}

export interface WorkloadsReport {
  /** ms since the epoch. */
  time: number;
  windowSeconds: number;
  workloads: Array<WorkloadRow & { history: HistoryPoint[] }>;
}

/** Rates between consecutive samples: the chart's points. */
export function historyOf(w: WorkloadStats): HistoryPoint[] {
  const out: HistoryPoint[] = [];
  for (let i = 1; i < w.samples.length; i++) {
    const a = w.samples[i - 1] as Sample;
    const b = w.samples[i] as Sample;
    const seconds = (b.at - a.at) / 1000;
    const lookups = b.lookups[0] - a.lookups[0] + b.lookups[1] - a.lookups[1];
    const queries = b.familyQueries[0] - a.familyQueries[0] + b.familyQueries[1] - a.familyQueries[1];
    out.push({ t: b.at, qps: seconds > 0 ? (b.queries - a.queries) / seconds : 0, amplification: amplification(lookups, queries) ?? null });
  }
  return out;
}

/** What the JSON endpoint serves: every workload with queries in the window, busiest first. */
export function buildReport(acc: Accounting, windowMs: number, now = Date.now()): WorkloadsReport {
  const workloads = [...acc.workloads.values(), acc.other]
    .map((w) => ({ ...rowOf(w, windowMs, now), history: historyOf(w) }))
    .filter((r) => r.queries > 0 || r.history.some((p) => p.qps > 0))
    .sort((a, b) => b.qps - a.qps || b.queries - a.queries);
  return { time: now, windowSeconds: windowMs / 1000, workloads };
}
