// cache end to end: kdns with cache + forward in front of a real named, asked with dig, with
// upstream queries counted in named's query log.
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Registry } from 'prom-client';
import { DnsClient } from '../../lib/dnsclient/client.js';
import { buildQuery, headerRcode } from '../../lib/dns/wire.js';
import { nameToWire } from '../../lib/dns/name.js';
import { Reply } from '../../server/reply.js';
import { dig } from '../../../test/util/dig.js';
import { freePort, sleep } from '../../../test/util/net.js';
import { requestOf } from '../../../test/util/request.js';
import { runShippedNode } from '../../../test/util/kdns.js';
import type { FloodReport } from '../../../test/util/cacheflood.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { exampleZone, missing, namedUpstream, type NamedUpstream } from '../../../test/util/upstream.js';
import { CachePlugin } from './handler.js';
import { cacheCells } from './metrics.js';
import { defaultCacheOptions, type CacheOptions } from './options.js';

const skip = missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils');

async function metric(s: TestServer, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = s.server.shared.metrics.getSingleMetric(name);
  if (!m) return 0;
  const { values } = await m.get();
  return values.filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k as keyof typeof v.labels]) === want)).reduce((sum, v) => sum + v.value, 0);
}

describe('cache end to end', { skip }, () => {
  let named: NamedUpstream;
  const servers: TestServer[] = [];

  before(async () => {
    named = namedUpstream({ zones: { 'example.test': exampleZone() }, port: await freePort() });
    await named.start();
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await named.dispose();
  });

  async function kdns(cacheLine: string): Promise<TestServer> {
    const s = await startTestServer(`.:{PORT} {\n  bind 127.0.0.1\n  ${cacheLine}\n  forward . 127.0.0.1:${named.port}\n}\n`);
    servers.push(s);
    return s;
  }

  /** Queries named saw for `name` since `from` (an index into its log). */
  const upstreamCount = (name: string, from = 0): number => named.queries.slice(from).filter((q) => q.name === name).length;

  /**
   * TTLs count down on the clock of this process, which the in-process server's cache reads: the
   * tests below stop it and move it themselves, so that a dig slow to start on a busy machine
   * (hundreds of milliseconds, several of them per test) cannot carry a query across a TTL second.
   * Only Date is replaced: timers, sockets and the upstream run in real time.
   */
  async function stopClock(t: TestContext): Promise<void> {
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    await sleep(20); // the cache's clock (clock.ts) copies Date.now() every 5 ms
  }
  async function moveClock(t: TestContext, ms: number): Promise<void> {
    t.mock.timers.tick(ms);
    await sleep(20);
  }

  /** A dig of `name` as "STATUS data TTL ...". */
  async function ask(s: TestServer, name: string): Promise<string> {
    const r = await dig(name, 'A', { port: s.port });
    return [r.status, ...r.answer.map((x) => `${x.data} ${x.ttl}`)].join(' ');
  }

  it('answers a repeated question from the cache: one upstream query, TTL counting down, hit and miss counted', async (t) => {
    const s = await kdns('cache 2');
    await stopClock(t);
    const start = named.queries.length;
    const first = await dig('www.example.test', 'A', { port: s.port });
    const second = await dig('www.example.test', 'A', { port: s.port });
    await moveClock(t, 1500);
    const third = await dig('www.example.test', 'A', { port: s.port });
    assert.deepEqual(
      [first, second, third].map((r) => [r.status, r.answer.map((x) => `${x.data} ${x.ttl}`)]),
      [
        ['NOERROR', ['192.0.2.1 2']],
        ['NOERROR', ['192.0.2.1 2']],
        ['NOERROR', ['192.0.2.1 1']],
      ],
    );
    assert.equal(second.flags.includes('aa'), true, 'cached answers are authoritative, as in CoreDNS');
    assert.equal(upstreamCount('www.example.test', start), 1);
    await moveClock(t, 1000); // 2.5 s after the store: expired
    const fourth = await dig('www.example.test', 'A', { port: s.port });
    assert.equal(fourth.answer[0]?.ttl, 2, 'expired: fetched again');
    assert.equal(upstreamCount('www.example.test', start), 2);
    assert.deepEqual(
      [await metric(s, 'coredns_cache_hits_total', { type: 'success' }), await metric(s, 'coredns_cache_misses_total'), await metric(s, 'coredns_cache_entries', { type: 'success' })],
      [2, 2, 1],
    );
  });

  it('keys on name case-insensitively, type, and the DO bit', async () => {
    const s = await kdns('cache');
    const start = named.queries.length;
    const asks: Array<{ name: string; type: string; args: string[] }> = [
      { name: 'www.example.test', type: 'A', args: [] },
      { name: 'WwW.ExAmPlE.TeSt', type: 'A', args: [] },
      { name: 'www.example.test', type: 'A', args: ['+dnssec'] },
      { name: 'www.example.test', type: 'AAAA', args: [] },
      { name: 'www.example.test', type: 'A', args: ['+noedns'] },
      { name: 'www.example.test', type: 'A', args: ['+dnssec'] },
    ];
    const seen = [];
    for (const a of asks) {
      const r = await dig(a.name, a.type, { port: s.port, args: a.args });
      seen.push([r.answer[0]?.name, r.answer[0]?.data, r.edns?.flags.includes('do') ?? 'no edns']);
    }
    assert.deepEqual(seen, [
      ['www.example.test.', '192.0.2.1', false],
      ['WwW.ExAmPlE.TeSt.', '192.0.2.1', false], // the client's spelling comes back
      ['www.example.test.', '192.0.2.1', true],
      ['www.example.test.', '2001:db8::1', false],
      ['www.example.test.', '192.0.2.1', 'no edns'],
      ['www.example.test.', '192.0.2.1', true],
    ]);
    // Upstream asked for: A, A with DO, AAAA.
    assert.equal(upstreamCount('www.example.test', start), 3);
  });

  it('keys on the content of local-use EDNS options (65001-65534), such as the search paths nodecache sends', async () => {
    const s = await kdns('cache');
    const start = named.queries.length;
    const asks: Array<{ option: string; upstream: number }> = [
      { option: '+ednsopt=65534:0161', upstream: 1 }, // first with these search paths: a miss
      { option: '+ednsopt=65534:0161', upstream: 1 }, // same option content: a hit
      { option: '+ednsopt=65534:0162', upstream: 2 }, // another node's search paths: a miss
      { option: '+ednsopt=65001:0161', upstream: 3 }, // another local option code: a miss
      { option: '+ednsopt=65000:0161', upstream: 4 }, // outside the local range: the plain entry...
      { option: '+ednsopt=65000:ffff', upstream: 4 }, // ...whatever its content
      { option: '+noedns', upstream: 4 }, // ...which a query without EDNS shares
    ];
    const counts = [];
    for (const a of asks) {
      const r = await dig('mail1.example.test', 'A', { port: s.port, args: [a.option] });
      assert.equal(r.status, 'NOERROR');
      counts.push(upstreamCount('mail1.example.test', start));
    }
    assert.deepEqual(
      counts,
      asks.map((a) => a.upstream),
    );
  });

  it('caches denial: NXDOMAIN and NODATA, with the SOA TTL from RFC 2308', async () => {
    const s = await kdns('cache');
    const start = named.queries.length;
    const cases: Array<{ name: string; type: string; status: string }> = [
      { name: 'nope.example.test', type: 'A', status: 'NXDOMAIN' },
      { name: 'www.example.test', type: 'MX', status: 'NOERROR' },
    ];
    for (const c of cases) {
      const a = await dig(c.name, c.type, { port: s.port });
      const b = await dig(c.name, c.type, { port: s.port });
      assert.deepEqual(
        [a.status, b.status, b.answer.length, b.authority.map((r) => `${r.type} ${r.ttl}`)],
        [c.status, c.status, 0, ['SOA 30']], // SOA TTL 300, MINIMUM 30
      );
      assert.equal(upstreamCount(c.name, start), 1, c.name);
    }
    assert.equal(await metric(s, 'coredns_cache_hits_total', { type: 'denial' }), 2);
  });

  it('prefetches a popular entry before it expires', async (t) => {
    // `short` has TTL 2; MINTTL 0 keeps it, so half its TTL (1 s) left triggers the prefetch.
    const s = await kdns('cache {\n    success 100 3600 0\n    prefetch 2 1m 50%\n  }');
    await stopClock(t);
    const start = named.queries.length;
    const answers: string[] = [];
    answers.push(await ask(s, 'short.example.test')); // miss: stored, sighting 1
    answers.push(await ask(s, 'short.example.test')); // hit: 2 s left, more than half
    await moveClock(t, 1500);
    answers.push(await ask(s, 'short.example.test')); // hit: popular, 1 s left: prefetch behind it
    // Once the prefetched answer is stored, the same instant reads its full TTL.
    let refreshed = '';
    for (let attempt = 0; attempt < 50 && !refreshed.endsWith(' 2'); attempt++) refreshed = await ask(s, 'short.example.test');
    answers.push(refreshed);
    const upstreamWhenRefreshed = upstreamCount('short.example.test', start);
    await moveClock(t, 1000); // 2.5 s: past the expiry of the entry the miss stored
    answers.push(await ask(s, 'short.example.test')); // hit on the prefetched entry, 1 s left
    assert.deepEqual(answers, ['NOERROR 192.0.2.2 2', 'NOERROR 192.0.2.2 2', 'NOERROR 192.0.2.2 1', 'NOERROR 192.0.2.2 2', 'NOERROR 192.0.2.2 1']);
    assert.equal(upstreamWhenRefreshed, 2, 'the miss, then the prefetch');
    // One miss: every answer after the first came from the cache. Two prefetches: the prefetched
    // entry, still popular with 1 s left, is prefetched in its turn.
    assert.deepEqual([await metric(s, 'coredns_cache_misses_total'), await metric(s, 'coredns_cache_prefetch_total')], [1, 2]);
  });

  it('evicts beyond capacity: entries stay bounded under a flood of unique names', async () => {
    const s = await kdns('cache {\n    success 100\n    denial 100\n  }');
    const client = new DnsClient({ host: '127.0.0.1', port: s.port });
    try {
      for (let batch = 0; batch < 10; batch++) {
        const rcodes = await Promise.all(
          Array.from({ length: 100 }, (_, i) => client.exchange(buildQuery(nameToWire(`u${batch * 100 + i}.wild.example.test`), 1, 1, { id: i + 1 }), 'udp', 3000).then(headerRcode)),
        );
        assert.deepEqual(new Set(rcodes), new Set([0]));
      }
    } finally {
      client.close();
    }
    assert.deepEqual(
      [await metric(s, 'coredns_cache_entries', { type: 'success' }), await metric(s, 'coredns_cache_evictions_total', { type: 'success' })],
      [100, 900],
    );
  });

  it('serves stale answers while the upstream is down, per refresh mode', async () => {
    const cases: Array<{ cache: string; status: string; ttl?: number; stale: number }> = [
      { cache: 'cache 1 {\n    serve_stale 1h\n  }', status: 'NOERROR', ttl: 0, stale: 1 },
      { cache: 'cache 1 {\n    serve_stale 1h verify\n  }', status: 'NOERROR', ttl: 0, stale: 1 },
      // RFC 8767's TTL for stale answers, and the failure recheck (CoreDNS 1.14.7's arguments).
      { cache: 'cache 1 {\n    serve_stale 1h immediate 30s 30s\n  }', status: 'NOERROR', ttl: 30, stale: 1 },
      { cache: 'cache 1 {\n    serve_stale 1h verify 200ms 30s 30s\n  }', status: 'NOERROR', ttl: 30, stale: 1 },
      { cache: 'cache 1 {\n    serve_stale 100ms\n  }', status: 'SERVFAIL', stale: 0 },
      { cache: 'cache 1', status: 'SERVFAIL', stale: 0 },
    ];
    const started = await Promise.all(cases.map((c) => kdns(c.cache)));
    for (const s of started) assert.equal((await dig('www.example.test', 'A', { port: s.port })).status, 'NOERROR');
    await named.stop();
    try {
      await sleep(1300); // every entry expired (TTL 1 s), past the 100 ms stale window
      for (const [i, c] of cases.entries()) {
        const s = started[i] as TestServer;
        const r = await dig('www.example.test', 'A', { port: s.port, timeout: 4 });
        assert.deepEqual([r.status, r.answer[0]?.ttl], [c.status, c.ttl], c.cache);
        assert.equal(await metric(s, 'coredns_cache_served_stale_total'), c.stale, c.cache);
      }
    } finally {
      await named.start();
    }
    // Upstream back: verify mode answers fresh again.
    const verify = started[1] as TestServer;
    const fresh = await dig('www.example.test', 'A', { port: verify.port });
    assert.deepEqual([fresh.status, fresh.answer[0]?.ttl], ['NOERROR', 1]);
  });
});

describe('cache memory under 100,000 unique names', () => {
  // Measured in a node started as kdns ships (runShippedNode): V8 sizes the young generation
  // by those flags, and without them newer V8 grows it to 128 MiB under this allocation rate —
  // capacity a kdns started as shipped never holds, and no measure of the cache.
  it('keeps the entry count at capacity and RSS flat', async () => {
    const r = JSON.parse(await runShippedNode('cacheflood', 120_000)) as FloodReport;
    assert.equal(r.size, 5000);
    // The stored bytes live in the plugin's arena: 5,000 live entries of 61 bytes (header 12,
    // question 29 + 4, answer 16), and no more than twice that (plus a chunk being filled) kept
    // for entries evicted since the last compaction.
    assert.equal(r.arena.live, 5000 * 61);
    assert.ok(r.arena.held <= 2 * r.arena.live + 2 * 65536, `arena holds ${r.arena.held} bytes for ${r.arena.live} live`);
    const mib = (n: number): string => (n / 2 ** 20).toFixed(1);
    // 80,000 more entries kept would be ~40 MiB of heap; evicted, the heap stays where it was.
    assert.ok(r.after.heapUsed - r.warm.heapUsed < 4 * 2 ** 20, `heap grew ${mib(r.after.heapUsed - r.warm.heapUsed)} MiB`);
    // What a user sees: RSS back where it was once the flood is over (at once on Node 20; on
    // Node 26 the pages the burst used are returned by V8's memory reducer within ~20 s), and
    // never far above it meanwhile.
    assert.ok(r.after.rss - r.warm.rss < 48 * 2 ** 20, `RSS right after the flood grew ${mib(r.after.rss - r.warm.rss)} MiB`);
    assert.ok(r.settled.rss - r.warm.rss < r.settledWithin, `RSS ${mib(r.settled.rss - r.warm.rss)} MiB above warm ${r.settledAfterMs} ms after the flood`);
  });
});

describe('answers the plugin behind keeps itself (Reply.kept)', () => {
  const options: CacheOptions = defaultCacheOptions(['.'], 100);
  /** A reply to `raw` with one A record of TTL `ttl` (none for NXDOMAIN). */
  const replyTo = (raw: Buffer, rcode: number, ttl: number): Buffer => {
    const answer = rcode === 0 ? Buffer.from(`c00c00010001${ttl.toString(16).padStart(8, '0')}0004c0000201`, 'hex') : Buffer.alloc(0);
    const out = Buffer.concat([raw, answer]);
    out.writeUInt16BE(0x8580 | rcode, 2);
    out.writeUInt16BE(answer.length > 0 ? 1 : 0, 6);
    return out;
  };
  interface Case {
    what: string;
    rcode: number;
    ttl: number;
    kept: { min: number; max: number } | undefined;
    edited?: boolean;
    /** Entries stored and requests counted after the query. */
    stored: number;
    counted: number;
  }
  const cases: Case[] = [
    { what: 'a kept answer within the TTL limits passes by: not stored, not counted', rcode: 0, ttl: 30, kept: { min: 30, max: 30 }, stored: 0, counted: 0 },
    { what: 'a kept negative answer within the limits passes by', rcode: 3, ttl: 0, kept: { min: 30, max: 30 }, stored: 0, counted: 0 },
    { what: 'a kept answer with a TTL over the cap is stored, so the cap applies', rcode: 0, ttl: 7200, kept: { min: 7200, max: 7200 }, stored: 1, counted: 1 },
    { what: 'a kept answer with a TTL under the minimum is stored, so the minimum applies', rcode: 0, ttl: 1, kept: { min: 1, max: 1 }, stored: 1, counted: 1 },
    { what: 'a kept answer a plugin edited on the way is stored', rcode: 0, ttl: 30, kept: { min: 30, max: 30 }, edited: true, stored: 1, counted: 1 },
    { what: 'an answer nobody keeps is stored', rcode: 0, ttl: 30, kept: undefined, stored: 1, counted: 1 },
  ];
  for (const c of cases) {
    it(c.what, async () => {
      const registry = new Registry();
      const plugin = new CachePlugin(options, cacheCells(registry, 'dns://:53', '.'));
      const req = requestOf(buildQuery(nameToWire('web.demo.svc.cluster.local'), 1, 1, { id: 7 }));
      const reply = await plugin.serve(req, (r) => {
        const out = Reply.fromWire(replyTo(r.raw, c.rcode, c.ttl), c.rcode);
        if (c.kept) out.kept = c.kept;
        if (c.edited) out.edit();
        return out;
      });
      assert.equal(reply?.rcode, c.rcode);
      const requests = (await registry.getSingleMetric('coredns_cache_requests_total')?.get())?.values[0]?.value ?? 0;
      assert.deepEqual([plugin.size('success') + plugin.size('denial'), requests], [c.stored, c.counted]);
    });
  }
});

describe('a refresh behind a hit keeps the query it refreshes', () => {
  // A TCP connection lends a query's bytes until handling returns, then reads into the same
  // buffer; the refresh the hit starts runs later and must still ask the question asked.
  const TTL = 30;
  const replyTo = (raw: Buffer): Buffer => {
    const answer = Buffer.from(`c00c00010001${TTL.toString(16).padStart(8, '0')}0004c0000201`, 'hex');
    const out = Buffer.concat([raw, answer]);
    out.writeUInt16BE(0x8580, 2);
    out.writeUInt16BE(1, 6);
    return out;
  };
  const cases: Array<{ what: string; options: Partial<CacheOptions>; laterMs: number }> = [
    { what: 'prefetch of a popular entry', options: { prefetch: { amount: 1, durationMs: 60_000, percentage: 100 } }, laterMs: 1000 },
    { what: 'serve_stale refreshing an expired entry', options: { serveStale: { durationMs: 3_600_000, verify: false, verifyTimeoutMs: 0, responseTtl: 0, recheckMs: 0, preferPositive: false } }, laterMs: (TTL + 1) * 1000 },
  ];
  for (const c of cases) {
    it(c.what, async () => {
      let now = 1_000_000;
      const plugin = new CachePlugin({ ...defaultCacheOptions(['.'], 100), ...c.options }, cacheCells(new Registry(), 'dns://:53', '.'), () => now);
      const asked: string[] = [];
      const next = (r: { raw: Buffer }): Reply => {
        asked.push(r.raw.toString('hex'));
        return Reply.fromWire(replyTo(r.raw), 0);
      };
      const query = buildQuery(nameToWire('web.demo.svc.cluster.local'), 1, 1, { id: 7 });
      await plugin.serve(requestOf(Buffer.from(query)), next); // a miss: stored
      now += c.laterMs;
      const lent = Buffer.from(query);
      const hit = plugin.serve(requestOf(lent, undefined, true), next);
      lent.fill(0xff); // the connection reads its next bytes into the buffer
      await hit;
      await sleep(10);
      assert.deepEqual(asked, [query.toString('hex'), query.toString('hex')]);
    });
  }
});
