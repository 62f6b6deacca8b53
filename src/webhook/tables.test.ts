// Every case of the resolv.conf table (src/poddns/testdata/compute-cases.ts) sent through a stock
// API server's admission path with the kdns webhook in it: the pod is created as a user writes it
// (the annotation form, and the literal form), the webhook rewrites it, the stand-in API server
// applies the patch and validates the result as a stock API server does, and the kubelet's
// resolv.conf for the admitted pod (its `None` computation) must equal the table's expected file,
// which is what `kdns resolvconf` prints for the pod as written.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodSpec } from '../lib/cluster/types.js';
import { computePodDNS } from '../poddns/compute.js';
import type { AdmissionSettings } from '../poddns/admission.js';
import { parseHostResolvConf } from '../poddns/resolvconf.js';
import { CLUSTER_DNS, COMPUTE_CASES, HOST } from '../poddns/testdata/compute-cases.js';
import type { ComputeCase } from '../poddns/testdata/compute-cases.js';
import { validateStockPod } from '../../test/util/stockpod.js';
import { startWebhookRig } from '../../test/util/webhookrig.js';
import type { WebhookRig } from '../../test/util/webhookrig.js';

let rig: WebhookRig;
before(async () => {
  rig = await startWebhookRig({ settings: { clusterDomain: 'cluster.local', clusterDNS: CLUSTER_DNS } });
});
after(async () => rig.close());

const KDNS = new Set(['Custom', 'ClusterFirstWithAutopath']);

function hostSearches(c: ComputeCase): string[] {
  const text = c.host === undefined ? HOST : c.host;
  return text === null ? [] : parseHostResolvConf(text).config.searches;
}

/** The webhook's settings for the node the case describes: its flags, and its search paths as $(HOST). */
function settingsFor(c: ComputeCase): AdmissionSettings {
  return {
    clusterDomain: c.clusterDomain ?? 'cluster.local',
    clusterDNS: c.clusterDNS ?? CLUSTER_DNS,
    ...(c.nodecacheIP !== undefined ? { nodeCacheIP: c.nodecacheIP } : {}),
    nodeSearches: hostSearches(c),
  };
}

/** The same request written with annotations, as a pod template would carry it. */
function annotationForm(spec: PodSpec): { annotations: Record<string, string>; spec: PodSpec } {
  const { dnsParams, ...rest } = spec;
  const custom = dnsParams?.custom;
  const search = custom?.search ?? custom?.searchPaths;
  return {
    annotations: {
      'dns.kdns.io/policy': spec.dnsPolicy ?? '',
      // Custom asks for its search list explicitly (an empty list is `[]`), as a user writes it.
      ...(custom !== undefined ? { 'dns.kdns.io/search': JSON.stringify(search ?? []) } : {}),
      ...(custom?.options !== undefined ? { 'dns.kdns.io/options': JSON.stringify(custom.options) } : {}),
    },
    spec: { ...rest, dnsPolicy: 'ClusterFirst' },
  };
}

/** What the kubelet on that node writes for the admitted pod. */
function kubeletFile(c: ComputeCase, spec: PodSpec): unknown {
  const text = c.host === undefined ? HOST : c.host;
  return computePodDNS(
    { spec, namespace: c.namespace ?? 'ns1' },
    { host: text === null ? null : parseHostResolvConf(text).config, clusterDNS: c.clusterDNS ?? CLUSTER_DNS, clusterDomain: c.clusterDomain ?? 'cluster.local', nodeIPs: c.nodeIPs ?? [], ...(c.nodecacheIP !== undefined ? { nodecacheIP: c.nodecacheIP } : {}) },
  ).config;
}

/**
 * Cases whose outcome through a stock API server is not the table's file, with what happens
 * instead. Each is a property of the stock path, not a difference between the webhook and
 * `kdns resolvconf`.
 */
const ELSEWHERE: Record<string, { literal: string; annotation: string }> = {
  // The webhook needs the kubelets' cluster DNS address; a node without one is not a setting it takes.
  'Custom without cluster DNS: falls back to Default with a warning': { literal: 'not a webhook setting', annotation: 'not a webhook setting' },
  'Autopath with a cache but no cluster DNS: the cache, no fallback': { literal: 'not a webhook setting', annotation: 'not a webhook setting' },
  'Autopath with neither cache nor cluster DNS: Default with a warning': { literal: 'not a webhook setting', annotation: 'not a webhook setting' },
  // hostNetwork pods are never changed: the literal policy reaches validation and is refused, the annotation is ignored.
  'Autopath on the host network still uses autopath (it is chosen explicitly)': { literal: 'refused', annotation: 'untouched' },
};

let index = 0;
for (const c of COMPUTE_CASES) {
  const forms: Array<'literal' | 'annotation'> = KDNS.has(c.spec.dnsPolicy ?? '') ? ['annotation', 'literal'] : ['literal'];
  for (const form of forms) {
    const n = index++;
    test(`through the webhook (${form}): ${c.name}`, async () => {
      const elsewhere = ELSEWHERE[c.name]?.[form];
      if (elsewhere === 'not a webhook setting') return assert.deepEqual(c.clusterDNS, [], 'only nodes without cluster DNS are set aside');
      rig.setSettings(settingsFor(c));
      const written = form === 'annotation' ? annotationForm(c.spec) : { annotations: {}, spec: c.spec };
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: `case-${n}`, annotations: written.annotations }, spec: { containers: [{ name: 'app', image: 'app:1' }], ...written.spec } };
      // Warn: the decoder drops what a stock API server does not know (spec.dnsParams), as for any client that does not ask for Strict.
      const r = await rig.createPod(c.namespace ?? 'ns1', pod, 'Warn');
      const literalCustom = form === 'literal' && c.spec.dnsPolicy === 'Custom';
      const stockInvalid = !KDNS.has(c.spec.dnsPolicy ?? '') && validateStockPod(pod).length > 0;
      if (literalCustom) {
        // dnsParams did not survive decoding: the request names what is missing.
        assert.equal(r.code, 422, JSON.stringify(r.body));
        assert.match(String(r.body['message']), /^admission webhook "pods\.dns\.kdns\.io" denied the request: kdns: metadata\.annotations\[dns\.kdns\.io\/search\]: Required value/);
        return;
      }
      if (elsewhere === 'refused' || stockInvalid) {
        assert.equal(r.code, 422, JSON.stringify(r.body));
        assert.match(String(r.body['message']), /is invalid: spec\./);
        return;
      }
      assert.equal(r.code, 201, JSON.stringify(r.body));
      const stored = r.body['spec'] as PodSpec;
      if (elsewhere === 'untouched' || !KDNS.has(c.spec.dnsPolicy ?? '')) {
        // Not ours: stored as written (the API server's own defaulting aside, which the stand-in does not do).
        assert.deepEqual({ dnsPolicy: stored.dnsPolicy, dnsConfig: stored.dnsConfig }, { dnsPolicy: written.spec.dnsPolicy, dnsConfig: written.spec.dnsConfig });
        assert.equal((r.body['metadata'] as { annotations?: Record<string, string> }).annotations?.['dns.kdns.io/mutated-from'], undefined);
        return;
      }
      assert.equal(stored.dnsPolicy, 'None');
      assert.deepEqual(kubeletFile(c, stored), c.want);
    });
  }
}
