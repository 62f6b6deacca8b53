// From a DNS resource (valid or not) to the settings the operator renders: what each forwarding
// entry means, and which parts were left out and why. Broken parts never take the rest down:
// an invalid forwarding entry is dropped alone, an invalid upstreamResolvers falls back to
// /etc/resolv.conf, invalid cache or log settings fall back to their defaults, and an invalid
// nodePlacement keeps the current placement.

import type { DNSLogLevel, ForwardingPolicy, ManagementState } from '../cluster/dnsresource.js';
import type { FieldError } from '../cluster/field.js';
import { formatFieldError } from '../cluster/field.js';
import type { Toleration } from '../cluster/types.js';
import { joinHostPort, parseGoDurationSeconds } from './addresses.js';
import { isRecord } from './schema.js';
import { DEFAULT_CLUSTER_DOMAIN, validateDNSResource } from './validate.js';

export const RESOLV_CONF = '/etc/resolv.conf';
export const DEFAULT_POSITIVE_TTL = 900;
export const DEFAULT_NEGATIVE_TTL = 30;

export interface TLSSettings {
  serverName: string;
  /** Name of the ConfigMap holding ca-bundle.crt, when not the system trust store. */
  caBundle?: string;
}

/** One forwarding rule, from either shape, ready to render. */
export interface ForwardingEntry {
  /** Where it came from: "spec.servers[0]" or "spec.pluginConfig.forwardPlugins[1]". */
  source: string;
  /** The server's name, or the proposal entry's domain. */
  label: string;
  /** Relative, lower-case zones. */
  zones: string[];
  /** As written: IP, IP:port, [IPv6]:port. */
  upstreams: string[];
  policy: ForwardingPolicy;
  forceTcp: boolean;
  tls?: TLSSettings;
}

/** Where the default (".") block forwards. */
export interface DefaultForwarding {
  /** /etc/resolv.conf or host[:port] in CoreDNS's syntax. */
  upstreams: string[];
  policy: ForwardingPolicy;
  forceTcp: boolean;
  tls?: TLSSettings;
}

export interface PlacementSpec {
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
}

/** A part of the spec that was not used, the errors that caused it, and what was done instead. */
export interface LeftOut {
  /** The part: "spec.servers[1]", "spec.upstreamResolvers", … */
  part: string;
  /** The server's name or the domain, when the part is a forwarding entry. */
  label?: string;
  errors: FieldError[];
  instead: string;
}

export interface DNSSettings {
  forwarding: ForwardingEntry[];
  defaultForwarding: DefaultForwarding;
  positiveTTL: number;
  negativeTTL: number;
  logLevel: DNSLogLevel;
  operatorLogLevel: DNSLogLevel;
  managementState: ManagementState;
  /** Undefined when nodePlacement is invalid: keep the current placement. */
  placement?: PlacementSpec;
  leftOut: LeftOut[];
}

export type InterpretResult = { ok: true; settings: DNSSettings } | { ok: false; errors: FieldError[] };

/** Errors that make the object unusable as a whole: nothing is rendered, the last good objects stay. */
function isFatal(e: FieldError): boolean {
  return ['<object>', 'apiVersion', 'kind', 'metadata', 'metadata.name', 'spec'].includes(e.field);
}

/** The part of the spec an error belongs to: the unit that is dropped or defaulted together. */
export function partOf(field: string): string {
  const entry = /^spec\.(servers|pluginConfig\.forwardPlugins)\[\d+\]/.exec(field);
  if (entry) return entry[0];
  const top = /^spec\.(pluginConfig\.forwardPlugins|pluginConfig|servers|upstreamResolvers|cache|nodePlacement|logLevel|operatorLogLevel|managementState)\b/.exec(field);
  if (top) return top[0] === 'spec.pluginConfig.forwardPlugins' ? 'spec.pluginConfig' : top[0];
  return field;
}

/** Validates and interprets a DNS resource; see the file comment for what happens to broken parts. */
export function interpretDNS(obj: unknown, clusterDomain = DEFAULT_CLUSTER_DOMAIN): InterpretResult {
  const errors = validateDNSResource(obj, { clusterDomain });
  const fatal = errors.filter(isFatal);
  if (fatal.length > 0 || !isRecord(obj)) return { ok: false, errors: fatal };
  const spec = obj['spec'] ?? {};
  if (!isRecord(spec)) return { ok: false, errors: errors.filter((e) => e.field === 'spec') };

  const byPart = new Map<string, FieldError[]>();
  for (const e of errors) byPart.set(partOf(e.field), [...(byPart.get(partOf(e.field)) ?? []), e]);
  const broken = (part: string): boolean => byPart.has(part);
  const leftOut: LeftOut[] = [];
  const leave = (part: string, instead: string, label?: string): void => {
    leftOut.push({ part, ...(label === undefined ? {} : { label }), errors: byPart.get(part) ?? [], instead });
    byPart.delete(part);
  };

  const forwarding: ForwardingEntry[] = [];
  if (broken('spec.servers')) leave('spec.servers', 'no spec.servers entry is used');
  else forwarding.push(...serverEntries(spec['servers'], broken, leave));
  if (broken('spec.pluginConfig')) leave('spec.pluginConfig', 'no spec.pluginConfig.forwardPlugins entry is used');
  else forwarding.push(...proposalEntries(isRecord(spec['pluginConfig']) ? spec['pluginConfig']['forwardPlugins'] : undefined, broken, leave));

  let defaultForwarding = DEFAULT_FORWARDING;
  if (broken('spec.upstreamResolvers')) leave('spec.upstreamResolvers', `the default server forwards to ${RESOLV_CONF}`);
  else if (isRecord(spec['upstreamResolvers'])) defaultForwarding = upstreamResolvers(spec['upstreamResolvers']);

  let positiveTTL = DEFAULT_POSITIVE_TTL;
  let negativeTTL = DEFAULT_NEGATIVE_TTL;
  if (broken('spec.cache')) leave('spec.cache', `cache caps stay at the defaults (${DEFAULT_POSITIVE_TTL}s, ${DEFAULT_NEGATIVE_TTL}s)`);
  else if (isRecord(spec['cache'])) {
    positiveTTL = ttlSeconds(spec['cache']['positiveTTL'], DEFAULT_POSITIVE_TTL);
    negativeTTL = ttlSeconds(spec['cache']['negativeTTL'], DEFAULT_NEGATIVE_TTL);
  }

  const logLevel = enumOr<DNSLogLevel>(spec['logLevel'], 'Normal', 'spec.logLevel', broken, leave);
  const operatorLogLevel = enumOr<DNSLogLevel>(spec['operatorLogLevel'], 'Normal', 'spec.operatorLogLevel', broken, leave);
  const managementState = enumOr<ManagementState>(spec['managementState'], 'Managed', 'spec.managementState', broken, leave);

  let placement: PlacementSpec | undefined = {};
  if (broken('spec.nodePlacement')) {
    leave('spec.nodePlacement', 'the current placement is kept');
    placement = undefined;
  } else if (isRecord(spec['nodePlacement'])) {
    placement = spec['nodePlacement'] as PlacementSpec;
  }
  // Whatever is left is an unknown top-level field: reported, and without effect.
  for (const part of [...byPart.keys()]) leave(part, 'ignored');

  return { ok: true, settings: { forwarding, defaultForwarding, positiveTTL, negativeTTL, logLevel, operatorLogLevel, managementState, placement, leftOut } };
}

const DEFAULT_FORWARDING: DefaultForwarding = { upstreams: [RESOLV_CONF], policy: 'Sequential', forceTcp: false };

type Broken = (part: string) => boolean;
type Leave = (part: string, instead: string, label?: string) => void;

function serverEntries(servers: unknown, broken: Broken, leave: Leave): ForwardingEntry[] {
  if (!Array.isArray(servers)) return [];
  const out: ForwardingEntry[] = [];
  servers.forEach((s: Record<string, unknown>, i) => {
    const part = `spec.servers[${i}]`;
    const label = typeof s?.['name'] === 'string' ? s['name'] : undefined;
    if (broken(part)) return leave(part, 'left out of the Corefile', label);
    const fp = s['forwardPlugin'] as Record<string, unknown>;
    out.push({
      source: part,
      label: s['name'] as string,
      zones: (s['zones'] as string[]).map(normalizeZone),
      upstreams: fp['upstreams'] as string[],
      policy: (fp['policy'] as ForwardingPolicy | undefined) ?? 'Random',
      forceTcp: fp['protocolStrategy'] === 'TCP',
      ...tlsOf(fp['transportConfig']),
    });
  });
  return out;
}

function proposalEntries(plugins: unknown, broken: Broken, leave: Leave): ForwardingEntry[] {
  if (!Array.isArray(plugins)) return [];
  const out: ForwardingEntry[] = [];
  plugins.forEach((p: Record<string, unknown>, i) => {
    const part = `spec.pluginConfig.forwardPlugins[${i}]`;
    const label = typeof p?.['domain'] === 'string' ? p['domain'] : undefined;
    if (broken(part)) return leave(part, 'left out of the Corefile', label);
    out.push({
      source: part,
      label: p['domain'] as string,
      zones: [normalizeZone(p['domain'] as string)],
      upstreams: p['nameServers'] as string[],
      policy: (p['policy'] as ForwardingPolicy | undefined) ?? 'Random',
      forceTcp: false,
    });
  });
  return out;
}

function upstreamResolvers(ur: Record<string, unknown>): DefaultForwarding {
  const listed = Array.isArray(ur['upstreams']) ? (ur['upstreams'] as Array<Record<string, unknown>>) : [];
  const upstreams: string[] = [];
  for (const u of listed) {
    const addr = u['type'] === 'Network' ? joinHostPort(u['address'] as string, u['port'] as number | undefined) : RESOLV_CONF;
    // Listing the same upstream twice would only skew the policy; keep the first.
    if (!upstreams.some((known) => sameUpstream(known, addr))) upstreams.push(addr);
  }
  return {
    upstreams: upstreams.length > 0 ? upstreams : [RESOLV_CONF],
    policy: (ur['policy'] as ForwardingPolicy | undefined) ?? 'Sequential',
    forceTcp: ur['protocolStrategy'] === 'TCP',
    ...tlsOf(ur['transportConfig']),
  };
}

/** 10.0.0.1 and 10.0.0.1:53 are the same server; so are FD00::1 and fd00::1. */
function sameUpstream(a: string, b: string): boolean {
  const norm = (s: string): string => s.toLowerCase().replace(/^\[(.*)\]:53$/, '$1').replace(/^([0-9.]+):53$/, '$1');
  return norm(a) === norm(b);
}

function tlsOf(transportConfig: unknown): { tls?: TLSSettings } {
  if (!isRecord(transportConfig) || transportConfig['transport'] !== 'TLS') return {};
  const tls = transportConfig['tls'] as Record<string, unknown>;
  const caBundle = isRecord(tls['caBundle']) ? (tls['caBundle']['name'] as string) : undefined;
  return { tls: { serverName: tls['serverName'] as string, ...(caBundle === undefined ? {} : { caBundle }) } };
}

function normalizeZone(zone: string): string {
  return zone.toLowerCase().replace(/\.$/, '');
}

/** Whole seconds of a TTL cap; zero or absent means the default, as CoreDNS refuses a zero cap. */
function ttlSeconds(value: unknown, fallback: number): number {
  if (typeof value !== 'string') return fallback;
  const seconds = Math.round(parseGoDurationSeconds(value) ?? 0);
  return seconds > 0 ? seconds : fallback;
}

function enumOr<T extends string>(value: unknown, fallback: T, part: string, broken: Broken, leave: Leave): T {
  if (broken(part)) {
    leave(part, `${fallback} is used`);
    return fallback;
  }
  return typeof value === 'string' && value !== '' ? (value as T) : fallback;
}

/** One line per left-out part, for logs and the status: `spec.servers[1] ("bar"): left out of the Corefile: <errors>`. */
export function describeLeftOut(l: LeftOut): string {
  const who = l.label === undefined ? l.part : `${l.part} (${JSON.stringify(l.label)})`;
  return `${who}: ${l.instead}: ${l.errors.map(formatFieldError).join('; ')}`;
}
