// forward's TO arguments beyond what plugins/pkg/upstreams.ts parses for every user of upstream
// lists: DNS-over-HTTPS upstreams (`https://IP[:port]`, CoreDNS 1.14) and a TLS server name per
// upstream (`tls://IP%NAME[:port]`). Everything else (plain addresses, dns://, tls:// without a
// name, resolv.conf paths) is the shared parser's.
import { isValidDomainName } from '../../lib/dns/name.js';
import { parseUpstream, splitHostPort, type ReadFile, type UpstreamSpec } from '../pkg/upstreams.js';

export type ForwardScheme = 'dns' | 'tls' | 'https';

export interface ForwardUpstream {
  scheme: ForwardScheme;
  /** IP literal without brackets. */
  host: string;
  port: number;
  /** The TLS server name of this upstream alone (`tls://IP%NAME`): SNI and the name its certificate must carry. */
  serverName?: string;
}

/** Default ports by transport: 53, 853 (RFC 7858), 443 (RFC 8484). */
export const FORWARD_DEFAULT_PORT: Record<ForwardScheme, number> = { dns: 53, tls: 853, https: 443 };

const SCHEME = /^([a-z0-9+.-]+):\/\//i;

/**
 * `ADDRESS%NAME` with the port after the name (`9.9.9.9%dns.quad9.net:853`), the name inside or
 * after an IPv6 address's brackets (`[2620:fe::fe%dns.quad9.net]:853`, `[2620:fe::fe]%dns.quad9.net`)
 * → the address with its port, and the name; undefined name when there is no `%`.
 */
export function splitServerName(text: string): { hostPort: string; serverName?: string } | string {
  const pct = text.lastIndexOf('%');
  if (pct < 0) return { hostPort: text };
  const before = text.slice(0, pct);
  const after = text.slice(pct + 1);
  // A name never holds ":" or "]": the first of them ends it.
  const end = after.search(/[\]:]/);
  const name = end < 0 ? after : after.slice(0, end);
  const rest = end < 0 ? '' : after.slice(end);
  if (name === '') return 'empty TLS server name after "%"';
  if (!isValidDomainName(name) || name.endsWith('.')) return `"${name}" is not a valid TLS server name`;
  return { hostPort: before + rest, serverName: name };
}

/**
 * One TO argument of forward → its upstreams, or an error text. https:// takes no path: kdns, as
 * CoreDNS, always asks `/dns-query`.
 */
export function parseForwardUpstream(arg: string, readFile: ReadFile): ForwardUpstream[] | string {
  const m = SCHEME.exec(arg);
  const scheme = m ? (m[1] as string).toLowerCase() : undefined;
  if (scheme !== undefined && scheme !== 'dns' && scheme !== 'tls' && scheme !== 'https') {
    return `transport ${scheme}:// is not supported by kdns (use dns://, tls:// or https://)`;
  }
  if (scheme === 'tls' || scheme === 'https') {
    const rest = arg.slice((m as RegExpExecArray)[0].length);
    if (scheme === 'https' && rest.includes('/')) return 'paths are not allowed in https:// upstreams (kdns asks /dns-query)';
    const named = splitServerName(rest);
    if (typeof named === 'string') return named;
    const hp = splitHostPort(named.hostPort, FORWARD_DEFAULT_PORT[scheme]);
    if (typeof hp === 'string') return hp;
    return [{ scheme, ...hp, ...(named.serverName !== undefined ? { serverName: named.serverName } : {}) }];
  }
  if (arg.includes('%') && (scheme === 'dns' || /^[0-9a-f.:[\]]+%/i.test(arg))) {
    return 'a %NAME (TLS server name) is only for tls:// and https:// upstreams';
  }
  const plain = parseUpstream(arg, readFile);
  return typeof plain === 'string' ? plain : plain.map((u: UpstreamSpec): ForwardUpstream => ({ scheme: u.scheme, host: u.host, port: u.port }));
}
