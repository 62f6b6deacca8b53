// The test evaluator of PromQL (promql.ts) on hand-made scrapes, one case per form it supports,
// with the values Prometheus gives for the same two samples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate } from './promql.js';
import type { Scrapes } from './promql.js';
import type { Sample } from './prom.js';

const s = (name: string, labels: Record<string, string>, value: number): Sample => ({ name, labels, value });
const bucket = (instance: string, le: string, value: number): Sample => s('h_bucket', { instance, le }, value);

const scrapes: Scrapes = {
  seconds: 10,
  earlier: [
    s('c_total', { instance: 'a', rcode: 'NOERROR' }, 100),
    s('c_total', { instance: 'a', rcode: 'SERVFAIL' }, 0),
    s('c_total', { instance: 'b', rcode: 'NOERROR' }, 50),
    s('reset_total', { instance: 'a' }, 40),
    bucket('a', '0.1', 0),
    bucket('a', '1', 0),
    bucket('a', '+Inf', 0),
    bucket('b', '0.1', 0),
    bucket('b', '1', 0),
    bucket('b', '+Inf', 0),
  ],
  later: [
    s('c_total', { instance: 'a', rcode: 'NOERROR' }, 180),
    s('c_total', { instance: 'a', rcode: 'SERVFAIL' }, 20),
    s('c_total', { instance: 'b', rcode: 'NOERROR' }, 50),
    s('c_total', { instance: 'b', rcode: 'REFUSED' }, 7), // new: no earlier sample, no rate
    s('reset_total', { instance: 'a' }, 5),
    bucket('a', '0.1', 5),
    bucket('a', '1', 10),
    bucket('a', '+Inf', 10),
    bucket('b', '0.1', 0),
    bucket('b', '1', 0),
    bucket('b', '+Inf', 4),
  ],
};

const cases: Array<{ name: string; expr: string; want: Array<[Record<string, string>, number]> }> = [
  { name: 'rate: change per second', expr: 'rate(c_total{rcode="SERVFAIL"}[5m])', want: [[{ instance: 'a', rcode: 'SERVFAIL' }, 2]] },
  { name: 'increase: the change', expr: 'increase(c_total{instance="b"}[5m])', want: [[{ instance: 'b', rcode: 'NOERROR' }, 0]] },
  { name: 'increase after a counter reset: the later value', expr: 'increase(reset_total[10m])', want: [[{ instance: 'a' }, 5]] },
  { name: '!= matcher', expr: 'increase(c_total{rcode!="NOERROR"}[5m])', want: [[{ instance: 'a', rcode: 'SERVFAIL' }, 20]] },
  { name: 'sum by, prefix form', expr: 'sum by (instance) (rate(c_total[5m]))', want: [[{ instance: 'a' }, 10], [{ instance: 'b' }, 0]] },
  { name: 'sum by, suffix form; no by: one group', expr: 'sum(rate(c_total[5m])) by (instance)', want: [[{ instance: 'a' }, 10], [{ instance: 'b' }, 0]] },
  { name: 'sum without by: one group without labels', expr: 'sum(rate(c_total[5m]))', want: [[{}, 10]] },
  { name: 'division matches identical labels', expr: 'sum by (instance) (rate(c_total{rcode="SERVFAIL"}[5m])) / sum by (instance) (rate(c_total[5m]))', want: [[{ instance: 'a' }, 0.2]] },
  { name: 'comparison filters', expr: 'sum by (instance) (rate(c_total[5m])) > 5', want: [[{ instance: 'a' }, 10]] },
  // a: 10 observations, rank 9.5 in (0.1, 1]: 0.1 + 0.9 × (9.5 − 5) / 5 = 0.91. b: all in +Inf: the highest finite bound, 1.
  { name: 'histogram_quantile interpolates, +Inf gives the highest finite bound', expr: 'histogram_quantile(0.95, sum by (instance, le) (rate(h_bucket[5m])))', want: [[{ instance: 'a' }, 0.91], [{ instance: 'b' }, 1]] },
];

for (const c of cases) {
  test(`promql: ${c.name}`, () => {
    const got = evaluate(c.expr, scrapes).map((e): [Record<string, string>, number] => [e.labels, Math.round(e.value * 1e9) / 1e9]);
    assert.deepEqual(got, c.want);
  });
}

test('promql: a metric the scrape does not hold is an error, not an empty result', () => {
  assert.throws(() => evaluate('increase(coredns_panic_total[10m]) > 0', scrapes), /no series named coredns_panic_total in the scrape/);
});

test('promql: a form outside the subset is refused, not misread', () => {
  assert.throws(() => evaluate('c_total{rcode=~"SERV.*"}', scrapes), /matcher =~ is not supported|cannot read/);
});
