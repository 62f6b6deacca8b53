// What a pod asks of kdns's pod DNS, read the way every API server lets it travel: the
// dns.kdns.io/* annotations on the pod (or pod template), the literal `spec.dnsPolicy` of a bare
// Pod, or its namespace's label. Shared by the admission webhook (which rewrites the pod) and
// `kdns resolvconf|validate|explain` (which must read a pod exactly as the webhook does). The
// Custom rules are validate.ts's own, so a search list is judged the same wherever it is written.

import { FieldPath, forbidden, invalid, required, unsupported } from '../lib/cluster/field.js';
import type { FieldError } from '../lib/cluster/field.js';
import type { PodSpec } from '../lib/cluster/types.js';
import {
  isKdnsPolicy,
  KDNS_POLICIES,
  MUTATED_ANNOTATION,
  NAMESPACE_POLICY_LABEL,
  OPTIONS_ANNOTATION,
  POLICY_ANNOTATION,
  SEARCH_ANNOTATION,
  STOCK_DNS_POLICIES,
} from './annotations.js';
import type { KdnsPolicy } from './annotations.js';
import type { CustomListField, CustomListPaths, CustomParams } from './custom.js';
// validate.ts imports this module back (validatePodSource reads the request); only functions
// cross in either direction and nothing runs at load time, so the ES module cycle is harmless.
import { validateCustomParams } from './validate.js';
import type { DNSValidationOptions } from './validate.js';

export interface PodDNSRequest {
  /** What the pod asked for, after precedence: pod annotation > literal spec.dnsPolicy (a kdns policy) > namespace label. undefined: nothing kdns-specific asked (or an opt-out). */
  policy: KdnsPolicy | undefined;
  /** Where the policy came from ('annotation' also for an opt-out and for an already rewritten pod). */
  source: 'annotation' | 'spec' | 'namespace' | 'none';
  /** Custom's params: from the dns.kdns.io/search and dns.kdns.io/options annotations, else spec.dnsParams.custom. */
  custom?: CustomParams;
  /**
   * Where Custom's search list was read: `metadata.annotations[dns.kdns.io/search]` or
   * `spec.dnsParams.custom.search` (`searchPaths`), so that later errors about an entry can name
   * it as `<customSearchPath>[i]`. Set with `custom`.
   */
  customSearchPath?: FieldPath;
  /**
   * Set when the webhook already rewrote the pod (`dnsPolicy: None` + `dns.kdns.io/mutated-from`):
   * its spec is final, `policy` is what it asked for, and effectivePodSpec leaves it alone.
   */
  mutatedFrom?: KdnsPolicy;
  /** Everything wrong with the request, with field paths as `kdns validate` prints them, e.g. metadata.annotations[dns.kdns.io/search][0] (use the object's own root: a Deployment's template is spec.template.metadata...). */
  errors: FieldError[];
}

export interface PodDNSRequestOptions extends DNSValidationOptions {
  /** The value of the pod's namespace's `dns.kdns.io/policy` label, when it has one. */
  namespacePolicy?: string;
  /**
   * The pod's namespace: what $(NAMESPACE) stands for when Custom search entries are checked
   * after substitution. Unset: "default" (any namespace name is a valid DNS label, so only the
   * 253-character limit can tell two namespaces apart).
   */
  namespace?: string;
}

/** What the policy annotation accepts: kdns's two, then the stock four (an opt-out). */
export const POLICY_ANNOTATION_VALUES: readonly string[] = [...KDNS_POLICIES, ...STOCK_DNS_POLICIES];

const LIST_FORMS = 'a comma- or space-separated list, or a JSON array of strings';

/** Where the annotation named `name` is, under the object's own metadata path. */
export function annotationPath(metadata: FieldPath, name: string): FieldPath {
  return metadata.child('annotations').key(name);
}

export interface ParsedAnnotationList {
  /** The items; undefined when the value could not be read (see errors). */
  items?: string[];
  errors: FieldError[];
}

/**
 * A list annotation: a JSON array of strings when the value starts with `[`, otherwise items
 * separated by commas and/or whitespace (empty items dropped, so `a, b` and `a,b` agree). An
 * empty value is an empty list.
 */
export function parseAnnotationList(value: string, path: FieldPath): ParsedAnnotationList {
  const text = value.trim();
  if (!text.startsWith('[')) return { items: text.split(/[\s,]+/).filter((item) => item !== ''), errors: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { errors: [invalid(path, value, `must be ${LIST_FORMS} (${(err as Error).message})`)] };
  }
  if (!Array.isArray(parsed)) return { errors: [invalid(path, value, `must be ${LIST_FORMS}`)] };
  const errors: FieldError[] = [];
  parsed.forEach((item: unknown, i) => {
    if (typeof item !== 'string') errors.push(invalid(path.index(i), item, 'must be a string'));
  });
  return errors.length > 0 ? { errors } : { items: parsed as string[], errors };
}

interface PolicyChoice {
  policy: KdnsPolicy | undefined;
  source: PodDNSRequest['source'];
  errors: FieldError[];
  /** The annotation named a value nothing accepts: the Custom annotations are not judged then. */
  unreadable: boolean;
}

/**
 * A spec.dnsPolicy the annotation or namespace may replace: unset, or ClusterFirst (what the API
 * server defaults an unset one to, so the two cannot be told apart). Any other stock value is the
 * pod's own explicit choice.
 */
function isDefaultPolicy(policy: string | undefined): boolean {
  return policy === undefined || policy === '' || policy === 'ClusterFirst';
}

function choosePolicy(annotations: Readonly<Record<string, string>>, spec: PodSpec, metadata: FieldPath, namespacePolicy: string | undefined): PolicyChoice {
  const asked = annotations[POLICY_ANNOTATION];
  const at = annotationPath(metadata, POLICY_ANNOTATION);
  if (asked !== undefined) {
    if (!POLICY_ANNOTATION_VALUES.includes(asked)) {
      return { policy: undefined, source: 'annotation', errors: [unsupported(at, asked, POLICY_ANNOTATION_VALUES)], unreadable: true };
    }
    const policy = isKdnsPolicy(asked) ? asked : undefined;
    // The pod says it twice and differently: no reading of it is safe to act on.
    const conflicts = spec.dnsPolicy !== asked && (isKdnsPolicy(spec.dnsPolicy) || (policy !== undefined && !isDefaultPolicy(spec.dnsPolicy)));
    const errors = conflicts ? [invalid(at, asked, `conflicts with dnsPolicy ${JSON.stringify(spec.dnsPolicy)}: ask for the policy in one place`)] : [];
    return { policy, source: 'annotation', errors, unreadable: false };
  }
  if (isKdnsPolicy(spec.dnsPolicy)) return { policy: spec.dnsPolicy, source: 'spec', errors: [], unreadable: false };
  if (namespacePolicy === undefined || !isDefaultPolicy(spec.dnsPolicy)) return { policy: undefined, source: 'none', errors: [], unreadable: false };
  if (isKdnsPolicy(namespacePolicy)) return { policy: namespacePolicy, source: 'namespace', errors: [], unreadable: false };
  if (STOCK_DNS_POLICIES.includes(namespacePolicy)) return { policy: undefined, source: 'none', errors: [], unreadable: false };
  const labelPath = FieldPath.root('namespace', 'metadata', 'labels').key(NAMESPACE_POLICY_LABEL);
  return { policy: undefined, source: 'namespace', errors: [unsupported(labelPath, namespacePolicy, POLICY_ANNOTATION_VALUES)], unreadable: false };
}

interface CustomReading {
  custom?: CustomParams;
  searchPath?: FieldPath;
  errors: FieldError[];
}

/**
 * Custom's parameters. The annotations, when either is present, replace `spec.dnsParams` whole
 * (a pod on a real API server has no dnsParams left; one that writes both is told so).
 */
function readCustom(annotations: Readonly<Record<string, string>>, spec: PodSpec, paths: { metadata: FieldPath; spec: FieldPath }, opts: PodDNSRequestOptions): CustomReading {
  const searchAt = annotationPath(paths.metadata, SEARCH_ANNOTATION);
  const optionsAt = annotationPath(paths.metadata, OPTIONS_ANNOTATION);
  const search = annotations[SEARCH_ANNOTATION];
  const options = annotations[OPTIONS_ANNOTATION];
  const namespace = opts.namespace ?? 'default';
  if (search === undefined && options === undefined) {
    const paramsPath = paths.spec.child('dnsParams');
    if (spec.dnsParams === undefined) {
      return { errors: [required(searchAt, `must be set when the policy is Custom (the search list: ${LIST_FORMS}; "" for none)`)] };
    }
    const custom = spec.dnsParams.custom;
    if (custom === undefined) return { errors: [required(paramsPath.child('custom'), 'must provide `dnsParams.custom` when `dnsPolicy` is Custom')] };
    const customPath = paramsPath.child('custom');
    const searchField = custom.search === undefined && custom.searchPaths !== undefined ? 'searchPaths' : 'search';
    return { custom, searchPath: customPath.child(searchField), errors: validateCustomParams(custom, namespace, customPath, opts) };
  }
  const errors: FieldError[] = [];
  if (spec.dnsParams !== undefined) {
    errors.push(forbidden(paths.spec.child('dnsParams'), `may not be set together with the ${SEARCH_ANNOTATION} and ${OPTIONS_ANNOTATION} annotations (they replace it)`));
  }
  if (search === undefined) errors.push(required(searchAt, `must be set when the policy is Custom (the search list: ${LIST_FORMS}; "" for none)`));
  const parsedSearch = search === undefined ? undefined : parseAnnotationList(search, searchAt);
  const parsedOptions = options === undefined ? undefined : parseAnnotationList(options, optionsAt);
  errors.push(...(parsedSearch?.errors ?? []), ...(parsedOptions?.errors ?? []));
  const custom: CustomParams = {
    ...(parsedSearch?.items !== undefined ? { search: parsedSearch.items } : {}),
    ...(parsedOptions?.items !== undefined ? { options: parsedOptions.items } : {}),
  };
  const listPaths: CustomListPaths = (field: CustomListField) => (field === 'options' ? optionsAt : searchAt);
  errors.push(...validateCustomParams(custom, namespace, listPaths, opts));
  return { custom, searchPath: searchAt, errors };
}

/** Custom's annotations (and dnsParams) on a pod that does not ask for Custom. */
function strayCustomErrors(annotations: Readonly<Record<string, string>>, spec: PodSpec, paths: { metadata: FieldPath; spec: FieldPath }): FieldError[] {
  const errors: FieldError[] = [];
  for (const name of [SEARCH_ANNOTATION, OPTIONS_ANNOTATION]) {
    if (annotations[name] !== undefined) errors.push(forbidden(annotationPath(paths.metadata, name), `may only be set when the policy is Custom (${POLICY_ANNOTATION}: Custom)`));
  }
  if (spec.dnsParams !== undefined) errors.push(forbidden(paths.spec.child('dnsParams'), 'may only be set when `dnsPolicy` is Custom'));
  return errors;
}

/** The policy of a pod the webhook already rewrote, or undefined. */
function mutatedPolicy(annotations: Readonly<Record<string, string>>, spec: PodSpec): KdnsPolicy | undefined {
  const from = annotations[MUTATED_ANNOTATION];
  return spec.dnsPolicy === 'None' && isKdnsPolicy(from) ? from : undefined;
}

/** Reads and checks what one pod (or pod template) asks of kdns. Never throws. */
export function readPodDNSRequest(
  meta: { annotations?: Record<string, string> },
  spec: PodSpec,
  paths: { metadata: FieldPath; spec: FieldPath },
  options: PodDNSRequestOptions,
): PodDNSRequest {
  const annotations = meta.annotations ?? {};
  const mutatedFrom = mutatedPolicy(annotations, spec);
  if (mutatedFrom !== undefined) {
    // Judged at its admission; what is left is a `None` pod whose spec says everything.
    return { policy: mutatedFrom, source: 'annotation', mutatedFrom, errors: [] };
  }
  const choice = choosePolicy(annotations, spec, paths.metadata, options.namespacePolicy);
  if (choice.unreadable) return { policy: undefined, source: choice.source, errors: choice.errors };
  if (choice.policy !== 'Custom') {
    return { policy: choice.policy, source: choice.source, errors: [...choice.errors, ...strayCustomErrors(annotations, spec, paths)] };
  }
  const reading = readCustom(annotations, spec, paths, options);
  return {
    policy: choice.policy,
    source: choice.source,
    ...(reading.custom !== undefined ? { custom: reading.custom } : {}),
    ...(reading.searchPath !== undefined ? { customSearchPath: reading.searchPath } : {}),
    errors: [...choice.errors, ...reading.errors],
  };
}

/** The spec kdns's own computation takes: dnsPolicy = the requested kdns policy, dnsParams.custom = the params. Unchanged when nothing was asked (or the pod was already rewritten). */
export function effectivePodSpec(request: PodDNSRequest, spec: PodSpec): PodSpec {
  if (request.policy === undefined || request.mutatedFrom !== undefined) return spec;
  const { dnsParams: _dropped, ...rest } = spec;
  if (request.policy === 'Custom') return { ...rest, dnsPolicy: 'Custom', dnsParams: { custom: request.custom ?? {} } };
  return { ...rest, dnsPolicy: request.policy };
}
