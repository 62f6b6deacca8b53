// The API client's rate limit, in-flight cap and request metrics, on a clock the tests move.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiGate, hostOf, Slots, TokenBucket, type ApiRequestMetrics } from './apigate.js';

describe('token bucket: the wait of each request, given when it asks', () => {
  // [what, qps, burst, request times (ms), waits (ms)]
  const cases: Array<[string, number, number, number[], number[]]> = [
    ['a full bucket lets a burst go at once', 5, 3, [0, 0, 0], [0, 0, 0]],
    ['past the burst, each waits 1/qps more than the one before', 5, 2, [0, 0, 0, 0], [0, 0, 200, 400]],
    ['tokens come back at qps a second', 5, 1, [0, 200, 400], [0, 0, 0]],
    ['a request halfway to the next token waits the other half', 5, 1, [0, 100], [0, 100]],
    ['an idle bucket refills only up to the burst', 10, 2, [0, 10_000, 10_000, 10_000], [0, 0, 0, 100]],
    ['a fraction of a request a second (one every 2 s)', 0.5, 1, [0, 0, 1000], [0, 2000, 3000]],
  ];
  for (const [what, qps, burst, times, want] of cases) {
    test(what, () => {
      let now = 0;
      const bucket = new TokenBucket(qps, burst, () => now);
      const waits = times.map((t) => {
        now = t;
        return Math.round(bucket.reserve());
      });
      assert.deepEqual(waits, want);
    });
  }

  const invalid: Array<[string, number, number, string]> = [
    ['qps 0', 0, 1, 'qps must be more than 0, got 0'],
    ['burst 0', 1, 0, 'burst must be a whole number, 1 or more, got 0'],
    ['burst 1.5', 1, 1.5, 'burst must be a whole number, 1 or more, got 1.5'],
  ];
  for (const [what, qps, burst, message] of invalid) test(`refused: ${what}`, () => assert.throws(() => new TokenBucket(qps, burst), { message }));
});

describe('slots: at most max holders, the rest in order', () => {
  test('the third of max 2 waits until a holder releases, then takes its slot', async () => {
    const slots = new Slots(2);
    const order: string[] = [];
    const a = await slots.acquire();
    await slots.acquire();
    const third = slots.acquire().then((release) => {
      order.push('third');
      return release;
    });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, []);
    assert.equal(slots.inUse, 2);
    a();
    (await third)();
    assert.deepEqual(order, ['third']);
    assert.equal(slots.inUse, 1);
  });

  test('a release called twice frees one slot', async () => {
    const slots = new Slots(1);
    const release = await slots.acquire();
    release();
    release();
    assert.equal(slots.inUse, 0);
  });

  test('a waiter whose signal aborts leaves the queue with the abort reason', async () => {
    const slots = new Slots(1);
    const held = await slots.acquire();
    const c = new AbortController();
    const waiting = slots.acquire(c.signal);
    c.abort(new Error('stopped'));
    await assert.rejects(waiting, { message: 'stopped' });
    held();
    assert.equal(slots.inUse, 0);
  });
});

describe('the host label: the server URL authority as written', () => {
  const cases: Array<[string, string]> = [
    ['https://10.96.0.1:443', '10.96.0.1:443'],
    ['https://[fd00::1]:6443/', '[fd00::1]:6443'],
    ['http://127.0.0.1:8001/prefix', '127.0.0.1:8001'],
    ['https://api.example.com', 'api.example.com'],
  ];
  for (const [server, want] of cases) test(`${server} → ${want}`, () => assert.equal(hostOf(server), want));
});

/** Metrics as lines, in the order recorded. */
function recorder(): { lines: string[]; metrics: ApiRequestMetrics } {
  const lines: string[] = [];
  return {
    lines,
    metrics: {
      result: (code, method, host) => lines.push(`requests_total code=${code} method=${method} host=${host}`),
      latency: (verb, host, s) => lines.push(`request_duration verb=${verb} host=${host} ${s.toFixed(3)}`),
      rateLimiterLatency: (verb, host, s) => lines.push(`rate_limiter_duration verb=${verb} host=${host} ${s.toFixed(3)}`),
    },
  };
}

describe('gate metrics', () => {
  test('an unlimited gate records a zero limiter wait, then the result and the duration at finish', async () => {
    let now = 1000;
    const r = recorder();
    const gate = new ApiGate({ qps: 0, burst: 0, maxInflight: 0 }, r.metrics, () => now);
    const admission = await gate.admit('GET', '10.96.0.1:443');
    now = 1250;
    admission.finish('200');
    admission.finish('200');
    assert.deepEqual(r.lines, ['rate_limiter_duration verb=GET host=10.96.0.1:443 0.000', 'requests_total code=200 method=GET host=10.96.0.1:443', 'request_duration verb=GET host=10.96.0.1:443 0.250']);
  });

  test('burst alone turns on the limit with client-go default qps 5: the second of burst 1 waits 200 ms', async () => {
    const r = recorder();
    const gate = new ApiGate({ qps: 0, burst: 1, maxInflight: 0 }, r.metrics);
    (await gate.admit('GET', 'h')).finish('200');
    const started = performance.now();
    (await gate.admit('GET', 'h')).finish('<error>');
    const waited = performance.now() - started;
    assert.ok(waited >= 190, `waited ${waited} ms`);
    assert.deepEqual(
      r.lines.filter((l) => l.startsWith('requests_total')),
      ['requests_total code=200 method=GET host=h', 'requests_total code=<error> method=GET host=h'],
    );
  });
});
