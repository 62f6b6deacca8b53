// Metrics cheap enough for every query. A prom-client child (`counter.labels(...).inc()`) hashes
// its label object on every call, about 0.6 µs each; five of them per query would cost a third of
// the server's whole budget. Here each labelled series is a plain cell that the hot path bumps
// (a few ns), and a scrape turns the cells into Prometheus text:
//   - counters move what accumulated since the last scrape into prom-client (`collect`), so the
//     public Counter API keeps working and `inc` from elsewhere adds up with ours;
//   - histograms append their cells to what prom-client's own Histogram reports.
// The metric objects are registered under their usual names, so get-or-create by name across
// reloads finds them again and the counts survive.

import { Counter, Histogram, type Registry } from '../../server/promclient.js';

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

  constructor(
    readonly labels: LabelSet,
    private readonly bounds: readonly number[],
    private readonly direct?: DirectHistogramChild,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
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
    super({ name, help, labelNames: names, registers: [registry] });
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

  /** prom-client calls this before every scrape. */
  collect(): void {
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

/** What prom-client's registry reads from a histogram (its `getForPromString`). */
interface PromStringValue {
  labels: Record<string, string | number>;
  sharedLabels?: LabelSet;
  value: number;
  metricName?: string;
}
interface PromStringData {
  values: PromStringValue[];
}
type PromStringSource = (this: Histogram<string>) => Promise<PromStringData>;

const baseGetForPromString = (Histogram.prototype as unknown as { getForPromString?: PromStringSource }).getForPromString;

export class BatchedHistogram<L extends string> extends Histogram<L> {
  private readonly cells = new Map<string, HistogramCell>();

  constructor(
    registry: Registry,
    private readonly metricName: string,
    help: string,
    private readonly names: readonly L[],
    readonly bounds: readonly number[],
  ) {
    super({ name: metricName, help, labelNames: names, buckets: [...bounds], registers: [registry] });
    if (typeof baseGetForPromString !== 'function') {
      // prom-client changed how the registry reads histograms: better to fail at setup than to lose series silently.
      throw new Error('prom-client Histogram has no getForPromString; update src/plugins/prometheus/series.ts');
    }
  }

  cell(values: readonly string[]): HistogramCell {
    const key = values.join(SEPARATOR);
    let c = this.cells.get(key);
    if (!c) {
      c = new HistogramCell(labelSet(this.names, values), this.bounds);
      this.cells.set(key, c);
    }
    return c;
  }

  /** Read by prom-client's Registry (and by Histogram.get) when it renders the metric. */
  async getForPromString(): Promise<PromStringData> {
    const data = await (baseGetForPromString as PromStringSource).call(this);
    const bucketName = `${this.metricName}_bucket`;
    for (const c of this.cells.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += c.counts[i] as number;
        data.values.push({ labels: { le }, sharedLabels: c.labels, value: cumulative, metricName: bucketName });
      });
      data.values.push(
        { labels: { le: '+Inf' }, sharedLabels: c.labels, value: c.count, metricName: bucketName },
        { labels: {}, sharedLabels: c.labels, value: c.sum, metricName: `${this.metricName}_sum` },
        { labels: {}, sharedLabels: c.labels, value: c.count, metricName: `${this.metricName}_count` },
      );
    }
    return data;
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
