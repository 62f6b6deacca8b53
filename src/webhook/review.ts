// AdmissionReview (admission.k8s.io/v1) in and out: what kube-apiserver sends a mutating webhook
// and what it accepts back. Pure: the HTTP layer hands over parsed JSON and sends what comes
// back. A request kdns cannot read is the caller's HTTP 400; anything readable gets an answer.

import { decideAdmission } from '../poddns/admission.js';
import type { AdmissionDecision, AdmissionSettings, AdmittedPod } from '../poddns/admission.js';

export const REVIEW_API_VERSION = 'admission.k8s.io/v1';

/** The parts of `request` the webhook reads; kube-apiserver sends more (userInfo, options…). */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource?: { group: string; version: string; resource: string };
  subResource?: string;
  namespace?: string;
  operation: string;
  object?: unknown;
  dryRun?: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  patchType?: 'JSONPatch';
  /** base64 of the JSON Patch document. */
  patch?: string;
  status?: { code: number; reason?: string; message: string };
  warnings?: string[];
}

export interface AdmissionReviewOut {
  apiVersion: typeof REVIEW_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

export class MalformedReview extends Error {}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The request of an AdmissionReview v1, or MalformedReview saying which field is wrong. */
export function readReview(body: unknown): AdmissionRequest {
  if (!isObject(body)) throw new MalformedReview('body: must be a JSON object (an AdmissionReview)');
  if (body.apiVersion !== REVIEW_API_VERSION) throw new MalformedReview(`apiVersion: must be ${REVIEW_API_VERSION}, got ${JSON.stringify(body.apiVersion)}`);
  if (body.kind !== 'AdmissionReview') throw new MalformedReview(`kind: must be AdmissionReview, got ${JSON.stringify(body.kind)}`);
  const request = body.request;
  if (!isObject(request)) throw new MalformedReview('request: required');
  if (typeof request.uid !== 'string' || request.uid === '') throw new MalformedReview('request.uid: required');
  const kind = request.kind;
  if (!isObject(kind) || typeof kind.kind !== 'string' || typeof kind.version !== 'string' || typeof (kind.group ?? '') !== 'string') throw new MalformedReview('request.kind: must be {group, version, kind}');
  if (typeof request.operation !== 'string') throw new MalformedReview('request.operation: required');
  if (request.namespace !== undefined && typeof request.namespace !== 'string') throw new MalformedReview('request.namespace: must be a string');
  if (request.object !== undefined && request.object !== null && !isObject(request.object)) throw new MalformedReview('request.object: must be an object');
  return {
    uid: request.uid,
    kind: { group: (kind.group as string | undefined) ?? '', version: kind.version, kind: kind.kind },
    operation: request.operation,
    ...(typeof request.namespace === 'string' ? { namespace: request.namespace } : {}),
    ...(typeof request.subResource === 'string' ? { subResource: request.subResource } : {}),
    ...(request.object !== undefined && request.object !== null ? { object: request.object } : {}),
    ...(request.dryRun === true ? { dryRun: true } : {}),
  };
}

export interface ReviewContext {
  settings: AdmissionSettings;
  /** Namespaces whose pods are never changed (kube-system, kdns's own), even if the selectors let them through. */
  protectedNamespaces: ReadonlySet<string>;
  /** The namespace label's policy, from the path the API server called. */
  namespacePolicy?: string;
}

/** A pod's decision, or why the request is not about a pod's creation. */
export function decideRequest(request: AdmissionRequest, ctx: ReviewContext): AdmissionDecision {
  if (request.kind.group !== '' || request.kind.kind !== 'Pod') return { kind: 'skip', reason: `not a Pod (${request.kind.kind})` };
  if (request.operation !== 'CREATE' || (request.subResource ?? '') !== '') return { kind: 'skip', reason: `not a creation (${request.operation})` };
  const namespace = request.namespace ?? '';
  if (ctx.protectedNamespaces.has(namespace)) return { kind: 'skip', reason: `namespace ${namespace} is never changed` };
  const pod = (request.object ?? {}) as AdmittedPod;
  return decideAdmission({ pod, namespace, settings: ctx.settings, ...(ctx.namespacePolicy !== undefined ? { namespacePolicy: ctx.namespacePolicy } : {}) });
}

/** kube-apiserver shows at most this much of a warning well; longer ones are cut with a mark. */
const MAX_WARNING_CHARS = 256;

export function reviewResponse(uid: string, decision: AdmissionDecision): AdmissionReviewOut {
  return { apiVersion: REVIEW_API_VERSION, kind: 'AdmissionReview', response: responseFor(uid, decision) };
}

function responseFor(uid: string, decision: AdmissionDecision): AdmissionResponse {
  switch (decision.kind) {
    case 'skip':
      return { uid, allowed: true };
    case 'deny':
      // 422 Invalid is what the API server itself answers for a field error: kubectl prints it alike.
      return { uid, allowed: false, status: { code: 422, reason: 'Invalid', message: `kdns: ${decision.message}` } };
    case 'mutate':
      return {
        uid,
        allowed: true,
        patchType: 'JSONPatch',
        patch: Buffer.from(JSON.stringify(decision.patch)).toString('base64'),
        ...(decision.warnings.length > 0 ? { warnings: decision.warnings.map(shortWarning) } : {}),
      };
  }
}

function shortWarning(w: string): string {
  const text = `kdns: ${w}`;
  return text.length <= MAX_WARNING_CHARS ? text : `${text.slice(0, MAX_WARNING_CHARS - 1)}…`;
}
