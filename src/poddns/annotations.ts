// How a pod asks for one of kdns's two pod DNS policies on a stock cluster. Every released API
// server refuses `dnsPolicy: Custom` and `dnsPolicy: ClusterFirstWithAutopath` and drops the
// unknown `spec.dnsParams`, so the request travels in metadata, which every API server keeps,
// and the admission webhook (`kdns webhook`) rewrites it into `dnsPolicy: None` + `dnsConfig`.
// One module names them so the webhook, the validator, the advice texts and the manifests agree.

/** Pod (or pod template) annotation: `ClusterFirstWithAutopath`, `Custom`, or a stock policy to opt out of a namespace's label. */
export const POLICY_ANNOTATION = 'dns.kdns.io/policy';
/** Custom only: the search list (what `dnsParams.custom.search` holds), comma- or space-separated, or a JSON array. */
export const SEARCH_ANNOTATION = 'dns.kdns.io/search';
/** Custom only: resolver options (what `dnsParams.custom.options` holds), e.g. `ndots:2,edns0`, or a JSON array. */
export const OPTIONS_ANNOTATION = 'dns.kdns.io/options';
/** Namespace label: every new pod in the namespace gets this policy unless it says otherwise. */
export const NAMESPACE_POLICY_LABEL = 'dns.kdns.io/policy';
/** Written by the webhook on the pods it rewrote: the policy the pod asked for (the spec now says `None`). */
export const MUTATED_ANNOTATION = 'dns.kdns.io/mutated-from';

/** The two policies only the webhook can give a pod on a stock cluster. */
export const KDNS_POLICIES = ['ClusterFirstWithAutopath', 'Custom'] as const;
export type KdnsPolicy = (typeof KDNS_POLICIES)[number];

/** The four policies every released API server accepts, in its "supported values" order. */
export const STOCK_DNS_POLICIES: readonly string[] = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];

export function isKdnsPolicy(value: string | undefined): value is KdnsPolicy {
  return (KDNS_POLICIES as readonly string[]).includes(value ?? '');
}

/** Custom's parameters as the advice shows them (dnsParams.custom's `search`/`searchPaths` resolved to one list). */
export interface CustomAnnotationParams {
  search?: readonly string[];
  options?: readonly string[];
}

/**
 * The annotations that ask for `policy`: the policy, and for Custom its search list and options
 * (comma-separated, the form the webhook reads back item for item).
 */
export function policyAnnotations(policy: KdnsPolicy, custom?: CustomAnnotationParams): Record<string, string> {
  const annotations: Record<string, string> = { [POLICY_ANNOTATION]: policy };
  if (policy !== 'Custom') return annotations;
  annotations[SEARCH_ANNOTATION] = (custom?.search ?? []).join(',');
  if (custom?.options !== undefined && custom.options.length > 0) annotations[OPTIONS_ANNOTATION] = custom.options.join(',');
  return annotations;
}

/**
 * What every advice text shows: the annotations to add, under the object's own metadata path
 * (`spec.template.metadata` in a Deployment), e.g.
 * `spec.template.metadata.annotations: {dns.kdns.io/policy: ClusterFirstWithAutopath}`.
 * Values other than the policy are quoted, as YAML needs for `$(HOST)` lists and `ndots:2`.
 */
export function policyAnnotationHint(policy: KdnsPolicy, metadataPath = 'metadata', custom?: CustomAnnotationParams): string {
  const entries = Object.entries(policyAnnotations(policy, custom)).map(([key, value]) => `${key}: ${key === POLICY_ANNOTATION ? value : JSON.stringify(value)}`);
  return `${metadataPath}.annotations: {${entries.join(', ')}}`;
}

/** Why the annotation form: said once wherever advice has room for it. */
export const WEBHOOK_NOTE = 'read by the kdns admission webhook; a stock API server refuses a kdns policy in spec.dnsPolicy';
