// Server block keys: `[SCHEME://]ZONE[:PORT]`, where ZONE may be a CIDR standing for reverse
// zones. The rules follow CoreDNS (core/dnsserver + plugin.SplitHostPort): the port is the digits
// after the last colon, a CIDR must come before the port (`10.0.0.0/24:1053`), a CIDR that is
// not on an octet (IPv4) or nibble (IPv6) boundary expands to several zones. Where CoreDNS would
// quietly serve a nonsense zone ("foo://x.", "example.org:abc.") kdns reports the key instead.

import { CorefileError, type Position, type ServerKey, type Transport } from './ast.js';
import { cidrToReverseZones, fqdn, lowerName } from '../dns/name.js';

/** The port each transport listens on when its key names none (CoreDNS's transport defaults). */
const TRANSPORT_PORTS: Record<Exclude<Transport, 'dns'>, number> = {
  tls: 853,
  quic: 853,
  grpc: 443,
  https: 443,
};

const TRANSPORTS: readonly Transport[] = ['dns', 'tls', 'https', 'grpc', 'quic'];

const NO_POSITION: Position = { file: 'Corefile', line: 0 };

/**
 * The port a key listens on: its own, else the transport's default. `defaultPort` is the one
 * plain DNS uses (`kdns serve -dns.port`, 53 unless changed); the other transports have fixed
 * defaults (tls and quic 853, https and grpc 443), as in CoreDNS.
 */
export function keyPort(key: Pick<ServerKey, 'transport' | 'port'>, defaultPort: number): number {
  if (key.port !== undefined) return key.port;
  return key.transport === 'dns' ? defaultPort : TRANSPORT_PORTS[key.transport];
}

function isTransport(s: string): s is Transport {
  return (TRANSPORTS as readonly string[]).includes(s);
}

/** Splits off `scheme://`; no scheme means plain DNS. */
function splitScheme(raw: string, fail: (why: string) => never): { transport: Transport; rest: string } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(raw);
  if (!m) return { transport: 'dns', rest: raw };
  const scheme = (m[1] as string).toLowerCase();
  if (!isTransport(scheme)) fail(`unknown scheme "${m[1]}://" (use dns://, tls://, https://, grpc:// or quic://)`);
  return { transport: scheme, rest: raw.slice(m[0].length) };
}

/** Splits off `:PORT` (digits after the last colon); a colon inside an IPv6 CIDR is not a port. */
function splitPort(hostPort: string, fail: (why: string) => never): { host: string; port?: number } {
  const colon = hostPort.lastIndexOf(':');
  if (colon < 0) return { host: hostPort };
  const after = hostPort.slice(colon + 1);
  if (after === '') fail('missing port after ":"');
  if (/^[0-9]+$/.test(after)) {
    const port = Number(after);
    if (port > 65535) fail(`port ${after} is out of range (0-65535)`);
    return { host: hostPort.slice(0, colon), port };
  }
  // "fd00::/64": what follows the last colon is part of the CIDR.
  if (after.includes('/')) return { host: hostPort };
  return fail(`bad port "${after}"`);
}

/** The zones of a CIDR host, or a failure when it looks like a CIDR but is not a valid one. */
function reverseZones(host: string, fail: (why: string) => never): string[] {
  // CoreDNS refuses these because "::/0"-like text is ambiguous with a port separator.
  if (host.startsWith(':') || (host.startsWith('0') && host.includes(':'))) fail(`invalid CIDR "${host}"`);
  try {
    return cidrToReverseZones(host);
  } catch {
    return fail(`invalid CIDR "${host}"`);
  }
}

/** What is wrong with a zone's labels (the character set is already checked), if anything. */
function labelProblem(host: string): string | undefined {
  if (host === '.') return undefined;
  const labels = (host.endsWith('.') ? host.slice(0, -1) : host).split('.');
  if (labels.includes('')) return 'it has an empty label';
  const long = labels.find((l) => l.length > 63);
  if (long !== undefined) return `label "${long}" is longer than 63 characters`;
  // Wire length: one length octet per label plus the labels, plus the root's zero octet.
  const wire = labels.reduce((n, l) => n + l.length + 1, 1);
  if (wire > 255) return `it is longer than 255 octets (${wire})`;
  return undefined;
}

/** The zone of a plain host: absolute and lower-case, or a failure saying what is wrong. */
function forwardZone(host: string, fail: (why: string) => never): string {
  if (host === '') fail('missing zone (use "." for the root zone)');
  const bad = /[^A-Za-z0-9._*-]/.exec(host);
  if (bad) fail(`invalid character "${bad[0]}" in zone "${host}"`);
  const problem = labelProblem(host);
  if (problem) fail(`zone "${host}" is not a valid domain name: ${problem}`);
  return lowerName(fqdn(host));
}

/**
 * The zones one server block key stands for: one, or several for a CIDR not on a label
 * boundary. `port` is undefined when the key names none (see keyPort). `defaultPort` is not
 * needed to parse a key and is accepted for callers that pass it; `pos` places errors.
 */
export function parseServerKey(raw: string, defaultPort?: number, pos: Position = NO_POSITION): ServerKey[] {
  void defaultPort;
  const fail = (why: string): never => {
    throw CorefileError.at(pos, `invalid server block key "${raw}": ${why}`);
  };
  if (raw === '') throw CorefileError.at(pos, 'empty server block key');
  const { transport, rest } = splitScheme(raw, fail);
  const { host, port } = splitPort(rest, fail);
  if (host.includes(':') && !host.includes('/')) {
    fail(`"${rest}" looks like an IPv6 address: a reverse zone is written as a CIDR, such as fd00::/64`);
  }
  const zones = host.includes('/') ? reverseZones(host, fail) : [forwardZone(host, fail)];
  return zones.map((zone) => (port === undefined ? { transport, zone, raw } : { transport, zone, port, raw }));
}
