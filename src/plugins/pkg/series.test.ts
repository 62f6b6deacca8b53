import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { batchedCounter, batchedHistogram, BatchedCounter, BatchedHistogram } from './series.js';
import { histogram } from '../../server/metrics.js';

/** The sample lines of the exposition text (comments dropped). */
async function samples(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
}

describe('batched metrics render as Prometheus text', () => {
  test('counter: one line per cell, counts kept across scrapes', async () => {
    const registry = new Registry();
    const c = batchedCounter(registry, 'x_requests_total', 'help', ['zone', 'type']);
    const a = c.cell(['example.org.', 'A']);
    a.inc();
    a.inc();
    c.cell(['example.org.', 'AAAA']); // created, never incremented: shown at 0 like Go's client
    assert.deepEqual(await samples(registry), ['x_requests_total{zone="example.org.",type="A"} 2', 'x_requests_total{zone="example.org.",type="AAAA"} 0']);
    a.inc();
    assert.deepEqual(await samples(registry), ['x_requests_total{zone="example.org.",type="A"} 3', 'x_requests_total{zone="example.org.",type="AAAA"} 0']);
  });

  test('histogram: cumulative buckets, +Inf, sum and count', async () => {
    const registry = new Registry();
    const h = batchedHistogram(registry, 'x_size_bytes', 'help', ['proto'], [100, 512]);
    const cell = h.cell(['udp']);
    for (const v of [40, 100, 101, 600]) cell.observe(v);
    assert.deepEqual(await samples(registry), [
      'x_size_bytes_bucket{le="100",proto="udp"} 2',
      'x_size_bytes_bucket{le="512",proto="udp"} 3',
      'x_size_bytes_bucket{le="+Inf",proto="udp"} 4',
      'x_size_bytes_sum{proto="udp"} 841',
      'x_size_bytes_count{proto="udp"} 4',
    ]);
  });

  test('get-or-create: the same family and the same cells after a "reload"', () => {
    const registry = new Registry();
    const first = batchedCounter(registry, 'x_total', 'help', ['zone']);
    const second = batchedCounter(registry, 'x_total', 'help', ['zone']);
    assert.ok(first instanceof BatchedCounter);
    assert.equal(second, first);
    assert.equal(second.cell(['a.']), first.cell(['a.']));
    const h1 = batchedHistogram(registry, 'x_seconds', 'help', ['zone'], [1]);
    assert.ok(h1 instanceof BatchedHistogram);
    assert.equal(batchedHistogram(registry, 'x_seconds', 'help', ['zone'], [1]), h1);
  });

  test('a plain prom-client metric of that name made elsewhere: cells write through it', async () => {
    const registry = new Registry();
    new Counter({ name: 'y_total', help: 'made elsewhere', labelNames: ['zone'], registers: [registry] });
    new Histogram({ name: 'y_seconds', help: 'made elsewhere', labelNames: ['zone'], buckets: [1], registers: [registry] });
    batchedCounter(registry, 'y_total', 'help', ['zone']).cell(['a.']).inc();
    batchedHistogram(registry, 'y_seconds', 'help', ['zone'], [1]).cell(['a.']).observe(0.5);
    assert.deepEqual(await samples(registry), [
      'y_total{zone="a."} 1',
      'y_seconds_bucket{le="1",zone="a."} 1',
      'y_seconds_bucket{le="+Inf",zone="a."} 1',
      'y_seconds_sum{zone="a."} 0.5',
      'y_seconds_count{zone="a."} 1',
    ]);
  });

  test('the public Counter API still adds up with the cells', async () => {
    const registry = new Registry();
    const c = batchedCounter(registry, 'z_total', 'help', ['zone']) as BatchedCounter<'zone'>;
    c.cell(['a.']).inc();
    c.inc({ zone: 'a.' }, 5);
    assert.deepEqual(await samples(registry), ['z_total{zone="a."} 6']);
  });
});

test("get-or-create of a plain histogram under a batched histogram's name is refused, naming it", () => {
  const registry = new Registry();
  batchedHistogram(registry, 'w_seconds', 'help', ['zone'], [1]);
  assert.throws(() => histogram(registry, 'w_seconds', 'help'), { message: 'metric w_seconds is registered, but not as a prom-client Histogram' });
});
