// The `ap.k8s.io` names of ClusterFirstWithAutopath pods and the candidates they expand to.
//
// A pod with that policy has one search path, `search.<ns>.<zone>.ap.k8s.io`, so libc asks
// `NAME.search.<ns>.<zone>.ap.k8s.io` for a short NAME. The server walks the ClusterFirst search
// list for it: `NAME.<ns>.svc.<zone>`, `NAME.svc.<zone>`, `NAME.<zone>`, NAME under each host
// search path, then `NAME.` itself. Pure functions over presentation names; the handlers do I/O.
// Used by autopath (the cluster side, which expands the names) and searchpath (the node cache
// side, which attaches a pod's search paths to them), and by searchoption.ts.

import { fqdn, isValidDomainName, lowerName, splitLabels } from '../../lib/dns/name.js';

/** The suffix every autopath search name ends in (absolute, lower-case). */
export const AP_ZONE = 'ap.k8s.io.';
const AP_SUFFIX = `.${AP_ZONE}`;
const SEARCH_LABEL = 'search';
/** The resolvers' own limit on search paths (glibc 2.26+, the kubelet): more is not a real pod. */
export const MAX_SEARCH_PATHS = 32;

/** What an autopath name says: who asks (namespace, zone) and for what (base). */
export interface ApName {
  /** The name the application looked up, as the client spelled it, without a trailing dot ("api", "www.Example.test"). */
  base: string;
  /** The pod's namespace, lower-case. */
  namespace: string;
  /** The cluster zone, absolute and lower-case; "" when the pod got no cluster domain. */
  zone: string;
}

/** True for `ap.k8s.io.` and every name below it (`name` lower-case and absolute). */
export function isApName(name: string): boolean {
  return name === AP_ZONE || name.endsWith(AP_SUFFIX);
}

function labelsEqual(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((l, i) => lowerName(l) === b[i]);
}

function apNameAt(rest: readonly string[], searchIndex: number, zoneLabels: readonly string[]): ApName | undefined {
  // A base is needed (a bare `search.<ns>.<zone>` is nothing to look up), and so is a namespace.
  if (searchIndex < 1 || searchIndex + 1 >= rest.length) return undefined;
  if (lowerName(rest[searchIndex] as string) !== SEARCH_LABEL) return undefined;
  return {
    base: rest.slice(0, searchIndex).join('.'),
    namespace: lowerName(rest[searchIndex + 1] as string),
    zone: zoneLabels.length === 0 ? '' : `${zoneLabels.join('.')}.`,
  };
}

/**
 * Splits `NAME.search.<ns>.<zone>.ap.k8s.io.` (case kept in NAME). The zone may have any number
 * of labels, and NAME may itself contain a `search` label, so the split is anchored on the
 * right: first at a zone this server knows (longest first), else at the rightmost `search`
 * label that has a namespace after it. Undefined when the name is not of that form.
 */
export function parseApName(qname: string, knownZones: readonly string[] = []): ApName | undefined {
  if (!isApName(lowerName(fqdn(qname)))) return undefined;
  const labels = splitLabels(qname);
  const rest = labels.slice(0, labels.length - 3);
  const zones = [...knownZones].map((z) => splitLabels(lowerName(z))).sort((a, b) => b.length - a.length);
  for (const zl of zones) {
    if (zl.length === 0 || rest.length < zl.length + 2) continue;
    const tail = rest.slice(rest.length - zl.length);
    if (!labelsEqual(tail, zl)) continue;
    const found = apNameAt(rest, rest.length - zl.length - 2, zl);
    if (found) return found;
  }
  for (let i = rest.length - 2; i >= 1; i--) {
    if (lowerName(rest[i] as string) !== SEARCH_LABEL) continue;
    return apNameAt(rest, i, rest.slice(i + 2).map(lowerName));
  }
  return undefined;
}

/** The search list ClusterFirst gives a pod of `namespace`: `<ns>.svc.<zone> svc.<zone> <zone>`. */
export function clusterSearchPaths(namespace: string, zone: string): string[] {
  if (zone === '') return [];
  return [`${namespace}.svc.${zone}`, `svc.${zone}`, zone];
}

/**
 * A search path as the expansion uses it: trimmed, absolute, lower-case. Undefined for the
 * root (libc never appends it) and for text that is not a domain name.
 */
export function normalizeSearchPath(text: string): string | undefined {
  const t = text.trim();
  if (t === '' || t === '.' || !isValidDomainName(t)) return undefined;
  return lowerName(fqdn(t));
}

/**
 * The names to try for `base`, in order: base under each search path, then base itself.
 * Repeats are asked once, and a candidate under `ap.k8s.io` is never produced (it would only
 * come back to us, or leak the scheme to an upstream).
 */
export function candidateNames(base: string, searchPaths: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (name: string): void => {
    const key = lowerName(name);
    if (seen.has(key) || isApName(key)) return;
    seen.add(key);
    out.push(name);
  };
  for (const path of searchPaths) add(`${base}.${path}`);
  add(`${base}.`);
  return out;
}

/**
 * libc's reading of the search list in a resolv.conf: the last `search` or `domain` line wins,
 * `#` and `;` start comments. Paths come out normalized; invalid ones and the root are dropped.
 */
export function searchFromResolvConf(text: string): string[] {
  let found: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const fields = line.split(/\s+/);
    const keyword = fields[0];
    if (keyword === 'search') found = fields.slice(1);
    else if (keyword === 'domain') found = fields.slice(1, 2);
  }
  const out: string[] = [];
  for (const f of found) {
    const p = normalizeSearchPath(f);
    if (p !== undefined && !out.includes(p)) out.push(p);
  }
  return out.slice(0, MAX_SEARCH_PATHS);
}
