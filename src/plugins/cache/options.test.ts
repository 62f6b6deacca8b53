import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCorefileError, directiveIn } from '../../../test/util/corefile.js';
import { parseCache, type CacheOptions } from './options.js';

function parse(body: string): CacheOptions {
  return parseCache(directiveIn(body, 'example.org:53'), ['example.org.']);
}

describe('cache options', () => {
  const good: Array<{ corefile: string; want: Partial<CacheOptions> }> = [
    {
      corefile: 'cache',
      want: {
        zones: ['example.org.'],
        success: { capacity: 9984, maxTtl: 3600, minTtl: 5 },
        denial: { capacity: 9984, maxTtl: 1800, minTtl: 5 },
        servfailMs: 5000,
        keepTtl: false,
        prefetch: undefined,
        serveStale: undefined,
      },
    },
    { corefile: 'cache 30', want: { success: { capacity: 9984, maxTtl: 30, minTtl: 5 }, denial: { capacity: 9984, maxTtl: 30, minTtl: 5 } } },
    // A cap below the default minimum lowers the minimum with it (CoreDNS: the cap wins).
    { corefile: 'cache 2', want: { success: { capacity: 9984, maxTtl: 2, minTtl: 2 } } },
    { corefile: 'cache 30 a.example.org B.Example.Org.', want: { zones: ['a.example.org.', 'b.example.org.'] } },
    { corefile: 'cache sub.example.org', want: { zones: ['sub.example.org.'], success: { capacity: 9984, maxTtl: 3600, minTtl: 5 } } },
    { corefile: 'cache 10.0.0.0/24', want: { zones: ['0.0.10.in-addr.arpa.'] } },
    {
      corefile: `cache {
  success 5000 600 10
  denial 2500 60 0
  prefetch 10 2m 20%
  serve_stale 30m verify
  servfail 10s
  disable denial sub.example.org
  disable success
  keepttl
}`,
      want: {
        success: { capacity: 5000, maxTtl: 600, minTtl: 10 },
        denial: { capacity: 2500, maxTtl: 60, minTtl: 0 },
        prefetch: { amount: 10, durationMs: 120_000, percentage: 20 },
        serveStale: { durationMs: 1_800_000, verify: true, verifyTimeoutMs: 0, responseTtl: 0, recheckMs: 0, preferPositive: false },
        servfailMs: 10_000,
        disabled: { success: ['example.org.'], denial: ['sub.example.org.'] },
        keepTtl: true,
      },
    },
    { corefile: 'cache {\n prefetch 3\n serve_stale\n}', want: { prefetch: { amount: 3, durationMs: 60_000, percentage: 10 }, serveStale: { durationMs: 3_600_000, verify: false, verifyTimeoutMs: 0, responseTtl: 0, recheckMs: 0, preferPositive: false } } },
    { corefile: 'cache {\n serve_stale 0s immediate\n servfail 0\n}', want: { serveStale: { durationMs: 0, verify: false, verifyTimeoutMs: 0, responseTtl: 0, recheckMs: 0, preferPositive: false }, servfailMs: 0 } },
    // serve_stale's arguments after the mode, as CoreDNS 1.14.7 reads them.
    { corefile: 'cache {\n serve_stale 1h immediate 30s\n}', want: { serveStale: { durationMs: 3_600_000, verify: false, verifyTimeoutMs: 0, responseTtl: 30, recheckMs: 0, preferPositive: false } } },
    { corefile: 'cache {\n serve_stale 1h immediate 30s 45s\n}', want: { serveStale: { durationMs: 3_600_000, verify: false, verifyTimeoutMs: 0, responseTtl: 30, recheckMs: 45_000, preferPositive: false } } },
    { corefile: 'cache {\n serve_stale 1h verify 100ms\n}', want: { serveStale: { durationMs: 3_600_000, verify: true, verifyTimeoutMs: 100, responseTtl: 0, recheckMs: 0, preferPositive: false } } },
    { corefile: 'cache {\n serve_stale 2h verify 0 30s\n}', want: { serveStale: { durationMs: 7_200_000, verify: true, verifyTimeoutMs: 0, responseTtl: 30, recheckMs: 0, preferPositive: false } } },
    { corefile: 'cache {\n serve_stale 1h verify 250ms 30s 5m\n}', want: { serveStale: { durationMs: 3_600_000, verify: true, verifyTimeoutMs: 250, responseTtl: 30, recheckMs: 300_000, preferPositive: false } } },
    { corefile: 'cache {\n serve_stale\n serve_stale_policy prefer_positive\n}', want: { serveStale: { durationMs: 3_600_000, verify: false, verifyTimeoutMs: 0, responseTtl: 0, recheckMs: 0, preferPositive: true } } },
    { corefile: 'cache {\n serve_stale_policy PREFER_POSITIVE\n serve_stale 10m verify\n}', want: { serveStale: { durationMs: 600_000, verify: true, verifyTimeoutMs: 0, responseTtl: 0, recheckMs: 0, preferPositive: true } } },
    { corefile: 'cache {\n success 100\n}', want: { success: { capacity: 100, maxTtl: 3600, minTtl: 5 } } },
  ];
  for (const c of good) {
    it(`accepts ${JSON.stringify(c.corefile.split('\n')[0])}${c.corefile.includes('\n') ? ' {…}' : ''}`, () => {
      const got = parse(c.corefile);
      for (const [k, v] of Object.entries(c.want)) assert.deepEqual(got[k as keyof CacheOptions], v, k);
    });
  }

  const bad: Array<{ corefile: string; error: string }> = [
    { corefile: 'cache 0', error: 'Corefile:2: cache TTL must be at least 1, got 0' },
    { corefile: 'cache -5', error: 'Corefile:2: cache TTL must be at least 1, got -5' },
    { corefile: 'cache a..b', error: 'Corefile:2: invalid zone "a..b" for "cache": not a valid domain name' },
    { corefile: 'cache {\n succes 100\n}', error: 'Corefile:3: unknown property "succes" in cache block' },
    { corefile: 'cache {\n success\n}', error: 'Corefile:3: wrong argument count for "success": expected at least 1, got 0' },
    { corefile: 'cache {\n success 0\n}', error: 'Corefile:3: success capacity must be at least 1, got 0' },
    { corefile: 'cache {\n success many\n}', error: 'Corefile:3: invalid success capacity: "many" is not an integer' },
    { corefile: 'cache {\n success 100 0\n}', error: 'Corefile:3: success TTL must be at least 1, got 0' },
    { corefile: 'cache {\n denial 100 60 -1\n}', error: 'Corefile:3: denial MINTTL must be at least 0, got -1' },
    { corefile: 'cache {\n denial 100 60 120\n}', error: 'Corefile:3: denial MINTTL 120 is larger than its TTL 60' },
    { corefile: 'cache {\n success 1 2 3 4\n}', error: 'Corefile:3: wrong argument count for "success": expected at most 3, got 4' },
    { corefile: 'cache {\n prefetch 0\n}', error: 'Corefile:3: prefetch amount must be at least 1, got 0' },
    { corefile: 'cache {\n prefetch 5 10%\n}', error: 'Corefile:3: invalid duration for prefetch duration: "10%" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { corefile: 'cache {\n prefetch 5 1m 10\n}', error: 'Corefile:3: invalid argument "10" for "prefetch": the percentage needs its % sign, as in 10%' },
    { corefile: 'cache {\n prefetch 5 1m 95%\n}', error: 'Corefile:3: prefetch percentage must be between 10 and 90, got 95' },
    { corefile: 'cache {\n prefetch 5 1m 5%\n}', error: 'Corefile:3: prefetch percentage must be between 10 and 90, got 5' },
    { corefile: 'cache {\n serve_stale -1h\n}', error: 'Corefile:3: serve_stale duration must be at least 0s, got -1h' },
    { corefile: 'cache {\n serve_stale 1h later\n}', error: 'Corefile:3: invalid argument "later" for "serve_stale": refresh mode must be verify or immediate' },
    { corefile: 'cache {\n serve_stale 1h immediate 30s 30s 30s\n}', error: 'Corefile:3: serve_stale immediate takes at most RESPONSE_TTL and FAILURE_RECHECK after the mode' },
    { corefile: 'cache {\n serve_stale 1h verify 0 30s 30s 1\n}', error: 'Corefile:3: wrong argument count for "serve_stale": expected at most 5, got 6' },
    { corefile: 'cache {\n serve_stale 1h immediate 1500ms\n}', error: 'Corefile:3: serve_stale response TTL must be whole seconds, got 1500ms' },
    { corefile: 'cache {\n serve_stale 1h immediate -30s\n}', error: 'Corefile:3: serve_stale response TTL must be at least 0s, got -30s' },
    { corefile: 'cache {\n serve_stale 1h verify -1s\n}', error: 'Corefile:3: serve_stale verify timeout must be at least 0s, got -1s' },
    { corefile: 'cache {\n serve_stale 1h immediate 30s 6m\n}', error: 'Corefile:3: serve_stale failure recheck must be at most 5m0s, got 6m' },
    { corefile: 'cache {\n serve_stale_policy prefer_positive\n}', error: 'Corefile:3: serve_stale_policy needs serve_stale in the same cache block' },
    { corefile: 'cache {\n serve_stale\n serve_stale_policy prefer_negative\n}', error: 'Corefile:4: invalid argument "prefer_negative" for "serve_stale_policy": the only serve_stale policy is prefer_positive' },
    { corefile: 'cache {\n serve_stale\n serve_stale_policy prefer_positive\n serve_stale_policy prefer_positive\n}', error: 'Corefile:5: duplicate property "serve_stale_policy" in cache block' },
    { corefile: 'cache {\n servfail 10m\n}', error: 'Corefile:3: servfail must be at most 5m0s, got 10m' },
    { corefile: 'cache {\n servfail\n}', error: 'Corefile:3: wrong argument count for "servfail": expected 1, got 0' },
    { corefile: 'cache {\n disable everything\n}', error: 'Corefile:3: invalid argument "everything" for "disable": expected success or denial' },
    { corefile: 'cache {\n keepttl 5\n}', error: 'Corefile:3: wrong argument count for "keepttl": expected no arguments, got 1' },
    { corefile: 'cache {\n success 100\n success 200\n}', error: 'Corefile:4: duplicate property "success" in cache block' },
    { corefile: 'cache {\n keepttl {\n }\n}', error: 'Corefile:3: "keepttl" does not take a block' },
  ];
  for (const c of bad) {
    it(`rejects ${JSON.stringify(c.corefile.replace(/\n/g, ' '))}`, () => {
      assertCorefileError(() => parse(c.corefile), c.error);
    });
  }
});
