// Metrics cheap enough for every query. A prom-client child (`counter.labels(...).inc()`) hashes
// its label object on every call, about 0.6 µs each; five of them per query would cost a third of
// the server's whole budget. Here each labelled series is a plain cell that the hot path bumps
// (a few ns), and a scrape turns the cells into Prometheus text:
//   - counters are prom-client Counters whose `collect` hook moves what accumulated since the
//     last scrape into them, so the public Counter API keeps working and `inc` from elsewhere
//     adds up with ours;
//   - histograms are kdns's own families, registered in the same registry (so they keep their
//     place in the text) and written out by kdns (`exposition`), a few lines of the text format.
// The metric objects are registered under their usual names, so get-or-create by name across
// reloads finds them again and the counts survive.
// Used by the prometheus plugin's own families and by the cache, autopath and forward plugins'.

import type { Metric } from 'prom-client';
import { Counter, Histogram, type Registry } from '../../server/promclient.js';
import { escapeHelp, labelPairs, sampleValue } from './textformat.js';

type LabelSet = Record<string, string>;

/** A series that some other part of the process created as a plain prom-client metric. */
interface DirectCounterChild {
  inc(value?: number): void;
}
interface DirectHistogramChild {
  observe(value: number): void;
}

export class CounterCell {
  /** Counted since the last scrape. */
  pending = 0;

  constructor(
    readonly labels: LabelSet,
    private readonly direct?: DirectCounterChild,
  ) {}

  inc(): void {
    if (this.direct) this.direct.inc();
    else this.pending++;
  }
}

export class HistogramCell {
  /** counts[i] = observations in bucket i (not cumulative); the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  /** The labels as the text format writes them (`a="x",b="y"`), made once for every scrape. */
  readonly labelText: string;

  constructor(
    readonly labels: LabelSet,
    private readonly bounds: readonly number[],
    private readonly direct?: DirectHistogramChild,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
    this.labelText = labelPairs(labels);
  }

  clear(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  observe(value: number): void {
    if (this.direct) {
      this.direct.observe(value);
      return;
    }
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
  }
}

const SEPARATOR = '\u0000';

function labelSet(names: readonly string[], values: readonly string[]): LabelSet {
  const out: LabelSet = {};
  names.forEach((n, i) => {
    out[n] = values[i] ?? '';
  });
  return out;
}

export class BatchedCounter<L extends string> extends Counter<L> {
  private readonly cells = new Map<string, CounterCell>();
  private readonly flushedOnce = new WeakSet<CounterCell>();

  constructor(
    registry: Registry,
    name: string,
    help: string,
    private readonly names: readonly L[],
  ) {
    // prom-client calls `collect` (with the metric as `this`) before it reads the counter.
    super({
      name,
      help,
      labelNames: names,
      registers: [registry],
      collect(this: Counter<L>) {
        (this as BatchedCounter<L>).flushCells();
      },
    });
  }

  /** The cell for these label values (in labelNames order); the same cell every time. */
  cell(values: readonly string[]): CounterCell {
    const key = values.join(SEPARATOR);
    let c = this.cells.get(key);
    if (!c) {
      c = new CounterCell(labelSet(this.names, values));
      this.cells.set(key, c);
    }
    return c;
  }

  /** Adds what the cells counted since the last scrape. */
  private flushCells(): void {
    for (const c of this.cells.values()) {
      // Go's client shows a series from its first use on, even at zero.
      if (c.pending > 0 || !this.flushedOnce.has(c)) {
        this.inc(c.labels as Partial<Record<L, string>>, c.pending);
        this.flushedOnce.add(c);
        c.pending = 0;
      }
    }
  }
}

/** One sample as prom-client's Registry reads it from a metric's `get()`. */
export interface HistogramSample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** What `BatchedHistogram.get()` returns: the shape of prom-client's own `Histogram.get()`. */
export interface HistogramSnapshot {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: HistogramSample[];
}

/**
 * A histogram family of cells, written out by kdns. prom-client's Registry holds it like its own
 * metrics: in registration order, found by name, read through `get()` by `registry.metrics()` and
 * `getMetricsAsJSON()`. The /metrics handler writes it with `exposition()` instead, which makes
 * the same text without an object per sample.
 */
export class BatchedHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly labelNames: readonly L[];
  private readonly cells = new Map<string, HistogramCell>();
  /** `NAME_bucket{le="BOUND"` for each bound, then +Inf: the fixed start of every bucket line. */
  private readonly bucketPrefixes: readonly string[];

  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    names: readonly L[],
    readonly bounds: readonly number[],
  ) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new Error(`invalid metric name "${name}"`);
    for (const n of names) {
      if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(n) || n === 'le') throw new Error(`${name}: invalid label name "${n}"`);
    }
    this.labelNames = names;
    this.bucketPrefixes = [...bounds.map((b) => `${name}_bucket{le="${b}"`), `${name}_bucket{le="+Inf"`];
    // The Registry's types list only prom-client's classes; it reads any metric through the
    // members this class has (name, help, type, get, reset).
    registry.registerMetric(this as unknown as Metric);
  }

  cell(values: readonly string[]): HistogramCell {
    const key = values.join(SEPARATOR);
    let c = this.cells.get(key);
    if (!c) {
      c = new HistogramCell(labelSet(this.labelNames, values), this.bounds);
      this.cells.set(key, c);
    }
    return c;
  }

  /** The family in the Prometheus text format, without the blank line that separates families. */
  exposition(): string {
    let out = `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} histogram`;
    const prefixes = this.bucketPrefixes;
    for (const c of this.cells.values()) {
      const labels = c.labelText;
      const inBraces = labels === '' ? '' : `{${labels}}`;
      const afterLe = labels === '' ? '} ' : `,${labels}} `;
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += c.counts[i] as number;
        out += `\n${prefixes[i] as string}${afterLe}${sampleValue(cumulative)}`;
      }
      out += `\n${prefixes[this.bounds.length] as string}${afterLe}${sampleValue(c.count)}`;
      out += `\n${this.name}_sum${inBraces} ${sampleValue(c.sum)}`;
      out += `\n${this.name}_count${inBraces} ${sampleValue(c.count)}`;
    }
    return out;
  }

  /** The samples as prom-client's metrics report them: buckets (cumulative), +Inf, sum, count. */
  async get(): Promise<HistogramSnapshot> {
    const values: HistogramSample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const c of this.cells.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += c.counts[i] as number;
        values.push({ metricName: bucket, labels: { le, ...c.labels }, value: cumulative });
      });
      values.push(
        { metricName: bucket, labels: { le: '+Inf', ...c.labels }, value: c.count },
        { metricName: `${this.name}_sum`, labels: { ...c.labels }, value: c.sum },
        { metricName: `${this.name}_count`, labels: { ...c.labels }, value: c.count },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every series (the Registry's resetMetrics); the cells stay the ones handed out. */
  reset(): void {
    for (const c of this.cells.values()) c.clear();
  }
}

/**
 * A counter of cells. Reuses the registry's metric of that name: ours from an earlier config,
 * or a plain Counter some other part made (then cells write through it, at prom-client's cost).
 */
export interface CounterFamily {
  cell(values: readonly string[]): CounterCell;
}
export interface HistogramFamily {
  cell(values: readonly string[]): HistogramCell;
}

export function batchedCounter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): CounterFamily {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof BatchedCounter) return existing;
  if (existing instanceof Counter) {
    const plain = existing as Counter<string>;
    return { cell: (values) => new CounterCell(labelSet(labelNames, values), plain.labels(...values)) };
  }
  return new BatchedCounter(registry, name, help, labelNames);
}

export function batchedHistogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  bounds: readonly number[],
): HistogramFamily {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof BatchedHistogram) return existing;
  if (existing instanceof Histogram) {
    const plain = existing as Histogram<string>;
    return { cell: (values) => new HistogramCell(labelSet(labelNames, values), bounds, plain.labels(...values)) };
  }
  return new BatchedHistogram(registry, name, help, labelNames, bounds);
}
