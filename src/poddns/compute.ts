// The kubelet's pod DNS computation (pkg/kubelet/network/dns GetPodDNS), one small step per
// function, plus kdns's two policies: Custom and ClusterFirstWithAutopath. Pure: the host file
// arrives parsed, the result is the DNS config the kubelet hands the container runtime.

import { isIP } from 'node:net';
import type { PodDNSConfig, PodDNSConfigOption, PodSpec } from '../lib/cluster/types.js';
import { customSearchField, customSearchPaths, expandCustomEntries, MAX_CUSTOM_SEARCH_PATHS } from './custom.js';
import { copyResolvConf, emptyResolvConf, mergeOptionStrings, omitDuplicates } from './resolvconf.js';
import type { ResolvConf } from './resolvconf.js';

/** Limits the kubelet enforces on what it hands the runtime (derived from libc limits). */
export const MAX_NAMESERVERS = 3;
export const MAX_SEARCH_PATHS = 32;
export const MAX_SEARCH_LINE_CHARS = 2048;
/** A longer search path makes some resolvers (glibc 2.28) abort, so the kubelet drops it. */
export const MAX_SEARCH_PATH_CHARS = 253;
/** What ClusterFirst (and the policies built on it) put in `options`. */
export const CLUSTER_OPTIONS: readonly string[] = ['ndots:5'];
/** The suffix of the one search path of ClusterFirstWithAutopath. */
export const AUTOPATH_SUFFIX = 'ap.k8s.io';

/** What the kubelet knows about its node: its flags and the host's resolv.conf. */
export interface NodeDNSSettings {
  /** The parsed host resolv.conf, or null for `--resolv-conf=""` (no host file). */
  host: ResolvConf | null;
  /** `--cluster-dns`; empty means unset. */
  clusterDNS: readonly string[];
  /** `--cluster-domain`; empty means unset. */
  clusterDomain: string;
  /** The node's IPs; they matter only without a host file. */
  nodeIPs: readonly string[];
  /** The node-local cache address ClusterFirstWithAutopath points at, when there is one. */
  nodecacheIP?: string;
}

export interface PodDNSInput {
  /** A defaulted pod spec (dnsPolicy set). */
  spec: PodSpec;
  namespace: string;
}

export interface PodDNSResult {
  config: ResolvConf;
  /** The kubelet's warning events (truncations, fallbacks), in the order they happened. */
  warnings: string[];
}

/** How the base config is built; several dnsPolicy values share one. */
export type PodDNSType = 'none' | 'cluster' | 'host' | 'custom' | 'autopath';

/**
 * Which base a pod gets. ClusterFirst on the host network falls back to the host's DNS, as
 * the kubelet does; ClusterFirstWithHostNet exists to opt out of that. An unknown policy
 * counts as ClusterFirst (the kubelet logs an error and does the same).
 */
export function podDNSType(spec: PodSpec): PodDNSType {
  switch (spec.dnsPolicy) {
    case 'None':
      return 'none';
    case 'ClusterFirstWithHostNet':
      return 'cluster';
    case 'Default':
      return 'host';
    case 'Custom':
      return 'custom';
    case 'ClusterFirstWithAutopath':
      return 'autopath';
    case 'ClusterFirst':
    default:
      return spec.hostNetwork === true ? 'host' : 'cluster';
  }
}

export function computePodDNS(pod: PodDNSInput, node: NodeDNSSettings): PodDNSResult {
  const warnings: string[] = [];
  let config = baseConfig(pod, node, warnings);
  if (pod.spec.dnsConfig !== undefined) config = appendDNSConfig(config, pod.spec.dnsConfig);
  config = fitNameservers(config, warnings);
  config = fitSearches(config, warnings);
  return { config, warnings };
}

function baseConfig(pod: PodDNSInput, node: NodeDNSSettings, warnings: string[]): ResolvConf {
  const type = podDNSType(pod.spec);
  switch (type) {
    case 'none':
      return emptyResolvConf();
    case 'host':
      return hostBase(node);
    case 'cluster':
      if (node.clusterDNS.length === 0) return missingClusterDNS(pod, node, warnings);
      return {
        nameservers: [...node.clusterDNS],
        searches: clusterFirstSearches(node.host?.searches ?? [], pod.namespace, node.clusterDomain),
        options: [...CLUSTER_OPTIONS],
      };
    case 'custom':
      if (node.clusterDNS.length === 0) return missingClusterDNS(pod, node, warnings);
      return customBase(pod, node, warnings);
    case 'autopath': {
      const servers = autopathNameservers(node);
      if (servers.length === 0) return missingClusterDNS(pod, node, warnings);
      return { nameservers: servers, searches: autopathSearches(pod.namespace, node.clusterDomain), options: [...CLUSTER_OPTIONS] };
    }
  }
}

/**
 * The host's own DNS (dnsPolicy Default). Without a host file the kubelet points the pod at the
 * node itself (loopback of each node IP's family) with the root as the only search path, which
 * is what the resolver library does when it has no configuration.
 */
export function hostBase(node: NodeDNSSettings): ResolvConf {
  if (node.host !== null) return copyResolvConf(node.host);
  const nameservers = node.nodeIPs.map((ip) => (isIP(ip) === 6 ? '::1' : '127.0.0.1'));
  if (nameservers.length === 0) nameservers.push('127.0.0.1');
  return { nameservers, searches: ['.'], options: [] };
}

function missingClusterDNS(pod: PodDNSInput, node: NodeDNSSettings, warnings: string[]): ResolvConf {
  const policy = pod.spec.dnsPolicy ?? 'ClusterFirst';
  warnings.push(
    `MissingClusterDNS: kubelet does not have ClusterDNS IP configured and cannot create Pod using ${JSON.stringify(policy)} policy. Falling back to "Default" policy.`,
  );
  return hostBase(node);
}

/** `<ns>.svc.<zone> svc.<zone> <zone>` then the host's search paths, without repeats. */
export function clusterFirstSearches(hostSearches: readonly string[], namespace: string, clusterDomain: string): string[] {
  if (clusterDomain === '') return [...hostSearches];
  return omitDuplicates([`${namespace}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain, ...hostSearches]);
}

/**
 * The node cache first, then the cluster DNS: the cluster DNS expands `ap.k8s.io` names by
 * itself, so a pod keeps resolving while its node's cache restarts or is gone (glibc moves to the
 * next nameserver at once when the cache's address refuses, after `timeout` when it is silent;
 * musl asks all of them at once). A cache that also holds the cluster DNS address, as in
 * NodeLocal DNSCache's setup, is one nameserver: the node's rules decide who answers it.
 */
export function autopathNameservers(node: Pick<NodeDNSSettings, 'clusterDNS' | 'nodecacheIP'>): string[] {
  const cache = node.nodecacheIP !== undefined && node.nodecacheIP !== '' ? [node.nodecacheIP] : [];
  return omitDuplicates([...cache, ...node.clusterDNS]);
}

/** The single search path the autopath server recognises: `search.<ns>.<zone>.ap.k8s.io`. */
export function autopathSearches(namespace: string, clusterDomain: string): string[] {
  const labels = ['search', namespace, clusterDomain, AUTOPATH_SUFFIX].filter((l) => l !== '');
  return [labels.join('.')];
}

/**
 * Custom: search entries substituted label by label, $(HOST) replaced by the host's search
 * paths, options verbatim, the cluster DNS as nameserver. Validation bounds the static entries;
 * only here, on the node, is the host part known, so an overlong list is cut to the limit.
 */
function customBase(pod: PodDNSInput, node: NodeDNSSettings, warnings: string[]): ResolvConf {
  const custom = pod.spec.dnsParams?.custom ?? {};
  const { entries } = customSearchField(custom);
  const expanded = expandCustomEntries(entries, pod.namespace, node.clusterDomain);
  let searches = omitDuplicates(customSearchPaths(expanded, node.host?.searches ?? []));
  if (searches.length > MAX_CUSTOM_SEARCH_PATHS) {
    const dropped = searches.slice(MAX_CUSTOM_SEARCH_PATHS);
    searches = searches.slice(0, MAX_CUSTOM_SEARCH_PATHS);
    warnings.push(
      `DNSConfigForming: Custom search paths exceeded ${MAX_CUSTOM_SEARCH_PATHS}, some search paths have been omitted, the applied search line is: ${searches.join(' ')} (omitted: ${dropped.join(' ')})`,
    );
  }
  // Merged by name (the last value of a repeated option wins, where it first stood): what the
  // kubelet makes of the same options in a `None` pod's dnsConfig, so the webhook's rewrite of a
  // Custom pod gives the same file, and what libc does with a repeated option anyway.
  return { nameservers: [...node.clusterDNS], searches, options: mergeOptionStrings([], custom.options ?? []) };
}

/** Adds the pod's dnsConfig: nameservers and searches appended without repeats, options merged by name. */
export function appendDNSConfig(base: ResolvConf, dnsConfig: PodDNSConfig): ResolvConf {
  return {
    nameservers: omitDuplicates([...base.nameservers, ...(dnsConfig.nameservers ?? [])]),
    searches: omitDuplicates([...base.searches, ...(dnsConfig.searches ?? [])]),
    options: mergeOptionStrings(base.options, (dnsConfig.options ?? []).map(podOptionString)),
  };
}

/** `{name: ndots, value: "2"}` → `ndots:2`; an empty or missing value leaves the name alone. */
export function podOptionString(option: PodDNSConfigOption): string {
  const name = option.name ?? '';
  return option.value !== undefined && option.value !== '' ? `${name}:${option.value}` : name;
}

function fitNameservers(config: ResolvConf, warnings: string[]): ResolvConf {
  if (config.nameservers.length <= MAX_NAMESERVERS) return config;
  const kept = config.nameservers.slice(0, MAX_NAMESERVERS);
  const dropped = config.nameservers.slice(MAX_NAMESERVERS);
  warnings.push(
    `DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${kept.join(' ')} (omitted: ${dropped.join(' ')})`,
  );
  return { ...config, nameservers: kept };
}

/**
 * The kubelet's order: cut to 32 paths, drop any path over 253 characters, then drop paths
 * from the end until the joined line fits in 2048 characters. One warning for all of it.
 */
function fitSearches(config: ResolvConf, warnings: string[]): ResolvConf {
  const dropped: string[] = [];
  let searches = config.searches;
  if (searches.length > MAX_SEARCH_PATHS) {
    dropped.push(...searches.slice(MAX_SEARCH_PATHS));
    searches = searches.slice(0, MAX_SEARCH_PATHS);
  }
  const fitting = searches.filter((s) => s.length <= MAX_SEARCH_PATH_CHARS);
  dropped.unshift(...searches.filter((s) => s.length > MAX_SEARCH_PATH_CHARS));
  searches = fitting;
  let lineLength = searches.join(' ').length;
  if (lineLength > MAX_SEARCH_LINE_CHARS) {
    let keep = searches.length;
    while (keep > 0 && lineLength > MAX_SEARCH_LINE_CHARS) {
      keep--;
      lineLength -= searches[keep]!.length + 1;
    }
    dropped.push(...searches.slice(keep));
    searches = searches.slice(0, keep);
  }
  if (dropped.length === 0) return config;
  warnings.push(
    `DNSConfigForming: Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(' ')} (omitted: ${dropped.map(abbreviate).join(' ')})`,
  );
  return { ...config, searches };
}

/** Long dropped paths are shown by their start and length, so the warning stays one readable line. */
function abbreviate(path: string): string {
  return path.length > 64 ? `${path.slice(0, 40)}…(${path.length} characters)` : path;
}
