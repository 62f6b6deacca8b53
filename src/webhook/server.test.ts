// The webhook's HTTPS endpoint over a real TLS socket: what each path answers, and that nothing
// a request holds (bad JSON, a wrong review, a body over the limit) stops it serving the next one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { makeServingCerts } from '../../test/util/certs.js';
import { startWebhookServer } from './server.js';
import type { WebhookServer } from './server.js';

const NAME = 'kdns-webhook.kdns.svc';
let server: WebhookServer;
let ca: string;
const logged: string[] = [];

before(async () => {
  const certs = makeServingCerts([NAME]);
  ca = readFileSync(certs.ca, 'utf8');
  const material = { certPem: readFileSync(certs.cert, 'utf8'), keyPem: readFileSync(certs.key, 'utf8'), notAfter: new Date('2030-01-01T00:00:00Z') };
  server = await startWebhookServer({
    host: '127.0.0.1',
    port: 0,
    probes: { host: '127.0.0.1', port: 0 },
    metricsAt: { host: '127.0.0.1', port: 0 },
    certs: { current: () => material, onChange: () => undefined },
    settings: () => ({ clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'], nodeCacheIP: '169.254.20.10' }),
    protectedNamespaces: new Set(['kube-system', 'kdns']),
    log: (l) => logged.push(l),
  });
});
after(async () => server.close());

function post(path: string, body: string | Buffer, method = 'POST'): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method, servername: NAME, ca, headers: { 'content-type': 'application/json' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function review(namespace: string, annotations: Record<string, string> | undefined, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'a5d3c4e1-0000-4000-8000-000000000001',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace,
      operation: 'CREATE',
      object: { metadata: { name: 'web-1', ...(annotations ? { annotations } : {}) }, spec: { containers: [{ name: 'c', image: 'x' }], dnsPolicy: 'ClusterFirst' } },
      ...extra,
    },
  });
}

const DNS_OPS = [
  { op: 'replace', path: '/spec/dnsPolicy', value: 'None' },
  { op: 'add', path: '/spec/dnsConfig', value: { nameservers: ['169.254.20.10', '10.96.0.10'], searches: ['search.ns1.cluster.local.ap.k8s.io'], options: [{ name: 'ndots', value: '5' }] } },
];
/** A pod with annotations gets one more; one without gets the map. */
const PATCH_ANNOTATED = [...DNS_OPS, { op: 'add', path: '/metadata/annotations/dns.kdns.io~1mutated-from', value: 'ClusterFirstWithAutopath' }];
const PATCH_BARE = [...DNS_OPS, { op: 'add', path: '/metadata/annotations', value: { 'dns.kdns.io/mutated-from': 'ClusterFirstWithAutopath' } }];

interface Case {
  name: string;
  path?: string;
  method?: string;
  body: string | Buffer;
  status: number;
  /** The AdmissionReview response, or the Status message of a refused request. */
  want: unknown;
}

const AP = { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' };
const CASES: Case[] = [
  {
    name: 'an annotated pod gets its patch',
    body: review('ns1', AP),
    status: 200,
    want: { uid: 'a5d3c4e1-0000-4000-8000-000000000001', allowed: true, patchType: 'JSONPatch', patch: PATCH_ANNOTATED },
  },
  {
    name: 'the namespace path: a plain pod in a labelled namespace gets the patch',
    path: '/mutate/namespace/ClusterFirstWithAutopath',
    body: review('ns1', undefined),
    status: 200,
    want: { uid: 'a5d3c4e1-0000-4000-8000-000000000001', allowed: true, patchType: 'JSONPatch', patch: PATCH_BARE },
  },
  { name: 'a pod that did not opt in: allowed, no patch', body: review('ns1', { team: 'a' }), status: 200, want: { uid: 'a5d3c4e1-0000-4000-8000-000000000001', allowed: true } },
  { name: 'kube-system is never changed', body: review('kube-system', AP), status: 200, want: { uid: 'a5d3c4e1-0000-4000-8000-000000000001', allowed: true } },
  { name: "the webhook's own namespace is never changed", body: review('kdns', AP), status: 200, want: { uid: 'a5d3c4e1-0000-4000-8000-000000000001', allowed: true } },
  { name: 'an update is not ours', body: review('ns1', AP, { operation: 'UPDATE' }), status: 200, want: { uid: 'a5d3c4e1-0000-4000-8000-000000000001', allowed: true } },
  {
    name: 'a bad request is denied with the rule',
    body: review('ns1', { 'dns.kdns.io/policy': 'Custom', 'dns.kdns.io/search': 'a,b,c,d,e,f' }),
    status: 200,
    want: { uid: 'a5d3c4e1-0000-4000-8000-000000000001', allowed: false, status: { code: 422, reason: 'Invalid', message: 'kdns: metadata.annotations[dns.kdns.io/search]: Too many: 6: must have at most 5 items besides $(HOST)' } },
  },
  { name: 'not JSON: 400', body: '{"apiVersion":', status: 400, want: 'malformed AdmissionReview: not JSON: Unexpected end of JSON input' },
  { name: 'not a review: 400', body: '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}', status: 400, want: 'malformed AdmissionReview: apiVersion: must be admission.k8s.io/v1, got "admission.k8s.io/v1beta1"' },
  { name: 'no uid: 400', body: review('ns1', AP).replace('"uid":"a5d3c4e1-0000-4000-8000-000000000001",', ''), status: 400, want: 'malformed AdmissionReview: request.uid: required' },
  { name: 'an object that is a string: 400', body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object: 'pod' } }), status: 400, want: 'malformed AdmissionReview: request.object: must be an object' },
  { name: 'over the size limit: 400', body: Buffer.alloc(3 * 1024 * 1024 + 1, 0x20), status: 400, want: 'AdmissionReview larger than 3145728 bytes' },
  { name: 'GET: 405', method: 'GET', body: '', status: 405, want: 'GET not allowed: POST an AdmissionReview' },
  { name: 'another path: 404', path: '/validate', body: review('ns1', AP), status: 404, want: 'no admission endpoint at /validate' },
  { name: 'a namespace path of no policy: 404', path: '/mutate/namespace/Default', body: review('ns1', AP), status: 404, want: 'no admission endpoint at /mutate/namespace/Default' },
];

for (const c of CASES) {
  test(`webhook server: ${c.name}`, async () => {
    const r = await post(c.path ?? '/mutate', c.body, c.method);
    assert.equal(r.status, c.status);
    if (c.status === 200) {
      const response = r.json['response'] as Record<string, unknown>;
      assert.equal(r.json['apiVersion'], 'admission.k8s.io/v1');
      const decoded = response['patch'] !== undefined ? { ...response, patch: JSON.parse(Buffer.from(String(response['patch']), 'base64').toString('utf8')) as unknown } : response;
      assert.deepEqual(decoded, c.want);
    } else {
      assert.equal(r.json['message'], c.want);
    }
    // Whatever came before, the next request is served.
    const next = await post('/mutate', review('ns1', AP));
    assert.equal(next.status, 200);
  });
}

test('webhook server: a denial is logged with the pod and the rule', async () => {
  await post('/mutate', review('ns1', { 'dns.kdns.io/policy': 'Bogus' }));
  assert.ok(
    logged.some((l) => l === 'webhook: denied pod ns1/web-1 (uid a5d3c4e1-0000-4000-8000-000000000001): metadata.annotations[dns.kdns.io/policy]: Unsupported value: "Bogus": supported values: "ClusterFirstWithAutopath", "Custom", "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'),
    logged.join('\n'),
  );
});

test('webhook server: metrics count admissions by result, probes answer', async () => {
  const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
  const count = (labels: string): number => Number(new RegExp(`^kdns_webhook_admissions_total\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 'NaN');
  assert.ok(count('path="/mutate",result="mutated"') >= 1, text);
  assert.ok(count('path="/mutate/namespace",result="mutated"') >= 1, text);
  assert.ok(count('path="/mutate",result="denied"') >= 1, text);
  assert.match(text, /^kdns_webhook_rejected_requests_total\{reason="oversized"\} 1$/m);
  assert.match(text, /^kdns_webhook_admission_duration_seconds_count\{path="\/mutate",result="mutated"\} \d+$/m);
  assert.match(text, /^kdns_webhook_certificate_expiry_timestamp_seconds 1893456000$/m);
  assert.equal((await fetch(`http://127.0.0.1:${server.probesPort}/health`)).status, 200);
  assert.equal((await fetch(`http://127.0.0.1:${server.probesPort}/ready`)).status, 200);
});
