// Finding the pod spec inside a Pod or any object with a pod template, reading its DNS fields
// and the metadata's annotations (where a pod asks kdns for a policy) with their types checked,
// and defaulting it the way the API server does before validation.

import { FieldPath, invalid } from '../lib/cluster/field.js';
import type { FieldError } from '../lib/cluster/field.js';
import type { PodDNSConfig, PodDNSConfigOption, PodDNSParams, PodSpec } from '../lib/cluster/types.js';

/** Where each kind keeps its pod spec; the path is also the prefix of every error. */
export const POD_SPEC_PATHS: Readonly<Record<string, readonly string[]>> = {
  Pod: ['spec'],
  PodTemplate: ['template', 'spec'],
  ReplicationController: ['spec', 'template', 'spec'],
  ReplicaSet: ['spec', 'template', 'spec'],
  Deployment: ['spec', 'template', 'spec'],
  StatefulSet: ['spec', 'template', 'spec'],
  DaemonSet: ['spec', 'template', 'spec'],
  Job: ['spec', 'template', 'spec'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
};

export function isPodBearingKind(kind: string): boolean {
  return Object.hasOwn(POD_SPEC_PATHS, kind);
}

/** A pod spec found in a manifest, ready for validation and resolv.conf computation. */
export interface PodSpecSource {
  kind: string;
  /** metadata.name, or generateName when only that is set; '' when neither is. */
  name: string;
  /** The namespace the pods run in: the object's own, or "default" as kubectl applies it. */
  namespace: string;
  /** `apiVersion` as written ('' when absent): the API server names its version in decoding errors. */
  apiVersion: string;
  specPath: FieldPath;
  /** Where the pods' metadata is: `metadata` in a Pod, `spec.template.metadata` in a Deployment. */
  metadataPath: FieldPath;
  /** The pods' annotations (the template's in a workload): the string-valued ones. */
  annotations: Record<string, string>;
  /**
   * Paths of the fields present that only kdns knows (`spec.dnsParams`): a stock API server's
   * strict decoding refuses the object for them, whatever their content.
   */
  kdnsOnlyFields: string[];
  /** Defaulted (an empty `dnsPolicy` is ClusterFirst) and holding only well-typed DNS fields. */
  spec: PodSpec;
  /**
   * Fields present with the wrong type (left out of `spec`). The API server would fail to decode
   * such an object, so callers report these alone and skip the DNS rules.
   */
  typeErrors: FieldError[];
}

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The object's kind as written, or '' when it has none. */
export function kindOf(obj: Json): string {
  return typeof obj['kind'] === 'string' ? obj['kind'] : '';
}

/** metadata.name, falling back to generateName, for error lines. */
export function nameOf(obj: Json): string {
  const meta = obj['metadata'];
  if (!isRecord(meta)) return '';
  if (typeof meta['name'] === 'string' && meta['name'] !== '') return meta['name'];
  return typeof meta['generateName'] === 'string' ? meta['generateName'] : '';
}

export function namespaceOf(obj: Json): string {
  const meta = obj['metadata'];
  const ns = isRecord(meta) ? meta['namespace'] : undefined;
  return typeof ns === 'string' && ns !== '' ? ns : 'default';
}

/** Reads the pod spec of a pod-bearing object; undefined for any other kind. */
export function readPodSpec(obj: Json): PodSpecSource | undefined {
  const kind = kindOf(obj);
  if (!isPodBearingKind(kind)) return undefined;
  const names = POD_SPEC_PATHS[kind] ?? [];
  const specPath = FieldPath.root(...names);
  // The pod's metadata sits beside its spec: `metadata`, `spec.template.metadata`, ….
  const metadataNames = [...names.slice(0, -1), 'metadata'];
  const metadataPath = FieldPath.root(...metadataNames);
  const errors: FieldError[] = [];
  const raw = dig(obj, names);
  const annotations = readAnnotations(dig(obj, metadataNames), metadataPath, errors);
  const spec = readDNSFields(raw, specPath, errors);
  const kdnsOnlyFields = isRecord(raw) && raw['dnsParams'] !== undefined && raw['dnsParams'] !== null ? [specPath.child('dnsParams').toString()] : [];
  const apiVersion = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : '';
  return { kind, name: nameOf(obj), namespace: namespaceOf(obj), apiVersion, specPath, metadataPath, annotations, kdnsOnlyFields, spec: defaultPodSpec(spec), typeErrors: errors };
}

function dig(obj: Json, names: readonly string[]): unknown {
  let raw: unknown = obj;
  for (const n of names) raw = isRecord(raw) ? raw[n] : undefined;
  return raw;
}

/** metadata.annotations: a map of strings (the API server cannot decode anything else). */
function readAnnotations(rawMetadata: unknown, metadataPath: FieldPath, errors: FieldError[]): Record<string, string> {
  const annotations: Record<string, string> = {};
  const raw = isRecord(rawMetadata) ? rawMetadata['annotations'] : undefined;
  if (raw === undefined || raw === null) return annotations;
  const path = metadataPath.child('annotations');
  if (!isRecord(raw)) {
    errors.push(invalid(path, raw, 'must be a map of strings'));
    return annotations;
  }
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === 'string') annotations[key] = value;
    else errors.push(invalid(path.key(key), value, 'must be a string'));
  }
  return annotations;
}

/** The API server's defaulting of the fields DNS reads: an unset `dnsPolicy` becomes ClusterFirst. */
export function defaultPodSpec(spec: PodSpec): PodSpec {
  return { ...spec, dnsPolicy: spec.dnsPolicy === undefined || spec.dnsPolicy === '' ? 'ClusterFirst' : spec.dnsPolicy };
}

/**
 * Copies the DNS-related fields out of an untyped spec, checking each type. A field of the wrong
 * type becomes an error naming it and is dropped, so later rules only see what they expect.
 */
export function readDNSFields(raw: unknown, path: FieldPath, errors: FieldError[]): PodSpec {
  const spec: PodSpec = {};
  if (raw === undefined || raw === null) return spec;
  if (!isRecord(raw)) {
    errors.push(invalid(path, raw, 'must be an object'));
    return spec;
  }
  const hostNetwork = raw['hostNetwork'];
  if (hostNetwork !== undefined && hostNetwork !== null) {
    if (typeof hostNetwork === 'boolean') spec.hostNetwork = hostNetwork;
    else errors.push(invalid(path.child('hostNetwork'), hostNetwork, 'must be true or false'));
  }
  const policy = raw['dnsPolicy'];
  if (policy !== undefined && policy !== null) {
    if (typeof policy === 'string') spec.dnsPolicy = policy;
    else errors.push(invalid(path.child('dnsPolicy'), policy, 'must be a string'));
  }
  const dnsConfig = readDNSConfig(raw['dnsConfig'], path.child('dnsConfig'), errors);
  if (dnsConfig !== undefined) spec.dnsConfig = dnsConfig;
  const dnsParams = readDNSParams(raw['dnsParams'], path.child('dnsParams'), errors);
  if (dnsParams !== undefined) spec.dnsParams = dnsParams;
  return spec;
}

function readDNSConfig(raw: unknown, path: FieldPath, errors: FieldError[]): PodDNSConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isRecord(raw)) {
    errors.push(invalid(path, raw, 'must be an object'));
    return undefined;
  }
  const config: PodDNSConfig = {};
  const nameservers = readStringList(raw['nameservers'], path.child('nameservers'), errors);
  if (nameservers !== undefined) config.nameservers = nameservers;
  const searches = readStringList(raw['searches'], path.child('searches'), errors);
  if (searches !== undefined) config.searches = searches;
  const options = readOptionList(raw['options'], path.child('options'), errors);
  if (options !== undefined) config.options = options;
  return config;
}

function readDNSParams(raw: unknown, path: FieldPath, errors: FieldError[]): PodDNSParams | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isRecord(raw)) {
    errors.push(invalid(path, raw, 'must be an object'));
    return undefined;
  }
  const params: PodDNSParams = {};
  const rawCustom = raw['custom'];
  if (rawCustom === undefined || rawCustom === null) return params;
  const customPath = path.child('custom');
  if (!isRecord(rawCustom)) {
    errors.push(invalid(customPath, rawCustom, 'must be an object'));
    return params;
  }
  const custom: NonNullable<PodDNSParams['custom']> = {};
  for (const field of ['search', 'searchPaths', 'options'] as const) {
    const list = readStringList(rawCustom[field], customPath.child(field), errors);
    if (list !== undefined) custom[field] = list;
  }
  params.custom = custom;
  return params;
}

function readStringList(raw: unknown, path: FieldPath, errors: FieldError[]): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) {
    errors.push(invalid(path, raw, 'must be a list of strings'));
    return undefined;
  }
  const out: string[] = [];
  raw.forEach((v: unknown, i) => {
    if (typeof v === 'string') out.push(v);
    else errors.push(invalid(path.index(i), v, 'must be a string'));
  });
  return out;
}

function readOptionList(raw: unknown, path: FieldPath, errors: FieldError[]): PodDNSConfigOption[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) {
    errors.push(invalid(path, raw, 'must be a list of {name, value} objects'));
    return undefined;
  }
  const out: PodDNSConfigOption[] = [];
  raw.forEach((v: unknown, i) => {
    const at = path.index(i);
    if (!isRecord(v)) {
      errors.push(invalid(at, v, 'must be an object with name and value'));
      return;
    }
    const option: PodDNSConfigOption = {};
    let ok = true;
    for (const field of ['name', 'value'] as const) {
      const s = v[field];
      if (s === undefined || s === null) continue;
      if (typeof s === 'string') option[field] = s;
      else {
        errors.push(invalid(at.child(field), s, 'must be a string'));
        ok = false;
      }
    }
    if (ok) out.push(option);
  });
  return out;
}
