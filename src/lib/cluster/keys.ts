// The text forms the store's Maps are keyed by: one canonical form of each IP address, and one
// key per object (`Kind ns/name`), flat so that a key kept as long as its object costs its
// length and no more.

import { formatIPv4, formatIPv6, parseIPv4, parseIPv6 } from '../dns/ip.js';
import type { ClusterObject } from './types.js';

/**
 * The one text form of an address, so "FD00::1" from a manifest and "fd00::1" from a reverse
 * name meet in the same Map key. undefined for text that is not an IP.
 */
export function canonicalIP(text: string): string | undefined {
  let canonical: string;
  if (text.includes(':')) {
    const b = parseIPv6(text);
    if (!b) return undefined;
    canonical = formatIPv6(b);
  } else {
    const b = parseIPv4(text);
    if (!b) return undefined;
    canonical = formatIPv4(b);
  }
  // Keep the string we were given when it already is canonical: the formatted one is built by
  // concatenation, a tree of parts that costs several times its length to keep.
  return canonical === text ? text : flat(canonical);
}

/**
 * A flat copy of a string built by concatenation. V8 keeps `a + b` as a tree of parts (32 bytes
 * a node, and the parts stay alive with it); a Map key lives as long as what it names, so keys
 * kept for 100,000 objects are worth one copy each.
 */
export function flat(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, 'utf8').toString('utf8');
}

/** Kinds without a namespace. */
const CLUSTER_SCOPED: ReadonlySet<string> = new Set(['Namespace', 'Node']);

/**
 * `Kind ns/name`, or `Kind name` for Namespaces and Nodes; flat, as it is kept as a Map key (see
 * flat()). A namespaced object written without a namespace is in "default", as the API server
 * would put it, so one object has one key however its manifest spells that.
 */
export function objectKey(kind: string, namespace: string | undefined, name: string): string {
  const ns = namespaceOf(kind, namespace);
  return flat(ns === undefined ? `${kind} ${name}` : `${kind} ${ns}/${name}`);
}

/** The namespace an object of this kind is in: none for Namespaces and Nodes, else "default" when unset. */
export function namespaceOf(kind: string, namespace: string | undefined): string | undefined {
  return CLUSTER_SCOPED.has(kind) ? undefined : namespace || 'default';
}

/** The inverse of objectKey (kinds have no space, namespaces and names no slash). */
export function parseObjectKey(key: string): { kind: ClusterObject['kind']; namespace: string | undefined; name: string } {
  const space = key.indexOf(' ');
  const kind = key.slice(0, space) as ClusterObject['kind'];
  const rest = key.slice(space + 1);
  const slash = rest.indexOf('/');
  return slash < 0 ? { kind, namespace: undefined, name: rest } : { kind, namespace: rest.slice(0, slash), name: rest.slice(slash + 1) };
}
