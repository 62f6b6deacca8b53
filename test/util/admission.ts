// Test helper: the admission half of a stock kube-apiserver, in front of the fake API server's
// Pod creates. For each create it does what kube-apiserver does, in its order:
//   1. decode: unknown fields (spec.dnsParams) are dropped, or the request refused under
//      fieldValidation=Strict (kubectl's default);
//   2. mutating admission: the MutatingWebhookConfiguration as stored now (so a caBundle the
//      webhook rewrote is used from the next call on), webhooks chosen by rules, selectors and
//      matchConditions (webhookmatch.ts, real CEL), each called over TLS trusting only its
//      caBundle, with AdmissionReview v1; the response checked (uid echoed, patchType JSONPatch,
//      base64 patch) and the patch applied with rfc6902; a denial refuses the request; a failure
//      under failurePolicy Ignore is skipped; reinvocation once for IfNeeded webhooks when a later
//      webhook changed the object;
//   3. validation as a stock API server: the four dnsPolicy values only, and dnsConfig's rules.
// It records every call, so tests can count admissions, failures and what each webhook saw.

import { randomUUID } from 'node:crypto';
import { Agent, request as httpsRequest } from 'node:https';
import { applyPatch } from 'rfc6902';
import type { Operation } from 'rfc6902';
import { ApiFailure } from './fakeapi.js';
import type { AdmissionCall, ApiObject, FakeApiServer } from './fakeapi.js';
import { formatFieldError } from '../../src/lib/cluster/field.js';
import { validateStockPod } from './stockpod.js';
import { webhooksToCall } from './webhookmatch.js';
import type { MutatingWebhook } from './webhookmatch.js';

export const MWC_PATH = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

/** The PodSpec fields of core/v1: anything else is an unknown field to the decoder. */
const POD_SPEC_FIELDS = new Set([
  'activeDeadlineSeconds', 'affinity', 'automountServiceAccountToken', 'containers', 'dnsConfig', 'dnsPolicy', 'enableServiceLinks',
  'ephemeralContainers', 'hostAliases', 'hostIPC', 'hostNetwork', 'hostPID', 'hostUsers', 'hostname', 'hostnameOverride', 'imagePullSecrets',
  'initContainers', 'nodeName', 'nodeSelector', 'os', 'overhead', 'preemptionPolicy', 'priority', 'priorityClassName', 'readinessGates',
  'resourceClaims', 'resources', 'restartPolicy', 'runtimeClassName', 'schedulerName', 'schedulingGates', 'securityContext', 'serviceAccount',
  'serviceAccountName', 'setHostnameAsFQDN', 'shareProcessNamespace', 'subdomain', 'terminationGracePeriodSeconds', 'tolerations',
  'topologySpreadConstraints', 'volumes',
]);

export interface WebhookCall {
  webhook: string;
  uid: string;
  outcome: 'patched' | 'allowed' | 'denied' | 'failed-ignored' | 'failed';
  error?: string;
  ms: number;
}

export interface StandInOptions {
  /** The MutatingWebhookConfiguration names to consult (kube-apiserver consults all; the fake has no list-by-kind here). */
  configurations: string[];
  /** Where a webhook's Service is reachable: the test's loopback port for `<namespace>/<name>:<port>`. */
  resolveService(service: { namespace: string; name: string; port: number }): { host: string; port: number };
  /** What kube-apiserver would get from its namespace informer. */
  namespaceLabels(namespace: string): Record<string, string>;
  /**
   * Reuse connections as kube-apiserver's webhook client does (keep-alive). Off by default: each
   * call then makes a new TLS handshake, so every call checks the certificate served at that moment.
   */
  keepAlive?: boolean;
}

export interface StandIn {
  calls: WebhookCall[];
  /** Warnings the API server would return to the client. */
  warnings: string[];
  uninstall(): void;
}

/** Puts the admission chain in front of `fake`'s Pod creates. */
export function installStandInAdmission(fake: FakeApiServer, opts: StandInOptions): StandIn {
  const agent = opts.keepAlive === true ? new Agent({ keepAlive: true }) : undefined;
  const standIn: StandIn = {
    calls: [],
    warnings: [],
    uninstall: () => {
      fake.admission = undefined;
      agent?.destroy();
    },
  };
  const chain: Chain = { fake, opts, standIn, agent };
  fake.admission = async (call) => (call.resource.kind === 'Pod' ? admitPod(chain, call) : call.object);
  return standIn;
}

/** One installed chain: the API it fronts, its options and records, its connections. */
interface Chain {
  fake: FakeApiServer;
  opts: StandInOptions;
  standIn: StandIn;
  agent: Agent | undefined;
}

async function admitPod(chain: Chain, call: AdmissionCall): Promise<ApiObject> {
  const { fake, opts, standIn } = chain;
  const namespace = call.namespace ?? call.object.metadata.namespace ?? 'default';
  let object = decodePod(call.object, call.params['fieldValidation'] ?? 'Warn', standIn);
  const webhooks = opts.configurations.flatMap((name) => ((fake.get(MWC_PATH, undefined, name)?.['webhooks'] as MutatingWebhook[] | undefined) ?? []));
  const nsObject = { metadata: { name: namespace, labels: { 'kubernetes.io/metadata.name': namespace, ...opts.namespaceLabels(namespace) } } };
  const attrs = () => ({ operation: 'CREATE' as const, resource: { group: '', version: 'v1', resource: 'pods' }, object, namespace: nsObject });
  const changedAfter: Array<{ webhook: MutatingWebhook; changed: boolean }> = [];
  for (const webhook of webhooksToCall({ webhooks }, attrs())) {
    const before = JSON.stringify(object);
    object = await callWebhook(chain, webhook, object, namespace);
    const changed = JSON.stringify(object) !== before;
    for (const earlier of changedAfter) earlier.changed ||= changed;
    changedAfter.push({ webhook, changed: false });
  }
  // Reinvocation: a webhook that asked for it runs once more if a later one changed the object.
  for (const { webhook, changed } of changedAfter) {
    if (!changed || webhook.reinvocationPolicy !== 'IfNeeded') continue;
    if (webhooksToCall({ webhooks: [webhook] }, attrs()).length === 0) continue;
    object = await callWebhook(chain, webhook, object, namespace);
  }
  const errors = validateStockPod(object);
  if (errors.length > 0) {
    const name = object.metadata.name;
    throw new ApiFailure(422, 'Invalid', `Pod "${name}" is invalid: ${errors.map(formatFieldError).join(', ')}`);
  }
  return object;
}

/** The decoder's view: unknown spec fields dropped (Ignore/Warn, with a warning) or refused (Strict). */
function decodePod(pod: ApiObject, fieldValidation: string, standIn: StandIn): ApiObject {
  const spec = (pod['spec'] ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(spec).filter((k) => !POD_SPEC_FIELDS.has(k));
  if (unknown.length === 0) return pod;
  if (fieldValidation === 'Strict') {
    throw new ApiFailure(400, 'BadRequest', `Pod in version "v1" cannot be handled as a Pod: strict decoding error: ${unknown.map((k) => `unknown field "spec.${k}"`).join(', ')}`);
  }
  if (fieldValidation === 'Warn') standIn.warnings.push(...unknown.map((k) => `unknown field "spec.${k}"`));
  const kept = Object.fromEntries(Object.entries(spec).filter(([k]) => POD_SPEC_FIELDS.has(k)));
  return { ...pod, spec: kept };
}

async function callWebhook(chain: Chain, webhook: MutatingWebhook, object: ApiObject, namespace: string): Promise<ApiObject> {
  const { standIn } = chain;
  const uid = randomUUID();
  const started = performance.now();
  const record = (outcome: WebhookCall['outcome'], error?: string): void => {
    standIn.calls.push({ webhook: webhook.name, uid, outcome, ...(error !== undefined ? { error } : {}), ms: performance.now() - started });
  };
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: object.metadata.name,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller', uid: 'c0ffee', groups: ['system:serviceaccounts', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
  let response: Record<string, unknown>;
  try {
    response = await post(chain, webhook, review);
    checkResponse(response, uid);
  } catch (e) {
    const message = `failed calling webhook "${webhook.name}": ${(e as Error).message}`;
    if ((webhook.failurePolicy ?? 'Fail') === 'Ignore') {
      record('failed-ignored', message);
      return object;
    }
    record('failed', message);
    throw new ApiFailure(500, 'InternalError', `Internal error occurred: ${message}`);
  }
  const r = response['response'] as { allowed: boolean; patch?: string; status?: { code?: number; message?: string }; warnings?: string[] };
  standIn.warnings.push(...(r.warnings ?? []));
  if (!r.allowed) {
    record('denied');
    throw new ApiFailure(r.status?.code ?? 403, 'Invalid', `admission webhook "${webhook.name}" denied the request: ${r.status?.message ?? ''}`);
  }
  if (r.patch === undefined) {
    record('allowed');
    return object;
  }
  const ops = JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8')) as Operation[];
  const patched = structuredClone(object);
  const results = applyPatch(patched, ops);
  const failed = results.find((x) => x !== null);
  if (failed) {
    record('failed', `patch did not apply: ${failed.message}`);
    throw new ApiFailure(500, 'InternalError', `Internal error occurred: JSON patch of webhook "${webhook.name}" did not apply: ${failed.message}`);
  }
  record('patched');
  return patched;
}

/** As kube-apiserver checks a webhook's answer before using it. */
function checkResponse(body: Record<string, unknown>, uid: string): void {
  if (body['apiVersion'] !== 'admission.k8s.io/v1' || body['kind'] !== 'AdmissionReview') throw new Error(`expected response.apiVersion admission.k8s.io/v1 kind AdmissionReview, got ${String(body['apiVersion'])} ${String(body['kind'])}`);
  const r = body['response'] as Record<string, unknown> | undefined;
  if (r === undefined || r === null) throw new Error('webhook response was absent');
  if (r['uid'] !== uid) throw new Error(`expected response.uid="${uid}", got "${String(r['uid'])}"`);
  if (typeof r['allowed'] !== 'boolean') throw new Error('response.allowed must be a boolean');
  if (r['patch'] !== undefined) {
    if (r['patchType'] !== 'JSONPatch') throw new Error(`unsupported patch type "${String(r['patchType'])}"`);
    const decoded = Buffer.from(String(r['patch']), 'base64').toString('utf8');
    if (!Array.isArray(JSON.parse(decoded))) throw new Error('patch is not a JSON array');
  }
}

function post(chain: Chain, webhook: MutatingWebhook, review: unknown): Promise<Record<string, unknown>> {
  const { opts } = chain;
  const svc = webhook.clientConfig.service;
  if (svc === undefined) throw new Error('only service webhooks are supported by the stand-in');
  const target = opts.resolveService({ namespace: svc.namespace, name: svc.name, port: svc.port ?? 443 });
  const ca = webhook.clientConfig.caBundle !== undefined && webhook.clientConfig.caBundle !== '' ? Buffer.from(webhook.clientConfig.caBundle, 'base64').toString('utf8') : undefined;
  const body = JSON.stringify(review);
  const timeoutMs = (webhook.timeoutSeconds ?? 10) * 1000;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: target.host,
        port: target.port,
        method: 'POST',
        path: svc.path ?? '/',
        // kube-apiserver verifies the certificate against the Service's DNS name and the caBundle only.
        servername: `${svc.name}.${svc.namespace}.svc`,
        ...(ca !== undefined ? { ca } : {}),
        rejectUnauthorized: true,
        checkServerIdentity: (_host, cert) => (cert.subjectaltname?.split(', ').includes(`DNS:${svc.name}.${svc.namespace}.svc`) ? undefined : new Error(`x509: certificate is not valid for ${svc.name}.${svc.namespace}.svc`)),
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
        agent: chain.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) return reject(new Error(`expected webhook response status 200, got ${res.statusCode ?? 0}: ${text.slice(0, 200)}`));
          try {
            resolve(JSON.parse(text) as Record<string, unknown>);
          } catch (e) {
            reject(new Error(`response is not JSON: ${(e as Error).message}`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`context deadline exceeded (${timeoutMs} ms)`)));
    req.on('error', reject);
    req.end(body);
  });
}
