// One loaded configuration: every server block set up with its own plugin instances, grouped
// into the listeners they need. Building it has no effect on the running server, so a reload
// that fails leaves the old instance serving untouched.

import { dirname, resolve } from 'node:path';
import { CorefileError, type Directive, type ServerBlock, type ServerKey } from '../lib/corefile/ast.js';
import { keyPort, parseCorefile, parseServerKey } from '../lib/corefile/parser.js';
import { firstLabelEnd } from '../lib/dns/name.js';
import { PLUGINS, type PluginModule } from '../plugins/registry.js';
import type { Plugin, ServeOptions, ServerControl, SetupFn, Shared, BlockInfo, Next, TlsSettings, ConnectionTimeouts } from './plugin.js';
import { changesQuestionBeforeAcl, pluginRank } from './order.js';
import { removedDirective, unavailableDirective } from './obsolete.js';
import type { DnsRequest } from './request.js';
import { workerIndex } from './siblings.js';
import type { Reply } from './reply.js';

export type Handler = (req: DnsRequest) => ReturnType<Next>;

/** A server block ready to answer: its zones and its chain. */
export interface LoadedBlock {
  info: BlockInfo;
  transport: ListenTransport;
  plugins: Plugin[];
  handle: Handler;
}

/** The transports kdns serves: plain DNS (UDP+TCP), DNS over TLS, DNS over HTTPS. */
export type ListenTransport = 'dns' | 'tls' | 'https';

/** Where a group of blocks listens; blocks sharing transport, address and port share a listener. */
export interface ListenSpec {
  transport: ListenTransport;
  address: string;
  port: number;
  /**
   * zone → its blocks in Corefile order: the longest matching zone wins, and within it the first
   * block whose view matches the query (a block without view matches every query).
   */
  zones: Map<string, LoadedBlock[]>;
  /** Certificates of a tls:// or https:// listener (the `tls` directive of its blocks; the last one wins, as in CoreDNS). Absent: cleartext. */
  tls?: TlsSettings;
  /** A block on this listener has `debug`: errors thrown by plugins are not recovered. */
  debug: boolean;
  /** `timeouts maxtcpqueries` of its blocks (the smallest): queries per client TCP/TLS connection. */
  maxTcpQueries?: number;
  /** `timeouts read|write|idle` of its blocks, each the smallest any block sets. */
  timeouts: ConnectionTimeouts;
}

export interface ConfigInstance {
  corefilePath: string;
  corefileText: string;
  blocks: LoadedBlock[];
  listens: ListenSpec[];
  /** Every plugin of every block, in setup order (for start/stop/readiness). */
  plugins: Array<{ plugin: Plugin; zone: string }>;
}

/** The setup of the directive's plugin, loaded now (only the plugins a Corefile names are loaded). */
async function loadSetup(d: Directive): Promise<SetupFn> {
  const load = PLUGINS.get(d.name);
  if (!load) throw CorefileError.at(d, unavailableDirective(d.name));
  const mod: Partial<PluginModule> = await load();
  if (typeof mod.setup !== 'function') throw CorefileError.at(d, `plugin "${d.name}" has no setup`);
  return mod.setup;
}

/** Marks a reply with the first (innermost) plugin that returned it: the one that made it. */
function stamp(reply: Reply | undefined, name: string): Reply | undefined {
  if (reply && reply.plugin === undefined) reply.plugin = name;
  return reply;
}

/**
 * A plugin that judges questions (acl). Plugins ahead of it may put another question in the
 * client's place (rewrite, autopath: see changesQuestionBeforeAcl); it judges those where it
 * stands, and the chain has it judge the client's own question before the first of them runs.
 */
interface QuestionJudge extends Plugin {
  judgeAhead(req: DnsRequest, next: Handler): ReturnType<Next>;
}

function isQuestionJudge(p: Plugin): p is QuestionJudge {
  return typeof (p as Partial<QuestionJudge>).judgeAhead === 'function';
}

/** The judge of the chain and the index of the plugin whose entry it guards, when there is one to guard. */
function judgeAheadOf(plugins: readonly Plugin[]): { judge: QuestionJudge; at: number } | undefined {
  const judgeAt = plugins.findIndex((p) => p.serve !== undefined && isQuestionJudge(p));
  if (judgeAt < 0) return undefined;
  const at = plugins.findIndex((p, i) => i < judgeAt && p.serve !== undefined && changesQuestionBeforeAcl(p.name));
  return at < 0 ? undefined : { judge: plugins[judgeAt] as QuestionJudge, at };
}

/** Runs the chain: each plugin gets the next one's handler; the end of the chain answers nothing. */
export function buildChain(plugins: Plugin[]): Handler {
  const ahead = judgeAheadOf(plugins);
  let next: Handler = () => undefined;
  for (let i = plugins.length - 1; i >= 0; i--) {
    const p = plugins[i] as Plugin;
    if (!p.serve) continue;
    const after = next;
    const serve = p.serve.bind(p);
    const name = p.name;
    next = (req) => {
      const out = serve(req, after);
      if (out instanceof Promise) return out.then((r) => stamp(r, name));
      return stamp(out, name);
    };
    if (ahead?.at === i) {
      const judge = ahead.judge;
      const guarded = next;
      next = (req) => {
        const out = judge.judgeAhead(req, guarded);
        if (out instanceof Promise) return out.then((r) => stamp(r, judge.name));
        return stamp(out, judge.name);
      };
    }
  }
  return next;
}

const SERVED_TRANSPORTS: ReadonlySet<string> = new Set<ListenTransport>(['dns', 'tls', 'https']);

/** The one transport of a block's keys; kdns serves dns://, tls:// and https://. */
function blockTransport(block: ServerBlock, keys: ServerKey[]): ListenTransport {
  for (const k of keys) {
    if (!SERVED_TRANSPORTS.has(k.transport)) throw CorefileError.at(block, `transport ${k.transport}:// is not supported by kdns (key "${k.raw}"); use dns://, tls:// or https://`);
  }
  const kinds = new Set(keys.map((k) => k.transport));
  if (kinds.size > 1) throw CorefileError.at(block, `keys of one server block must share a transport (got ${[...kinds].map((t) => `${t}://`).join(', ')})`);
  return (keys[0]?.transport ?? 'dns') as ListenTransport;
}

function blockInfo(block: ServerBlock, keys: ServerKey[], defaultPort: number): BlockInfo {
  const ports = new Set(keys.map((k) => keyPort(k, defaultPort)));
  if (ports.size > 1) {
    throw CorefileError.at(block, `keys of one server block must share a port (got ${[...ports].join(', ')})`);
  }
  return {
    keys,
    zones: keys.map((k) => k.zone),
    port: [...ports][0] ?? defaultPort,
    settings: { listenAddresses: [] },
    plugins: sortedDirectives(block).map((d) => d.name),
    file: block.file,
    line: block.line,
  };
}

function sortedDirectives(block: ServerBlock): Directive[] {
  for (const d of block.directives) {
    if (pluginRank(d.name) !== undefined) continue;
    const removed = removedDirective(d.name);
    throw CorefileError.at(d, removed ? `unknown directive "${d.name}": ${removed}` : `unknown directive "${d.name}"`);
  }
  // Array.prototype.sort is stable: repeated directives keep their Corefile order.
  return [...block.directives].sort((a, b) => (pluginRank(a.name) as number) - (pluginRank(b.name) as number));
}

export interface LoadContext {
  shared: Shared;
  options: ServeOptions;
  server: ServerControl;
}

/** Stops what a failed or retired instance started; never throws. */
export async function stopPlugins(plugins: Array<{ plugin: Plugin }>, onError: (e: unknown) => void): Promise<void> {
  await Promise.all(
    plugins.map(async ({ plugin }) => {
      try {
        await plugin.stop?.();
      } catch (e) {
        onError(e);
      }
    }),
  );
}

export async function loadConfig(corefilePath: string, corefileText: string, ctx: LoadContext): Promise<ConfigInstance> {
  const shownName = corefilePath;
  const blocks = parseCorefile(corefileText, { file: shownName, baseDir: dirname(resolve(corefilePath)) });
  const instance = new Map<string, unknown>();
  const loaded: LoadedBlock[] = [];
  const all: Array<{ plugin: Plugin; zone: string }> = [];
  try {
    for (const block of blocks) {
      const keys = block.keys.flatMap((k) => parseServerKey(k, ctx.options.defaultPort));
      const transport = blockTransport(block, keys);
      const info = blockInfo(block, keys, ctx.options.defaultPort);
      const plugins: Plugin[] = [];
      for (const d of sortedDirectives(block)) {
        const setup = await loadSetup(d);
        const plugin = await setup({
          directive: d,
          block: info,
          corefilePath: resolve(corefilePath),
          shared: ctx.shared,
          options: ctx.options,
          instance,
          server: ctx.server,
        });
        plugins.push(plugin);
        all.push({ plugin, zone: info.zones[0] ?? '.' });
      }
      loaded.push({ info, transport, plugins, handle: buildChain(plugins) });
    }
  } catch (e) {
    await stopPlugins(all, () => undefined);
    throw e;
  }
  return { corefilePath, corefileText, blocks: loaded, listens: groupListeners(loaded, workerIndex()), plugins: all };
}

const WILDCARD = '';

/**
 * Groups blocks by (address, port); a zone served twice on one address and port is an error.
 * Worker `worker` of a `multisocket` parent (0 without one) opens only the listeners whose count
 * reaches it: one whose blocks say `multisocket 2` is opened by workers 0 and 1, one without it
 * by worker 0. Blocks sharing a listener share its count (the largest), as the parent's sockets do.
 */
export function groupListeners(blocks: LoadedBlock[], worker = 0): ListenSpec[] {
  const specs = new Map<string, ListenSpec>();
  const sockets = new Map<ListenSpec, number>();
  for (const b of blocks) {
    const addresses = b.info.settings.listenAddresses.length > 0 ? b.info.settings.listenAddresses : [WILDCARD];
    for (const address of addresses) {
      const key = `${b.transport}|${address}|${b.info.port}`;
      let spec = specs.get(key);
      if (!spec) {
        spec = { transport: b.transport, address, port: b.info.port, zones: new Map(), debug: false, timeouts: {} };
        specs.set(key, spec);
      }
      for (const zone of b.info.zones) {
        const list = spec.zones.get(zone) ?? [];
        // Blocks with a view may share a zone (split DNS); two that take every query may not.
        if (!b.info.settings.view && list.some((o) => !o.info.settings.view)) {
          throw new CorefileError(b.info.file, b.info.line, `cannot serve ${b.transport}://${zone}:${b.info.port} - it is already defined`);
        }
        list.push(b);
        spec.zones.set(zone, list);
      }
      if (b.info.settings.tls) spec.tls = b.info.settings.tls;
      if (b.info.settings.debug) spec.debug = true;
      const cap = b.info.settings.maxTcpQueries;
      if (cap && (spec.maxTcpQueries === undefined || cap < spec.maxTcpQueries)) spec.maxTcpQueries = cap;
      spec.timeouts = smallestTimeouts(spec.timeouts, b.info.settings.connectionTimeouts);
      sockets.set(spec, Math.max(sockets.get(spec) ?? 1, b.info.settings.sockets ?? 1));
    }
  }
  const list = [...specs.values()];
  for (const s of list) {
    if (s.address !== WILDCARD) continue;
    const clash = list.find((o) => o.port === s.port && o.address !== WILDCARD);
    if (clash) {
      throw new CorefileError('Corefile', 0, `port ${s.port}: a block without "bind" listens on every address, so no other block can bind ${clash.address} on the same port`);
    }
  }
  return list.filter((s) => (sockets.get(s) ?? 1) > worker);
}

/** The longest zone of `zones` that contains `name` (lower-case, absolute), if any. */
export function routeByZone(zones: Map<string, unknown>, name: string): string | undefined {
  let candidate = name;
  for (;;) {
    if (zones.has(candidate)) return candidate;
    if (candidate === '.') return undefined;
    candidate = parentZone(candidate);
  }
}

/** The zone one label up ("b.c." for "a.b.c.", "." for "a."). */
function parentZone(name: string): string {
  const dot = firstLabelEnd(name);
  return dot < 0 || dot === name.length - 1 ? '.' : name.slice(dot + 1);
}

/**
 * The zones of a configuration by the length of their names, beside the zone → blocks map.
 * Routing compares a query name's suffixes only with zones of the same length, and looks a
 * zone up by the zone's own (internalized) string: V8 internalizes a string it is given as a
 * Map key (a search of its string table, the largest user-space cost of a cache hit on Node
 * 26), and a lookup per label made and internalized a new substring for each.
 */
export class ZoneRoutes {
  private readonly byLength: (string[] | undefined)[] = [];

  constructor(readonly blocks: ReadonlyMap<string, LoadedBlock[]>) {
    for (const zone of blocks.keys()) {
      const same = this.byLength[zone.length];
      if (same) same.push(zone);
      else this.byLength[zone.length] = [zone];
    }
  }

  /** The zone equal to `name` from `at` on (`at` a label's start), if there is one. */
  zoneAt(name: string, at: number): string | undefined {
    const same = this.byLength[name.length - at];
    if (same === undefined) return undefined;
    for (const zone of same) if (name.startsWith(zone, at)) return zone;
    return undefined;
  }
}

/**
 * The block that takes `req`: in the longest zone that has one willing, the first block
 * (Corefile order) without a view or whose view matches; when no block of a zone matches, the
 * next zone up is tried, as CoreDNS does. Sets `req.zone` to the zone found (no object is made
 * per query).
 */
export function routeQuery(routes: ZoneRoutes, req: DnsRequest): LoadedBlock | undefined {
  const name = req.query.name;
  // Where the zone tried starts in name; past the last label, the root.
  let at = 0;
  let root = name === '.';
  for (;;) {
    const zone = root ? '.' : routes.zoneAt(name, at);
    if (zone !== undefined) {
      for (const block of routes.blocks.get(zone) ?? []) {
        const view = block.info.settings.view;
        if (view === undefined || view.matches(req)) {
          req.zone = zone;
          return block;
        }
      }
    }
    if (root) return undefined;
    const dot = firstLabelEnd(name, at);
    if (dot < 0 || dot === name.length - 1) root = true;
    else at = dot + 1;
  }
}

/**
 * Each timeout the smallest of `a` and `b` that sets it. Blocks that share a listener share its
 * connections, and the strictest block's limit is the one its operator can rely on (CoreDNS
 * takes whichever block it reads last).
 */
export function smallestTimeouts(a: ConnectionTimeouts, b: ConnectionTimeouts | undefined): ConnectionTimeouts {
  if (!b) return a;
  const pick = (x: number | undefined, y: number | undefined): number | undefined => (x === undefined ? y : y === undefined ? x : Math.min(x, y));
  return { readMs: pick(a.readMs, b.readMs), writeMs: pick(a.writeMs, b.writeMs), idleMs: pick(a.idleMs, b.idleMs) };
}
