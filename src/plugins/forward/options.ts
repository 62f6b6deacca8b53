// `forward FROM TO... { ... }` → ForwardOptions. Pure apart from reading the files the directive
// names (resolv.conf, TLS material), which the caller passes in, so tests run from tables.
import { argPosition, blockProperties, expectArgs, formatDuration, invalidArg, parseDuration, parseIntArg, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { RCode } from '../../lib/dns/types.js';
import { cidrToReverseZones, fqdn, isValidDomainName, lowerName } from '../../lib/dns/name.js';
import { POLICY_NAMES, type PolicyName } from '../pkg/policy.js';
import { parseMaxTcpQueries } from '../pkg/maxtcpqueries.js';
import net from 'node:net';
import { parseForwardUpstream, type ForwardUpstream } from './upstreams.js';

/** CoreDNS's limit on TO addresses. */
export const MAX_UPSTREAMS = 15;

export interface TlsFiles {
  cert?: Buffer;
  key?: Buffer;
  ca?: Buffer;
}

export interface ForwardOptions {
  /** Zone whose names are forwarded (absolute, lower-case). */
  from: string;
  /** Names below `from` that are not forwarded (passed to the next plugin). */
  except: string[];
  upstreams: ForwardUpstream[];
  forceTcp: boolean;
  preferUdp: boolean;
  /** Reused connections close after this long unused. */
  expireMs: number;
  /** A TCP/TLS connection takes no new queries after this long (jittered down by up to 20%); 0: no limit. */
  maxAgeMs: number;
  /** A TCP/TLS connection takes no new queries after this many (jittered down by up to 20%); 0: no limit. */
  maxTcpQueries: number;
  /** Failed health checks before an upstream is skipped; 0 turns health checking off. */
  maxFails: number;
  /** How long one exchange with one upstream waits for its reply (CoreDNS `read_timeout`). */
  readTimeoutMs: number;
  /** Idle TCP/TLS connections kept per upstream for reuse; 0: no limit. */
  maxIdleConns: number;
  /**
   * Failed exchanges one query may make before it gets SERVFAIL; 0: no cap (only the 5 s deadline);
   * undefined: CoreDNS's default, twice the number of upstreams.
   */
  maxConnectAttempts?: number;
  /** The address every socket to the upstreams is bound to (health checks included). */
  sourceAddress?: string;
  /** How DNS-over-HTTPS upstreams are asked. */
  dohMethod: 'GET' | 'POST';
  tls: TlsFiles;
  tlsServername?: string;
  policy: PolicyName;
  healthCheck: { intervalMs: number; recursionDesired: boolean; domain: string };
  /** 0: unlimited. */
  maxConcurrent: number;
  /** Upstream RCODEs that hand the query to the next plugin instead. */
  next: number[];
  /** A NOERROR reply without answers (NODATA) hands the query to the next plugin as well. */
  nextOnNodata: boolean;
  /** Upstream RCODEs after which the next upstream is asked (the last one's reply is returned). */
  failover: number[];
  failfastAllUnhealthy: boolean;
}

export const DEFAULTS = {
  expireMs: 10_000,
  maxFails: 2,
  healthCheckMs: 500,
  readTimeoutMs: 2000,
  /** Failed exchanges per query, per upstream (CoreDNS's defaultConnectAttemptsPerUpstream). */
  connectAttemptsPerUpstream: 2,
} as const;

/** Reads a file named in the Corefile (already resolved against its folder); undefined if unreadable. */
export type FileReader = (path: string) => Buffer | undefined;

const RCODE_BY_NAME = new Map<string, number>(Object.entries(RCode).map(([k, v]) => [k, v]));

/** A zone argument (FROM, except): a name, or a CIDR standing for its first reverse zone, as CoreDNS. */
function zoneArg(d: Directive, index: number, what: string): string {
  const arg = (d.args[index] as string).replace(/^dns:\/\//i, '');
  const pos = argPosition(d, index);
  if (arg.includes('/')) {
    try {
      return cidrToReverseZones(arg)[0] as string;
    } catch {
      throw CorefileError.at(pos, `invalid ${what} "${arg}": not a valid CIDR`);
    }
  }
  if (!isValidDomainName(arg)) throw CorefileError.at(pos, `invalid ${what} "${arg}": not a valid domain name`);
  return lowerName(fqdn(arg));
}

function parseTls(prop: Directive, read: FileReader): TlsFiles {
  const args = expectArgs(prop, 0, 3);
  const load = (i: number): Buffer => {
    const path = args[i] as string;
    const data = read(path);
    if (data === undefined) throw CorefileError.at(argPosition(prop, i), `cannot read TLS file "${path}"`);
    return data;
  };
  // Same meaning by count as CoreDNS: CA; CERT KEY; CERT KEY CA.
  switch (args.length) {
    case 0:
      return {};
    case 1:
      return { ca: load(0) };
    case 2:
      return { cert: load(0), key: load(1) };
    default:
      return { cert: load(0), key: load(1), ca: load(2) };
  }
}

function parseHealthCheck(prop: Directive): ForwardOptions['healthCheck'] {
  const args = expectArgs(prop, 1, 4);
  const intervalMs = parseDuration(args[0] as string, argPosition(prop, 0), 'health_check', { minMs: 1 });
  const hc = { intervalMs, recursionDesired: true, domain: '.' };
  for (let i = 1; i < args.length; i++) {
    const a = args[i] as string;
    if (a === 'no_rec') {
      hc.recursionDesired = false;
    } else if (a === 'domain') {
      if (i + 1 >= args.length) throw CorefileError.at(argPosition(prop, i), 'health_check domain needs a name');
      hc.domain = zoneArg(prop, i + 1, 'health_check domain');
      i++;
    } else {
      invalidArg(prop, a, 'expected no_rec or domain NAME');
    }
  }
  return hc;
}

function parseRcodes(prop: Directive): number[] {
  return expectArgs(prop, 1).map((a) => {
    const code = RCODE_BY_NAME.get(a.toUpperCase());
    if (code === undefined) return invalidArg(prop, a, 'not an RCODE name (such as NXDOMAIN, SERVFAIL, REFUSED)');
    return code;
  });
}

function parseFailover(prop: Directive): number[] {
  const codes = parseRcodes(prop);
  // A NOERROR reply is an answer: failing over on it would ask every upstream every time.
  const i = codes.indexOf(RCode.NOERROR);
  if (i >= 0) invalidArg(prop, prop.args[i] as string, 'NOERROR cannot be used in failover');
  return codes;
}

function parseDohMethod(prop: Directive): 'GET' | 'POST' {
  const [method] = expectArgs(prop, 1, 1) as [string];
  // Upper case only, as CoreDNS (HTTP method names are case-sensitive).
  if (method !== 'GET' && method !== 'POST') invalidArg(prop, method, 'expected GET or POST');
  return method;
}

function parseSourceAddress(prop: Directive): string {
  const [ip] = expectArgs(prop, 1, 1) as [string];
  if (!net.isIP(ip)) invalidArg(prop, ip, 'not an IP address');
  // An IPv4-mapped IPv6 address is the IPv4 address, as Go's net.ParseIP reads it for CoreDNS.
  const mapped = /^::ffff:([0-9.]+)$/i.exec(ip);
  return mapped && net.isIPv4(mapped[1] as string) ? (mapped[1] as string) : ip;
}

function parsePolicy(prop: Directive): PolicyName {
  const [name] = expectArgs(prop, 1, 1) as [string];
  if (!(POLICY_NAMES as readonly string[]).includes(name)) {
    invalidArg(prop, name, `unknown policy (expected ${POLICY_NAMES.join(', ')})`);
  }
  return name as PolicyName;
}

function flag(prop: Directive): true {
  expectArgs(prop, 0, 0);
  return true;
}

/** As CoreDNS: a block-wide tls_servername and a per-upstream `%NAME` would contradict each other. */
function checkServerNames(o: ForwardOptions, prop: Directive | undefined): void {
  if (!prop) return;
  const named = o.upstreams.find((u) => u.serverName !== undefined);
  if (named) {
    throw CorefileError.at(argPosition(prop, 0), `tls_servername "${o.tlsServername}" and the upstream's own server name "${named.serverName}" (${named.scheme}://${named.host}) are both set; keep one`);
  }
}

/**
 * A source address of one family cannot reach an upstream of the other: every exchange with it
 * would fail. CoreDNS lets that load and fail at query time; kdns names the upstream at once.
 */
function checkSourceFamily(o: ForwardOptions, prop: Directive | undefined): void {
  if (!prop || o.sourceAddress === undefined) return;
  const family = net.isIP(o.sourceAddress);
  const other = o.upstreams.find((u) => net.isIP(u.host) !== family);
  if (other) {
    throw CorefileError.at(argPosition(prop, 0), `source_address ${o.sourceAddress} is IPv${family}, but upstream ${other.host} is not: it could never be reached`);
  }
}

export function parseForward(d: Directive, read: FileReader, resolvePath: (p: string) => string): ForwardOptions {
  if (d.args.length < 2) {
    throw CorefileError.at(d, `wrong argument count for "forward": expected FROM and at least one TO, got ${d.args.length}`);
  }
  const from = zoneArg(d, 0, 'FROM zone');
  const upstreams: ForwardUpstream[] = [];
  d.args.slice(1).forEach((arg, k) => {
    const parsed = parseForwardUpstream(arg, (p) => read(resolvePath(p))?.toString('utf8'));
    if (typeof parsed === 'string') throw CorefileError.at(argPosition(d, k + 1), `invalid upstream "${arg}" for "forward": ${parsed}`);
    upstreams.push(...parsed);
  });
  if (upstreams.length > MAX_UPSTREAMS) {
    throw CorefileError.at(d, `more than ${MAX_UPSTREAMS} upstreams configured for "forward": ${upstreams.length}`);
  }
  const o: ForwardOptions = {
    from,
    except: [],
    upstreams,
    forceTcp: false,
    preferUdp: false,
    expireMs: DEFAULTS.expireMs,
    maxAgeMs: 0,
    maxTcpQueries: 0,
    maxFails: DEFAULTS.maxFails,
    readTimeoutMs: DEFAULTS.readTimeoutMs,
    maxIdleConns: 0,
    dohMethod: 'POST',
    tls: {},
    policy: 'random',
    healthCheck: { intervalMs: DEFAULTS.healthCheckMs, recursionDesired: true, domain: '.' },
    maxConcurrent: 0,
    next: [],
    nextOnNodata: false,
    failover: [],
    failfastAllUnhealthy: false,
  };
  let maxAgeProp: Directive | undefined;
  let serverNameProp: Directive | undefined;
  let sourceProp: Directive | undefined;
  for (const prop of blockProperties(d, 'forward')) {
    switch (prop.name) {
      case 'except':
        o.except = expectArgs(prop, 1).map((_, i) => zoneArg(prop, i, 'except name'));
        break;
      case 'force_tcp':
        o.forceTcp = flag(prop);
        break;
      case 'prefer_udp':
        o.preferUdp = flag(prop);
        break;
      case 'expire':
        o.expireMs = parseDuration((expectArgs(prop, 1, 1) as [string])[0], argPosition(prop, 0), 'expire');
        break;
      case 'max_age':
        o.maxAgeMs = parseDuration((expectArgs(prop, 1, 1) as [string])[0], argPosition(prop, 0), 'max_age');
        maxAgeProp = prop;
        break;
      case 'maxtcpqueries':
        o.maxTcpQueries = parseMaxTcpQueries(prop, 'maxtcpqueries');
        break;
      case 'max_fails':
        o.maxFails = parseIntArg((expectArgs(prop, 1, 1) as [string])[0], argPosition(prop, 0), { what: 'max_fails', min: 0 });
        break;
      case 'tls':
        o.tls = parseTls(prop, (p) => read(resolvePath(p)));
        break;
      case 'tls_servername':
        o.tlsServername = (expectArgs(prop, 1, 1) as [string])[0];
        serverNameProp = prop;
        break;
      case 'read_timeout':
        o.readTimeoutMs = parseDuration((expectArgs(prop, 1, 1) as [string])[0], argPosition(prop, 0), 'read_timeout', { minMs: 1 });
        break;
      case 'max_idle_conns':
        o.maxIdleConns = parseIntArg((expectArgs(prop, 1, 1) as [string])[0], argPosition(prop, 0), { what: 'max_idle_conns', min: 0 });
        break;
      case 'max_connect_attempts':
        o.maxConnectAttempts = parseIntArg((expectArgs(prop, 1, 1) as [string])[0], argPosition(prop, 0), { what: 'max_connect_attempts', min: 0 });
        break;
      case 'source_address':
        o.sourceAddress = parseSourceAddress(prop);
        sourceProp = prop;
        break;
      case 'doh_method':
        o.dohMethod = parseDohMethod(prop);
        break;
      case 'policy':
        o.policy = parsePolicy(prop);
        break;
      case 'health_check':
        o.healthCheck = parseHealthCheck(prop);
        break;
      case 'max_concurrent':
        o.maxConcurrent = parseIntArg((expectArgs(prop, 1, 1) as [string])[0], argPosition(prop, 0), { what: 'max_concurrent', min: 0 });
        break;
      case 'next':
        o.next = parseRcodes(prop);
        break;
      case 'next_on_nodata':
        o.nextOnNodata = flag(prop);
        break;
      case 'failover':
        o.failover = parseFailover(prop);
        break;
      case 'failfast_all_unhealthy_upstreams':
        o.failfastAllUnhealthy = flag(prop);
        break;
      default:
        unknownProperty(prop, 'forward');
    }
  }
  // As CoreDNS: a lifetime shorter than the idle expiry would make `expire` meaningless.
  if (maxAgeProp && o.maxAgeMs > 0 && o.maxAgeMs < o.expireMs) {
    throw CorefileError.at(argPosition(maxAgeProp, 0), `max_age (${formatDuration(o.maxAgeMs)}) must not be less than expire (${formatDuration(o.expireMs)})`);
  }
  checkServerNames(o, serverNameProp);
  checkSourceFamily(o, sourceProp);
  return o;
}
