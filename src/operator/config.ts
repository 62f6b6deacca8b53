// From a DNS resource (valid or not) to the settings the operator renders: what each forwarding
// entry means, and which parts were left out and why. Broken parts never take the rest down:
// an invalid forwarding entry is dropped alone, an invalid upstreamResolvers falls back to
// /etc/resolv.conf, invalid cache or log settings fall back to their defaults, and an invalid
// nodePlacement keeps the current placement.

import type { DNSLogLevel, ForwardingPolicy, ManagementState } from '../lib/cluster/dnsresource.js';
import type { FieldError } from '../lib/cluster/field.js';
import { formatFieldError } from '../lib/cluster/field.js';
import type { Toleration } from '../lib/cluster/types.js';
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
  /** Identity across edits: "server:NAME" or "domain:DOMAIN". */
  key: string;
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

/**
 * What was applied last time, so a part that turns invalid keeps its last good value instead of
 * disappearing: an upstream typo must not silently stop forwarding a zone that worked.
 */
export interface LastGood {
  forwarding: ForwardingEntry[];
  defaultForwarding: DefaultForwarding;
  positiveTTL: number;
  negativeTTL: number;
  logLevel: DNSLogLevel;
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
  /** The values used now, to remember as the last good ones. */
  lastGood: LastGood;
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

/**
 * Validates and interprets a DNS resource; see the file comment for what happens to broken parts.
 * `lastGood` (from the objects applied before) supplies the values broken parts keep.
 */
export function interpretDNS(obj: unknown, clusterDomain = DEFAULT_CLUSTER_DOMAIN, lastGood?: LastGood): InterpretResult {
  const errors = validateDNSResource(obj, { clusterDomain });
  const fatal = errors.filter(isFatal);
  if (fatal.length > 0 || !isRecord(obj)) return { ok: false, errors: fatal };
  const spec = obj['spec'] ?? {};
  if (!isRecord(spec)) return { ok: false, errors: errors.filter((e) => e.field === 'spec') };

  const byPart = new Map<string, FieldError[]>();
  for (const e of errors) byPart.set(partOf(e.field), [...(byPart.get(partOf(e.field)) ?? []), e]);
  const leftOut: LeftOut[] = [];
  const parts: Parts = {
    broken: (part) => byPart.has(part),
    leave: (part, instead, label) => {
      leftOut.push({ part, ...(label === undefined ? {} : { label }), errors: byPart.get(part) ?? [], instead });
      byPart.delete(part);
    },
    lastGood: new Map((lastGood?.forwarding ?? []).map((f) => [f.key, f])),
  };

  const forwarding = dropClashingKept([
    ...entriesOf('spec.servers', spec['servers'], serverEntry, parts),
    ...entriesOf('spec.pluginConfig', isRecord(spec['pluginConfig']) ? spec['pluginConfig']['forwardPlugins'] : undefined, proposalEntry, parts, 'spec.pluginConfig.forwardPlugins'),
  ], leftOut);

  let defaultForwarding = DEFAULT_FORWARDING;
  if (parts.broken('spec.upstreamResolvers')) {
    defaultForwarding = lastGood?.defaultForwarding ?? DEFAULT_FORWARDING;
    parts.leave('spec.upstreamResolvers', lastGood ? 'the last good upstreams are kept' : `the default server forwards to ${RESOLV_CONF}`);
  } else if (isRecord(spec['upstreamResolvers'])) defaultForwarding = upstreamResolvers(spec['upstreamResolvers']);

  let positiveTTL = DEFAULT_POSITIVE_TTL;
  let negativeTTL = DEFAULT_NEGATIVE_TTL;
  if (parts.broken('spec.cache')) {
    positiveTTL = lastGood?.positiveTTL ?? DEFAULT_POSITIVE_TTL;
    negativeTTL = lastGood?.negativeTTL ?? DEFAULT_NEGATIVE_TTL;
    parts.leave('spec.cache', `cache caps stay at ${positiveTTL}s and ${negativeTTL}s`);
  } else if (isRecord(spec['cache'])) {
    positiveTTL = ttlSeconds(spec['cache']['positiveTTL'], DEFAULT_POSITIVE_TTL);
    negativeTTL = ttlSeconds(spec['cache']['negativeTTL'], DEFAULT_NEGATIVE_TTL);
  }

  const logLevel = enumOr<DNSLogLevel>(spec['logLevel'], lastGood?.logLevel ?? 'Normal', 'spec.logLevel', parts);
  const operatorLogLevel = enumOr<DNSLogLevel>(spec['operatorLogLevel'], 'Normal', 'spec.operatorLogLevel', parts);
  const managementState = enumOr<ManagementState>(spec['managementState'], 'Managed', 'spec.managementState', parts);

  let placement: PlacementSpec | undefined = {};
  if (parts.broken('spec.nodePlacement')) {
    parts.leave('spec.nodePlacement', 'the current placement is kept');
    placement = undefined;
  } else if (isRecord(spec['nodePlacement'])) {
    placement = spec['nodePlacement'] as PlacementSpec;
  }
  // Whatever is left is an unknown top-level field: reported, and without effect.
  for (const part of [...byPart.keys()]) parts.leave(part, 'ignored');

  return {
    ok: true,
    settings: {
      forwarding,
      defaultForwarding,
      positiveTTL,
      negativeTTL,
      logLevel,
      operatorLogLevel,
      managementState,
      placement,
      leftOut,
      lastGood: { forwarding, defaultForwarding, positiveTTL, negativeTTL, logLevel },
    },
  };
}

interface Parts {
  broken: (part: string) => boolean;
  leave: (part: string, instead: string, label?: string) => void;
  lastGood: ReadonlyMap<string, ForwardingEntry>;
}

/** A forwarding entry's identity and label from its raw form, and the entry when the raw form is valid. */
type EntryReader = (raw: Record<string, unknown>, source: string) => { key?: string; label?: string; entry: () => ForwardingEntry };

const serverEntry: EntryReader = (s, source) => {
  const name = typeof s['name'] === 'string' ? s['name'] : undefined;
  return {
    ...(name === undefined ? {} : { key: `server:${name}`, label: name }),
    entry: () => {
      const fp = s['forwardPlugin'] as Record<string, unknown>;
      return {
        key: `server:${name}`,
        source,
        label: name as string,
        zones: (s['zones'] as string[]).map(normalizeZone),
        upstreams: fp['upstreams'] as string[],
        policy: (fp['policy'] as ForwardingPolicy | undefined) ?? 'Random',
        forceTcp: fp['protocolStrategy'] === 'TCP',
        ...tlsOf(fp['transportConfig']),
      };
    },
  };
};

const proposalEntry: EntryReader = (p, source) => {
  const domain = typeof p['domain'] === 'string' ? normalizeZone(p['domain']) : undefined;
  return {
    ...(domain === undefined ? {} : { key: `domain:${domain}`, label: p['domain'] as string }),
    entry: () => ({
      key: `domain:${domain}`,
      source,
      label: p['domain'] as string,
      zones: [domain as string],
      upstreams: p['nameServers'] as string[],
      policy: (p['policy'] as ForwardingPolicy | undefined) ?? 'Random',
      forceTcp: false,
    }),
  };
};

interface Candidate extends ForwardingEntry {
  /** Kept from the last good config because its spec entry is invalid now. */
  kept: boolean;
}

/**
 * The entries of one list, in spec order: valid ones as written, broken ones replaced by their
 * last good version when there is one and left out otherwise.
 */
function entriesOf(listPart: string, list: unknown, read: EntryReader, parts: Parts, itemPrefix = listPart): Candidate[] {
  const keyPrefix = read === serverEntry ? 'server:' : 'domain:';
  if (parts.broken(listPart)) {
    const kept = [...parts.lastGood.values()].filter((f) => f.key.startsWith(keyPrefix)).map((f) => ({ ...f, kept: true }));
    parts.leave(listPart, kept.length > 0 ? 'the last good entries are kept' : 'none of its entries is used');
    return kept;
  }
  if (!Array.isArray(list)) return [];
  const out: Candidate[] = [];
  list.forEach((raw: unknown, i) => {
    const part = `${itemPrefix}[${i}]`;
    const r = read(isRecord(raw) ? raw : {}, part);
    if (!parts.broken(part)) {
      out.push({ ...r.entry(), kept: false });
      return;
    }
    const previous = r.key === undefined ? undefined : parts.lastGood.get(r.key);
    if (previous) out.push({ ...previous, source: part, kept: true });
    parts.leave(part, previous ? 'the last good version is kept' : 'left out of the Corefile', r.label);
  });
  return out;
}

/** A kept entry yields to valid entries that now claim one of its zones (two blocks may not share a zone). */
function dropClashingKept(candidates: Candidate[], leftOut: LeftOut[]): ForwardingEntry[] {
  const claimed = new Set(candidates.filter((c) => !c.kept).flatMap((c) => c.zones));
  const out: ForwardingEntry[] = [];
  for (const { kept, ...entry } of candidates) {
    const clash = kept ? entry.zones.find((z) => claimed.has(z)) : undefined;
    if (clash === undefined) {
      out.push(entry);
      continue;
    }
    const note = leftOut.find((l) => l.part === entry.source);
    if (note) note.instead = `left out of the Corefile (its last good version forwards ${clash}, which another entry now claims)`;
  }
  return out;
}

const DEFAULT_FORWARDING: DefaultForwarding = { upstreams: [RESOLV_CONF], policy: 'Sequential', forceTcp: false };

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

const DEFAULTS: Record<string, string> = { 'spec.logLevel': 'Normal', 'spec.operatorLogLevel': 'Normal', 'spec.managementState': 'Managed' };

function enumOr<T extends string>(value: unknown, fallback: T, part: string, parts: Parts): T {
  if (parts.broken(part)) {
    parts.leave(part, `${fallback} is used`);
    return fallback;
  }
  // Unset means the default, not the last good value: only a broken value keeps the old one.
  return typeof value === 'string' && value !== '' ? (value as T) : (DEFAULTS[part] as T | undefined) ?? fallback;
}

/** One line per left-out part, for logs and the status: `spec.servers[1] ("bar"): left out of the Corefile: <errors>`. */
export function describeLeftOut(l: LeftOut): string {
  const who = l.label === undefined ? l.part : `${l.part} (${JSON.stringify(l.label)})`;
  return `${who}: ${l.instead}: ${l.errors.map(formatFieldError).join('; ')}`;
}

const POLICIES = new Set<string>(['Random', 'RoundRobin', 'Sequential']);
const LOG_LEVELS = new Set<string>(['Normal', 'Debug', 'Trace']);
const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function readTLS(v: unknown): { tls?: TLSSettings } | undefined {
  if (v === undefined) return {};
  if (!isRecord(v) || typeof v['serverName'] !== 'string' || (v['caBundle'] !== undefined && typeof v['caBundle'] !== 'string')) return undefined;
  return { tls: { serverName: v['serverName'], ...(typeof v['caBundle'] === 'string' ? { caBundle: v['caBundle'] } : {}) } };
}

function readForwarding(v: unknown): ForwardingEntry | undefined {
  if (!isRecord(v) || typeof v['key'] !== 'string' || typeof v['source'] !== 'string' || typeof v['label'] !== 'string') return undefined;
  if (!strings(v['zones']) || !strings(v['upstreams']) || typeof v['policy'] !== 'string' || !POLICIES.has(v['policy']) || typeof v['forceTcp'] !== 'boolean') return undefined;
  const tls = readTLS(v['tls']);
  if (!tls) return undefined;
  return { key: v['key'], source: v['source'], label: v['label'], zones: v['zones'], upstreams: v['upstreams'], policy: v['policy'] as ForwardingPolicy, forceTcp: v['forceTcp'], ...tls };
}

/**
 * The last good values as the ConfigMap annotation holds them; undefined when absent or not
 * readable (someone edited it): then broken parts fall back to the defaults, as on a first run.
 */
export function parseLastGood(text: string | undefined): LastGood | undefined {
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(v) || !Array.isArray(v['forwarding']) || !isRecord(v['defaultForwarding'])) return undefined;
  const forwarding = v['forwarding'].map(readForwarding);
  const d = v['defaultForwarding'];
  const dTLS = readTLS(d['tls']);
  const ttl = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x > 0;
  if (forwarding.some((f) => f === undefined) || !strings(d['upstreams']) || typeof d['policy'] !== 'string' || !POLICIES.has(d['policy']) || typeof d['forceTcp'] !== 'boolean' || !dTLS) return undefined;
  if (!ttl(v['positiveTTL']) || !ttl(v['negativeTTL']) || typeof v['logLevel'] !== 'string' || !LOG_LEVELS.has(v['logLevel'])) return undefined;
  return {
    forwarding: forwarding as ForwardingEntry[],
    defaultForwarding: { upstreams: d['upstreams'], policy: d['policy'] as ForwardingPolicy, forceTcp: d['forceTcp'], ...dTLS },
    positiveTTL: v['positiveTTL'],
    negativeTTL: v['negativeTTL'],
    logLevel: v['logLevel'] as DNSLogLevel,
  };
}
