// Why an exchange with an upstream failed. The forward plugin decides from `kind` whether to
// try the same upstream again (a reused connection the server had closed) or move on.

export type ExchangeFailure =
  /** No reply within the time allowed. */
  | 'timeout'
  /** The upstream actively refused (ICMP port unreachable, TCP RST on connect). */
  | 'refused'
  /** No way to the upstream from here: no route, host unreachable, no such address family. */
  | 'unreachable'
  /** A reused connection was closed by the upstream before it answered: safe to retry once. */
  | 'closed'
  /** TLS handshake or certificate failure. */
  | 'tls'
  /** A reply came that does not parse (the forward plugin checks, before passing it on). */
  | 'malformed'
  /** Anything else from the network stack. */
  | 'network'
  /** The client was closed while the query was in flight. */
  | 'shutdown';

export class ExchangeError extends Error {
  constructor(
    readonly kind: ExchangeFailure,
    /** "udp", "tcp" or "tcp-tls". */
    readonly proto: string,
    /** "ip:port" of the upstream. */
    readonly upstream: string,
    detail: string,
  ) {
    super(`${proto}://${upstream}: ${detail}`);
    this.name = 'ExchangeError';
  }
}

/**
 * What connect and send report when there is no way to the address: no route (ENETUNREACH), an
 * unreachable route or neighbour (EHOSTUNREACH), an IPv6 upstream on a node without IPv6
 * (EADDRNOTAVAIL, EAFNOSUPPORT), a firewall or prohibit route (EACCES, EPERM).
 */
const UNREACHABLE: ReadonlySet<string> = new Set(['ENETUNREACH', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EACCES', 'EPERM']);

export function describeSocketError(e: unknown): { kind: ExchangeFailure; detail: string } {
  const err = e as NodeJS.ErrnoException | undefined;
  const code = err?.code ?? '';
  if (code === 'ECONNREFUSED') return { kind: 'refused', detail: 'connection refused' };
  if (UNREACHABLE.has(code)) return { kind: 'unreachable', detail: err?.message ?? code };
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /certificate|self.signed|SSL/i.test(err?.message ?? '')) {
    return { kind: 'tls', detail: err?.message ?? 'TLS failure' };
  }
  return { kind: 'network', detail: err?.message ?? String(e) };
}
