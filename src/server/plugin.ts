// The contract between the server core and every plugin.
//
// A plugin folder `src/plugins/<name>/` exports from `setup.ts`:
//
//     export const setup: SetupFn = (ctx) => { ...parse ctx.directive...; return plugin; };
//
// The server imports it by name when a Corefile uses the directive, so there is no central
// registry to edit. Plugins run in the fixed order of ./order.ts (CoreDNS's plugin.cfg),
// whatever order the Corefile lists them in.

import type { Directive, ServerKey } from '../lib/corefile/ast.js';
import type { DnsRequest } from './request.js';
import type { Reply } from './reply.js';
import type { Registry } from 'prom-client';
import type { Logger } from './log.js';

export type MaybePromise<T> = T | Promise<T>;

/** Calls the rest of the chain. Resolves to undefined when nothing after us answered. */
export type Next = (req: DnsRequest) => MaybePromise<Reply | undefined>;

export interface Plugin {
  readonly name: string;
  /**
   * Answer the request, or pass it on with `next(req)` (possibly after changing it), or
   * both (wrap: call next, then look at or change the reply). Absent for plugins that do
   * not take part in answering (health, ready, prometheus's listener, bind, reload).
   * Throw PluginError for an expected failure (the `errors` plugin logs it); the server turns
   * anything thrown into SERVFAIL.
   */
  serve?(req: DnsRequest, next: Next): MaybePromise<Reply | undefined>;
  /** Once the whole config is set up, before listeners open: start watchers, probes. */
  start?(): MaybePromise<void>;
  /**
   * On SIGTERM/SIGINT, before listeners close, while queries are still answered
   * (health's lameduck sleeps here).
   */
  beforeShutdown?(): MaybePromise<void>;
  /** When this config instance is retired: after a reload replaced it, or at shutdown. */
  stop?(): MaybePromise<void>;
  /** Readiness as `ready` reports it: true, or why not. Absent = does not report. */
  ready?(): true | string;
  /**
   * A query no server block on this listener takes is answered REFUSED by the server itself,
   * outside every chain. A plugin that counts queries sees it here (prometheus counts it under
   * zone "dropped", as CoreDNS). The server calls the first plugin on the listener that has it.
   */
  observeUnrouted?(req: DnsRequest, reply: Reply): void;
}

/** `timeouts read|write|idle` in ms; what a block leaves unset keeps the server's default. */
export interface ConnectionTimeouts {
  /** From the connect to the first complete query. */
  readMs?: number;
  /** Longest an answer may wait unsent because the client does not read. */
  writeMs?: number;
  /** Between the last query or answer and the next complete query. */
  idleMs?: number;
}

/** Settings that belong to a server block as a whole and that some plugins set (bind, bufsize). */
export interface BlockSettings {
  /** Addresses to listen on; empty = all (0.0.0.0 and ::). Set by `bind`. */
  listenAddresses: string[];
  /** Set by `debug`: errors thrown by plugins end the process instead of becoming SERVFAIL. */
  debug?: boolean;
  /** Set by `tls`: the certificates of a tls:// or https:// block. */
  tls?: TlsSettings;
  /** Set by `timeouts maxtcpqueries`: a client's TCP/TLS connection is closed after this many queries. */
  maxTcpQueries?: number;
  /** Set by `timeouts read|write|idle` (ms): the TCP, DNS-over-TLS and DNS-over-HTTPS timeouts. */
  connectionTimeouts?: ConnectionTimeouts;
  /** Set by `multisocket`: how many workers serve the block (each with its own sockets). */
  sockets?: number;
  /**
   * Set by `view`: the block takes a query only when `matches` holds for it. Blocks with a view
   * may share a zone and port; the first in Corefile order that matches (or has no view) wins.
   */
  view?: BlockView;
}

/** A server block's view: its name (the `view` label of metrics, `view/name` metadata) and its condition. */
export interface BlockView {
  readonly name: string;
  matches(req: DnsRequest): boolean;
}

/** How a TLS listener treats client certificates (the `tls` plugin's client_auth, Go's ClientAuthType). */
export type ClientAuth = 'nocert' | 'request' | 'require' | 'verify_if_given' | 'require_and_verify';

/** A TLS server identity as the `tls` directive gives it, files already read and checked. */
export interface TlsSettings {
  cert: Buffer;
  key: Buffer;
  /** CA bundle that verifies client certificates; absent = Node's bundled root CAs. */
  ca?: Buffer;
  clientAuth: ClientAuth;
  /** File to append TLS key log lines to (NSS key log format), for debugging with Wireshark. */
  keylog?: string;
}

export interface BlockInfo {
  /** Every zone of the block (one per key; a CIDR key may give several). */
  keys: ServerKey[];
  /** Convenience: the zones of `keys`, absolute and lower-case. */
  zones: string[];
  port: number;
  settings: BlockSettings;
  /** Names of the block's plugins in chain order (CoreDNS's coredns_plugin_enabled). */
  plugins: string[];
  /** Position of the block's first key, for error messages. */
  file: string;
  line: number;
}

/** Process-lifetime services: they survive reloads, so counters keep counting and ports stay bound. */
export interface Shared {
  /** The one prom-client registry of the process (served by `prometheus`). */
  readonly metrics: Registry;
  /** Get-or-create a process-lifetime object (e.g. an HTTP listener shared by blocks and reloads). */
  singleton<T>(key: string, create: () => T): T;
  readonly log: Logger;
}

/** Options from the command line that plugins may consult. */
export interface ServeOptions {
  /** `kdns serve --cluster DIR`: directory source for kubernetes blocks that name none. */
  clusterDir?: string;
  /** Default port for keys without one (CoreDNS `-dns.port`, default 53). */
  defaultPort: number;
}

/** What a plugin may ask of the running server (reload, ready and health use it). */
export interface ServerControl {
  /**
   * Re-reads the Corefile from disk and swaps configs if it sets up cleanly; on failure the
   * running config keeps serving, the error is logged and coredns_reload_failed_total counts it.
   * Resolves true when the new config is running.
   */
  reload(): Promise<boolean>;
  /** The Corefile text of the config instance that is running now. */
  corefileText(): string;
  /** Readiness of every plugin of the running config that reports it. */
  readiness(): Array<{ plugin: string; zone: string; status: true | string }>;
  /** True from SIGTERM/SIGINT until exit (lameduck). */
  shuttingDown(): boolean;
}

export interface SetupContext {
  /** The directive being set up: its args, nested block and position. */
  readonly directive: Directive;
  /** The server block it sits in (settings may be changed by setup: bind, bufsize). */
  readonly block: BlockInfo;
  /** Path of the Corefile being loaded (relative paths in plugin options resolve against its folder). */
  readonly corefilePath: string;
  readonly shared: Shared;
  readonly options: ServeOptions;
  /**
   * Per-config-instance registry: plugins of the same config find each other's state here
   * (e.g. autopath asks the kubernetes plugin of its block). Key by plugin name + block.
   */
  readonly instance: Map<string, unknown>;
  readonly server: ServerControl;
}

export type SetupFn = (ctx: SetupContext) => MaybePromise<Plugin>;

/** An expected failure with the RCODE the client should see. */
export class PluginError extends Error {
  constructor(
    readonly plugin: string,
    readonly rcode: number,
    message: string,
  ) {
    super(`plugin/${plugin}: ${message}`);
    this.name = 'PluginError';
  }
}
