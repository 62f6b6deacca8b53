// `dnsPolicy: Custom` search entries: label-by-label substitution of $(NAMESPACE) and $(CLUSTER),
// and the $(HOST) entry that stands for the node's own search paths. Shared by validation (which
// rejects what cannot be expanded) and the resolv.conf computation (which expands).

import { forbidden, invalid } from '../lib/cluster/field.js';
import type { FieldError, FieldPath } from '../lib/cluster/field.js';
import type { PodDNSParams } from '../lib/cluster/types.js';

export const NAMESPACE_LABEL = '$(NAMESPACE)';
export const CLUSTER_LABEL = '$(CLUSTER)';
/** Both spellings of the host entry are accepted; only as a whole entry, only last. */
export const HOST_ENTRIES: readonly string[] = ['$(HOST)', '$HOST'];
/** The most search paths a Custom policy may produce, $(HOST) expansion included. */
export const MAX_CUSTOM_SEARCH_PATHS = 5;
/** ndots above this is meaningless to both glibc and musl (they cap it at 15). */
export const MAX_NDOTS = 15;

export type CustomParams = NonNullable<PodDNSParams['custom']>;

/** The search list of a Custom policy and which of its two names it was written under. */
export interface CustomSearchField {
  field: 'search' | 'searchPaths';
  entries: readonly string[];
}

/** `search`, or `searchPaths` when only that is set (an empty list when neither is). */
export function customSearchField(custom: CustomParams): CustomSearchField {
  if (custom.search === undefined && custom.searchPaths !== undefined) return { field: 'searchPaths', entries: custom.searchPaths };
  return { field: 'search', entries: custom.search ?? [] };
}

export function isHostEntry(entry: string): boolean {
  return HOST_ENTRIES.includes(entry);
}

/** The lists of a Custom policy, as named in `dnsParams.custom`. */
export type CustomListField = 'search' | 'searchPaths' | 'options';
/** Where each list of a Custom policy was written: `dnsParams.custom.<field>`, or an annotation. */
export type CustomListPaths = (field: CustomListField) => FieldPath;

/** The paths of the lists under `…dnsParams.custom`. */
export function dnsParamsListPaths(customPath: FieldPath): CustomListPaths {
  return (field) => customPath.child(field);
}

/**
 * Errors in how the search list is written, independent of any namespace or domain: both names
 * set, a `$` label that is not exactly a substitution, $(HOST) inside an entry or not last.
 * `paths` is the `dnsParams.custom` path, or where each list came from when it was not there.
 */
export function checkCustomSearchSyntax(custom: CustomParams, paths: FieldPath | CustomListPaths): FieldError[] {
  const listPath = typeof paths === 'function' ? paths : dnsParamsListPaths(paths);
  const errors: FieldError[] = [];
  if (custom.search !== undefined && custom.searchPaths !== undefined) {
    errors.push(forbidden(listPath('searchPaths'), 'may not be set together with `search` (it is another name for it)'));
  }
  const { field, entries } = customSearchField(custom);
  entries.forEach((entry, i) => {
    const at = listPath(field).index(i);
    if (isHostEntry(entry)) {
      if (i !== entries.length - 1) errors.push(invalid(at, entry, `${entry} may only be the last entry`));
      return;
    }
    const bad = entry.split('.').find((label) => label.includes('$') && label !== NAMESPACE_LABEL && label !== CLUSTER_LABEL);
    if (bad !== undefined) {
      errors.push(
        invalid(at, entry, `a label containing '$' must be exactly ${NAMESPACE_LABEL} or ${CLUSTER_LABEL}, and $(HOST) must be a whole entry (found ${JSON.stringify(bad)})`),
      );
    }
  });
  return errors;
}

/** Replaces whole labels only: `$(NAMESPACE).svc.$(CLUSTER)` → `ns1.svc.cluster.local`. */
export function substituteLabels(entry: string, namespace: string, clusterDomain: string): string {
  return entry
    .split('.')
    .map((label) => (label === NAMESPACE_LABEL ? namespace : label === CLUSTER_LABEL ? clusterDomain : label))
    .join('.');
}

/** One search entry after substitution, or the marker for the host's search paths. */
export type ExpandedEntry = { kind: 'static'; index: number; value: string } | { kind: 'host'; index: number };

/** Substitutes every entry; $(HOST) stays a marker because only the node knows its search paths. */
export function expandCustomEntries(entries: readonly string[], namespace: string, clusterDomain: string): ExpandedEntry[] {
  return entries.map((entry, index) =>
    isHostEntry(entry) ? { kind: 'host', index } : { kind: 'static', index, value: substituteLabels(entry, namespace, clusterDomain) },
  );
}

/** The final search list: static entries in place, the host's search paths where $(HOST) stood. */
export function customSearchPaths(expanded: readonly ExpandedEntry[], hostSearches: readonly string[]): string[] {
  return expanded.flatMap((e) => (e.kind === 'host' ? [...hostSearches] : [e.value]));
}

/** The value of an `ndots:N` option; undefined for any other option. */
export function ndotsValue(option: string): string | undefined {
  return option.startsWith('ndots:') ? option.slice('ndots:'.length) : undefined;
}
