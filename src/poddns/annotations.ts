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

/** The annotation lines a user adds to a pod template for `policy`: what every advice text shows. */
export function policyAnnotationHint(policy: KdnsPolicy): string {
  return `metadata.annotations: {${POLICY_ANNOTATION}: ${policy}} (needs the kdns admission webhook; a stock API server refuses spec.dnsPolicy: ${policy})`;
}
