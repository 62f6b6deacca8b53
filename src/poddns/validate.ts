// The API server's pod DNS validation (dnsPolicy, dnsConfig; strict and relaxed search names,
// with ratcheting on update) and kdns's rules for `dnsPolicy: Custom` (dnsParams). Errors are
// field errors with the API server's paths, reasons and messages.

import { isIP } from 'node:net';
import { FieldPath, forbidden, invalid, required, unsupported } from '../lib/cluster/field.js';
import type { FieldError } from '../lib/cluster/field.js';
import type { PodDNSConfig, PodSpec } from '../lib/cluster/types.js';
import { checkCustomSearchSyntax, customSearchField, dnsParamsListPaths, isHostEntry, MAX_CUSTOM_SEARCH_PATHS, MAX_NDOTS, ndotsValue, substituteLabels } from './custom.js';
import type { CustomListPaths, CustomParams } from './custom.js';
import { MAX_NAMESERVERS, MAX_SEARCH_LINE_CHARS, MAX_SEARCH_PATHS } from './compute.js';
import { policyAnnotationHint, STOCK_DNS_POLICIES } from './annotations.js';
// podrequest.ts imports this module back; only functions cross, so the cycle is harmless.
import { effectivePodSpec, readPodDNSRequest } from './podrequest.js';
import type { PodDNSRequest } from './podrequest.js';
import { readPodSpec } from './workload.js';
import type { PodSpecSource } from './workload.js';

/** In the order the API server lists them in its "supported values", kdns's two added last. */
export const SUPPORTED_DNS_POLICIES: readonly string[] = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None', 'Custom', 'ClusterFirstWithAutopath'];

export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1123_LABEL_UNDERSCORE = '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_UNDERSCORE = `${DNS1123_LABEL_UNDERSCORE}(\\.${DNS1123_LABEL_UNDERSCORE})*`;
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN}$`);
const DNS1123_SUBDOMAIN_UNDERSCORE_RE = new RegExp(`^${DNS1123_SUBDOMAIN_UNDERSCORE}$`);

// The API server's wording, so `kdns validate` and `kubectl apply` say the same thing.
const STRICT_MESSAGE = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${DNS1123_SUBDOMAIN}')`;
const RELAXED_MESSAGE = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${DNS1123_SUBDOMAIN_UNDERSCORE}')`;
const IP_MESSAGE = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

export interface DNSValidationOptions {
  /** Relaxed search names: the RelaxedDNSSearchValidation gate, or ratcheting on update. */
  relaxedSearch: boolean;
  /** What $(CLUSTER) stands for when Custom search entries are checked after substitution. */
  clusterDomain: string;
}

export function validateDNSPolicy(policy: string | undefined, path: FieldPath, supported: readonly string[] = SUPPORTED_DNS_POLICIES): FieldError[] {
  if (policy === undefined || policy === '') return [required(path, '')];
  if (supported.includes(policy)) return [];
  return [unsupported(path, policy, supported)];
}

/**
 * An IP as the API server's legacy IP fields accept it (Go's ParseIP in its sloppy form): IPv4
 * octets may carry leading zeros, IPv6 may embed IPv4, no zone, no brackets, no prefix length.
 */
export function isValidLegacyIP(value: string): boolean {
  if (/^\d+(\.\d+){3}$/.test(value)) return value.split('.').every((octet) => Number(octet) <= 255);
  // Node accepts a zone suffix (`fe80::1%eth0`) that Go's ParseIP does not.
  return !value.includes('%') && isIP(value) === 6;
}

/** One search name: a trailing dot is allowed (it is trimmed before the check). */
export function validateSearchDomain(search: string, path: FieldPath, relaxed: boolean): FieldError[] {
  if (relaxed && search === '.') return [];
  const name = search.endsWith('.') ? search.slice(0, -1) : search;
  const errors: FieldError[] = [];
  if (name.length > DNS1123_SUBDOMAIN_MAX_LENGTH) errors.push(invalid(path, name, `must be no more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`));
  const pattern = relaxed ? DNS1123_SUBDOMAIN_UNDERSCORE_RE : DNS1123_SUBDOMAIN_RE;
  if (!pattern.test(name)) errors.push(invalid(path, name, relaxed ? RELAXED_MESSAGE : STRICT_MESSAGE));
  return errors;
}

export function validatePodDNSConfig(dnsConfig: PodDNSConfig | undefined, policy: string | undefined, path: FieldPath, opts: DNSValidationOptions): FieldError[] {
  if (policy === 'None') {
    if (dnsConfig === undefined) return [required(path, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if ((dnsConfig.nameservers ?? []).length === 0) {
      return [required(path.child('nameservers'), 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
    }
  }
  if (dnsConfig === undefined) return [];
  const errors: FieldError[] = [];
  const nameservers = dnsConfig.nameservers ?? [];
  if (nameservers.length > MAX_NAMESERVERS) {
    errors.push(invalid(path.child('nameservers'), nameservers, `must not have more than ${MAX_NAMESERVERS} nameservers`));
  }
  nameservers.forEach((ns, i) => {
    if (!isValidLegacyIP(ns)) errors.push(invalid(path.child('nameservers').index(i), ns, IP_MESSAGE));
  });
  const searches = dnsConfig.searches ?? [];
  if (searches.length > MAX_SEARCH_PATHS) {
    errors.push(invalid(path.child('searches'), searches, `must not have more than ${MAX_SEARCH_PATHS} search paths`));
  }
  if (searches.join(' ').length > MAX_SEARCH_LINE_CHARS) {
    errors.push(invalid(path.child('searches'), searches, `must not have more than ${MAX_SEARCH_LINE_CHARS} characters (including spaces) in the search list`));
  }
  searches.forEach((s, i) => errors.push(...validateSearchDomain(s, path.child('searches').index(i), opts.relaxedSearch)));
  (dnsConfig.options ?? []).forEach((option, i) => {
    if ((option.name ?? '') === '') errors.push(required(path.child('options').index(i), 'must not be empty'));
  });
  return errors;
}

/**
 * Custom's rules for its parameters wherever they were written: `at` is the `dnsParams.custom`
 * path, or where each list came from (the dns.kdns.io/search and /options annotations).
 */
export function validateCustomParams(custom: CustomParams, namespace: string, at: FieldPath | CustomListPaths, opts: DNSValidationOptions): FieldError[] {
  const listPath = typeof at === 'function' ? at : dnsParamsListPaths(at);
  const errors = checkCustomSearchSyntax(custom, listPath);
  const { field, entries } = customSearchField(custom);
  const staticCount = entries.filter((e) => !isHostEntry(e)).length;
  if (staticCount > MAX_CUSTOM_SEARCH_PATHS) {
    errors.push({
      field: listPath(field).toString(),
      reason: 'Too many',
      value: staticCount,
      detail: `must have at most ${MAX_CUSTOM_SEARCH_PATHS} items besides $(HOST)`,
    });
  }
  const malformed = new Set(errors.map((e) => e.field));
  entries.forEach((entry, i) => {
    const entryPath = listPath(field).index(i);
    if (isHostEntry(entry) || malformed.has(entryPath.toString())) return;
    errors.push(...validateSearchDomain(substituteLabels(entry, namespace, opts.clusterDomain), entryPath, opts.relaxedSearch));
  });
  (custom.options ?? []).forEach((option, i) => errors.push(...validateCustomOption(option, listPath('options').index(i))));
  return errors;
}

function validateCustomOption(option: string, path: FieldPath): FieldError[] {
  if (option === '') return [required(path, 'must not be empty')];
  const ndots = ndotsValue(option);
  if (ndots === undefined) return [];
  if (!/^\d+$/.test(ndots)) return [invalid(path, option, `ndots must be an integer between 0 and ${MAX_NDOTS}, inclusive`)];
  if (Number(ndots) > MAX_NDOTS) return [invalid(path, option, `ndots must be no more than ${MAX_NDOTS}`)];
  return [];
}

/**
 * Whether any search name of a stored object needs relaxed validation: dnsConfig searches and
 * Custom search entries after substitution. An update of such an object stays relaxed, so an
 * object accepted while the gate was on can still be changed after it is turned off.
 */
export function usesRelaxedSearch(spec: PodSpec, namespace: string, clusterDomain: string): boolean {
  const fails = (s: string): boolean => validateSearchDomain(s, FieldPath.root('x'), false).length > 0;
  if ((spec.dnsConfig?.searches ?? []).some(fails)) return true;
  const custom = spec.dnsParams?.custom;
  if (spec.dnsPolicy !== 'Custom' || custom === undefined) return false;
  return customSearchField(custom)
    .entries.filter((e) => !isHostEntry(e))
    .some((e) => fails(substituteLabels(e, namespace, clusterDomain)));
}

/** Gate on: relaxed always. Gate off: strict on create, and on update unless the old object needed relaxed. */
export function relaxedSearchFor(gateEnabled: boolean, old: PodSpecSource | undefined, clusterDomain: string): boolean {
  if (gateEnabled) return true;
  if (old === undefined) return false;
  // The old object's Custom entries wherever it wrote them (annotations or dnsParams).
  const request = podDNSRequestOf(old, { relaxedSearch: true, clusterDomain });
  return usesRelaxedSearch(effectivePodSpec(request, old.spec), old.namespace, clusterDomain);
}

/**
 * Which API server `kdns validate` speaks for. `kdns`: a cluster with the kdns admission webhook,
 * where a pod may ask for Custom or ClusterFirstWithAutopath (annotations, or the literal
 * dnsPolicy on a bare Pod). `stock`: a released kube-apiserver alone, which knows four policies
 * and no `dnsParams`.
 */
export type APIServerKind = 'kdns' | 'stock';

export interface PodValidationSettings {
  /** The RelaxedDNSSearchValidation feature gate. */
  relaxedDNSSearchGate: boolean;
  clusterDomain: string;
  /** Default `kdns`. */
  api?: APIServerKind;
  /** The value of the pod's namespace's `dns.kdns.io/policy` label, when it is known. */
  namespacePolicy?: string;
}

/** What the pod asks of kdns, read as the webhook reads it, with the object's own field paths. */
export function podDNSRequestOf(source: PodSpecSource, opts: DNSValidationOptions, namespacePolicy?: string): PodDNSRequest {
  return readPodDNSRequest({ annotations: source.annotations }, source.spec, { metadata: source.metadataPath, spec: source.specPath }, {
    ...opts,
    namespace: source.namespace,
    ...(namespacePolicy !== undefined ? { namespacePolicy } : {}),
  });
}

/**
 * Validates a pod-bearing object (create, or update when `old` is given) as the chosen API
 * server would once it has decoded it. Fields of the wrong type are reported alone, as the API
 * server could not decode the object to validate it. For `stock`, fields only kdns knows are
 * dropped first, as the decoder drops unknown fields (fieldValidation Ignore or Warn); under
 * Strict (kubectl's default) the object never gets here: see stockDecodingError.
 */
export function validatePodSource(source: PodSpecSource, old: PodSpecSource | undefined, settings: PodValidationSettings): FieldError[] {
  const nameErrors = source.name === '' ? [required(FieldPath.root('metadata', 'name'), 'name or generateName is required')] : [];
  const stock = settings.api === 'stock';
  const typeErrors = stock ? source.typeErrors.filter((e) => !source.kdnsOnlyFields.some((f) => e.field === f || e.field.startsWith(`${f}.`))) : source.typeErrors;
  if (typeErrors.length > 0) return [...nameErrors, ...typeErrors];
  const opts: DNSValidationOptions = {
    relaxedSearch: relaxedSearchFor(settings.relaxedDNSSearchGate, old, settings.clusterDomain),
    clusterDomain: settings.clusterDomain,
  };
  const spec = source.spec;
  if (stock) {
    return [
      ...nameErrors,
      ...validateDNSPolicy(spec.dnsPolicy, source.specPath.child('dnsPolicy'), STOCK_DNS_POLICIES),
      ...validatePodDNSConfig(spec.dnsConfig, spec.dnsPolicy, source.specPath.child('dnsConfig'), opts),
    ];
  }
  return [
    ...nameErrors,
    ...validateDNSPolicy(spec.dnsPolicy, source.specPath.child('dnsPolicy')),
    ...validatePodDNSConfig(spec.dnsConfig, spec.dnsPolicy, source.specPath.child('dnsConfig'), opts),
    ...podDNSRequestOf(source, opts, settings.namespacePolicy).errors,
  ];
}

/**
 * A stock API server's refusal before validation: its strict decoding (fieldValidation=Strict,
 * kubectl's default) names every field it does not know, in its own words. undefined when the
 * object decodes.
 */
export function stockDecodingError(source: PodSpecSource): string | undefined {
  if (source.kdnsOnlyFields.length === 0) return undefined;
  const version = source.apiVersion.includes('/') ? source.apiVersion.slice(source.apiVersion.indexOf('/') + 1) : source.apiVersion;
  const unknown = source.kdnsOnlyFields.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ');
  return `${source.kind} in version ${JSON.stringify(version)} cannot be handled as a ${source.kind}: strict decoding error: ${unknown}`;
}

/**
 * Advice for a cluster with the kdns webhook, about what only works on a bare Pod or not at all
 * on a real API server: the literal kdns dnsPolicy, and spec.dnsParams. Each names the field and
 * shows the annotation form to use instead.
 */
export function kdnsFormWarnings(source: PodSpecSource, settings: Pick<PodValidationSettings, 'clusterDomain' | 'namespacePolicy'>): string[] {
  const request = podDNSRequestOf(source, { relaxedSearch: true, clusterDomain: settings.clusterDomain }, settings.namespacePolicy);
  const warnings: string[] = [];
  const policy = request.policy;
  const metadata = source.metadataPath.toString();
  const custom = request.custom === undefined ? undefined : { search: customSearchField(request.custom).entries, ...(request.custom.options !== undefined ? { options: request.custom.options } : {}) };
  const hint = policy === undefined ? '' : policyAnnotationHint(policy, metadata, custom);
  const isPod = source.kind === 'Pod';
  if (request.source === 'spec' && policy !== undefined) {
    const where = `${source.specPath.child('dnsPolicy').toString()}: ${JSON.stringify(policy)}`;
    warnings.push(
      isPod
        ? `${where}: a stock API server refuses this value; only the kdns webhook accepts it (src/webhook/README.md). The form every API server keeps: ${hint}`
        : `${where}: the API server validates a pod template itself and refuses this value there, kdns webhook or not (the webhook rewrites Pods). Use ${hint}`,
    );
  }
  if (source.kdnsOnlyFields.length > 0) {
    const dnsParams = source.specPath.child('dnsParams').toString();
    const instead = policy === 'Custom' && request.customSearchPath?.toString().startsWith(dnsParams) === true ? ` Use ${hint}` : '';
    warnings.push(`${dnsParams}: every released API server drops this unknown field (and refuses the object under strict field validation, kubectl's default), so the kdns webhook never sees it.${instead}`);
  }
  return warnings;
}

/** Convenience for raw objects: undefined when the kind carries no pod spec. */
export function validatePodObject(obj: Record<string, unknown>, old: Record<string, unknown> | undefined, settings: PodValidationSettings): FieldError[] | undefined {
  const source = readPodSpec(obj);
  if (source === undefined) return undefined;
  const oldSource = old === undefined ? undefined : readPodSpec(old);
  return validatePodSource(source, oldSource, settings);
}
