// The API source's client-side limits (apiserver_qps, apiserver_burst, apiserver_max_inflight)
// and request metrics, against the fake API server, which records when each request arrived.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../../test/util/net.js';
import { FakeApiServer } from '../../../test/util/fakeapi.js';
import type { ApiLimits, ApiRequestMetrics } from './apigate.js';
import { createKubeApiSource, type KubeApiSource, type ReflectorTiming } from './kubeapi.js';
import { silentLog } from './source.js';
import { ClusterStore } from './store.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
type Item = Record<string, unknown> & { metadata: { name: string; namespace?: string } };
const fixture = (file: string): Item[] => (JSON.parse(readFileSync(join(ROOT, 'src/lib/cluster/testdata/api', file), 'utf8')) as { items: Item[] }).items;
const TIMING: ReflectorTiming = { initialBackoffMs: 20, maxBackoffMs: 200, pageSize: 500, watchTimeoutSeconds: [60, 60], watchIdleTimeoutMs: 60_000, backoffResetMs: 120_000 };

async function withSource(limits: ApiLimits | undefined, body: (api: FakeApiServer, source: KubeApiSource, createdAt: number) => Promise<void>, metrics?: ApiRequestMetrics, prepare?: (api: FakeApiServer) => void): Promise<void> {
  const api = new FakeApiServer();
  api.seed('/api/v1/namespaces', fixture('namespaces.json'));
  api.seed('/api/v1/services', fixture('services.json'));
  api.seed('/apis/discovery.k8s.io/v1/endpointslices', fixture('endpointslices.json'));
  api.seed('/api/v1/pods', fixture('pods.json'));
  prepare?.(api);
  const url = await api.listen();
  // Namespaces, Services, EndpointSlices, Pods: 4 lists, then 4 watches.
  const createdAt = performance.now();
  const source = await createKubeApiSource({ endpoint: url, resyncMs: 0, ...(limits ? { limits } : {}) }, { pods: true, endpoints: true }, new ClusterStore(), silentLog, TIMING, metrics);
  try {
    await body(api, source, createdAt);
  } finally {
    await source.stop();
    await api.close();
  }
}

/** Milliseconds from `since` to each request's arrival, earliest first. */
const offsets = (api: FakeApiServer, since: number): number[] => api.requests.map((r) => r.receivedAt - since).sort((a, b) => a - b);

// [what, limits, requests that go at once, then the spacing of the rest (ms)]
const rateCases: Array<[string, ApiLimits, number, number]> = [
  ['qps 10, burst 2: two at once, then one every 100 ms', { qps: 10, burst: 2, maxInflight: 0 }, 2, 100],
  ['qps 20, burst 4: four at once, then one every 50 ms', { qps: 20, burst: 4, maxInflight: 0 }, 4, 50],
  ['burst 3 alone: client-go qps 5, one every 200 ms after the first three', { qps: 0, burst: 3, maxInflight: 0 }, 3, 200],
];

for (const [what, limits, burst, spacingMs] of rateCases) {
  test(`API source rate limit, ${what}`, async () => {
    await withSource(limits, async (api, source, createdAt) => {
      await source.start();
      await waitFor(() => api.requests.length === 8);
      const at = offsets(api, createdAt);
      // The bucket starts full when the source is made; t ms later at most burst + t/spacing
      // requests have had a token, so the i-th arrival (from 0) is at least (i - burst + 1) spacings in.
      const early = at.map((t, i) => [i, t] as const).filter(([i, t]) => i >= burst && t < (i - burst + 1) * spacingMs - 2);
      assert.deepEqual(early, []);
    });
  });
}

// [maxInflight, lists open at once while the API server holds them]
const inflightCases: Array<[number, number]> = [
  [1, 1],
  [3, 3],
  [0, 4],
];

for (const [maxInflight, open] of inflightCases) {
  test(`API source max in-flight ${maxInflight}: ${open} held list(s) open at once, the rest after`, async () => {
    await withSource(
      { qps: 0, burst: 0, maxInflight },
      async (api, source) => {
        const started = source.start();
        await waitFor(() => api.requests.length === open);
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(api.requests.filter((r) => !r.watch).length, open);
        api.releaseLists();
        await started;
        // Established watches hold no slot: every kind is watched even with one slot.
        await waitFor(() => api.requests.filter((r) => r.watch).length === 4);
        assert.deepEqual(api.requests.filter((r) => !r.watch).map((r) => r.path).sort(), ['/api/v1/namespaces', '/api/v1/pods', '/api/v1/services', '/apis/discovery.k8s.io/v1/endpointslices']);
      },
      undefined,
      (api) => api.holdLists(),
    );
  });
}

test('API source request metrics: one result per request by code, method and host, a duration and a limiter wait each', async () => {
  const lines: string[] = [];
  const metrics: ApiRequestMetrics = {
    result: (code, method, host) => lines.push(`requests_total{code=${code},method=${method},host=${host}}`),
    latency: (verb, host) => lines.push(`request_duration_seconds{verb=${verb},host=${host}}`),
    rateLimiterLatency: (verb, host) => lines.push(`rate_limiter_duration_seconds{verb=${verb},host=${host}}`),
  };
  await withSource(
    undefined,
    async (api, source) => {
      await source.start();
      await waitFor(() => api.requests.filter((r) => r.watch).length === 4 && lines.filter((l) => l.startsWith('requests_total')).length === 9);
      const host = lines[0]?.match(/host=([^}]+)/)?.[1];
      assert.match(host ?? '', /^127\.0\.0\.1:\d+$/);
      const counts = new Map<string, number>();
      for (const l of lines) counts.set(l.replace(host as string, 'HOST'), (counts.get(l.replace(host as string, 'HOST')) ?? 0) + 1);
      // The first request got the fake server's 500 and was retried: 4 lists + 1 retry + 4 watches.
      assert.deepEqual(Object.fromEntries(counts), {
        'rate_limiter_duration_seconds{verb=GET,host=HOST}': 9,
        'requests_total{code=500,method=GET,host=HOST}': 1,
        'requests_total{code=200,method=GET,host=HOST}': 8,
        'request_duration_seconds{verb=GET,host=HOST}': 9,
      });
    },
    metrics,
    (api) => {
      api.failNext = 1;
    },
  );
});
