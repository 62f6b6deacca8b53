// What the API server lets an update change in a Pod's spec (ValidatePodUpdate in
// pkg/apis/core/validation): container and init container images, activeDeadlineSeconds (set,
// or lowered), tolerations (added, or their tolerationSeconds changed), scheduling gates
// (removed), terminationGracePeriodSeconds (from a negative value to 1), and on a pod that
// still has scheduling gates, additions to its nodeSelector. Anything else is refused as one
// error on `spec`, in the API server's words, followed by what changed.
//
// The specs are compared as written: give the stored object (`kubectl get pod NAME -o yaml`)
// and the whole object as it would be sent, not a trimmed manifest. As in the API server's
// comparison, a field written as null, "", [] or {} is the same as one left out. The API server
// appends a Go diff of its internal structs; kdns appends its own: one `-`/`+` pair per changed
// field, JSON paths and values, at most MAX_DIFF_FIELDS fields.

import { FieldPath, forbidden, invalid, required } from '../lib/cluster/field.js';
import type { FieldError } from '../lib/cluster/field.js';

/** The fields the API server names as updatable, in its words and order. */
export const UPDATABLE_POD_SPEC_FIELDS: readonly string[] = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

export const FORBIDDEN_UPDATE_MESSAGE = `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS.join(',')}`;

/** Changed fields shown after the message; the rest are counted. */
export const MAX_DIFF_FIELDS = 10;
/** A value longer than this (as JSON) is cut, so one changed volume does not fill the screen. */
const MAX_VALUE_CHARS = 120;
const MAX_INT32 = 2147483647;

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Null, "", [] and {} are what an unset field decodes to, so they compare as absent. */
function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isRecord(v) && Object.keys(v).length === 0);
}

/** Deep equality with empty values as absent (the API server's semantic equality on decoded objects). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (isEmpty(a) || isEmpty(b)) return isEmpty(a) && isEmpty(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameValue(x, b[i]));
  }
  if (isRecord(a) || isRecord(b)) {
    if (!isRecord(a) || !isRecord(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!sameValue(a[k], b[k])) return false;
    return true;
  }
  return a === b;
}

/**
 * The API server's verdict on changing `oldPod` into `newPod` (both Pods as JSON objects), for
 * what it checks beyond validating `newPod` itself.
 */
export function validatePodUpdate(newPod: Json, oldPod: Json): FieldError[] {
  const spec = FieldPath.root('spec');
  const newSpec = isRecord(newPod['spec']) ? newPod['spec'] : {};
  const oldSpec = isRecord(oldPod['spec']) ? oldPod['spec'] : {};
  const errors: FieldError[] = [];

  for (const key of ['containers', 'initContainers']) {
    const found = containerUpdateErrors(list(newSpec[key]), list(oldSpec[key]), spec.child(key));
    errors.push(...found.errors);
    if (found.stop) return errors;
  }

  const deadline = deadlineErrors(newSpec['activeDeadlineSeconds'], oldSpec['activeDeadlineSeconds'], spec.child('activeDeadlineSeconds'));
  errors.push(...deadline.errors);
  if (deadline.stop) return errors;

  errors.push(...onlyAddedTolerations(list(newSpec['tolerations']), list(oldSpec['tolerations']), spec.child('tolerations')));
  errors.push(...onlyDeletedSchedulingGates(list(newSpec['schedulingGates']), list(oldSpec['schedulingGates']), spec.child('schedulingGates')));
  if (sameValue(newSpec, oldSpec)) return errors;

  const munged = withUpdatableFieldsOf(newSpec, oldSpec);
  if (list(oldSpec['schedulingGates']).length > 0 && !sameValue(munged['nodeSelector'], oldSpec['nodeSelector'])) {
    // A gated pod may gain nodeSelector entries, not lose or change them.
    if (!onlyAdditions(munged['nodeSelector'], oldSpec['nodeSelector'])) {
      errors.push(invalidShown(spec.child('nodeSelector'), munged['nodeSelector'], 'only additions to spec.nodeSelector are allowed (no mutations or deletions)'));
    }
    munged['nodeSelector'] = oldSpec['nodeSelector'];
  }
  if (!sameValue(munged, oldSpec)) errors.push(forbidden(spec, `${FORBIDDEN_UPDATE_MESSAGE}\n${specDiff(oldSpec, munged)}`));
  return errors;
}

/** The same number of containers, each with an image without surrounding spaces. */
function containerUpdateErrors(newContainers: unknown[], oldContainers: unknown[], path: FieldPath): { errors: FieldError[]; stop: boolean } {
  if (newContainers.length !== oldContainers.length) return { errors: [forbidden(path, 'pod updates may not add or remove containers')], stop: true };
  const errors: FieldError[] = [];
  newContainers.forEach((c, i) => {
    const image = isRecord(c) && typeof c['image'] === 'string' ? c['image'] : '';
    if (image === '') errors.push(required(path.index(i).child('image')));
    else if (image.trim() !== image) errors.push(invalid(path.index(i).child('image'), image, 'must not have leading or trailing whitespace'));
  });
  return { errors, stop: false };
}

/** activeDeadlineSeconds may be set, or lowered, never raised or removed. */
function deadlineErrors(newValue: unknown, oldValue: unknown, path: FieldPath): { errors: FieldError[]; stop: boolean } {
  const isSet = (v: unknown): v is number => typeof v === 'number';
  if (isSet(newValue)) {
    if (newValue < 0 || newValue > MAX_INT32) return { errors: [invalid(path, newValue, `must be between 0 and ${MAX_INT32}, inclusive`)], stop: true };
    if (isSet(oldValue) && oldValue < newValue) return { errors: [invalid(path, newValue, 'must be less than or equal to previous value')], stop: true };
    return { errors: [], stop: false };
  }
  if (isSet(oldValue)) return { errors: [invalid(path, null, 'must not update from a positive integer to nil value')], stop: false };
  return { errors: [], stop: false };
}

/** Every old toleration must still be there, but for its tolerationSeconds. */
function onlyAddedTolerations(newTolerations: unknown[], oldTolerations: unknown[], path: FieldPath): FieldError[] {
  const withoutSeconds = (t: unknown): unknown => (isRecord(t) ? { ...t, tolerationSeconds: undefined } : t);
  for (const old of oldTolerations) {
    if (!newTolerations.some((t) => sameValue(withoutSeconds(t), withoutSeconds(old)))) {
      return [forbidden(path, 'existing toleration can not be modified except its tolerationSeconds')];
    }
  }
  return [];
}

/** Scheduling gates may only be removed: one error per new gate (at its last index). */
function onlyDeletedSchedulingGates(newGates: unknown[], oldGates: unknown[], path: FieldPath): FieldError[] {
  const nameOf = (g: unknown): string => (isRecord(g) && typeof g['name'] === 'string' ? g['name'] : '');
  const added = new Map<string, number>();
  newGates.forEach((g, i) => added.set(nameOf(g), i));
  for (const g of oldGates) added.delete(nameOf(g));
  return [...added].sort((a, b) => a[1] - b[1]).map(([name, i]) => forbidden(path.index(i).child('name'), `only deletion is allowed, but found new scheduling gate '${name}'`));
}

/** `newSpec` with the fields an update may change taken from `oldSpec`, as the API server munges it. */
function withUpdatableFieldsOf(newSpec: Json, oldSpec: Json): Json {
  const munged: Json = { ...newSpec };
  for (const key of ['containers', 'initContainers']) {
    const old = list(oldSpec[key]);
    if (Array.isArray(newSpec[key])) munged[key] = (newSpec[key] as unknown[]).map((c, i) => (isRecord(c) ? { ...c, image: (old[i] as Json | undefined)?.['image'] } : c));
  }
  munged['activeDeadlineSeconds'] = oldSpec['activeDeadlineSeconds'];
  munged['schedulingGates'] = oldSpec['schedulingGates'];
  munged['tolerations'] = oldSpec['tolerations'];
  const oldGrace = oldSpec['terminationGracePeriodSeconds'];
  if (typeof oldGrace === 'number' && oldGrace < 0 && munged['terminationGracePeriodSeconds'] === 1) munged['terminationGracePeriodSeconds'] = oldGrace;
  return munged;
}

function onlyAdditions(newMap: unknown, oldMap: unknown): boolean {
  const now = isRecord(newMap) ? newMap : {};
  return Object.entries(isRecord(oldMap) ? oldMap : {}).every(([k, v]) => sameValue(now[k], v));
}

/** A map or list as a field error's value: printed as JSON, as the API server prints it, and kept as itself in `-o json`. */
class JsonValue {
  constructor(readonly value: unknown) {}
  toString(): string {
    return JSON.stringify(this.value ?? null);
  }
  toJSON(): unknown {
    return this.value ?? null;
  }
}

function invalidShown(path: FieldPath, value: unknown, detail: string): FieldError {
  return invalid(path, new JsonValue(value), detail);
}

/** `- path: old` / `+ path: new` for each changed field (leaf), at most MAX_DIFF_FIELDS of them. */
export function specDiff(oldSpec: Json, newSpec: Json): string {
  const changes: string[][] = [];
  collectChanges(oldSpec, newSpec, 'spec', changes);
  const lines = changes.slice(0, MAX_DIFF_FIELDS).flat();
  if (changes.length > MAX_DIFF_FIELDS) lines.push(`… and ${changes.length - MAX_DIFF_FIELDS} more changed fields`);
  return lines.join('\n');
}

function collectChanges(a: unknown, b: unknown, path: string, out: string[][]): void {
  if (sameValue(a, b)) return;
  if (isRecord(a) && isRecord(b)) {
    const keys = [...Object.keys(a), ...Object.keys(b).filter((k) => !Object.hasOwn(a, k))];
    for (const k of keys) collectChanges(a[k], b[k], `${path}.${k}`, out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) collectChanges(a[i], b[i], `${path}[${i}]`, out);
    return;
  }
  const pair: string[] = [];
  if (!isEmpty(a)) pair.push(`- ${path}: ${shown(a)}`);
  if (!isEmpty(b)) pair.push(`+ ${path}: ${shown(b)}`);
  out.push(pair);
}

function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}
