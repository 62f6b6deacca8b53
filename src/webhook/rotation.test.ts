// Certificate rotation under a steady stream of admissions. Two webhook replicas share one
// Secret; lifetimes are seconds instead of years, so serving certificates are renewed and the CA
// replaced several times while pods are created back to back. The stand-in API server opens a
// new TLS connection for every call and trusts only the caBundle stored at that moment: a
// certificate served before its CA is in the bundle, or a CA dropped while its certificates are
// still served, is a failed call (with failurePolicy Ignore: a pod admitted without its DNS).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep } from '../../test/util/net.js';
import { startWebhookRig } from '../../test/util/webhookrig.js';
import type { WebhookRig } from '../../test/util/webhookrig.js';

const STREAM_MS = 14_000;
let rig: WebhookRig;

before(async () => {
  rig = await startWebhookRig(
    {
      settings: { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'] },
      // Renewed at a quarter of their lifetimes: the three quarters left (6 s for a serving
      // certificate) cover a renewal that a loaded machine delays by seconds (half of 4 s did not).
      certTiming: { caValidityMs: 16_000, certValidityMs: 8_000, renewAfterFraction: 1 / 4, checkIntervalMs: 200, bundlePropagationMs: 500 },
    },
    2,
  );
});
after(async () => rig.close());

/** Distinct values a Secret key took while sampled. */
function sampler(key: string): { seen: Set<string>; stop: () => void } {
  const seen = new Set<string>();
  const timer = setInterval(() => {
    const data = rig.api.get('/api/v1/secrets', rig.namespace, 'kdns-webhook-tls')?.['data'] as Record<string, string> | undefined;
    if (data?.[key] !== undefined) seen.add(data[key]);
  }, 50);
  return { seen, stop: () => clearInterval(timer) };
}

test('rotation under a steady stream of admissions: every pod admitted with its DNS, no call fails', async () => {
  const cas = sampler('ca.crt');
  const serving = sampler('tls.crt');
  const results: number[] = [];
  const deadline = Date.now() + STREAM_MS;
  let n = 0;
  async function stream(): Promise<void> {
    while (Date.now() < deadline) {
      const name = `pod-${n++}`;
      const r = await rig.createPod('ns1', { apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' } }, spec: { containers: [{ name: 'c', image: 'x' }] } });
      const spec = r.body['spec'] as { dnsPolicy?: string } | undefined;
      results.push(spec?.dnsPolicy === 'None' ? r.code : -r.code);
      await sleep(5);
    }
  }
  await Promise.all([stream(), stream(), stream(), stream()]);
  cas.stop();
  serving.stop();
  const failedCalls = rig.standIn.calls.filter((c) => c.outcome !== 'patched');
  assert.deepEqual(failedCalls, [], 'webhook calls that did not patch');
  // -201: admitted without the rewrite (the call failed and failurePolicy Ignore let the pod through).
  assert.deepEqual([...new Set(results)], [201]);
  assert.ok(results.length >= 400, `only ${results.length} admissions in ${STREAM_MS} ms`);
  // The stream crossed rotations: the CA (renewed every 4 s) at least once, serving certificates
  // (every 2 s) several times.
  assert.ok(cas.seen.size >= 2, `the CA never changed during the stream (${cas.seen.size})`);
  assert.ok(serving.seen.size >= 4, `serving certificates changed only ${serving.seen.size - 1} times`);
});
