// prometheus: counts every query of its server block on the way out (rcode, sizes, duration)
// and serves the process registry on /metrics.
//
// Per query the work is a few array lookups and additions: the cells of a zone are found once
// and kept in arrays indexed by transport, address family, query type and rcode.

import type { ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { rcodeName, typeName } from '../../lib/dns/rr.js';
import { RCode, RRType } from '../../lib/dns/types.js';
import { finalizeReply } from '../../server/finalize.js';
import { PluginError, type BlockInfo, type MaybePromise, type Next, type Plugin, type Shared } from '../../server/plugin.js';
import type { Reply } from '../../server/reply.js';
import type { ClientInfo, DnsRequest } from '../../server/request.js';
import { endpointFor, type HttpsIdentity } from '../pkg/endpoint.js';
import { type HttpAddress } from '../pkg/httpaddress.js';
import { serverLabel } from '../pkg/metrics.js';
import { isPromise } from '../../server/promise.js';
import type { CounterCell, HistogramCell } from '../pkg/series.js';
import { answerScrapes, podScrape } from './exposition.js';
import { dnsMetrics, setBuildInfo, type DnsMetrics } from './metrics.js';
import { gauge } from '../../server/metrics.js';

/** Query types that get their own `type` label; the rest are counted as "other" (as CoreDNS). */
const MONITORED_TYPES: readonly number[] = [
  RRType.A,
  RRType.AAAA,
  RRType.MX,
  RRType.SOA,
  RRType.CNAME,
  RRType.PTR,
  RRType.TXT,
  RRType.NS,
  RRType.SRV,
  RRType.DS,
  48, // DNSKEY
  46, // RRSIG
  47, // NSEC
  50, // NSEC3
  65, // HTTPS
  RRType.IXFR,
  RRType.AXFR,
  RRType.ANY,
];
const TYPE_LABELS: readonly string[] = [...MONITORED_TYPES.map(typeName), 'other'];
const OTHER_TYPE = MONITORED_TYPES.length;
const TYPE_INDEX = new Uint8Array(65536).fill(OTHER_TYPE);
MONITORED_TYPES.forEach((t, i) => {
  TYPE_INDEX[t] = i;
});

const PROTOS = ['udp', 'tcp'] as const;
const FAMILIES = ['1', '2'] as const;
/** The zone label of queries no server block takes (CoreDNS's vars.Dropped). */
const DROPPED_ZONE = 'dropped';

/** The `type` label of a query type. */
export function typeLabel(qtype: number): string {
  return TYPE_LABELS[TYPE_INDEX[qtype] as number] as string;
}

/** The rcode's name, or its number when it has none (as CoreDNS's rcode.ToString). */
export function rcodeLabel(rcode: number): string {
  const name = rcodeName(rcode);
  return name.startsWith('RCODE') ? String(rcode) : name;
}

/** 1 for IPv4 clients, 2 for IPv6 (Go's syscall.AF_INET / AF_INET6 numbering, as CoreDNS). */
export function familyOf(client: Pick<ClientInfo, 'remoteAddress' | 'remoteFamily'>): 1 | 2 {
  // remoteFamily, when the listener has it, spares making the address string for every query.
  if (client.remoteFamily !== undefined) return client.remoteFamily === 6 ? 2 : 1;
  return client.remoteAddress.includes(':') ? 2 : 1;
}

/** The cells one (server, zone) pair uses, created on first use. */
class ZoneCells {
  private readonly requests: Array<CounterCell | undefined> = [];
  private readonly durations: Array<HistogramCell | undefined> = [];
  private readonly requestSizes: Array<HistogramCell | undefined> = [];
  private readonly responseSizes: Array<HistogramCell | undefined> = [];
  private readonly responses = new Map<string, Array<CounterCell | undefined>>();
  private doRequests?: CounterCell;

  constructor(
    private readonly metrics: DnsMetrics,
    private readonly server: string,
    /** The block's view name ('' without one). */
    private readonly view: string,
    readonly zone: string,
  ) {}

  request(type: number, proto: number, family: number): CounterCell {
    const i = (type * 2 + proto) * 2 + family;
    return (this.requests[i] ??= this.metrics.requests.cell([this.server, this.zone, this.view, PROTOS[proto] as string, FAMILIES[family] as string, TYPE_LABELS[type] as string]));
  }

  duration(type: number): HistogramCell {
    return (this.durations[type] ??= this.metrics.duration.cell([this.server, this.zone, this.view, TYPE_LABELS[type] as string]));
  }

  requestSize(proto: number): HistogramCell {
    return (this.requestSizes[proto] ??= this.metrics.requestSize.cell([this.server, this.zone, this.view, PROTOS[proto] as string]));
  }

  responseSize(proto: number): HistogramCell {
    return (this.responseSizes[proto] ??= this.metrics.responseSize.cell([this.server, this.zone, this.view, PROTOS[proto] as string]));
  }

  response(rcode: number, plugin: string): CounterCell {
    let byRcode = this.responses.get(plugin);
    if (!byRcode) {
      byRcode = [];
      this.responses.set(plugin, byRcode);
    }
    return (byRcode[rcode] ??= this.metrics.responses.cell([this.server, this.zone, this.view, rcodeLabel(rcode), plugin]));
  }

  dnssecOk(): CounterCell {
    return (this.doRequests ??= this.metrics.doRequests.cell([this.server, this.view, this.zone]));
  }
}

/** Cells by zone for one `server` label. */
class ServerCells {
  private readonly zones = new Map<string, ZoneCells>();
  private last?: ZoneCells;

  constructor(
    private readonly metrics: DnsMetrics,
    readonly server: string,
    private readonly view = '',
  ) {}

  forZone(zone: string): ZoneCells {
    // Most blocks have one zone: skip the map when it is the same one as last time.
    const last = this.last;
    if (last !== undefined && last.zone === zone) return last;
    let z = this.zones.get(zone);
    if (!z) {
      z = new ZoneCells(this.metrics, this.server, this.view, zone);
      this.zones.set(zone, z);
    }
    this.last = z;
    return z;
  }
}

export interface PrometheusConfig {
  address: HttpAddress;
  /** `runtime_metrics`: also time garbage collections (nodejs_gc_duration_seconds). */
  runtimeMetrics?: boolean;
  /** `tls WEB_CONFIG`: path of the web configuration file giving the TLS of /metrics. */
  webConfig?: string;
}

/**
 * coredns_plugin_enabled: 1 for every plugin of the block, per zone, as CoreDNS reports them.
 * Set when the block starts, once `view` (set up last) has named the block's view.
 */
export function markPluginsEnabled(registry: Registry, block: BlockInfo): void {
  const enabled = gauge(registry, 'coredns_plugin_enabled', 'A metric that indicates whether a plugin is enabled on per server and zone basis.', ['server', 'zone', 'view', 'name']);
  const addresses = block.settings.listenAddresses.length > 0 ? block.settings.listenAddresses : [''];
  const view = block.settings.view?.name ?? '';
  for (const address of addresses) {
    for (const zone of block.zones) {
      for (const name of block.plugins) enabled.set({ server: serverLabel(address, block.port), zone, view, name }, 1);
    }
  }
}

/** Registers the families and answers /metrics. One per server block (plus the listener it shares). */
export class PrometheusPlugin implements Plugin {
  readonly name = 'prometheus';
  private readonly metrics: DnsMetrics;
  private readonly registry: Registry;
  private byLocalAddress = new Map<string, ServerCells>();
  /** By server label: the cells of dropped queries when the block has a view. */
  private unviewed?: Map<string, ServerCells>;
  private fallback: ServerCells;
  private release?: () => Promise<void>;

  constructor(
    readonly config: PrometheusConfig,
    private readonly shared: Shared,
    private readonly block: BlockInfo,
    /** Serve /metrics over HTTPS with this (prometheus `tls`); undefined: plain HTTP. */
    private readonly identity?: HttpsIdentity,
  ) {
    this.registry = shared.metrics;
    this.metrics = dnsMetrics(this.registry);
    setBuildInfo(this.registry);
    this.fallback = new ServerCells(this.metrics, serverLabel('', block.port));
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    let result: MaybePromise<Reply | undefined>;
    try {
      result = next(req);
    } catch (e) {
      this.record(req, undefined, e);
      throw e;
    }
    if (isPromise(result)) {
      return result.then(
        (reply) => {
          this.record(req, reply, undefined);
          return reply;
        },
        (e: unknown) => {
          this.record(req, undefined, e);
          throw e;
        },
      );
    }
    this.record(req, result, undefined);
    return result;
  }

  /** A query outside every zone of the listener, refused by the server: zone "dropped", as CoreDNS. */
  observeUnrouted(req: DnsRequest, reply: Reply): void {
    this.record(req, reply, undefined, DROPPED_ZONE, this.unviewedCellsFor(req.client.localAddress));
  }

  /** Cells without the block's view: a query no block took belongs to no view. */
  private unviewedCellsFor(localAddress: string): ServerCells {
    const own = this.cellsFor(localAddress);
    if (this.block.settings.view === undefined) return own;
    this.unviewed ??= new Map();
    let cells = this.unviewed.get(own.server);
    if (!cells) {
      cells = new ServerCells(this.metrics, own.server);
      this.unviewed.set(own.server, cells);
    }
    return cells;
  }

  /** Counts one answered (or failed) query. */
  private record(req: DnsRequest, reply: Reply | undefined, error: unknown, zone: string = req.zone, server: ServerCells = this.cellsFor(req.client.localAddress)): void {
    const cells = server.forZone(zone);
    const type = TYPE_INDEX[req.qtype] as number;
    const proto = req.transport === 'udp' ? 0 : 1;
    const family = familyOf(req.client) - 1;
    cells.request(type, proto, family).inc();
    if (req.do) cells.dnssecOk().inc();
    cells.duration(type).observe(Number(process.hrtime.bigint() - req.received) / 1e9);
    cells.requestSize(proto).observe(req.raw.length);
    let rcode: number;
    let size = 0;
    if (reply) {
      rcode = reply.rcode;
      size = finalSize(req, reply);
    } else {
      // What the server will send: the PluginError's rcode, or SERVFAIL (CoreDNS counts the
      // status the chain returned, with no size, when nothing was written).
      rcode = error instanceof PluginError ? error.rcode : RCode.SERVFAIL;
    }
    cells.responseSize(proto).observe(size);
    cells.response(rcode, reply?.plugin ?? '').inc();
  }

  private cellsFor(localAddress: string): ServerCells {
    if (this.byLocalAddress.size === 0) return this.fallback;
    return this.byLocalAddress.get(localAddress) ?? this.fallback;
  }

  async start(): Promise<void> {
    // `bind` has filled the listen addresses by now: one server label per address, as CoreDNS.
    const addresses = this.block.settings.listenAddresses;
    // `view` is set up after prometheus (it comes last in the plugin order): read it now.
    const view = this.block.settings.view?.name ?? '';
    if (view !== '') this.fallback = new ServerCells(this.metrics, serverLabel('', this.block.port), view);
    this.byLocalAddress = new Map(addresses.map((a) => [a, new ServerCells(this.metrics, serverLabel(a, this.block.port), view)]));
    if (addresses[0] !== undefined) this.fallback = this.byLocalAddress.get(addresses[0]) as ServerCells;
    markPluginsEnabled(this.registry, this.block);
    answerScrapes(this.registry);
    const endpoint = endpointFor(this.shared, this.config.address);
    this.release = await endpoint.claim('/metrics', (_req, res) => this.scrape(res), 'prometheus', this.identity);
  }

  private async scrape(res: ServerResponse): Promise<void> {
    const body = await podScrape(this.registry);
    res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(body);
  }

  async stop(): Promise<void> {
    const release = this.release;
    this.release = undefined;
    await release?.();
  }
}

/** Size of the bytes the client gets; 0 when the reply cannot be encoded (the server then sends SERVFAIL). */
function finalSize(req: DnsRequest, reply: Reply): number {
  try {
    return finalizeReply(req, reply).length;
  } catch {
    return 0;
  }
}
