// The parsed shape of a Corefile. The parser (./parser.ts) produces it; the server and each
// plugin's setup read it. Every node remembers where it came from so errors can name the line.

export interface Position {
  /** File name as the user knows it: "Corefile", or the imported file's path. */
  file: string;
  /** 1-based line number. */
  line: number;
}

/**
 * One directive: `name arg arg { ...nested }`. Inside a plugin's block every line is itself a
 * Directive (`policy round_robin` → name "policy", args ["round_robin"]); lines that are data
 * rather than options (hosts entries such as `10.0.0.1 a.example`) are Directives too, with the
 * first token as `name`.
 */
export interface Directive extends Position {
  name: string;
  /** Arguments after env substitution, quotes removed. */
  args: string[];
  /** Lines of args when an argument sits on its own line; parallel to args. */
  argLines: number[];
  /** The nested `{ ... }` block, when there is one (possibly empty). */
  block?: Directive[];
}

/** A server block: `key [key...] { directives }`. */
export interface ServerBlock extends Position {
  /** Keys as written, after env substitution, e.g. ["cluster.local:53", "10.0.0.0/24"]. */
  keys: string[];
  directives: Directive[];
}

export type Transport = 'dns' | 'tls' | 'https' | 'grpc' | 'quic';

/** One zone a server block answers for, from one of its keys. */
export interface ServerKey {
  transport: Transport;
  /** Absolute, lower-case zone: "cluster.local.", "." , "0.0.10.in-addr.arpa.". */
  zone: string;
  /** Port from the key, or undefined when the key has none (the `-dns.port` default, 53, applies). */
  port?: number;
  /** The key as written. */
  raw: string;
}

export class CorefileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly detail: string,
  ) {
    super(line > 0 ? `${file}:${line}: ${detail}` : `${file}: ${detail}`);
    this.name = 'CorefileError';
  }

  static at(pos: Position, detail: string): CorefileError {
    return new CorefileError(pos.file, pos.line, detail);
  }
}
