// serve_stale as CoreDNS 1.14.7 has it (RFC 8767): the stale answer's TTL, the failure
// recheck, verify's timeout and prefer_positive; and a SERVFAIL never hiding a positive answer.
// The chain behind the cache is scripted and the clock moved by hand, so each case states
// exactly what the upstream said and when; cache.test.ts does the same against a real named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { decodeMessage, encodeMessage } from '../../lib/dns/codec.js';
import type { ResourceRecord } from '../../lib/dns/types.js';
import { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { queryWire, requestOf, responseMessage } from '../../../test/util/request.js';
import { sleep } from '../../../test/util/net.js';
import { CachePlugin } from './handler.js';
import { cacheCells } from './metrics.js';
import { defaultCacheOptions, type CacheOptions, type ServeStale } from './options.js';

const NAME = 'app.example.test.';
const TTL = 30;
const a = (address: string): ResourceRecord => ({ name: NAME, type: 1, class: 1, ttl: TTL, data: { address } });
const soa: ResourceRecord = {
  name: 'example.test.',
  type: 6,
  class: 1,
  ttl: TTL,
  data: { mname: 'ns.example.test.', rname: 'h.example.test.', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: TTL },
};

/** What the scripted upstream does with the next question. */
type Upstream = { answer: string } | 'nxdomain' | 'servfail' | 'unreachable' | { slowMs: number; answer: string };

function replyFor(req: DnsRequest, what: Exclude<Upstream, { slowMs: number }>): Reply {
  const q = decodeMessage(req.raw);
  if (what === 'unreachable') {
    const r = Reply.fromWire(encodeMessage(responseMessage({ id: q.id, rcode: 2, questions: q.questions })), 2);
    r.error = new Error('no upstream reachable');
    return r;
  }
  const over =
    what === 'nxdomain' ? { rcode: 3, authority: [soa] } : what === 'servfail' ? { rcode: 2 } : { rcode: 0, answers: [a(what.answer)] };
  return Reply.fromWire(encodeMessage(responseMessage({ id: q.id, ra: true, questions: q.questions, ...over })), over.rcode);
}

interface Step {
  /** Seconds since the first question. */
  at: number;
  upstream: Upstream;
}
/** What a client got: rcode, the A record's data and TTL ('-' without one). */
type Seen = string;

class Harness {
  now = 1_000_000_000;
  asked = 0;
  upstream: Upstream = { answer: '192.0.2.1' };
  readonly registry = new Registry();
  readonly plugin: CachePlugin;

  constructor(options: Partial<CacheOptions>) {
    this.plugin = new CachePlugin({ ...defaultCacheOptions(['.'], 100), ...options }, cacheCells(this.registry, 'dns://:53', '.'), () => this.now);
  }

  private readonly next = (req: DnsRequest): Reply | Promise<Reply> => {
    this.asked++;
    const u = this.upstream;
    if (typeof u === 'object' && 'slowMs' in u) return sleep(u.slowMs).then(() => replyFor(req, { answer: u.answer }));
    return replyFor(req, u);
  };

  async ask(): Promise<Seen> {
    const reply = await this.plugin.serve(requestOf(queryWire(NAME, 1, { id: 9 })), this.next);
    await sleep(5); // background refreshes settle
    if (!reply) return 'none';
    const m = decodeMessage(reply.wire ?? encodeMessage(reply.view()));
    const rr = m.answers[0];
    return `${m.rcode} ${rr ? `${(rr.data as { address: string }).address} ${rr.ttl}` : '-'}`;
  }

  async metric(name: string): Promise<number> {
    return (await this.registry.getSingleMetric(name)?.get())?.values.reduce((s, v) => s + v.value, 0) ?? 0;
  }
}

const stale = (over: Partial<ServeStale>): { serveStale: ServeStale } => ({
  serveStale: { durationMs: 3_600_000, verify: false, verifyTimeoutMs: 0, responseTtl: 0, recheckMs: 0, preferPositive: false, ...over },
});

interface Case {
  what: string;
  options: Partial<CacheOptions>;
  /** Questions asked, in order; the first stores 192.0.2.1 with TTL 30. */
  steps: Step[];
  /** What each question got. */
  want: Seen[];
  /** How many times the upstream was asked in all. */
  asked: number;
  servedStale: number;
}

const FIRST: Step = { at: 0, upstream: { answer: '192.0.2.1' } };

const cases: Case[] = [
  {
    what: 'immediate: the expired answer at once, with TTL 0 by default, refreshed behind',
    options: stale({}),
    steps: [FIRST, { at: 31, upstream: { answer: '192.0.2.7' } }, { at: 32, upstream: { answer: '192.0.2.7' } }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 0', '0 192.0.2.7 29'],
    asked: 2,
    servedStale: 1,
  },
  {
    what: 'immediate with RESPONSE_TTL 30: the expired answer carries TTL 30 (RFC 8767)',
    options: stale({ responseTtl: 30 }),
    steps: [FIRST, { at: 31, upstream: 'unreachable' }, { at: 40, upstream: 'unreachable' }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 30', '0 192.0.2.1 30'],
    asked: 3,
    servedStale: 2,
  },
  {
    what: 'without a failure recheck, every expired answer asks the upstream again',
    options: stale({}),
    steps: [FIRST, { at: 31, upstream: 'servfail' }, { at: 32, upstream: 'servfail' }, { at: 33, upstream: 'servfail' }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 0', '0 192.0.2.1 0', '0 192.0.2.1 0'],
    asked: 4,
    servedStale: 3,
  },
  {
    what: 'FAILURE_RECHECK 30s: after a failed refresh, none again until 30 s have passed',
    options: stale({ responseTtl: 30, recheckMs: 30_000 }),
    steps: [FIRST, { at: 31, upstream: 'servfail' }, { at: 40, upstream: 'servfail' }, { at: 60, upstream: 'servfail' }, { at: 62, upstream: { answer: '192.0.2.7' } }, { at: 63, upstream: 'servfail' }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 30', '0 192.0.2.1 30', '0 192.0.2.1 30', '0 192.0.2.1 30', '0 192.0.2.7 29'],
    asked: 3,
    servedStale: 4,
  },
  {
    what: 'verify: a SERVFAIL from upstream leaves the expired answer to be served',
    options: stale({ verify: true }),
    steps: [FIRST, { at: 31, upstream: 'servfail' }, { at: 32, upstream: { answer: '192.0.2.7' } }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 0', '0 192.0.2.7 30'],
    asked: 3,
    servedStale: 1,
  },
  {
    what: 'verify: an NXDOMAIN from upstream replaces the expired answer',
    options: stale({ verify: true }),
    steps: [FIRST, { at: 31, upstream: 'nxdomain' }, { at: 32, upstream: { answer: '192.0.2.7' } }],
    want: ['0 192.0.2.1 30', '3 -', '3 -'],
    asked: 2,
    servedStale: 0,
  },
  {
    what: 'verify with VERIFY_TIMEOUT: a slow upstream gets the expired answer served, and its answer refreshes the entry',
    options: stale({ verify: true, verifyTimeoutMs: 20 }),
    steps: [FIRST, { at: 31, upstream: { slowMs: 200, answer: '192.0.2.7' } }, { at: 31.3, upstream: 'servfail' }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 0', '0 192.0.2.7 30'],
    asked: 2,
    servedStale: 1,
  },
  {
    what: 'verify with a failure recheck: within it the expired answer is served without asking',
    options: stale({ verify: true, recheckMs: 10_000 }),
    steps: [FIRST, { at: 31, upstream: 'servfail' }, { at: 35, upstream: { answer: '192.0.2.7' } }, { at: 42, upstream: { answer: '192.0.2.7' } }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 0', '0 192.0.2.1 0', '0 192.0.2.7 30'],
    asked: 3,
    servedStale: 2,
  },
  {
    what: 'prefer_positive, verify: an NXDOMAIN does not replace the positive answer while it may be served stale',
    options: stale({ verify: true, preferPositive: true }),
    steps: [FIRST, { at: 31, upstream: 'nxdomain' }, { at: 33, upstream: 'nxdomain' }, { at: 34, upstream: { answer: '192.0.2.7' } }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 0', '0 192.0.2.1 0', '0 192.0.2.7 30'],
    asked: 4,
    servedStale: 2,
  },
  {
    what: 'prefer_positive, immediate: a fresh NXDOMAIN stored behind does not hide the positive answer',
    options: stale({ preferPositive: true }),
    steps: [FIRST, { at: 31, upstream: 'nxdomain' }, { at: 32, upstream: 'nxdomain' }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 0', '0 192.0.2.1 0'],
    asked: 3,
    servedStale: 2,
  },
  {
    what: 'a SERVFAIL a prefetch stored does not hide the fresh positive answer (CoreDNS #7956)',
    options: { prefetch: { amount: 1, durationMs: 60_000, percentage: 90 } },
    steps: [FIRST, { at: 20, upstream: 'servfail' }, { at: 21, upstream: 'servfail' }],
    want: ['0 192.0.2.1 30', '0 192.0.2.1 10', '0 192.0.2.1 9'],
    asked: 3,
    servedStale: 0,
  },
  {
    what: 'an expired SERVFAIL is not served stale: the question goes upstream',
    options: stale({}),
    steps: [{ at: 0, upstream: 'servfail' }, { at: 6, upstream: { answer: '192.0.2.7' } }],
    want: ['2 -', '0 192.0.2.7 30'],
    asked: 2,
    servedStale: 0,
  },
  {
    what: 'past the stale window the entry is gone: the upstream failure reaches the client',
    options: stale({ durationMs: 60_000 }),
    steps: [FIRST, { at: 91, upstream: 'servfail' }],
    want: ['0 192.0.2.1 30', '2 -'],
    asked: 2,
    servedStale: 0,
  },
];

describe('serve_stale and SERVFAIL', () => {
  for (const c of cases) {
    it(c.what, async () => {
      const h = new Harness(c.options);
      const start = h.now;
      const seen: Seen[] = [];
      for (const step of c.steps) {
        h.now = start + step.at * 1000;
        h.upstream = step.upstream;
        seen.push(await h.ask());
        // A slow upstream's answer lands after the verify timeout, before the next question.
        if (typeof step.upstream === 'object' && 'slowMs' in step.upstream) await sleep(step.upstream.slowMs + 20);
      }
      assert.deepEqual(seen, c.want);
      assert.deepEqual([h.asked, await h.metric('coredns_cache_served_stale_total')], [c.asked, c.servedStale]);
    });
  }
});
