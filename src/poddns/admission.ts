// The admission mutation: what `kdns webhook` does to a Pod at creation. A pod that asks for
// ClusterFirstWithAutopath or Custom (annotation, namespace label, or the literal dnsPolicy)
// leaves with `dnsPolicy: None` and the dnsConfig the kubelet would have written for the policy
// it asked for: the same computation as `kdns resolvconf` (computePodDNS), so that the kubelet's
// `None` rendering of the result equals `kdns resolvconf` of the original pod. Pure: the pod,
// its namespace's policy and the webhook's settings in, a decision and a JSON Patch out.

import { formatFieldError, FieldPath } from '../lib/cluster/field.js';
import type { FieldError } from '../lib/cluster/field.js';
import type { PodDNSConfig, PodDNSConfigOption, PodSpec } from '../lib/cluster/types.js';
import { MUTATED_ANNOTATION, SEARCH_ANNOTATION } from './annotations.js';
import type { KdnsPolicy } from './annotations.js';
import { computePodDNS } from './compute.js';
import type { NodeDNSSettings } from './compute.js';
import { customSearchField, isHostEntry } from './custom.js';
import { effectivePodSpec, readPodDNSRequest } from './podrequest.js';
import type { PodDNSRequest } from './podrequest.js';

/** What the webhook knows of the cluster: no node is chosen yet at admission. */
export interface AdmissionSettings {
  /** `--cluster-domain` of the kubelets ("" for none). */
  clusterDomain: string;
  /** The cluster DNS Service address(es): the kubelets' `--cluster-dns`. */
  clusterDNS: readonly string[];
  /** The node-local cache address autopath pods ask first (unset: no node cache). */
  nodeCacheIP?: string;
  /**
   * What `$(HOST)` stands for in a Custom search list: the nodes' own search paths. Unset means
   * not configured, and a pod that needs them is refused (the node is not known at admission).
   */
  nodeSearches?: readonly string[];
  /** RelaxedDNSSearchValidation as the API server has it (underscores in search names). */
  relaxedSearch?: boolean;
}

/** The object the webhook receives: a Pod as the API server decoded it (unknown fields gone). */
export interface AdmittedPod {
  metadata?: { name?: string; generateName?: string; namespace?: string; annotations?: Record<string, string> };
  spec?: PodSpec;
}

export type AdmissionDecision =
  | { kind: 'skip'; reason: string }
  | { kind: 'mutate'; policy: KdnsPolicy; dnsConfig: PodDNSConfig; warnings: string[]; patch: JsonPatchOp[] }
  | { kind: 'deny'; errors: FieldError[]; message: string };

export type JsonPatchOp = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

export interface AdmissionInput {
  pod: AdmittedPod;
  /** The request's namespace (the pod's own may be empty at creation). */
  namespace: string;
  /** The namespace label's policy, when the API server called through a namespace webhook. */
  namespacePolicy?: string;
  settings: AdmissionSettings;
}

const METADATA = FieldPath.root('metadata');
const SPEC = FieldPath.root('spec');

/** Decides what happens to one pod. Never throws for any decoded object. */
export function decideAdmission(input: AdmissionInput): AdmissionDecision {
  const spec = input.pod.spec ?? {};
  const skip = skipReason(spec);
  if (skip !== undefined) return { kind: 'skip', reason: skip };
  const request = readPodDNSRequest(input.pod.metadata ?? {}, spec, { metadata: METADATA, spec: SPEC }, {
    relaxedSearch: input.settings.relaxedSearch ?? false,
    clusterDomain: input.settings.clusterDomain,
    namespace: input.namespace,
    ...(input.namespacePolicy !== undefined ? { namespacePolicy: input.namespacePolicy } : {}),
  });
  const errors = [...request.errors, ...settingsErrors(request, input.settings)];
  if (errors.length > 0) return deny(errors);
  if (request.policy === undefined) return { kind: 'skip', reason: `no kdns DNS policy asked (${request.source})` };
  const computed = computePodDNS({ spec: effectivePodSpec(request, spec), namespace: input.namespace }, nodeSettings(input.settings));
  const dnsConfig = toPodDNSConfig(computed.config);
  return { kind: 'mutate', policy: request.policy, dnsConfig, warnings: computed.warnings, patch: mutationPatch(input.pod, request.policy, dnsConfig) };
}

/**
 * Pods the webhook never changes, whatever they ask: on the host network the pod shares the
 * node's resolver (a None config would cut it off from it), and a pod already `None` has said
 * exactly what it wants (it is also what a reinvocation sees after kdns's own mutation).
 */
function skipReason(spec: PodSpec): string | undefined {
  if (spec.hostNetwork === true) return 'hostNetwork pod';
  if (spec.dnsPolicy === 'None') return 'dnsPolicy is already None';
  return undefined;
}

/** What only the webhook's settings can make impossible: $(HOST) with no node search paths configured. */
function settingsErrors(request: PodDNSRequest, settings: AdmissionSettings): FieldError[] {
  if (request.policy !== 'Custom' || settings.nodeSearches !== undefined) return [];
  const { entries } = customSearchField(request.custom ?? {});
  const hostAt = entries.findIndex(isHostEntry);
  if (hostAt < 0) return [];
  const field = request.customSearchPath ?? METADATA.child('annotations').key(SEARCH_ANNOTATION);
  return [
    {
      field: field.index(hostAt).toString(),
      reason: 'Invalid value',
      value: entries[hostAt],
      detail: `${entries[hostAt] ?? ''} stands for the node's search paths, which are not known at admission (no node is chosen yet); the kdns webhook has no nodeSearches configured`,
    },
  ];
}

function deny(errors: FieldError[]): AdmissionDecision {
  return { kind: 'deny', errors, message: errors.map(formatFieldError).join('; ') };
}

/** The kubelet's view of "a node" at admission: the host part is only the configured search paths. */
function nodeSettings(settings: AdmissionSettings): NodeDNSSettings {
  return {
    host: { nameservers: [], searches: [...(settings.nodeSearches ?? [])], options: [] },
    clusterDNS: [...settings.clusterDNS],
    clusterDomain: settings.clusterDomain,
    nodeIPs: [],
    ...(settings.nodeCacheIP !== undefined ? { nodecacheIP: settings.nodeCacheIP } : {}),
  };
}

/** `ndots:2` → `{name: ndots, value: "2"}`: the kubelet renders it back as `ndots:2`. */
export function optionFromString(option: string): PodDNSConfigOption {
  const colon = option.indexOf(':');
  return colon < 0 ? { name: option } : { name: option.slice(0, colon), value: option.slice(colon + 1) };
}

export function toPodDNSConfig(config: { nameservers: readonly string[]; searches: readonly string[]; options: readonly string[] }): PodDNSConfig {
  return {
    nameservers: [...config.nameservers],
    ...(config.searches.length > 0 ? { searches: [...config.searches] } : {}),
    ...(config.options.length > 0 ? { options: config.options.map(optionFromString) } : {}),
  };
}

/** RFC 6901: `~` and `/` in a key are escaped. */
export function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The JSON Patch (RFC 6902) from the decoded pod to the mutated one: dnsPolicy None, the
 * computed dnsConfig (the pod's own is merged into it), no dnsParams (a stock API server has no
 * such field), and the mutated-from annotation that tells readers what the pod asked for.
 */
export function mutationPatch(pod: AdmittedPod, policy: KdnsPolicy, dnsConfig: PodDNSConfig): JsonPatchOp[] {
  const spec = pod.spec ?? {};
  const ops: JsonPatchOp[] = [];
  if (pod.spec === undefined) ops.push({ op: 'add', path: '/spec', value: {} });
  ops.push({ op: spec.dnsPolicy === undefined ? 'add' : 'replace', path: '/spec/dnsPolicy', value: 'None' });
  ops.push({ op: spec.dnsConfig === undefined ? 'add' : 'replace', path: '/spec/dnsConfig', value: dnsConfig });
  if (spec.dnsParams !== undefined) ops.push({ op: 'remove', path: '/spec/dnsParams' });
  if (pod.metadata === undefined) ops.push({ op: 'add', path: '/metadata', value: {} });
  if (pod.metadata?.annotations === undefined) ops.push({ op: 'add', path: '/metadata/annotations', value: { [MUTATED_ANNOTATION]: policy } });
  else ops.push({ op: 'add', path: `/metadata/annotations/${pointerSegment(MUTATED_ANNOTATION)}`, value: policy });
  return ops;
}
