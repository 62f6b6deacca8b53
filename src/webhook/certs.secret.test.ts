// The Secret-backed certificate source against the fake API server (test/util/fakeapi.ts, the
// real protocol: GET, POST, PUT with resourceVersion preconditions, JSON patch with tests):
// startup from nothing, from a valid Secret and from garbage; replicas racing for one CA; the
// caBundle kept in the MutatingWebhookConfiguration; renewal; a CA rotation in which every
// replica's certificate verifies against the configuration's bundle at every step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import type { KubeConfig, V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { FakeApiServer, WEBHOOK_CERT_RESOURCES } from '../../test/util/fakeapi.js';
import type { ApiObject } from '../../test/util/fakeapi.js';
import { loadKubeConfig } from '../lib/cluster/kubeapi.js';
import { writeKubeconfig } from '../../test/util/kubeconfig.js';
import { sleep, waitFor } from '../../test/util/net.js';
import { caBundlePatch, commonNameOf, freshState, issueCa, parseCertificates, startSecretCertSource, validityFrom } from './certs.js';
import type { SecretCertSource, SecretCertSourceOptions, TlsMaterial } from './certs.js';
import { tlsHandshake } from '../../test/util/certs.js';

const NS = 'kdns';
const SECRET = 'kdns-webhook-tls';
const CONFIG = 'kdns-webhook';
const SECRETS = '/api/v1/secrets';
const MWCS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const SECRET_PATH = `/api/v1/namespaces/${NS}/secrets`;
const CONFIG_PATH = `${MWCS}/${CONFIG}`;
const DNS_NAMES = ['kdns-webhook', 'kdns-webhook.kdns', 'kdns-webhook.kdns.svc', 'kdns-webhook.kdns.svc.cluster.local'];
/** 2030-01-01T00:00:00Z: CA names below are kdns-webhook-ca@<seconds since the epoch>. */
const T0 = Date.UTC(2030, 0, 1);
const T0_SECONDS = T0 / 1000;
const ca = (secondsAfterT0: number): string => `kdns-webhook-ca@${T0_SECONDS + secondsAfterT0}`;

/** The manifest as installed: two webhooks, caBundle empty until kdns sets it. */
function webhookConfiguration(caBundle = ''): ApiObject {
  const hook = (name: string, path: string): Record<string, unknown> => ({
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    clientConfig: { service: { namespace: NS, name: 'kdns-webhook', path, port: 443 }, caBundle },
  });
  return { metadata: { name: CONFIG }, webhooks: [hook('pods.webhook.kdns.io', '/mutate'), hook('namespaced.webhook.kdns.io', '/mutate/namespace/Custom')] };
}

interface Harness {
  api: FakeApiServer;
  kubeConfig: KubeConfig;
  logs: string[];
  start(o?: Partial<SecretCertSourceOptions>): Promise<SecretCertSource>;
  writes(): string[];
}

async function withApi(prepare: (api: FakeApiServer) => void, body: (h: Harness) => Promise<void>): Promise<void> {
  const api = new FakeApiServer(WEBHOOK_CERT_RESOURCES);
  prepare(api);
  const url = await api.listen();
  const kubeConfig = await loadKubeConfig({ kubeconfig: { path: writeKubeconfig(url) }, resyncMs: 0 });
  const sources: SecretCertSource[] = [];
  const logs: string[] = [];
  const h: Harness = {
    api,
    kubeConfig,
    logs,
    start: async (o = {}) => {
      const s = await startSecretCertSource({ kubeConfig, namespace: NS, secretName: SECRET, webhookConfigurationName: CONFIG, dnsNames: DNS_NAMES, checkIntervalMs: 3600_000, log: (l) => logs.push(l), ...o });
      sources.push(s);
      return s;
    },
    writes: () => api.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`),
  };
  try {
    await body(h);
  } finally {
    for (const s of sources) await s.close();
    await api.close();
  }
}

const withConfig = (api: FakeApiServer): void => api.seed(MWCS, [webhookConfiguration()]);

function secretData(api: FakeApiServer): Record<string, string> {
  const data = (api.get(SECRETS, NS, SECRET)?.['data'] ?? {}) as Record<string, string>;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** Per webhook, the CNs of the CAs its caBundle holds. */
function bundles(api: FakeApiServer): string[][] {
  const hooks = (api.get(MWCS, undefined, CONFIG)?.['webhooks'] ?? []) as Array<{ clientConfig: { caBundle?: string } }>;
  return hooks.map((w) => {
    const text = Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString('utf8');
    return text === '' ? [] : parseCertificates(text).map(commonNameOf).sort();
  });
}

function bundlePems(api: FakeApiServer): string[] {
  const hooks = (api.get(MWCS, undefined, CONFIG)?.['webhooks'] ?? []) as Array<{ clientConfig: { caBundle?: string } }>;
  return hooks.map((w) => Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString('utf8'));
}

/** Whether `certPem` was signed by a CA in `bundlePem` and is valid at `now`. */
function trustedAt(certPem: string, bundlePem: string, now: number): boolean {
  if (bundlePem === '') return false;
  const leaf = new X509Certificate(certPem);
  const valid = new Date(leaf.validFrom).getTime() <= now && now < new Date(leaf.validTo).getTime();
  return valid && parseCertificates(bundlePem).some((c) => leaf.checkIssued(c) && leaf.verify(c.publicKey));
}

const issuerOf = (m: TlsMaterial): string => new X509Certificate(m.certPem).issuer.replace(/^CN=/, '');

const handshake = tlsHandshake;

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A Secret as a previous kdns left it, made at `now` (the real clock unless given). */
async function validSecret(now = Date.now()): Promise<ApiObject> {
  const s = await freshState(DNS_NAMES, now, { caValidityMs: 10 * 3600_000, certValidityMs: 3600_000, renewAfterFraction: 2 / 3, bundlePropagationMs: 0 });
  return {
    metadata: { name: SECRET, namespace: NS },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(s.serving.certPem), 'tls.key': b64(s.serving.keyPem), 'ca.crt': b64(s.ca.certPem), 'ca.key': b64(s.ca.keyPem) },
  };
}

test('startup: the Secret as found decides what is written, and the result serves over TLS', async () => {
  const valid = await validSecret();
  const validData = valid['data'] as Record<string, string>;
  const otherCaKey = b64((await issueCa('someone-else', validityFrom(Date.now(), 3600_000))).keyPem);
  const withData = (data: Record<string, string>): ApiObject => ({ ...valid, data });
  const cases: Array<{ name: string; secret?: ApiObject; writes: string[]; caKept: boolean; servingKept: boolean; log: string }> = [
    { name: 'no Secret: created', writes: [`POST ${SECRET_PATH}`, `PATCH ${CONFIG_PATH}`], caKept: false, servingKept: false, log: `created Secret ${NS}/${SECRET} with CA kdns-webhook-ca@` },
    { name: 'a valid Secret: adopted as it is', secret: valid, writes: [`PATCH ${CONFIG_PATH}`], caKept: true, servingKept: true, log: 'caBundle of pods.webhook.kdns.io, namespaced.webhook.kdns.io' },
    {
      name: 'garbage in every field: everything anew',
      secret: withData({ 'tls.crt': b64('garbage'), 'tls.key': b64('garbage'), 'ca.crt': b64('-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n'), 'ca.key': b64('garbage') }),
      writes: [`PUT ${SECRET_PATH}/${SECRET}`, `PATCH ${CONFIG_PATH}`],
      caKept: false,
      servingKept: false,
      log: `Secret ${NS}/${SECRET}: ca.crt: certificate 1:`,
    },
    { name: 'no data at all', secret: withData({}), writes: [`PUT ${SECRET_PATH}/${SECRET}`, `PATCH ${CONFIG_PATH}`], caKept: false, servingKept: false, log: `Secret ${NS}/${SECRET}: ca.crt: missing; making a new CA` },
    { name: 'a CA key of another CA', secret: withData({ ...validData, 'ca.key': otherCaKey }), writes: [`PUT ${SECRET_PATH}/${SECRET}`, `PATCH ${CONFIG_PATH}`], caKept: false, servingKept: false, log: 'ca.key: does not match ca.crt' },
    { name: 'garbage serving certificate: reissued by the same CA', secret: withData({ ...validData, 'tls.crt': b64('garbage') }), writes: [`PUT ${SECRET_PATH}/${SECRET}`, `PATCH ${CONFIG_PATH}`], caKept: true, servingKept: false, log: '(tls.crt: no PEM CERTIFICATE block)' },
    { name: 'serving key of another certificate', secret: withData({ ...validData, 'tls.key': validData['ca.key']! }), writes: [`PUT ${SECRET_PATH}/${SECRET}`, `PATCH ${CONFIG_PATH}`], caKept: true, servingKept: false, log: '(tls.key: does not match tls.crt)' },
  ];
  for (const c of cases) {
    await withApi(
      (api) => {
        withConfig(api);
        if (c.secret) api.seed(SECRETS, [c.secret]);
      },
      async (h) => {
        const source = await h.start();
        const m = source.current();
        const data = secretData(h.api);
        assert.deepEqual(h.writes(), c.writes, c.name);
        assert.equal(data['ca.crt'] === Buffer.from((c.secret?.['data'] as Record<string, string> | undefined)?.['ca.crt'] ?? '', 'base64').toString(), c.caKept, `${c.name}: CA kept`);
        assert.equal(m.certPem === Buffer.from((c.secret?.['data'] as Record<string, string> | undefined)?.['tls.crt'] ?? '', 'base64').toString(), c.servingKept, `${c.name}: serving certificate kept`);
        assert.equal(m.certPem, data['tls.crt'], `${c.name}: serves what the Secret holds`);
        assert.equal(h.api.get(SECRETS, NS, SECRET)?.['type'], 'kubernetes.io/tls', c.name);
        assert.ok(h.logs.some((l) => l.includes(c.log)), `${c.name}: no log line with "${c.log}" in:\n${h.logs.join('\n')}`);
        assert.deepEqual(bundlePems(h.api), [m.caBundlePem, m.caBundlePem], `${c.name}: every webhook trusts the bundle`);
        for (const name of ['kdns-webhook.kdns.svc', 'kdns-webhook.kdns.svc.cluster.local']) assert.equal(await handshake(m, bundlePems(h.api)[0]!, name), 'ok', `${c.name}: TLS to ${name}`);
      },
    );
  }
});

test('bad options are refused, naming the option', async () => {
  await withApi(withConfig, async (h) => {
    const cases: Array<{ options: Partial<SecretCertSourceOptions>; error: string }> = [
      { options: { dnsNames: [] }, error: 'dnsNames: at least one name is needed' },
      { options: { secretName: '' }, error: 'secretName: empty' },
      { options: { renewAfterFraction: 1 }, error: 'renewAfterFraction: must be between 0 and 1 (got 1)' },
      { options: { certValidityMs: 0 }, error: 'certValidityMs: must be a positive number of milliseconds (got 0)' },
      { options: { checkIntervalMs: Number.NaN }, error: 'checkIntervalMs: must be a positive number of milliseconds (got NaN)' },
      { options: { bundlePropagationMs: -1 }, error: 'bundlePropagationMs: must be 0 or more (got -1)' },
    ];
    for (const c of cases) await assert.rejects(h.start(c.options), { message: c.error });
    assert.deepEqual(h.api.requests, [], 'nothing was asked of the API');
  });
});

test('two replicas starting together end with one CA and one serving certificate', async () => {
  await withApi(withConfig, async (h) => {
    // Hold each create until both replicas have sent theirs, so both really race to create.
    let arrived = 0;
    let release!: () => void;
    const bothSent = new Promise<void>((r) => (release = r));
    h.api.admission = async (call) => {
      if (++arrived === 2) release();
      await bothSent;
      return call.object;
    };
    const [a, b] = await Promise.all([h.start(), h.start()]);
    const creates = h.api.requests.filter((r) => r.method === 'POST').length;
    assert.equal(creates, 2);
    assert.equal(a.current().certPem, b.current().certPem);
    assert.equal(a.current().caBundlePem, b.current().caBundlePem);
    assert.equal(a.current().certPem, secretData(h.api)['tls.crt']);
    assert.equal(h.logs.filter((l) => l.includes('created Secret')).length, 1);
    assert.deepEqual(bundlePems(h.api), [a.current().caBundlePem, a.current().caBundlePem]);
  });
});

test('a write refused because someone else wrote first is redone from fresh reads', async () => {
  const SECRET_ONE = `${SECRET_PATH}/${SECRET}`;
  const cases: Array<{ name: string; failure: { pathSuffix: string; method: 'PUT' | 'PATCH'; code: number; reason: string }; blank: boolean; requests: string[] }> = [
    {
      name: 'Secret update: 409 Conflict',
      failure: { pathSuffix: `/secrets/${SECRET}`, method: 'PUT', code: 409, reason: 'Conflict' },
      blank: false,
      requests: [`GET ${CONFIG_PATH}`, `GET ${SECRET_ONE}`, `PUT ${SECRET_ONE}`, `GET ${CONFIG_PATH}`, `GET ${SECRET_ONE}`, `PUT ${SECRET_ONE}`],
    },
    {
      name: 'caBundle patch: 409 Conflict',
      failure: { pathSuffix: `/mutatingwebhookconfigurations/${CONFIG}`, method: 'PATCH', code: 409, reason: 'Conflict' },
      blank: true,
      requests: [`GET ${CONFIG_PATH}`, `GET ${SECRET_ONE}`, `PATCH ${CONFIG_PATH}`, `GET ${CONFIG_PATH}`, `GET ${SECRET_ONE}`, `PATCH ${CONFIG_PATH}`],
    },
    {
      name: 'caBundle patch: its resourceVersion test failed (422)',
      failure: { pathSuffix: `/mutatingwebhookconfigurations/${CONFIG}`, method: 'PATCH', code: 422, reason: 'Invalid' },
      blank: true,
      requests: [`GET ${CONFIG_PATH}`, `GET ${SECRET_ONE}`, `PATCH ${CONFIG_PATH}`, `GET ${CONFIG_PATH}`, `GET ${SECRET_ONE}`, `PATCH ${CONFIG_PATH}`],
    },
  ];
  for (const c of cases) {
    await withApi(withConfig, async (h) => {
      let now = T0;
      const source = await h.start({ now: () => now, certValidityMs: 30_000 });
      if (c.blank) h.api.edit(MWCS, undefined, CONFIG, (o) => Object.assign(o, webhookConfiguration()), 'gitops');
      else now = T0 + 19_000; // the serving certificate is due
      const from = h.api.requests.length;
      h.api.requestFailures.push({ ...c.failure, message: 'the object has been modified', times: 1 });
      await source.checkNow();
      assert.deepEqual(h.api.requests.slice(from).map((r) => `${r.method} ${r.path}`), c.requests, c.name);
      assert.equal(source.current().certPem, secretData(h.api)['tls.crt'], c.name);
      assert.deepEqual(bundlePems(h.api), [source.current().caBundlePem, source.current().caBundlePem], c.name);
      assert.equal(new X509Certificate(source.current().certPem).validTo, c.blank ? 'Jan  1 00:00:30 2030 GMT' : 'Jan  1 00:00:49 2030 GMT', c.name);
    });
  }
});

test('caBundlePatch: only webhooks whose bundle holds other CAs, guarded by the resourceVersion read', async () => {
  const a = await issueCa(ca(0), validityFrom(T0, 3600_000));
  const b = await issueCa(ca(95), validityFrom(T0, 3600_000));
  const bundle = a.certPem + b.certPem;
  const config = (bundles: string[]): V1MutatingWebhookConfiguration => ({
    metadata: { name: CONFIG, resourceVersion: '1234' },
    webhooks: bundles.map((caBundle, i) => ({ name: `w${i}.kdns.io`, admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { caBundle } })),
  });
  const cases: Array<{ name: string; bundles: string[]; ops: Array<{ op: string; path: string; value: string }> }> = [
    { name: 'the same CAs in another order: nothing to do', bundles: [b64(b.certPem + a.certPem)], ops: [] },
    { name: 'no webhooks: nothing to do', bundles: [], ops: [] },
    {
      name: 'empty, equal, one CA short',
      bundles: ['', b64(bundle), b64(a.certPem)],
      ops: [
        { op: 'test', path: '/metadata/resourceVersion', value: '1234' },
        { op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: b64(bundle) },
        { op: 'add', path: '/webhooks/2/clientConfig/caBundle', value: b64(bundle) },
      ],
    },
    { name: 'garbage', bundles: [b64('garbage')], ops: [{ op: 'test', path: '/metadata/resourceVersion', value: '1234' }, { op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: b64(bundle) }] },
  ];
  for (const c of cases) assert.deepEqual(caBundlePatch(config(c.bundles), bundle), c.ops, c.name);
});

test('the serving certificate is renewed after 2/3 of its life, by the same CA, without touching the bundle', async () => {
  await withApi(withConfig, async (h) => {
    let now = T0;
    const source = await h.start({ now: () => now, certValidityMs: 30_000 });
    const changes: TlsMaterial[] = [];
    source.onChange((m) => changes.push(m));
    const first = source.current();
    const configWrites = (): number => h.writes().filter((w) => w.startsWith('PATCH')).length;
    const cases: Array<{ at: number; renewed: boolean; validTo: string }> = [
      // Issued at T0 for 30 s, backdated 3 s: [T0-3, T0+30], renewed from T0+19 (2/3 of 33 s).
      { at: 18, renewed: false, validTo: 'Jan  1 00:00:30 2030 GMT' },
      { at: 19, renewed: true, validTo: 'Jan  1 00:00:49 2030 GMT' },
      { at: 37, renewed: false, validTo: 'Jan  1 00:00:49 2030 GMT' },
      { at: 38, renewed: true, validTo: 'Jan  1 00:01:08 2030 GMT' },
    ];
    for (const c of cases) {
      const before = source.current().certPem;
      now = T0 + c.at * 1000;
      await source.checkNow();
      const m = source.current();
      assert.equal(m.certPem !== before, c.renewed, `T0+${c.at}: renewed`);
      assert.equal(new X509Certificate(m.certPem).validTo, c.validTo, `T0+${c.at}`);
      assert.equal(m.notAfter.toISOString(), new Date(new X509Certificate(m.certPem).validTo).toISOString());
      assert.equal(new X509Certificate(m.certPem).issuer, `CN=${ca(0)}`, `T0+${c.at}: same CA`);
      assert.equal(m.caBundlePem, first.caBundlePem, `T0+${c.at}: same bundle`);
    }
    assert.equal(changes.length, 2);
    assert.equal(configWrites(), 1); // the first caBundle, at startup
  });
});

test('CA rotation: the bundle gains the new CA before any replica serves a certificate it signed, and loses the old one only after', async () => {
  // Replica r1 checks every second, r2 every third second (it lags). The CA lives 150 s
  // (backdated 15 s: renewal due at T0+95), serving certificates 30 s, and the configuration must
  // have trusted a new CA for 5 s before it signs. After every check of either replica, both
  // serve a certificate valid now and signed by a CA in every webhook's caBundle.
  const cases: Array<{ name: string; blankAt?: number; snapshots: string[] }> = [
    {
      name: 'undisturbed',
      snapshots: [
        `0: r1=${ca(0)} r2=${ca(0)} bundle=${ca(0)}`,
        `95: r1=${ca(0)} r2=${ca(0)} bundle=${ca(0)},${ca(95)}`, // 1. prepare: the new CA is only trusted
        `100: r1=${ca(95)} r2=${ca(0)} bundle=${ca(0)},${ca(95)}`, // 2. switch, 5 s after the bundle was patched
        `102: r1=${ca(95)} r2=${ca(95)} bundle=${ca(0)},${ca(95)}`, // r2 catches up from the Secret
        `125: r1=${ca(95)} r2=${ca(95)} bundle=${ca(95)}`, // 3. retire, as the last certificate signed by the old CA expires
      ],
    },
    {
      name: 'the manifest re-applied with an empty caBundle during the rotation postpones the switch',
      blankAt: 97,
      snapshots: [
        `0: r1=${ca(0)} r2=${ca(0)} bundle=${ca(0)}`,
        `95: r1=${ca(0)} r2=${ca(0)} bundle=${ca(0)},${ca(95)}`,
        `102: r1=${ca(95)} r2=${ca(95)} bundle=${ca(0)},${ca(95)}`, // 5 s after r1 restored it at 97
        `125: r1=${ca(95)} r2=${ca(95)} bundle=${ca(95)}`,
      ],
    },
  ];
  for (const c of cases) {
    await withApi(withConfig, async (h) => {
      let now = T0;
      const timing = { now: () => now, caValidityMs: 150_000, certValidityMs: 30_000, bundlePropagationMs: 5_000 };
      const r1 = await h.start(timing);
      const r2 = await h.start(timing);
      // The moment a replica takes a new certificate, the configuration must already trust it.
      const untrustedOnChange: string[] = [];
      for (const [name, r] of [['r1', r1], ['r2', r2]] as const) {
        r.onChange((m) => {
          if (!bundlePems(h.api).every((b) => trustedAt(m.certPem, b, now))) untrustedOnChange.push(`T0+${(now - T0) / 1000}: ${name} took a certificate by ${issuerOf(m)}, bundle ${bundles(h.api)[0]}`);
        });
      }
      const snapshots: string[] = [];
      let last = '';
      for (let t = 0; t <= 130; t++) {
        now = T0 + t * 1000;
        if (t === c.blankAt) h.api.edit(MWCS, undefined, CONFIG, (o) => Object.assign(o, webhookConfiguration()), 'gitops');
        for (const [replica, every] of [[r1, 1], [r2, 3]] as const) {
          if (t % every !== 0) continue;
          await replica.checkNow();
          for (const [name, r] of [['r1', r1], ['r2', r2]] as const) {
            for (const [i, bundle] of bundlePems(h.api).entries()) assert.ok(trustedAt(r.current().certPem, bundle, now), `${c.name}: T0+${t}: ${name}'s certificate (by ${issuerOf(r.current())}) is not trusted by webhook ${i} (${bundles(h.api)[i]})`);
          }
        }
        const snapshot = `r1=${issuerOf(r1.current())} r2=${issuerOf(r2.current())} bundle=${bundles(h.api)[0]!.join(',')}`;
        assert.deepEqual(bundles(h.api)[1], bundles(h.api)[0], `${c.name}: T0+${t}: both webhooks`);
        if (snapshot !== last) snapshots.push(`${t}: ${snapshot}`);
        last = snapshot;
      }
      assert.deepEqual(untrustedOnChange, [], c.name);
      assert.deepEqual(snapshots, c.snapshots, c.name);
    });
  }
});

test('a caBundle blanked by a re-applied manifest is restored within one check interval', async () => {
  await withApi(withConfig, async (h) => {
    const intervalMs = 200;
    const source = await h.start({ checkIntervalMs: intervalMs });
    const want = source.current().caBundlePem;
    for (const round of [1, 2]) {
      h.api.edit(MWCS, undefined, CONFIG, (o) => Object.assign(o, webhookConfiguration()), 'gitops');
      const blankedAt = Date.now();
      assert.deepEqual(bundlePems(h.api), ['', ''], `round ${round}: blanked`);
      await waitFor(() => bundlePems(h.api).every((b) => b === want), 5000, 10);
      // One interval, plus the time a check takes on a loaded machine (the default interval is 10 s).
      const tookMs = Date.now() - blankedAt;
      assert.ok(tookMs <= intervalMs + 1000, `round ${round}: restored after ${tookMs} ms`);
    }
  });
});

test('no configuration yet: the source serves, and sets the caBundle once the configuration appears', async () => {
  await withApi(
    () => {},
    async (h) => {
      const source = await h.start({ checkIntervalMs: 100 });
      assert.match(source.current().certPem, /BEGIN CERTIFICATE/);
      assert.ok(h.logs.includes(`webhook certificates: MutatingWebhookConfiguration ${CONFIG} not found; its caBundle is set once it exists`), h.logs.join('\n'));
      await sleep(350);
      assert.equal(h.logs.filter((l) => l.includes('not found')).length, 1, 'logged once, not every check');
      h.api.add(MWCS, webhookConfiguration());
      await waitFor(() => bundlePems(h.api).every((b) => b === source.current().caBundlePem), 3000, 10);
    },
  );
});

test('API errors: startup retries with backoff until the Secret can be read, logging each distinct error once', async () => {
  await withApi(withConfig, async (h) => {
    h.api.requestFailures.push({ pathSuffix: `/secrets/${SECRET}`, method: 'GET', code: 500, reason: 'InternalError', message: 'etcdserver: request timed out', times: 3 });
    const started = Date.now();
    const source = await h.start({ checkIntervalMs: 800 });
    const tookMs = Date.now() - started;
    assert.match(source.current().certPem, /BEGIN CERTIFICATE/);
    assert.equal(h.api.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/secrets/${SECRET}`)).length, 4);
    assert.deepEqual(
      h.logs.filter((l) => l.includes('etcdserver')),
      [`webhook certificates: read Secret ${NS}/${SECRET}: HTTP 500: etcdserver: request timed out`],
    );
    // Waits of an eighth of the interval, doubling: 100, 200 and 400 ms between the four tries.
    assert.ok(tookMs >= 700 && tookMs < 4000, `took ${tookMs} ms`);
  });
});

test('real time: while serving certificates and CAs rotate, a client trusting only the configuration completes every handshake with both replicas', async () => {
  await withApi(withConfig, async (h) => {
    // Seconds-long lifetimes renewed at a quarter of their life: a CA lives 16 s (a successor
    // every 4 s, signing 0.5 s after it is in the bundle), a serving certificate 8 s (renewed
    // every 2 s, so the 6 s left cover a renewal a loaded machine delays by seconds; renewing 3 s
    // certificates at 2/3 left 1 s, and a busy CI machine let one expire).
    const timing = { caValidityMs: 16_000, certValidityMs: 8_000, renewAfterFraction: 1 / 4, bundlePropagationMs: 500, checkIntervalMs: 200 };
    const replicas = await Promise.all([h.start(timing), h.start(timing)]);
    const servers = replicas.map((r) => {
      const server = createTlsServer({ cert: r.current().certPem, key: r.current().keyPem }, (socket) => socket.end());
      r.onChange((m) => server.setSecureContext({ cert: m.certPem, key: m.keyPem }));
      return server;
    });
    try {
      const ports = await Promise.all(servers.map((s) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)))));
      const failures: string[] = [];
      const issuers = new Set<string>();
      let handshakes = 0;
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        const bundle = bundlePems(h.api)[0]!;
        for (const port of ports) {
          const got = await new Promise<string>((resolve) => {
            const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'kdns-webhook.kdns.svc', ca: bundle }, () => {
              resolve(`ok ${socket.getPeerCertificate().issuer.CN}`);
              socket.end();
            });
            socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
          });
          handshakes++;
          if (got.startsWith('ok ')) issuers.add(got.slice(3));
          else failures.push(`${new Date().toISOString()} port ${port}: ${got}`);
        }
        await sleep(20);
      }
      assert.deepEqual(failures, [], `${handshakes} handshakes, certificates by ${[...issuers].join(', ')}; log:\n${h.logs.join('\n')}`);
      // Enough handshakes to have crossed the rotations on both replicas (how many a machine
      // manages in 10 s is not what is tested).
      assert.ok(handshakes > 20, `${handshakes} handshakes`);
      assert.ok(issuers.size >= 2, `certificates by ${[...issuers].join(', ')}: no CA rotation seen`);
    } finally {
      for (const s of servers) await new Promise((r) => s.close(r));
    }
  });
});
