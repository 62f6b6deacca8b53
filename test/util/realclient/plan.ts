// The checks and decisions of a run that need no namespace: which nameservers the client will
// ask, where each one's queries go, and from which loopback address the relay sends them.
// Everything the caller got wrong is reported here, by field, before anything is started.

import net from 'node:net';

/** Where the queries to one nameserver go. */
export type Route =
  /** Relayed to a server on this machine's loopback. */
  | { kind: 'relay'; host: string; port: number }
  /** No listener: the kernel answers UDP with ICMP port unreachable and TCP with a reset. */
  | { kind: 'refuse' }
  /** A listener that reads every query and never answers. */
  | { kind: 'drop' };

export interface Plan {
  /** The nameservers the client reads, in resolv.conf order, each once. */
  nameservers: string[];
  routes: Map<string, Route>;
  /** The relay's source address for IPv4 and for IPv6 servers. */
  source: { v4: string; v6: string };
}

/** Both libcs fall back to this when resolv.conf names no nameserver. */
const DEFAULT_NAMESERVER = '127.0.0.1';

/** The loopback range: the only place the relay may send to, or send from. */
export function isLoopback(address: string): boolean {
  if (net.isIPv4(address)) return address.split('.')[0] === '127';
  if (!net.isIPv6(address)) return false;
  const list = new net.BlockList();
  list.addAddress('::1', 'ipv6');
  return list.check(address, 'ipv6') && !address.includes('.');
}

/**
 * The nameserver addresses in resolv.conf text, as glibc and musl read them: lines that begin with
 * `nameserver` and whitespace, first word after it. A word that is not an IP address is skipped
 * by both libraries and so here; a scoped IPv6 address (fe80::1%eth0) is an error, as the rig has
 * no interface but `lo` to scope it to.
 */
export function nameserversOf(resolvConf: string): string[] {
  const found: string[] = [];
  for (const [i, line] of resolvConf.split('\n').entries()) {
    const m = /^nameserver[ \t]+(\S+)/.exec(line);
    if (!m) continue;
    const address = m[1] as string;
    if (address.includes('%')) throw new Error(`resolvConf line ${i + 1}: scoped address ${address} is not supported (the namespace has only lo)`);
    if (net.isIP(address) !== 0 && !found.includes(address)) found.push(address);
  }
  return found.length > 0 ? found : [DEFAULT_NAMESERVER];
}

/** `refuse`, `drop`, or `HOST:PORT` / `[V6]:PORT` on loopback. */
export function parseRoute(text: string, field: string): Route {
  if (text === 'refuse' || text === 'drop') return { kind: text };
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  if (!m) throw new Error(`${field}: "${text}" is not HOST:PORT, [IPV6]:PORT, "refuse" or "drop"`);
  const host = m[1] as string;
  const port = Number(m[2]);
  if (net.isIP(host) === 0) throw new Error(`${field}: "${host}" is not an IP address`);
  if (!isLoopback(host)) throw new Error(`${field}: ${host} is not a loopback address (127.0.0.0/8 or ::1); the relay sends nowhere else`);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${field}: port ${m[2]} is out of range`);
  return { kind: 'relay', host, port };
}

export interface PlanInput {
  resolvConf: string;
  server?: string | undefined;
  routes?: Readonly<Record<string, string>> | undefined;
  source?: string | undefined;
}

export function planRun(input: PlanInput): Plan {
  const nameservers = nameserversOf(input.resolvConf);
  const routes = new Map<string, Route>();
  for (const ns of Object.keys(input.routes ?? {})) {
    if (!nameservers.includes(ns)) throw new Error(`routes["${ns}"]: not a nameserver of resolvConf (${nameservers.join(', ')})`);
  }
  for (const ns of nameservers) {
    const given = input.routes?.[ns];
    if (given !== undefined) routes.set(ns, parseRoute(given, `routes["${ns}"]`));
    else if (input.server !== undefined) routes.set(ns, parseRoute(input.server, 'server'));
    else throw new Error(`nameserver ${ns}: no route (give server, or routes["${ns}"])`);
  }
  let source = { v4: '127.0.0.1', v6: '::1' };
  if (input.source !== undefined) {
    if (!isLoopback(input.source)) throw new Error(`source: ${input.source} is not a loopback address (127.0.0.0/8 or ::1)`);
    const v6 = net.isIPv6(input.source);
    for (const [ns, r] of routes) {
      if (r.kind === 'relay' && net.isIPv6(r.host) !== v6) throw new Error(`source: ${input.source} cannot reach ${r.host}, the server of nameserver ${ns}`);
    }
    source = v6 ? { ...source, v6: input.source } : { ...source, v4: input.source };
  }
  return { nameservers, routes, source };
}
