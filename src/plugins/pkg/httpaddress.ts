// `host:port` of an HTTP listener as Corefiles and node-cache's flags write it (kept apart from
// the listeners in endpoint.ts, so reading a flag loads no HTTP server).

import net from 'node:net';

export interface HttpAddress {
  /** Host to bind; undefined = every address (Go's ":8080"). */
  host: string | undefined;
  port: number;
  /** As written in the Corefile, for messages. */
  text: string;
}

/**
 * Parses `host:port`, `:port` or `[v6]:port` as Go's net.SplitHostPort would accept it.
 * Returns an error message (without position) when it is not an address.
 */
export function parseHttpAddress(text: string): HttpAddress | string {
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') return `address ${text}: missing port in address`;
    host = text.slice(1, close);
    portText = text.slice(close + 2);
    if (!net.isIPv6(host)) return `address ${text}: invalid IPv6 address`;
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) return `address ${text}: missing port in address`;
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':')) return `address ${text}: too many colons in address`;
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) return `address ${text}: invalid port "${portText}"`;
  return { host: bindHost(host), port: Number(portText), text };
}

/**
 * Go listens on one address for a name (IPv4 first), so "localhost" is 127.0.0.1 there; Node
 * would pick whatever the resolver lists first (often ::1), which scrapers of 127.0.0.1 miss.
 */
function bindHost(host: string): string | undefined {
  if (host === '') return undefined;
  if (host === 'localhost') return '127.0.0.1';
  return host;
}
