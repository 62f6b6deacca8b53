// A small PromQL evaluator for tests: just the forms kdns's alert rules use, evaluated over two
// scrapes of a real /metrics taken `seconds` apart, as Prometheus would see them:
//   - selectors with equality matchers: name{label="value", label!="value"}[range]
//   - rate(v[range]) and increase(v[range]) over the two scrapes: (later − earlier) / seconds and
//     later − earlier (a counter that went down was reset: its later value is the increase).
//     Prometheus extrapolates both to the range's edges; with two samples that changes the
//     magnitude, not whether a rule fires on a counter that moved or stayed still;
//   - sum, with `by (labels)` before or after its argument;
//   - histogram_quantile(φ, buckets), with Prometheus's linear interpolation inside a bucket and
//     the highest finite bound when the rank falls in the +Inf bucket;
//   - vector / vector (matched on identical labels), vector > scalar (a filter), parentheses.
// A metric the rules name that the scrape does not hold is an error, not an empty result: a rule
// on a name kdns does not export must fail its test, not silently never fire.

import type { Sample } from './prom.js';

export interface Element {
  labels: Record<string, string>;
  value: number;
}
export type Vector = Element[];

export interface Scrapes {
  earlier: readonly Sample[];
  later: readonly Sample[];
  seconds: number;
}

type Node =
  | { kind: 'number'; value: number }
  | { kind: 'selector'; name: string; matchers: Array<{ label: string; op: '=' | '!='; value: string }>; range?: string }
  | { kind: 'call'; fn: 'rate' | 'increase' | 'histogram_quantile'; args: Node[] }
  | { kind: 'sum'; by: string[]; arg: Node }
  | { kind: 'binary'; op: '/' | '>'; left: Node; right: Node };

const TOKEN = /\s*(?:(\d+(?:\.\d+)?|\.\d+)|([a-zA-Z_:][a-zA-Z0-9_:]*)|("(?:[^"\\]|\\.)*")|(\[[0-9]+[smhd]\])|(!=|[(){},=/>]))/y;

function tokenize(text: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.trimEnd().length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) throw new Error(`PromQL: cannot read ${JSON.stringify(text.slice(at, at + 20))}`);
    out.push(m[0].trim());
  }
  return out;
}

/** Parses the supported subset; anything else is an error naming what was found. */
export function parsePromQL(text: string): Node {
  const tokens = tokenize(text);
  let i = 0;
  const peek = (): string | undefined => tokens[i];
  const take = (want?: string): string => {
    const t = tokens[i++];
    if (t === undefined || (want !== undefined && t !== want)) throw new Error(`PromQL: expected ${want ?? 'more'}, found ${t ?? 'the end'} in ${text}`);
    return t;
  };
  const labelList = (): string[] => {
    take('(');
    const labels: string[] = [];
    while (peek() !== ')') {
      labels.push(take());
      if (peek() === ',') take(',');
    }
    take(')');
    return labels;
  };
  const primary = (): Node => {
    const t = take();
    if (/^[\d.]/.test(t)) return { kind: 'number', value: Number(t) };
    if (t === '(') {
      const e = comparison();
      take(')');
      return e;
    }
    if (t === 'sum') {
      let by: string[] = peek() === 'by' ? (take(), labelList()) : [];
      take('(');
      const arg = comparison();
      take(')');
      if (peek() === 'by') {
        take();
        by = labelList();
      }
      return { kind: 'sum', by, arg };
    }
    if (t === 'rate' || t === 'increase' || t === 'histogram_quantile') {
      take('(');
      const args = [comparison()];
      while (peek() === ',') {
        take(',');
        args.push(comparison());
      }
      take(')');
      return { kind: 'call', fn: t, args };
    }
    if (!/^[a-zA-Z_:]/.test(t)) throw new Error(`PromQL: unexpected ${t} in ${text}`);
    const matchers: Array<{ label: string; op: '=' | '!='; value: string }> = [];
    if (peek() === '{') {
      take('{');
      while (peek() !== '}') {
        const label = take();
        const op = take();
        if (op !== '=' && op !== '!=') throw new Error(`PromQL: matcher ${op} is not supported in ${text}`);
        matchers.push({ label, op, value: JSON.parse(take()) as string });
        if (peek() === ',') take(',');
      }
      take('}');
    }
    const range = peek()?.startsWith('[') ? take().slice(1, -1) : undefined;
    return { kind: 'selector', name: t, matchers, ...(range === undefined ? {} : { range }) };
  };
  const division = (): Node => {
    let left = primary();
    while (peek() === '/') {
      take();
      left = { kind: 'binary', op: '/', left, right: primary() };
    }
    return left;
  };
  const comparison = (): Node => {
    let left = division();
    while (peek() === '>') {
      take();
      left = { kind: 'binary', op: '>', left, right: division() };
    }
    return left;
  };
  const node = comparison();
  if (i !== tokens.length) throw new Error(`PromQL: unexpected ${tokens[i]} in ${text}`);
  return node;
}

/** The metric names an expression reads. */
export function metricNames(node: Node): string[] {
  switch (node.kind) {
    case 'number':
      return [];
    case 'selector':
      return [node.name];
    case 'call':
      return node.args.flatMap(metricNames);
    case 'sum':
      return metricNames(node.arg);
    case 'binary':
      return [...metricNames(node.left), ...metricNames(node.right)];
  }
}

const key = (labels: Record<string, string>): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

function select(samples: readonly Sample[], node: Extract<Node, { kind: 'selector' }>): Vector {
  return samples
    .filter((s) => s.name === node.name && node.matchers.every((m) => ((s.labels[m.label] ?? '') === m.value) === (m.op === '=')))
    .map((s) => ({ labels: { ...s.labels }, value: s.value }));
}

function counterChange(node: Node, s: Scrapes, perSecond: boolean): Vector {
  if (node.kind !== 'selector' || node.range === undefined) throw new Error('PromQL: rate and increase take a range selector');
  const before = new Map(select(s.earlier, node).map((e) => [key(e.labels), e.value]));
  // A series the earlier scrape did not have has one sample only: Prometheus gives it no rate.
  return select(s.later, node).flatMap((e) => {
    const was = before.get(key(e.labels));
    if (was === undefined) return [];
    const change = e.value >= was ? e.value - was : e.value;
    return [{ labels: e.labels, value: perSecond ? change / s.seconds : change }];
  });
}

function quantile(phi: number, buckets: Vector): Vector {
  const groups = new Map<string, { labels: Record<string, string>; points: Array<{ le: number; count: number }> }>();
  for (const b of buckets) {
    const { le, ...rest } = b.labels;
    if (le === undefined) continue;
    const g = groups.get(key(rest)) ?? { labels: rest, points: [] };
    g.points.push({ le: le === '+Inf' ? Infinity : Number(le), count: b.value });
    groups.set(key(rest), g);
  }
  return [...groups.values()].map(({ labels, points }) => {
    points.sort((a, b) => a.le - b.le);
    const total = points.at(-1)?.count ?? 0;
    if (points.at(-1)?.le !== Infinity || total === 0) return { labels, value: NaN };
    const rank = phi * total;
    const at = points.findIndex((p) => p.count >= rank);
    const highestFinite = points.at(-2)?.le ?? 0;
    if (at === points.length - 1) return { labels, value: highestFinite };
    const upper = points[at] as { le: number; count: number };
    const lower = at > 0 ? (points[at - 1] as { le: number; count: number }) : { le: 0, count: 0 };
    const inBucket = upper.count - lower.count;
    return { labels, value: inBucket === 0 ? upper.le : lower.le + ((upper.le - lower.le) * (rank - lower.count)) / inBucket };
  });
}

type Value = Vector | number;

function evaluateNode(node: Node, s: Scrapes): Value {
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'selector':
      return select(s.later, node);
    case 'call': {
      if (node.fn === 'histogram_quantile') {
        const [phi, v] = node.args.map((a) => evaluateNode(a, s));
        if (typeof phi !== 'number' || typeof v === 'number' || v === undefined) throw new Error('PromQL: histogram_quantile(scalar, vector)');
        return quantile(phi, v);
      }
      return counterChange(node.args[0] as Node, s, node.fn === 'rate');
    }
    case 'sum': {
      const v = evaluateNode(node.arg, s);
      if (typeof v === 'number') throw new Error('PromQL: sum of a scalar');
      const groups = new Map<string, Element>();
      for (const e of v) {
        const labels = Object.fromEntries(node.by.flatMap((l) => (e.labels[l] === undefined ? [] : [[l, e.labels[l] as string]])));
        const g = groups.get(key(labels)) ?? { labels, value: 0 };
        g.value += e.value;
        groups.set(key(labels), g);
      }
      return [...groups.values()];
    }
    case 'binary': {
      const left = evaluateNode(node.left, s);
      const right = evaluateNode(node.right, s);
      if (node.op === '>') {
        if (typeof left === 'number' || typeof right !== 'number') throw new Error('PromQL: only vector > scalar is supported');
        return left.filter((e) => e.value > right);
      }
      if (typeof left === 'number' || typeof right === 'number') throw new Error('PromQL: only vector / vector is supported');
      const byLabels = new Map(right.map((e) => [key(e.labels), e.value]));
      return left.flatMap((e) => {
        const d = byLabels.get(key(e.labels));
        return d === undefined ? [] : [{ labels: e.labels, value: e.value / d }];
      });
    }
  }
}

/**
 * The vector an alert expression yields over the two scrapes (non-empty: the alert is pending).
 * Throws when the expression names a metric neither scrape holds.
 */
export function evaluate(expr: string, s: Scrapes): Vector {
  const node = parsePromQL(expr);
  const known = new Set([...s.earlier, ...s.later].map((x) => x.name));
  const unknown = metricNames(node).filter((n) => !known.has(n));
  if (unknown.length > 0) throw new Error(`PromQL: no series named ${unknown.join(', ')} in the scrape`);
  const v = evaluateNode(node, s);
  if (typeof v === 'number') throw new Error('PromQL: the expression is a scalar, not a vector');
  return v;
}
