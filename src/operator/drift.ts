// Drift: whether an applied object still holds what kdns wants in it. Like OpenShift's DNS
// operator, this compares the fields kdns manages, not a stamp kdns wrote: someone's
// `kubectl edit` keeps the stamp but changes the fields. It compares the way server-side apply
// would write, so an apply after a "drifted" answer changes something, and an object that
// answers "no drift" would not change if applied:
//   - only fields the desired object sets are compared; what the API server defaults
//     (imagePullPolicy, sessionAffinity, clusterIPs, …) and what others add (a label, an
//     annotation, a sidecar container) is not kdns's and is left alone;
//   - a node selector (and a Service's selector) is one value, as in core/v1: a key someone
//     added is drift;
//   - lists whose items all carry a `name` (containers, volumes, ports) are matched by name;
//     other lists (args, tolerations) are one value each and compare whole.

import type { OwnedObject } from './objects.js';

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isKeyedList(v: readonly Json[]): boolean {
  return v.length > 0 && v.every((i) => isObject(i) && typeof i['name'] === 'string');
}

function deepEqual(a: Json, b: Json): boolean {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return a === b;
}

/** Maps that core/v1 marks atomic: compared (and applied) as one value. */
function isAtomicMap(path: string, kind: string): boolean {
  return path.endsWith('.nodeSelector') || (kind === 'Service' && path === 'spec.selector');
}

function walk(want: Json, have: Json, path: string, kind: string): string | undefined {
  if (isObject(want)) {
    if (!isObject(have)) return path;
    if (isAtomicMap(path, kind)) return deepEqual(want, have) ? undefined : path;
    for (const [k, v] of Object.entries(want)) {
      const d = walk(v, have[k], path === '' ? k : `${path}.${k}`, kind);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(have)) return path;
    if (isKeyedList(want)) {
      for (const item of want as Array<Record<string, Json>>) {
        const name = item['name'] as string;
        const d = walk(item, have.find((h) => isObject(h) && h['name'] === name), `${path}[${name}]`, kind);
        if (d !== undefined) return d;
      }
      return undefined;
    }
    // An atomic list is one value: an apply replaces it whole, so it compares whole.
    return deepEqual(want, have) ? undefined : path;
  }
  return want === have ? undefined : path;
}

/**
 * The first field (`spec.template.spec.nodeSelector`, `data.Corefile`,
 * `spec.template.spec.containers[dns].image`) whose live value is not the desired one, or
 * undefined when the live object holds everything desired.
 */
export function driftOf(desired: OwnedObject, live: OwnedObject): string | undefined {
  const { apiVersion: _v, kind: _k, ...fields } = desired;
  return walk(fields, live, '', desired.kind);
}
