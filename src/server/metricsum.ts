// One /metrics body out of the bodies of N worker processes of one DNS server, as a single
// process would have shown them: CoreDNS answers a port from one process (several sockets with
// `multisocket`), so dashboards and alerts expect one series per label set, not one per worker.
//
// Input and output are the Prometheus text format 0.0.4 as prom-client writes it: per family
// `# HELP`, `# TYPE`, then its samples; families separated by a blank line; a final newline.
// sumExpositions is pure, text in and text out; podMetrics gathers the bodies from the workers.

import { answer, gather, workerCount } from './siblings.js';

/** How the values a series has in several workers become the one value it shows. */
export type Combine = 'sum' | 'min' | 'max' | 'mean';

/** A sample name (exactly, or by its ending) whose value is not the sum over the workers. */
export interface NameRule {
  readonly match: 'exact' | 'prefix' | 'suffix';
  readonly name: string;
  readonly combine: Combine;
}

/**
 * The sample names that do not sum, first match wins. Everything else sums: counters, histogram
 * buckets, sums and counts, summary sums and counts, untyped samples and gauges, because each
 * worker counts its own share of the queries, connections, cache entries, memory, ...
 */
export const NAME_RULES: readonly NameRule[] = [
  // A panic is one worker's own failure: the server as a whole had as many as all of them.
  { match: 'exact', name: 'coredns_panics_total', combine: 'sum' },
  // Every worker reloads the one Corefile and counts the same failed reload: one process counts it once.
  { match: 'exact', name: 'coredns_reload_failed_total', combine: 'max' },
  // 1 per plugin of each block and zone; every worker runs the same blocks, so still 1, not N.
  { match: 'exact', name: 'coredns_plugin_enabled', combine: 'max' },
  // When the server started: its first worker's start (checked before _time_seconds, which it also ends with).
  { match: 'suffix', name: '_start_time_seconds', combine: 'min' },
  // A moment (last reload, certificate expiry, ...): the latest any worker saw; a sum of dates is no date.
  { match: 'suffix', name: '_timestamp_seconds', combine: 'max' },
  { match: 'suffix', name: '_time_seconds', combine: 'max' },
  // Always 1, its labels carry the information (version, build); every worker shows the same.
  { match: 'suffix', name: '_info', combine: 'max' },
  // Every worker reads the same hosts file: the entries are those of one copy.
  { match: 'exact', name: 'coredns_hosts_entries', combine: 'max' },
  // A limit each process has (not a pool the workers share): the pod's is the same number.
  { match: 'exact', name: 'process_max_fds', combine: 'max' },
  // How late a worker's event loop runs: the latest worker is what a query can meet; a sum means nothing.
  { match: 'prefix', name: 'nodejs_eventloop_lag_', combine: 'max' },
  // A ratio (queries per lookup) each worker works out over its own share of the traffic: their
  // mean, since the kernel spreads a workload's queries evenly over the workers' sockets.
  { match: 'exact', name: 'kdns_workload_amplification', combine: 'mean' },
];

const METRIC_TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'] as const;
type MetricType = (typeof METRIC_TYPES)[number];

interface Series {
  readonly name: string;
  /** The sample name and its labels as the first text that had it wrote them. */
  readonly line: string;
  readonly hasQuantile: boolean;
  readonly values: number[];
}

interface Family {
  readonly name: string;
  help?: string;
  type?: MetricType;
  /** By sample name + sorted labels; a Map keeps the order the series were first seen in. */
  readonly series: Map<string, Series>;
}

interface Sample {
  readonly name: string;
  /** `name="value"` pairs as written (value still escaped), in the order written. */
  readonly pairs: readonly string[];
  readonly hasQuantile: boolean;
  readonly value: number;
}

export function sumExpositions(texts: readonly string[]): string {
  const families = new Map<string, Family>();
  for (const text of texts) addExposition(families, text);
  const blocks = [...families.values()].map(renderFamily);
  return blocks.length === 0 ? '' : `${blocks.join('\n\n')}\n`;
}

function familyNamed(families: Map<string, Family>, name: string): Family {
  let family = families.get(name);
  if (!family) {
    family = { name, series: new Map() };
    families.set(name, family);
  }
  return family;
}

// A line that does not parse is dropped, not thrown on: a worker's body is trusted, but one
// cut short (a worker dying mid-write, a read that timed out) must not fail the whole scrape.
function addExposition(families: Map<string, Family>, text: string): void {
  // The family the last # HELP / # TYPE named: its samples follow it.
  let current: Family | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trimStart();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const header = parseHeader(line);
      if (!header) continue; // any other comment carries nothing to merge
      current = familyNamed(families, header.name);
      if (header.kind === 'HELP') current.help ??= header.text;
      else current.type ??= header.type;
      continue;
    }
    const sample = parseSample(line);
    if (!sample) continue;
    // A sample outside its family's block (no header before it) is a family of its own name,
    // untyped until a header says otherwise, as Prometheus's own parser takes it.
    const family = current && belongsTo(current, sample.name) ? current : familyNamed(families, sample.name);
    // Label order does not make another series. The escaped text of a value is as good a key as
    // the value: the format has exactly one way to write each value (other escapes are refused).
    const key = `${sample.name}{${[...sample.pairs].sort().join(',')}}`;
    const known = family.series.get(key);
    if (known) known.values.push(sample.value);
    else {
      const labels = sample.pairs.length === 0 ? '' : `{${sample.pairs.join(',')}}`;
      family.series.set(key, { name: sample.name, line: `${sample.name}${labels}`, hasQuantile: sample.hasQuantile, values: [sample.value] });
    }
  }
}

function belongsTo(family: Family, sampleName: string): boolean {
  if (sampleName === family.name) return true;
  const suffixes = family.type === 'histogram' ? ['_bucket', '_sum', '_count'] : family.type === 'summary' ? ['_sum', '_count'] : [];
  return suffixes.some((s) => sampleName === family.name + s);
}

type Header = { kind: 'HELP'; name: string; text: string } | { kind: 'TYPE'; name: string; type: MetricType };

const HEADER = /^#[ \t]+(HELP|TYPE)[ \t]+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:[ \t]+(.*))?$/;

function parseHeader(line: string): Header | undefined {
  const m = HEADER.exec(line);
  if (!m) return undefined;
  const [, kind, name = '', rest] = m;
  // The help text is written back as it came, escapes and all.
  if (kind === 'HELP') return { kind, name, text: `# HELP ${name}${rest === undefined ? '' : ` ${rest}`}` };
  const type = METRIC_TYPES.find((t) => t === rest?.trim());
  return type ? { kind: 'TYPE', name, type } : undefined;
}

const METRIC_NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;
// A quoted value: any character but a quote, a backslash or a newline, or one of the three
// escapes the format has (\\, \", \n). Commas and braces inside the quotes are part of the value.
const LABEL_VALUE = /"(?:[^"\\\n]|\\[\\"n])*"/y;
const BLANKS = /[ \t]*/y;

/** `pattern` (sticky) at `at`: the text it matched, or undefined. */
function matchAt(pattern: RegExp, line: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(line)?.[0];
}

/** `name{labels} value [timestamp]`; the timestamp is dropped (one process writes none). */
function parseSample(line: string): Sample | undefined {
  const name = matchAt(METRIC_NAME, line, 0);
  if (name === undefined) return undefined;
  const blanks = (matchAt(BLANKS, line, name.length) ?? '').length;
  let at = name.length + blanks;
  const pairs: string[] = [];
  const labelNames = new Set<string>();
  if (line[at] === '{') {
    at++;
    for (;;) {
      at += (matchAt(BLANKS, line, at) ?? '').length;
      if (line[at] === '}') break;
      const label = matchAt(LABEL_NAME, line, at);
      if (label === undefined || labelNames.has(label)) return undefined;
      at += label.length;
      at += (matchAt(BLANKS, line, at) ?? '').length;
      if (line[at] !== '=') return undefined;
      at++;
      at += (matchAt(BLANKS, line, at) ?? '').length;
      const value = matchAt(LABEL_VALUE, line, at);
      if (value === undefined) return undefined;
      at += value.length;
      labelNames.add(label);
      pairs.push(`${label}=${value}`);
      at += (matchAt(BLANKS, line, at) ?? '').length;
      if (line[at] === ',') at++;
      else if (line[at] !== '}') return undefined;
    }
    at++;
  } else if (blanks === 0) return undefined; // the name ran into what follows it
  const fields = line.slice(at).trim().split(/[ \t]+/);
  if (fields.length > 2 || (fields.length === 2 && !/^-?[0-9]+$/.test(fields[1] ?? ''))) return undefined;
  const value = parseValue(fields[0] ?? '');
  if (value === undefined) return undefined;
  return { name, pairs, hasQuantile: labelNames.has('quantile'), value };
}

/**
 * A sample value as Prometheus reads it: a decimal float, or Inf/NaN in any case (prom-client
 * writes NaN as `Nan`). Number() alone would take "" as 0 and "0x10" as 16.
 */
function parseValue(text: string): number | undefined {
  if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(text)) return Number(text);
  const m = /^([+-]?)inf(inity)?$/i.exec(text);
  if (m) return m[1] === '-' ? -Infinity : Infinity;
  return /^nan$/i.test(text) ? NaN : undefined;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function combineFor(family: Family, sampleName: string, hasQuantile: boolean): Combine {
  // A quantile of the merged observations cannot be had from the workers' quantiles, and their
  // sum means nothing; the largest is the closest bound a single number gives (a p99 no better
  // than the worst worker's).
  if (family.type === 'summary' && hasQuantile) return 'max';
  const rule = NAME_RULES.find((r) => (r.match === 'exact' ? sampleName === r.name : r.match === 'prefix' ? sampleName.startsWith(r.name) : sampleName.endsWith(r.name)));
  return rule ? rule.combine : 'sum';
}

function combined(how: Combine, values: readonly number[]): number {
  if (how === 'min') return Math.min(...values);
  if (how === 'max') return Math.max(...values);
  if (how === 'mean') return values.reduce((a, b) => a + b, 0) / values.length;
  return values.reduce((a, b) => a + b, 0);
}

function renderFamily(family: Family): string {
  const lines: string[] = [];
  if (family.help !== undefined) lines.push(family.help);
  if (family.type !== undefined) lines.push(`# TYPE ${family.name} ${family.type}`);
  for (const s of family.series.values()) {
    lines.push(`${s.line} ${formatValue(combined(combineFor(family, s.name, s.hasQuantile), s.values))}`);
  }
  return lines.join('\n');
}

const SCRAPE_TOPIC = 'metrics';

/** Lets sibling workers gather this process's /metrics body (a no-op without siblings). */
export function answerPodScrapes(scrape: () => Promise<string>): void {
  answer(SCRAPE_TOPIC, scrape);
}

/**
 * The /metrics body of the whole pod: this process's, or with `multisocket` every worker's summed
 * into the one body CoreDNS's single process would show. Any worker answers a scrape, so the
 * endpoint stays up while one restarts; a restarted worker's counters start again from 0, as a
 * restarted CoreDNS's do.
 */
export async function podMetrics(scrape: () => Promise<string>): Promise<string> {
  if (workerCount() <= 1) return scrape();
  const bodies = (await gather(SCRAPE_TOPIC)).filter((b): b is string => typeof b === 'string');
  return bodies.length > 0 ? sumExpositions(bodies) : scrape();
}
