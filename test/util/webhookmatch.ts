// What kube-apiserver does to decide whether to call an admission webhook, for tests that stand
// in for it (and for the checks of deploy/components/webhook). In kube-apiserver's order:
//   0. requests for the admission configuration kinds themselves are never sent to webhooks;
//   1. namespaceSelector: the labels of the request's Namespace (of the object itself when a
//      Namespace is created or updated); a cluster-scoped object other than a Namespace always
//      matches;
//   2. objectSelector: the labels of the object or of the old object (either one matching is
//      enough);
//   3. rules: operation, API group, version, resource/subresource (`*`, `pods/*`, `*/status`,
//      `*/*`) and scope; a request matching none of them is not sent;
//   4. matchConditions: CEL expressions over `object`, `oldObject` and `request`, evaluated by a
//      real CEL implementation (@bufbuild/cel). Any condition false: skipped. All true: called.
//      An evaluation error and none false: under failurePolicy Fail the API server refuses the
//      request (an internal error naming the webhook), under Ignore it skips the webhook.
// Values reach CEL as kube-apiserver gives them: JSON objects are maps, so a field that is not
// there is an error to read and false to `has()`; integers are CEL ints.
// Not modelled: matchPolicy Equivalent's conversion to other versions (a request is matched as
// it comes), the `authorizer` variable, and reinvocation (the caller's business).

import { celEnv, CelScalar, isCelError, parse, plan } from '@bufbuild/cel';
import type { CelInput, CelResult } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { matchesLabels } from '../../src/lib/cluster/labels.js';
import type { LabelRequirement, LabelSelector } from '../../src/lib/cluster/labels.js';

// ---- the admissionregistration.k8s.io/v1 shapes the matcher reads ----

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** metav1.LabelSelector: every matchLabels pair and every expression must hold. */
export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: 'Cluster' | 'Namespaced' | '*';
}

export interface MatchCondition {
  name: string;
  expression: string;
}

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

export interface WebhookClientConfig {
  service?: ServiceReference;
  url?: string;
  caBundle?: string;
}

/** One entry of a MutatingWebhookConfiguration's `webhooks` (a ValidatingWebhook reads the same, without reinvocationPolicy). */
export interface MutatingWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  namespaceSelector?: LabelSelectorSpec;
  objectSelector?: LabelSelectorSpec;
  matchConditions?: MatchCondition[];
  /** Default Fail, as the v1 API defaults it. */
  failurePolicy?: 'Ignore' | 'Fail';
  matchPolicy?: 'Exact' | 'Equivalent';
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

/** The name the tests and the stand-in API server use for one webhook of a configuration. */
export type WebhookEntry = MutatingWebhook;

export interface WebhookConfiguration {
  metadata?: { name?: string };
  webhooks?: readonly MutatingWebhook[] | null;
}

// ---- the request ----

/** An object as the API server decoded it (JSON values). */
export type KubeObject = Readonly<Record<string, unknown>>;

/** What kube-apiserver's namespace informer holds for the request's namespace. */
export interface NamespaceObject {
  metadata: { name: string; labels?: Readonly<Record<string, string>> };
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionAttributes {
  operation: Operation;
  resource: GroupVersionResource;
  subresource?: string;
  /** Default: from the object's apiVersion and kind. */
  kind?: GroupVersionKind;
  /** Default: the object's metadata.name. */
  name?: string;
  /** null for DELETE. */
  object?: KubeObject | null;
  /** null for CREATE. */
  oldObject?: KubeObject | null;
  /** The request's namespace; absent for a cluster-scoped object (a Namespace is cluster-scoped). */
  namespace?: NamespaceObject;
  userInfo?: { username: string; uid?: string; groups?: string[] };
  dryRun?: boolean;
}

/** Why a webhook is or is not called for a request. */
export type MatchDecision =
  | { outcome: 'call' }
  | { outcome: 'skip'; stage: 'exempt' | 'namespaceSelector' | 'objectSelector' | 'rules' | 'matchConditions'; reason: string }
  | { outcome: 'reject'; reason: string };

/** The API server refuses the request: a match condition failed to evaluate under failurePolicy Fail. */
export class AdmissionRejected extends Error {
  constructor(
    readonly webhook: string,
    message: string,
  ) {
    super(message);
    this.name = 'AdmissionRejected';
  }
}

/** A configuration the API server would not have stored (bad selector operator, CEL that does not parse). */
export class WebhookConfigurationError extends Error {
  constructor(field: string, detail: string) {
    super(`${field}: ${detail}`);
    this.name = 'WebhookConfigurationError';
  }
}

// ---- the decision ----

/**
 * The webhooks kube-apiserver calls for the request, in its order: configurations by name, then
 * each configuration's webhooks as listed. Throws AdmissionRejected when the API server would
 * refuse the request instead.
 */
export function webhooksToCall(configurations: WebhookConfiguration | readonly WebhookConfiguration[], attrs: AdmissionAttributes): MutatingWebhook[] {
  const list = Array.isArray(configurations) ? [...(configurations as readonly WebhookConfiguration[])] : [configurations as WebhookConfiguration];
  list.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  const out: MutatingWebhook[] = [];
  for (const configuration of list) {
    for (const webhook of configuration.webhooks ?? []) {
      const d = decide(webhook, attrs);
      if (d.outcome === 'reject') throw new AdmissionRejected(webhook.name, d.reason);
      if (d.outcome === 'call') out.push(webhook);
    }
  }
  return out;
}

/** Whether kube-apiserver calls this one webhook for the request, and if not, why not. */
export function decide(webhook: MutatingWebhook, attrs: AdmissionAttributes): MatchDecision {
  const kind = kindOf(attrs);
  if (isExemptConfigurationKind(kind)) return { outcome: 'skip', stage: 'exempt', reason: `${kind.kind} requests are never sent to webhooks` };
  const where = `webhook ${JSON.stringify(webhook.name)}`;
  if (!namespaceMatches(webhook, attrs, where)) return { outcome: 'skip', stage: 'namespaceSelector', reason: `namespace ${attrs.namespace?.metadata.name ?? '(cluster-scoped)'} does not match` };
  if (!objectMatches(webhook, attrs, where)) return { outcome: 'skip', stage: 'objectSelector', reason: 'neither the object nor the old object matches' };
  if (!(webhook.rules ?? []).some((r) => ruleMatches(r, attrs))) return { outcome: 'skip', stage: 'rules', reason: `no rule matches ${attrs.operation} ${resourceText(attrs)}` };
  return evaluateMatchConditions(webhook, attrs, where);
}

/** The admission configuration kinds, whose requests no webhook may see (so none can lock them). */
const EXEMPT_KINDS = ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding'];

function isExemptConfigurationKind(kind: GroupVersionKind): boolean {
  return kind.group === 'admissionregistration.k8s.io' && EXEMPT_KINDS.includes(kind.kind);
}

function kindOf(attrs: AdmissionAttributes): GroupVersionKind {
  if (attrs.kind) return attrs.kind;
  const o = attrs.object ?? attrs.oldObject;
  const apiVersion = typeof o?.['apiVersion'] === 'string' ? o['apiVersion'] : `${attrs.resource.group === '' ? '' : `${attrs.resource.group}/`}${attrs.resource.version}`;
  const slash = apiVersion.indexOf('/');
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    kind: typeof o?.['kind'] === 'string' ? o['kind'] : '',
  };
}

const resourceText = (a: AdmissionAttributes): string =>
  `${a.resource.group === '' ? 'core' : a.resource.group}/${a.resource.version} ${a.resource.resource}${a.subresource ? `/${a.subresource}` : ''}`;

const isNamespaceResource = (r: GroupVersionResource): boolean => r.group === '' && r.version === 'v1' && r.resource === 'namespaces';

// ---- 1. namespaceSelector ----

function namespaceMatches(webhook: MutatingWebhook, attrs: AdmissionAttributes, where: string): boolean {
  const forNamespace = isNamespaceResource(attrs.resource);
  if (attrs.namespace === undefined && !forNamespace) return true;
  const selector = toSelector(webhook.namespaceSelector, `${where}.namespaceSelector`);
  if (selector.requirements.length === 0) return true;
  return matchesLabels(selector, namespaceLabels(attrs));
}

/**
 * A Namespace being created or updated is judged by its own new labels (the informer does not
 * have them yet); anything else by the Namespace the request is in. kube-apiserver sets
 * kubernetes.io/metadata.name on every Namespace, so it is there whatever the caller gave.
 */
function namespaceLabels(attrs: AdmissionAttributes): Record<string, string> {
  if (isNamespaceResource(attrs.resource) && (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE')) {
    const name = attrs.name ?? metadataOf(attrs.object)?.name ?? '';
    return { ...labelsOf(attrs.object), 'kubernetes.io/metadata.name': String(name) };
  }
  const ns = attrs.namespace;
  if (ns === undefined) throw new Error(`namespace: required to match a namespaceSelector for ${resourceText(attrs)}`);
  return { ...(ns.metadata.labels ?? {}), 'kubernetes.io/metadata.name': ns.metadata.name };
}

// ---- 2. objectSelector ----

function objectMatches(webhook: MutatingWebhook, attrs: AdmissionAttributes, where: string): boolean {
  const selector = toSelector(webhook.objectSelector, `${where}.objectSelector`);
  if (selector.requirements.length === 0) return true;
  const matches = (o: KubeObject | null | undefined): boolean => o !== null && o !== undefined && matchesLabels(selector, labelsOf(o));
  return matches(attrs.object) || matches(attrs.oldObject);
}

function metadataOf(o: KubeObject | null | undefined): Record<string, unknown> | undefined {
  const m = o?.['metadata'];
  return typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : undefined;
}

function labelsOf(o: KubeObject | null | undefined): Record<string, string> {
  const labels = metadataOf(o)?.['labels'];
  if (typeof labels !== 'object' || labels === null) return {};
  return Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

const SELECTOR_OPERATORS = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!exists' } as const;

/** metav1.LabelSelector as kube-apiserver parses it; an absent selector (defaulted to {}) matches everything. */
export function toSelector(spec: LabelSelectorSpec | undefined, field: string): LabelSelector {
  const requirements: LabelRequirement[] = Object.entries(spec?.matchLabels ?? {}).map(([key, value]) => ({ key, operator: 'in', values: [value] }));
  (spec?.matchExpressions ?? []).forEach((e, i) => {
    const at = `${field}.matchExpressions[${i}]`;
    const operator = SELECTOR_OPERATORS[e.operator];
    if (operator === undefined) throw new WebhookConfigurationError(`${at}.operator`, `Unsupported value ${JSON.stringify(e.operator)}: supported values: "In", "NotIn", "Exists", "DoesNotExist"`);
    const values = e.values ?? [];
    if ((operator === 'in' || operator === 'notin') && values.length === 0) throw new WebhookConfigurationError(`${at}.values`, `Required value: must be specified when operator is ${e.operator}`);
    if ((operator === 'exists' || operator === '!exists') && values.length > 0) throw new WebhookConfigurationError(`${at}.values`, `Forbidden: may not be specified when operator is ${e.operator}`);
    requirements.push({ key: e.key, operator, values: [...values] });
  });
  return { requirements, text: field };
}

// ---- 3. rules ----

const exactOrWildcard = (items: readonly string[] | undefined, value: string): boolean => (items ?? []).some((i) => i === '*' || i === value);

/** One rule: scope, operation, group, version, and resource with its subresource. */
export function ruleMatches(rule: RuleWithOperations, attrs: AdmissionAttributes): boolean {
  return scopeMatches(rule.scope, attrs) && exactOrWildcard(rule.operations, attrs.operation) && exactOrWildcard(rule.apiGroups, attrs.resource.group) && exactOrWildcard(rule.apiVersions, attrs.resource.version) && resourceMatches(rule.resources, attrs);
}

/** A Namespace is cluster-scoped, though its requests carry its name as their namespace. */
function scopeMatches(scope: RuleWithOperations['scope'], attrs: AdmissionAttributes): boolean {
  const clusterScoped = isNamespaceResource(attrs.resource) || attrs.namespace === undefined;
  if (scope === undefined || scope === '*') return true;
  return scope === 'Cluster' ? clusterScoped : !clusterScoped;
}

/** `pods` is the resource alone, `pods/*` the resource and every subresource, `*` every resource without subresources, `*\/*` everything. */
function resourceMatches(resources: readonly string[] | undefined, attrs: AdmissionAttributes): boolean {
  const sub = attrs.subresource ?? '';
  return (resources ?? []).some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const entrySub = slash < 0 ? '' : entry.slice(slash + 1);
    return (res === '*' || res === attrs.resource.resource) && (entrySub === '*' || entrySub === sub);
  });
}

// ---- 4. matchConditions ----

const env = celEnv({ variables: { object: CelScalar.DYN, oldObject: CelScalar.DYN, request: CelScalar.DYN }, funcs: strings });

type Program = (bindings: { object: CelInput; oldObject: CelInput; request: CelInput }) => CelResult;
const programs = new Map<string, Program>();

/** The compiled expression; one that does not parse is a configuration the API server would have refused. */
function compile(expression: string, field: string): Program {
  let program = programs.get(expression);
  if (program === undefined) {
    try {
      program = plan(env, parse(expression)) as Program;
    } catch (e) {
      throw new WebhookConfigurationError(field, `Invalid value: ${JSON.stringify(expression)}: compilation failed: ${(e as Error).message}`);
    }
    programs.set(expression, program);
  }
  return program;
}

function evaluateMatchConditions(webhook: MutatingWebhook, attrs: AdmissionAttributes, where: string): MatchDecision {
  const conditions = webhook.matchConditions ?? [];
  if (conditions.length === 0) return { outcome: 'call' };
  const bindings = { object: toCel(attrs.object ?? null), oldObject: toCel(attrs.oldObject ?? null), request: toCel(requestOf(attrs)) };
  const errors: string[] = [];
  for (const [i, c] of conditions.entries()) {
    const result = compile(c.expression, `${where}.matchConditions[${i}].expression`)(bindings);
    if (isCelError(result)) errors.push(`${c.name}: ${result.message}`);
    // kube-apiserver only admits expressions typed bool; a dynamic value that is not one is counted as an error.
    else if (typeof result !== 'boolean') errors.push(`${c.name}: evaluated to a non-bool value`);
    else if (!result) return { outcome: 'skip', stage: 'matchConditions', reason: `matchCondition ${c.name} is false` };
  }
  if (errors.length === 0) return { outcome: 'call' };
  const message = `failed to evaluate matchConditions of ${where}: ${errors.join('; ')}`;
  return (webhook.failurePolicy ?? 'Fail') === 'Ignore' ? { outcome: 'skip', stage: 'matchConditions', reason: `${message} (failurePolicy Ignore)` } : { outcome: 'reject', reason: `Internal error occurred: ${message}` };
}

/** The AdmissionRequest's fields as the `request` variable holds them (empty ones omitted, as in its JSON). */
function requestOf(attrs: AdmissionAttributes): Record<string, unknown> {
  const kind = kindOf(attrs);
  const name = attrs.name ?? metadataOf(attrs.object ?? attrs.oldObject)?.['name'];
  const namespace = attrs.namespace?.metadata.name ?? (isNamespaceResource(attrs.resource) ? name : undefined);
  return {
    kind,
    resource: attrs.resource,
    ...(attrs.subresource ? { subResource: attrs.subresource } : {}),
    requestKind: kind,
    requestResource: attrs.resource,
    ...(attrs.subresource ? { requestSubResource: attrs.subresource } : {}),
    ...(typeof name === 'string' && name !== '' ? { name } : {}),
    ...(typeof namespace === 'string' && namespace !== '' ? { namespace } : {}),
    operation: attrs.operation,
    userInfo: attrs.userInfo ?? { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] },
    dryRun: attrs.dryRun ?? false,
  };
}

/** A JSON value as CEL sees it in kube-apiserver: objects are maps, whole numbers ints, the rest as they are. */
export function toCel(value: unknown): CelInput {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map(toCel);
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'object') return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  throw new TypeError(`not a JSON value: ${typeof value}`);
}
