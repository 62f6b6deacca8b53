// `cache [TTL] [ZONES...] { ... }` → CacheOptions, with CoreDNS's defaults and ranges.
import { argPosition, blockProperties, expectArgs, invalidArg, parseDuration, parseIntArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { zoneArgAt } from '../pkg/zones.js';

export interface TypeSettings {
  /** Most entries of this type; the oldest unused ones are evicted beyond it. */
  capacity: number;
  /** TTLs are capped at this many seconds... */
  maxTtl: number;
  /** ...and raised to at least this many. */
  minTtl: number;
}

export interface CacheOptions {
  /** Names under these zones are cached (absolute, lower-case). */
  zones: string[];
  success: TypeSettings;
  denial: TypeSettings;
  prefetch?: { amount: number; durationMs: number; percentage: number };
  serveStale?: ServeStale;
  /** How long a SERVFAIL from upstream is cached; 0: not at all. */
  servfailMs: number;
  /** Zones where a type is not cached (`disable success|denial [ZONES]`). */
  disabled: { success: string[]; denial: string[] };
  /** Serve the TTL as stored instead of counting it down. */
  keepTtl: boolean;
}

/** `serve_stale` and `serve_stale_policy` (RFC 8767). */
export interface ServeStale {
  /** How long past its expiry an entry may still be answered with. */
  durationMs: number;
  /** Ask the upstream first, answer from the expired entry only when that fails. */
  verify: boolean;
  /** verify: answer from the expired entry once the upstream has taken this long; 0: wait for it. */
  verifyTimeoutMs: number;
  /** The TTL of an answer from an expired entry, in seconds (RFC 8767 recommends 30). */
  responseTtl: number;
  /** After a failed refresh, answer from the expired entry without asking again for this long; 0: ask every time. */
  recheckMs: number;
  /** `serve_stale_policy prefer_positive`: a usable positive answer wins over a stored denial. */
  preferPositive: boolean;
}

/** CoreDNS's 256 shards × 39 items. */
export const DEFAULT_CAPACITY = 9984;
export const DEFAULT_SUCCESS_TTL = 3600;
export const DEFAULT_DENIAL_TTL = 1800;
export const DEFAULT_MIN_TTL = 5;
export const DEFAULT_SERVFAIL_MS = 5000;
export const MAX_SERVFAIL_MS = 5 * 60_000;
export const DEFAULT_PREFETCH_WINDOW_MS = 60_000;
export const DEFAULT_PREFETCH_PERCENTAGE = 10;
export const DEFAULT_STALE_MS = 3_600_000;
/** RFC 8767 §4: the failure recheck "should not exceed 5 minutes"; CoreDNS refuses more. */
export const MAX_STALE_RECHECK_MS = 5 * 60_000;
const MAX_TTL = 0xffffffff;

/** `args` are the arguments of `d` from `firstIndex` on; each may start with `dns://`. */
function zonesFrom(d: Directive, args: string[], firstIndex: number): string[] {
  return args.flatMap((arg, k) => zoneArgAt(d, firstIndex + k, arg.replace(/^dns:\/\//i, '')));
}

function parseTypeSettings(prop: Directive, into: TypeSettings): void {
  const args = expectArgs(prop, 1, 3);
  into.capacity = parseIntArg(args[0] as string, argPosition(prop, 0), { what: `${prop.name} capacity`, min: 1 });
  if (args.length > 1) into.maxTtl = parseIntArg(args[1] as string, argPosition(prop, 1), { what: `${prop.name} TTL`, min: 1 });
  if (args.length > 2) into.minTtl = parseIntArg(args[2] as string, argPosition(prop, 2), { what: `${prop.name} MINTTL`, min: 0 });
  if (into.minTtl > into.maxTtl) {
    throw CorefileError.at(prop, `${prop.name} MINTTL ${into.minTtl} is larger than its TTL ${into.maxTtl}`);
  }
}

function parsePrefetch(prop: Directive): NonNullable<CacheOptions['prefetch']> {
  const args = expectArgs(prop, 1, 3);
  const amount = parseIntArg(args[0] as string, argPosition(prop, 0), { what: 'prefetch amount', min: 1 });
  const durationMs = args.length > 1 ? parseDuration(args[1] as string, argPosition(prop, 1), 'prefetch duration', { minMs: 1 }) : DEFAULT_PREFETCH_WINDOW_MS;
  let percentage = DEFAULT_PREFETCH_PERCENTAGE;
  if (args.length > 2) {
    const text = args[2] as string;
    if (!text.endsWith('%')) invalidArg(prop, text, 'the percentage needs its % sign, as in 10%');
    percentage = parseIntArg(text.slice(0, -1), argPosition(prop, 2), { what: 'prefetch percentage', min: 10, max: 90 });
  }
  return { amount, durationMs, percentage };
}

/**
 * `serve_stale [DURATION] [immediate [RESPONSE_TTL [FAILURE_RECHECK]] | verify [VERIFY_TIMEOUT
 * [RESPONSE_TTL [FAILURE_RECHECK]]]]`: the arguments after the mode depend on it.
 */
function parseServeStale(prop: Directive): ServeStale {
  const args = expectArgs(prop, 0, 5);
  const out: ServeStale = { durationMs: DEFAULT_STALE_MS, verify: false, verifyTimeoutMs: 0, responseTtl: 0, recheckMs: 0, preferPositive: false };
  if (args.length > 0) out.durationMs = parseDuration(args[0] as string, argPosition(prop, 0), 'serve_stale duration');
  if (args.length > 1) {
    const mode = (args[1] as string).toLowerCase();
    if (mode !== 'verify' && mode !== 'immediate') invalidArg(prop, args[1] as string, 'refresh mode must be verify or immediate');
    out.verify = mode === 'verify';
  }
  let next = 2;
  if (out.verify && args.length > next) {
    out.verifyTimeoutMs = parseDuration(args[next] as string, argPosition(prop, next), 'serve_stale verify timeout');
    next++;
  } else if (!out.verify && args.length > 4) {
    throw CorefileError.at(prop, 'serve_stale immediate takes at most RESPONSE_TTL and FAILURE_RECHECK after the mode');
  }
  if (args.length > next) {
    const ms = parseDuration(args[next] as string, argPosition(prop, next), 'serve_stale response TTL', { maxMs: MAX_TTL * 1000 });
    if (ms % 1000 !== 0) throw CorefileError.at(argPosition(prop, next), `serve_stale response TTL must be whole seconds, got ${args[next] as string}`);
    out.responseTtl = ms / 1000;
    next++;
  }
  if (args.length > next) out.recheckMs = parseDuration(args[next] as string, argPosition(prop, next), 'serve_stale failure recheck', { maxMs: MAX_STALE_RECHECK_MS });
  return out;
}

/** What a bare `cache` line means (CoreDNS's defaults), for `zones`; `capacity` for both types. */
export function defaultCacheOptions(zones: string[] = ['.'], capacity: number = DEFAULT_CAPACITY): CacheOptions {
  return {
    zones,
    success: { capacity, maxTtl: DEFAULT_SUCCESS_TTL, minTtl: DEFAULT_MIN_TTL },
    denial: { capacity, maxTtl: DEFAULT_DENIAL_TTL, minTtl: DEFAULT_MIN_TTL },
    servfailMs: DEFAULT_SERVFAIL_MS,
    disabled: { success: [], denial: [] },
    keepTtl: false,
  };
}

export function parseCache(d: Directive, blockZones: readonly string[]): CacheOptions {
  const args = [...d.args];
  const o = defaultCacheOptions([]);
  let firstZone = 0;
  // A leading number is the TTL cap for both types; anything else is a zone.
  if (args.length > 0 && /^[+-]?[0-9]+$/.test(args[0] as string)) {
    const ttl = parseIntArg(args[0] as string, argPosition(d, 0), { what: 'cache TTL', min: 1 });
    o.success.maxTtl = ttl;
    o.denial.maxTtl = ttl;
    o.success.minTtl = Math.min(o.success.minTtl, ttl);
    o.denial.minTtl = Math.min(o.denial.minTtl, ttl);
    firstZone = 1;
  }
  o.zones = args.length > firstZone ? zonesFrom(d, args.slice(firstZone), firstZone) : [...blockZones];
  // `disable` may appear once per type; the rest once each.
  const once = (prop: Directive): string => (prop.name === 'disable' ? `disable ${prop.args[0] ?? ''}` : prop.name);
  let policy: Directive | undefined;
  for (const prop of blockProperties(d, 'cache', once)) {
    switch (prop.name) {
      case 'success':
        parseTypeSettings(prop, o.success);
        break;
      case 'denial':
        parseTypeSettings(prop, o.denial);
        break;
      case 'prefetch':
        o.prefetch = parsePrefetch(prop);
        break;
      case 'serve_stale':
        o.serveStale = parseServeStale(prop);
        break;
      case 'serve_stale_policy': {
        const [name] = expectArgs(prop, 1, 1) as [string];
        if (name.toLowerCase() !== 'prefer_positive') invalidArg(prop, name, 'the only serve_stale policy is prefer_positive');
        policy = prop;
        break;
      }
      case 'servfail': {
        const [text] = expectArgs(prop, 1, 1) as [string];
        o.servfailMs = parseDuration(text, argPosition(prop, 0), 'servfail', { maxMs: MAX_SERVFAIL_MS });
        break;
      }
      case 'disable': {
        const [kind] = expectArgs(prop, 1);
        if (kind !== 'success' && kind !== 'denial') invalidArg(prop, kind as string, 'expected success or denial');
        o.disabled[kind as 'success' | 'denial'] = prop.args.length > 1 ? zonesFrom(prop, prop.args.slice(1), 1) : [...o.zones];
        break;
      }
      case 'keepttl':
        expectArgs(prop, 0, 0);
        o.keepTtl = true;
        break;
      default:
        unknownProperty(prop, 'cache');
    }
  }
  if (policy) {
    if (!o.serveStale) throw CorefileError.at(policy, 'serve_stale_policy needs serve_stale in the same cache block');
    o.serveStale.preferPositive = true;
  }
  return o;
}
