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

/** The Secret's certificates as stored now. */
function storedCertificates(): { ca?: string; serving?: string } {
  const data = rig.api.get('/api/v1/secrets', rig.namespace, 'kdns-webhook-tls')?.['data'] as Record<string, string> | undefined;
  return { ...(data?.['ca.crt'] !== undefined ? { ca: data['ca.crt'] } : {}), ...(data?.['tls.crt'] !== undefined ? { serving: data['tls.crt'] } : {}) };
}

test('rotation under a steady stream of admissions: every pod admitted with its DNS, no call fails', async () => {
  // The certificates stored when each admission was asked for: the stream's coverage of the
  // rotations, whatever number of admissions a loaded machine manages in the time.
  const cas = new Set<string>();
  const serving = new Set<string>();
  const results: number[] = [];
  const deadline = Date.now() + STREAM_MS;
  let n = 0;
  async function stream(): Promise<void> {
    while (Date.now() < deadline) {
      const name = `pod-${n++}`;
      const stored = storedCertificates();
      if (stored.ca !== undefined) cas.add(stored.ca);
      if (stored.serving !== undefined) serving.add(stored.serving);
      const r = await rig.createPod('ns1', { apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' } }, spec: { containers: [{ name: 'c', image: 'x' }] } });
      const spec = r.body['spec'] as { dnsPolicy?: string } | undefined;
      results.push(spec?.dnsPolicy === 'None' ? r.code : -r.code);
      await sleep(5);
    }
  }
  await Promise.all([stream(), stream(), stream(), stream()]);
  const failedCalls = rig.standIn.calls.filter((c) => c.outcome !== 'patched');
  assert.deepEqual(failedCalls, [], 'webhook calls that did not patch');
  // -201: admitted without the rewrite (the call failed and failurePolicy Ignore let the pod through).
  assert.deepEqual([...new Set(results)], [201]);
  // The stream crossed rotations: pods were admitted under at least two CAs (one renewed every
  // 4 s) and four serving certificates (renewed every 2 s). Counted by certificate, not by pod: a
  // busy machine admits fewer pods in the time (366 instead of 400 in one CI=true run beside a
  // busy loop) while the rotations, driven by the clock, keep their pace.
  assert.ok(cas.size >= 2, `every pod was admitted under the same CA (${cas.size})`);
  assert.ok(serving.size >= 4, `pods were admitted under only ${serving.size} serving certificates`);
});
