// Parsing forward's TO arguments: `IP`, `IP:port`, `[IPv6]:port`, `dns://…`, `tls://…`, or the
// path of a resolv.conf whose nameservers are used. Host names are refused, as in CoreDNS:
// resolving them would make forwarding depend on the resolver being configured.
import net from 'node:net';

export type UpstreamScheme = 'dns' | 'tls';

export interface UpstreamSpec {
  scheme: UpstreamScheme;
  /** IP literal without brackets. */
  host: string;
  port: number;
}

export const DEFAULT_PORT: Record<UpstreamScheme, number> = { dns: 53, tls: 853 };

/** Reads a resolv.conf; undefined when the path is not a readable file. */
export type ReadFile = (path: string) => string | undefined;

/** Nameserver addresses of a resolv.conf (zone indexes like `%eth0` dropped: we cannot use them). */
export function resolvConfNameservers(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const m = /^nameserver\s+(\S+)/.exec(line);
    if (m) out.push((m[1] as string).replace(/%.*$/, ''));
  }
  return out;
}

function parsePort(text: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/** `host`, `host:port`, `[v6]`, `[v6]:port`, bare IPv6 → address and port; an error text otherwise. */
export function splitHostPort(text: string, defaultPort: number): { host: string; port: number } | string {
  let host = text;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return 'missing "]"';
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return `unexpected "${rest}" after "]"`;
      portText = rest.slice(1);
    }
    if (!net.isIPv6(host)) return `"${host}" is not an IPv6 address`;
  } else if (!net.isIPv6(text)) {
    const colon = text.lastIndexOf(':');
    if (colon >= 0) {
      host = text.slice(0, colon);
      portText = text.slice(colon + 1);
    }
  }
  if (!net.isIP(host)) return `"${host}" is not an IP address`;
  if (portText === undefined) return { host, port: defaultPort };
  const port = parsePort(portText);
  return port === undefined ? `invalid port "${portText}"` : { host, port };
}

/**
 * One TO argument → the upstreams it names, or an error text. A word without a scheme that is
 * not an address is tried as a resolv.conf path (relative paths are resolved by the caller).
 */
export function parseUpstream(arg: string, readFile: ReadFile): UpstreamSpec[] | string {
  const scheme = /^([a-z0-9+.-]+):\/\//i.exec(arg);
  if (scheme) {
    const name = (scheme[1] as string).toLowerCase();
    if (name !== 'dns' && name !== 'tls') return `transport ${name}:// is not supported by kdns (use dns:// or tls://)`;
    const hp = splitHostPort(arg.slice(scheme[0].length), DEFAULT_PORT[name]);
    return typeof hp === 'string' ? hp : [{ scheme: name, ...hp }];
  }
  const hp = splitHostPort(arg, DEFAULT_PORT.dns);
  if (typeof hp !== 'string') return [{ scheme: 'dns', ...hp }];
  const text = readFile(arg);
  // Say what is wrong with something meant as an address rather than "no such file".
  if (text === undefined) return /^\[|^[0-9.]+:|^[0-9a-f]*:[0-9a-f:]*:/i.test(arg) ? hp : 'not an IP address or file';
  const servers = resolvConfNameservers(text);
  if (servers.length === 0) return 'no nameserver lines in this resolv.conf';
  const out: UpstreamSpec[] = [];
  for (const s of servers) {
    if (!net.isIP(s)) return `nameserver "${s}" is not an IP address`;
    out.push({ scheme: 'dns', host: s, port: DEFAULT_PORT.dns });
  }
  return out;
}
