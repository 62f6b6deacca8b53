// When a UDP query is sent again: the timeout learnt from an upstream's reply times, and the
// times at which one query's copies leave. Both are computed from the clock values they are
// given, so these cases run no timers and measure no durations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResendQueues, RttEstimator, type Resendable } from './retransmit.js';

describe('RttEstimator: the retransmission timeout of one upstream', () => {
  const cases: Array<{ what: string; samples: number[]; rtoMs: number }> = [
    { what: 'before any reply: 1 s', samples: [], rtoMs: 1000 },
    { what: 'a fast upstream: its reply time plus the least margin, 20 ms', samples: [1], rtoMs: 21 },
    { what: 'replies under a millisecond', samples: [0.5, 0.5, 0.5, 0.5], rtoMs: 20.5 },
    { what: 'one reply of 100 ms: 100 + 4 × 50', samples: [100], rtoMs: 300 },
    { what: 'two replies of 100 ms: the deviation shrinks (100 + 4 × 37.5)', samples: [100, 100], rtoMs: 250 },
    { what: 'a slow reply after a fast one widens the margin', samples: [1, 300], rtoMs: 338.875 },
    { what: 'fast replies after a slow one narrow it again', samples: [1, 300, 1, 1, 1, 1, 1, 1], rtoMs: 152.23 },
    { what: 'never above 2 s', samples: [3000], rtoMs: 2000 },
  ];
  for (const c of cases) {
    it(c.what, () => {
      const e = new RttEstimator();
      c.samples.forEach((ms, i) => e.sample(ms, 1000 * (i + 1)));
      assert.equal(Math.round(e.rtoMs * 1000) / 1000, c.rtoMs);
      assert.equal(e.lastReplyAt, c.samples.length === 0 ? Number.NEGATIVE_INFINITY : 1000 * c.samples.length);
    });
  }

});

interface Query extends Resendable {
  name: string;
}

function query(name: string, sentAt: number, timeoutMs: number): Query {
  return { name, done: false, heard: false, deadline: sentAt + timeoutMs, firstSentAt: sentAt, lastSentAt: sentAt };
}

/**
 * Runs ResendQueues millisecond by millisecond from 0 to `untilMs` with a fixed timeout. The
 * upstream answers other queries every millisecond from `repliesFrom` on (never: Infinity).
 * Returns the copies sent, as "name@ms".
 */
function schedule(opts: { rtoMs: number; queries: Array<{ name: string; at: number; timeoutMs: number; answeredAt?: number }>; untilMs: number; repliesFrom?: number }): string[] {
  const queues = new ResendQueues<Query>();
  const copies: string[] = [];
  const made = opts.queries.map((q) => ({ spec: q, query: query(q.name, q.at, q.timeoutMs) }));
  const repliesFrom = opts.repliesFrom ?? 0;
  for (let now = 0; now <= opts.untilMs; now++) {
    for (const m of made) {
      if (m.spec.at === now) queues.add(m.query);
      if (m.spec.answeredAt === now) m.query.done = true;
    }
    const lastReplyAt = now >= repliesFrom ? now : Number.NEGATIVE_INFINITY;
    queues.sweep(now, opts.rtoMs, lastReplyAt, (q) => copies.push(`${q.name}@${now}`));
  }
  return copies;
}

describe('ResendQueues: when the copies of a query leave', () => {
  const cases: Array<{ what: string; run: Parameters<typeof schedule>[0]; copies: string[] }> = [
    {
      what: 'a query never answered while others are: after 1, 3, 7 and 15 timeouts, then no more',
      run: { rtoMs: 20, queries: [{ name: 'a', at: 0, timeoutMs: 2000 }], untilMs: 2000 },
      copies: ['a@20', 'a@60', 'a@140', 'a@300'],
    },
    {
      what: 'the timeout scales the waits',
      run: { rtoMs: 50, queries: [{ name: 'a', at: 0, timeoutMs: 2000 }], untilMs: 2000 },
      copies: ['a@50', 'a@150', 'a@350', 'a@750'],
    },
    {
      what: 'an answered query gets no further copy',
      run: { rtoMs: 20, queries: [{ name: 'a', at: 0, timeoutMs: 2000, answeredAt: 30 }], untilMs: 2000 },
      copies: ['a@20'],
    },
    {
      what: 'a query answered in time gets none',
      run: { rtoMs: 20, queries: [{ name: 'a', at: 0, timeoutMs: 2000, answeredAt: 19 }], untilMs: 2000 },
      copies: [],
    },
    {
      what: 'no copy when less than one timeout is left before the deadline',
      run: { rtoMs: 20, queries: [{ name: 'a', at: 0, timeoutMs: 150 }], untilMs: 2000 },
      copies: ['a@20', 'a@60'],
    },
    {
      what: 'queries keep their order, each on its own schedule',
      run: {
        rtoMs: 20,
        queries: [
          { name: 'a', at: 0, timeoutMs: 2000, answeredAt: 50 },
          { name: 'b', at: 5, timeoutMs: 2000, answeredAt: 100 },
          { name: 'c', at: 10, timeoutMs: 2000, answeredAt: 12 },
        ],
        untilMs: 2000,
      },
      copies: ['a@20', 'b@25', 'b@65'],
    },
    {
      what: 'an upstream that answers nothing gets no copies (busy, stalled or gone: the exchange timeout and health check decide)',
      run: { rtoMs: 20, queries: [{ name: 'a', at: 0, timeoutMs: 2000 }], untilMs: 2000, repliesFrom: Number.POSITIVE_INFINITY },
      copies: [],
    },
    {
      what: 'a due query waits for the upstream to answer something, then goes at once',
      run: { rtoMs: 20, queries: [{ name: 'a', at: 0, timeoutMs: 2000 }], untilMs: 2000, repliesFrom: 100 },
      copies: ['a@100', 'a@140', 'a@220', 'a@380'],
    },
  ];
  for (const c of cases) {
    it(c.what, () => {
      assert.deepEqual(schedule(c.run), c.copies);
    });
  }

  it('says when the next copy is due, whether one waits for a reply, and nothing once all are answered', () => {
    const queues = new ResendQueues<Query>();
    const a = query('a', 0, 2000);
    queues.add(a);
    const noop = (): void => undefined;
    assert.deepEqual(queues.sweep(0, 20, 0, noop), { nextDue: 20, awaitingReply: false });
    assert.deepEqual(queues.sweep(20, 20, -1, noop), { nextDue: Number.POSITIVE_INFINITY, awaitingReply: true });
    assert.deepEqual(queues.sweep(21, 20, 21, noop), { nextDue: 61, awaitingReply: false });
    a.done = true;
    assert.deepEqual(queues.sweep(30, 20, 30, noop), { nextDue: Number.POSITIVE_INFINITY, awaitingReply: false });
    assert.equal(queues.empty, true);
  });
});
