// The webhook's view of the cluster: cluster domain, cluster DNS, node cache, node search paths.
// They come from a YAML file (the ConfigMap `kdns-webhook`, key `config.yaml`, which the
// operator keeps in line with its DNS resource) and from flags, flags winning. Parsing is pure
// and names the field of every problem; the caller keeps the last good settings on a bad file.

import { parse as parseYaml } from 'yaml';
import type { AdmissionSettings } from '../poddns/admission.js';
import { validateSearchDomain } from '../poddns/validate.js';
import { FieldPath, formatFieldError } from '../lib/cluster/field.js';
import { kubeletIPString } from '../poddns/kubeletip.js';

/** The file's keys, as users write them. */
const KEYS = ['clusterDomain', 'clusterDNS', 'nodeCacheIP', 'nodeSearches'] as const;

export interface SettingsResult {
  settings?: AdmissionSettings;
  errors: string[];
}

/** Settings from flags alone, or from the file's text merged under them. */
export interface SettingsFlags {
  clusterDomain?: string;
  clusterDNS?: string[];
  nodeCacheIP?: string;
  nodeSearches?: string[];
}

/** What the file sets: any of the settings, each checked only once merged with the flags. */
type SettingsValues = { -readonly [K in keyof AdmissionSettings]?: AdmissionSettings[K] };

export function parseSettingsFile(text: string): { values: SettingsValues; errors: string[] } {
  let doc: unknown;
  try {
    doc = parseYaml(text) ?? {};
  } catch (e) {
    return { values: {}, errors: [`not YAML: ${(e as Error).message.split('\n')[0] ?? ''}`] };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { values: {}, errors: ['must be a mapping of clusterDomain, clusterDNS, nodeCacheIP, nodeSearches'] };
  const map = doc as Record<string, unknown>;
  const errors = Object.keys(map)
    .filter((k) => !(KEYS as readonly string[]).includes(k))
    .map((k) => `${k}: unknown field (known: ${KEYS.join(', ')})`);
  const values: SettingsValues = {};
  readString(map, 'clusterDomain', errors, (v) => (values.clusterDomain = v));
  readStringList(map, 'clusterDNS', errors, (v) => (values.clusterDNS = v));
  readString(map, 'nodeCacheIP', errors, (v) => (values.nodeCacheIP = v));
  readStringList(map, 'nodeSearches', errors, (v) => (values.nodeSearches = v));
  return { values, errors };
}

function readString(map: Record<string, unknown>, key: string, errors: string[], set: (v: string) => void): void {
  const v = map[key];
  if (v === undefined || v === null) return;
  if (typeof v !== 'string') errors.push(`${key}: must be a string, not ${JSON.stringify(v)}`);
  else set(v);
}

function readStringList(map: Record<string, unknown>, key: string, errors: string[], set: (v: string[]) => void): void {
  const v = map[key];
  if (v === undefined || v === null) return;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) errors.push(`${key}: must be a list of strings, not ${JSON.stringify(v)}`);
  else set(v as string[]);
}

/** File values under flag values, then checked as a whole. */
export function resolveSettings(file: SettingsValues, flags: SettingsFlags): SettingsResult {
  const merged: SettingsValues = { ...file };
  if (flags.clusterDomain !== undefined) merged.clusterDomain = flags.clusterDomain;
  if (flags.clusterDNS !== undefined) merged.clusterDNS = flags.clusterDNS;
  if (flags.nodeCacheIP !== undefined) merged.nodeCacheIP = flags.nodeCacheIP;
  if (flags.nodeSearches !== undefined) merged.nodeSearches = flags.nodeSearches;
  const settings: AdmissionSettings = {
    clusterDomain: (merged.clusterDomain ?? 'cluster.local').replace(/\.$/, ''),
    clusterDNS: (merged.clusterDNS ?? []).map(canonicalIP),
    ...(merged.nodeCacheIP !== undefined && merged.nodeCacheIP !== '' ? { nodeCacheIP: canonicalIP(merged.nodeCacheIP) } : {}),
    ...(merged.nodeSearches !== undefined ? { nodeSearches: merged.nodeSearches.map((s) => s.replace(/\.$/, '')) } : {}),
  };
  const errors = checkSettings(settings);
  return errors.length > 0 ? { errors } : { settings, errors };
}

/** As the kubelet writes it (`fd00::a`); an address it would not parse stays as given, for checkSettings to name. */
function canonicalIP(ip: string): string {
  return kubeletIPString(ip) ?? ip;
}

export function checkSettings(s: AdmissionSettings): string[] {
  const errors: string[] = [];
  if (s.clusterDNS.length === 0) errors.push('clusterDNS: required: the cluster DNS Service address (the kubelets\' --cluster-dns)');
  if (s.clusterDNS.length > 3) errors.push(`clusterDNS: at most 3 addresses fit in a resolv.conf, got ${s.clusterDNS.length}`);
  s.clusterDNS.forEach((ip, i) => {
    if (kubeletIPString(ip) === undefined) errors.push(`clusterDNS[${i}]: ${JSON.stringify(ip)} is not an IP address`);
  });
  if (s.nodeCacheIP !== undefined && kubeletIPString(s.nodeCacheIP) === undefined) errors.push(`nodeCacheIP: ${JSON.stringify(s.nodeCacheIP)} is not an IP address`);
  if (s.clusterDomain !== '') {
    for (const e of validateSearchDomain(s.clusterDomain, FieldPath.root('clusterDomain'), false)) errors.push(formatFieldError(e));
  }
  (s.nodeSearches ?? []).forEach((d, i) => {
    for (const e of validateSearchDomain(d, FieldPath.root('nodeSearches').index(i), false)) errors.push(formatFieldError(e));
  });
  return errors;
}
