// The running kdns server: one config instance serving at a time, listeners that outlive
// reloads, and the lifecycle (start, reload, lameduck shutdown).

import { readFileSync } from 'node:fs';
import { Registry } from './promclient.js';
import { loadConfig, stopPlugins, type ConfigInstance, type ListenSpec } from './config.js';
import { Dispatcher } from './dispatch.js';
import { listenTcp, listenUdp, DEFAULT_TCP_LIMITS, type Listener, type TcpLimits, type UdpTransport } from './listeners.js';
import { createLogger, setDebugLogging, type Logger } from './log.js';
import { guardProcess } from './guard.js';
import { listenTls, type SecureListener } from './tlslistener.js';
import { listenHttps } from './doh.js';
import { counter } from './metrics.js';
import type { Counter } from './promclient.js';
import type { ServeOptions, ServerControl, Shared } from './plugin.js';
import type { GroupShareOf } from './steer.js';

export interface StartOptions {
  /** Path of the Corefile; reload re-reads it. */
  corefilePath: string;
  /** Text to use instead of reading corefilePath at start (tests, the embedded demo). */
  corefileText?: string;
  options?: Partial<ServeOptions>;
  log?: Logger;
  tcpLimits?: Partial<TcpLimits>;
  /** UDP socket implementation (default 'auto': native when built). */
  udpTransport?: UdpTransport;
}

export interface ListeningAddress {
  transport: 'udp' | 'tcp' | 'tls' | 'https';
  via?: 'native' | 'dgram';
  /** tls and https: false when the block has no `tls` directive and serves cleartext. */
  secure?: boolean;
  address: string;
  port: number;
}

interface OpenListener {
  spec: ListenSpec;
  dispatcher: Dispatcher;
  /** dns: UDP then TCP; tls and https: one listener. */
  sockets: Array<Listener | SecureListener>;
}

/** Listeners are reused across reloads by this key (a tls:// or https:// listener takes new certificates in place). */
function listenKey(spec: Pick<ListenSpec, 'transport' | 'address' | 'port'>): string {
  return `${spec.transport}|${spec.address}|${spec.port}`;
}

function closeListener(o: OpenListener): Promise<void[]> {
  return Promise.all(o.sockets.map((l) => l.close()));
}

/**
 * Closes a listener's sockets, draining those that can stop taking queries first (Listener.drain);
 * with `shareOf`, TCP steers its new connections to the successor first (./steer.ts).
 */
function drainListener(shareOf?: GroupShareOf): (o: OpenListener) => Promise<void[]> {
  return (o) => Promise.all(o.sockets.map((l) => ('drain' in l && l.drain ? l.drain(shareOf) : l.close())));
}

function describeError(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function createShared(log: Logger): Shared {
  const singletons = new Map<string, unknown>();
  return {
    metrics: new Registry(),
    log,
    singleton<T>(key: string, create: () => T): T {
      if (!singletons.has(key)) singletons.set(key, create());
      return singletons.get(key) as T;
    },
  };
}

export class KdnsServer implements ServerControl {
  readonly shared: Shared;
  private current?: ConfigInstance;
  private readonly open = new Map<string, OpenListener>();
  private stopping = false;
  private readonly options: ServeOptions;
  private readonly tcpLimits: TcpLimits;
  private readonly udpTransport: UdpTransport;
  private reloadChain: Promise<boolean> = Promise.resolve(true);

  constructor(
    private readonly corefilePath: string,
    opts: StartOptions,
  ) {
    this.shared = createShared(opts.log ?? createLogger());
    this.options = { defaultPort: 53, ...opts.options };
    this.tcpLimits = { ...DEFAULT_TCP_LIMITS, ...opts.tcpLimits };
    this.udpTransport = opts.udpTransport ?? 'auto';
  }

  get log(): Logger {
    return this.shared.log;
  }

  /** Loads, starts and listens; throws (with nothing left running) when any step fails. */
  async start(text: string): Promise<void> {
    const instance = await this.build(text);
    try {
      await this.activate(instance);
    } catch (e) {
      await stopPlugins(instance.plugins, () => undefined);
      throw e;
    }
  }

  private async build(text: string): Promise<ConfigInstance> {
    const instance = await loadConfig(this.corefilePath, text, { shared: this.shared, options: this.options, server: this });
    try {
      for (const { plugin } of instance.plugins) await plugin.start?.();
    } catch (e) {
      await stopPlugins(instance.plugins, () => undefined);
      throw e;
    }
    return instance;
  }

  /** Opens what the instance needs, swaps routing tables, closes what it no longer needs. */
  private async activate(instance: ConfigInstance): Promise<void> {
    const opened: OpenListener[] = [];
    try {
      for (const spec of instance.listens) {
        if (this.open.has(listenKey(spec))) continue;
        opened.push(await this.openListener(spec));
      }
    } catch (e) {
      await Promise.all(opened.map(closeListener));
      throw e;
    }
    for (const o of opened) this.open.set(listenKey(o.spec), o);
    const wanted = new Set(instance.listens.map(listenKey));
    for (const spec of instance.listens) {
      const o = this.open.get(listenKey(spec)) as OpenListener;
      o.spec = spec;
      o.dispatcher.zones = spec.zones;
      o.dispatcher.debug = spec.debug;
      for (const l of o.sockets) {
        if (!('update' in l)) continue;
        if (l.secure && !spec.tls) this.warnCleartext(spec);
        l.update(spec.tls);
      }
    }
    setDebugLogging(instance.listens.some((l) => l.debug));
    const retired: OpenListener[] = [];
    for (const [key, o] of this.open) {
      if (!wanted.has(key)) {
        retired.push(o);
        this.open.delete(key);
      }
    }
    const previous = this.current;
    this.current = instance;
    await Promise.all(retired.map(closeListener));
    if (previous) await stopPlugins(previous.plugins, (e) => this.log.error(`stopping retired config: ${describeError(e)}`));
  }

  /** coredns_panics_total: errors recovered from, in a query's path or anywhere in the process. */
  private panics(): Counter {
    return counter(this.shared.metrics, 'coredns_panics_total', 'A metrics that counts the number of panics.');
  }

  /** Keeps the process alive through errors nothing caught, logging and counting them (guard.ts). */
  guardProcess(): () => void {
    return guardProcess((line) => this.log.error(line), this.panics());
  }

  private async openListener(spec: ListenSpec): Promise<OpenListener> {
    const panics = this.panics();
    const dispatcher = new Dispatcher(spec.zones, {
      onPanic: (err, req) => {
        panics.inc();
        this.log.error(`Recovered from panic in server: "${spec.transport}://${spec.address}:${spec.port}" ${req.qname} ${req.qtype}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      },
    });
    const shown = spec.address === '' ? '' : spec.address;
    if (spec.transport !== 'dns') {
      if (!spec.tls) this.warnCleartext(spec);
      try {
        return { spec, dispatcher, sockets: [await this.openSecure(spec, dispatcher)] };
      } catch (e) {
        throw new Error(`listen ${spec.transport} ${shown}:${spec.port}: ${describeError(e)}`);
      }
    }
    let udp: Listener;
    try {
      udp = await listenUdp(spec.address, spec.port, dispatcher, this.udpTransport);
    } catch (e) {
      throw new Error(`listen udp ${shown}:${spec.port}: ${describeError(e)}`);
    }
    // Port 0 (tests): TCP takes the port UDP got, so one number serves both.
    let tcp: Listener;
    try {
      tcp = await listenTcp(spec.address, udp.port, dispatcher, this.limitsFor(spec));
    } catch (e) {
      await udp.close();
      throw new Error(`listen tcp ${shown}:${udp.port}: ${describeError(e)}`);
    }
    return { spec, dispatcher, sockets: [udp, tcp] };
  }

  /** The server's TCP limits with the listener's own query cap and timeouts (`timeouts`). */
  private limitsFor(spec: ListenSpec): TcpLimits {
    const t = spec.timeouts;
    return {
      ...this.tcpLimits,
      ...(spec.maxTcpQueries ? { maxQueriesPerConnection: spec.maxTcpQueries } : {}),
      ...(t.readMs !== undefined ? { readTimeoutMs: t.readMs } : {}),
      ...(t.idleMs !== undefined ? { idleTimeoutMs: t.idleMs } : {}),
      ...(t.writeMs !== undefined ? { stalledTimeoutMs: t.writeMs } : {}),
    };
  }

  private warnCleartext(spec: ListenSpec): void {
    const what = spec.transport === 'tls' ? 'DNS over plain TCP' : 'DoH over plain HTTP';
    this.log.warn(`${spec.transport}://${spec.address}:${spec.port} has no tls directive: serving ${what}`);
  }

  private openSecure(spec: ListenSpec, dispatcher: Dispatcher): Promise<SecureListener> {
    if (spec.transport === 'tls') return listenTls(spec.address, spec.port, dispatcher, spec.tls, this.limitsFor(spec));
    const responses = counter(this.shared.metrics, 'coredns_dns_https_responses_total', 'Counter of DoH responses per server and http status code.', ['server', 'status']);
    const server = `https://${spec.address}:${spec.port}`;
    return listenHttps(spec.address, spec.port, dispatcher, spec.tls, this.limitsFor(spec), (status) => responses.inc({ server, status: String(status) }));
  }

  reload(): Promise<boolean> {
    // Reloads run one at a time; a second request waits for the first.
    this.reloadChain = this.reloadChain.then(() => this.reloadNow());
    return this.reloadChain;
  }

  private async reloadNow(): Promise<boolean> {
    if (this.stopping) return false;
    const failed = counter(this.shared.metrics, 'coredns_reload_failed_total', 'Counter of the number of failed reload attempts.');
    let instance: ConfigInstance | undefined;
    try {
      const text = readFileSync(this.corefilePath, 'utf8');
      instance = await this.build(text);
      await this.activate(instance);
      return true;
    } catch (e) {
      if (instance) await stopPlugins(instance.plugins, () => undefined);
      failed.inc();
      this.log.error(`Restart failed: ${describeError(e)}`);
      return false;
    }
  }

  corefileText(): string {
    return this.current?.corefileText ?? '';
  }

  readiness(): Array<{ plugin: string; zone: string; status: true | string }> {
    // Plugins start before the sockets open; until they are open nobody can be answered.
    if (!this.current) return [{ plugin: 'server', zone: '.', status: 'listeners are not open yet' }];
    const out: Array<{ plugin: string; zone: string; status: true | string }> = [];
    for (const { plugin, zone } of this.current?.plugins ?? []) {
      if (plugin.ready) out.push({ plugin: plugin.name, zone, status: plugin.ready() });
    }
    return out;
  }

  shuttingDown(): boolean {
    return this.stopping;
  }

  listening(): ListeningAddress[] {
    return [...this.open.values()].flatMap((o) =>
      o.sockets.map((l): ListeningAddress => {
        if ('secure' in l) return { transport: l.transport, secure: l.secure, address: l.address, port: l.port };
        return l.via ? { transport: l.transport, via: l.via, address: l.address, port: l.port } : { transport: l.transport, address: l.address, port: l.port };
      }),
    );
  }

  /**
   * Graceful stop: plugins' beforeShutdown (lameduck) while still answering, then close.
   * `handOver`: another process serves the same addresses (SO_REUSEPORT); the sockets stop
   * taking queries and answer those already taken before they close (Listener.drain).
   * `shareOf` counts a TCP listener's SO_REUSEPORT group, so that its new connections can be
   * sent to the successor's sockets before it closes (./steer.ts).
   */
  async shutdown(opts: { handOver?: boolean; shareOf?: GroupShareOf } = {}): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.reloadChain.catch(() => undefined);
    const plugins = this.current?.plugins ?? [];
    await Promise.all(plugins.map(async ({ plugin }) => plugin.beforeShutdown?.()));
    await this.closeAll(opts.handOver ? drainListener(opts.shareOf) : closeListener);
  }

  /**
   * Removes what a predecessor's hand-over left on the TCP listeners' SO_REUSEPORT groups (a
   * program that would still skew which socket gets a connection); for a caller that knows no
   * other process listens on these addresses any more. Nothing once stopping: this process's
   * own hand-over sets those programs then.
   */
  forgetSteering(): void {
    if (this.stopping) return;
    for (const o of this.open.values()) for (const l of o.sockets) if ('forgetSteering' in l) l.forgetSteering?.();
  }

  /** Immediate stop: close listeners and stop plugins. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.closeAll();
  }

  private async closeAll(closeOne: (o: OpenListener) => Promise<void[]> = closeListener): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map(closeOne));
    const instance = this.current;
    this.current = undefined;
    if (instance) await stopPlugins(instance.plugins, (e) => this.log.error(`stopping: ${describeError(e)}`));
  }
}

/** Loads the Corefile, starts every plugin and opens the listeners. */
export async function startServer(opts: StartOptions): Promise<KdnsServer> {
  const server = new KdnsServer(opts.corefilePath, opts);
  const text = opts.corefileText ?? readFileSync(opts.corefilePath, 'utf8');
  await server.start(text);
  return server;
}
