// Why an exchange with an upstream failed. The forward plugin decides from `kind` whether to
// try the same upstream again (a reused connection the server had closed) or move on.

export type ExchangeFailure =
  /** No reply within the time allowed. */
  | 'timeout'
  /** The upstream actively refused (ICMP port unreachable, TCP RST on connect). */
  | 'refused'
  /** A reused connection was closed by the upstream before it answered: safe to retry once. */
  | 'closed'
  /** TLS handshake or certificate failure. */
  | 'tls'
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

export function describeSocketError(e: unknown): { kind: ExchangeFailure; detail: string } {
  const err = e as NodeJS.ErrnoException | undefined;
  const code = err?.code ?? '';
  if (code === 'ECONNREFUSED') return { kind: 'refused', detail: 'connection refused' };
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /certificate|self.signed|SSL/i.test(err?.message ?? '')) {
    return { kind: 'tls', detail: err?.message ?? 'TLS failure' };
  }
  return { kind: 'network', detail: err?.message ?? String(e) };
}
