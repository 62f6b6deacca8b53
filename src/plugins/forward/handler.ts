// forward: sends queries for its zone to upstream servers and returns their replies as they
// came (wire bytes, the client's ID put back). Upstreams are tried in the policy's order; one
// that errors is health-checked in the background and skipped once it is down; a query whose
// upstream failed goes to the next one, and to those that timed out again, while the request
// deadline lasts, so clients see SERVFAIL only when no upstream could answer. Within one exchange
// a UDP query whose reply is late while the upstream answers others is sent again (retransmit.ts
// in dnsclient), so a lost datagram costs tens of milliseconds rather than the exchange timeout.
import { DnsClient, type Proto } from '../../lib/dnsclient/client.js';
import { ExchangeError } from '../../lib/dnsclient/errors.js';
import { isWellFormedMessage } from '../../lib/dns/codec.js';
import { buildQuery, fullRcode, headerRcode, isTruncated, readU16, scanMessage } from '../../lib/dns/wire.js';
import { isSubdomain, nameToWire } from '../../lib/dns/name.js';
import { RCode, RRType, DnsClass } from '../../lib/dns/types.js';
import { PluginError, type MaybePromise, type Next, type Plugin } from '../../server/plugin.js';
import { Reply, errorReply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { Logger } from '../../server/log.js';
import { policyByName, shuffled, type Policy } from '../pkg/policy.js';
import type { ForwardTap, UpstreamProtocol } from '../pkg/taps.js';
import { HealthCheck } from './health.js';
import { UpstreamCells, type ForwardMetrics } from './metrics.js';
import { DEFAULTS, type ForwardOptions } from './options.js';
import type { ForwardUpstream } from './upstreams.js';

/** CoreDNS's budget for one client query across all upstreams tried. */
export const REQUEST_DEADLINE_MS = 5000;
/** CoreDNS's health check read timeout. */
export const HEALTH_TIMEOUT_MS = 1000;
/**
 * Turns of the event loop a query at max_concurrent waits for replies already received to be
 * read. A reply sent back while kdns reads a burst is read in the loop's next poll; a reply to a
 * query forwarded in this turn by an upstream in this same process takes three.
 */
const TURNS_AT_LIMIT = 4;

export interface Timing {
  deadlineMs: number;
  healthTimeoutMs: number;
}

/** One upstream as forward sees it: its client, its health and (when loop found one) why it is skipped. */
export class Upstream {
  readonly client: DnsClient;
  readonly health: HealthCheck;
  readonly cells: UpstreamCells;
  /** Set by the loop plugin: this upstream sends our queries back to us. */
  looping?: string;

  constructor(
    readonly spec: ForwardUpstream,
    opts: ForwardOptions,
    metrics: ForwardMetrics,
    timing: Timing,
    log: Logger,
  ) {
    // The upstream's own name (tls://IP%NAME) or the block's tls_servername, never both (options.ts).
    const servername = spec.serverName ?? opts.tlsServername;
    const tls = spec.scheme !== 'dns' ? { servername, ca: opts.tls.ca, cert: opts.tls.cert, key: opts.tls.key } : undefined;
    const to = labelFor(spec);
    this.cells = new UpstreamCells(metrics, to);
    // A lost datagram is sent again within the exchange (dnsclient/retransmit.ts), not after its 2 s.
    this.client = new DnsClient(
      { host: spec.host, port: spec.port, tls, doh: spec.scheme === 'https' ? { method: opts.dohMethod } : undefined, localAddress: opts.sourceAddress },
      {
        expireMs: opts.expireMs,
        counters: (proto) => this.cells.connCounters(proto),
        retransmit: true,
        resent: this.cells.retransmits,
        connLifetime: { maxAgeMs: opts.maxAgeMs, maxQueries: opts.maxTcpQueries },
        maxIdleConns: opts.maxIdleConns,
      },
    );
    const hcQuery = buildQuery(nameToWire(opts.healthCheck.domain), RRType.NS, DnsClass.IN, { rd: opts.healthCheck.recursionDesired });
    const hcProto: Proto = opts.forceTcp ? 'tcp' : 'udp';
    this.health = new HealthCheck(
      () =>
        this.client.exchange(hcQuery, hcProto, timing.healthTimeoutMs).then(
          () => true,
          () => false,
        ),
      opts.healthCheck.intervalMs,
      {
        failed: (fails) => {
          this.cells.healthcheckFailures.inc();
          this.cells.healthcheckFailuresLegacy.inc();
          if (fails === opts.maxFails) log.warn(`upstream ${to} is down: ${fails} health checks in a row got no reply`);
        },
        recovered: (fails) => {
          if (fails >= opts.maxFails && opts.maxFails > 0) log.info(`upstream ${to} answers health checks again`);
        },
      },
    );
  }

  /** "127.0.0.1:53": the `to` label and the name in logs. */
  get label(): string {
    return this.client.address;
  }

  close(): void {
    this.health.stop();
    this.client.close();
  }
}

/** How CoreDNS labels an upstream: host:port, without the scheme. */
export function labelFor(spec: ForwardUpstream): string {
  return spec.host.includes(':') ? `[${spec.host}]:${spec.port}` : `${spec.host}:${spec.port}`;
}

/** The RCODE of a reply, extended bits included when there is an OPT record. */
function replyRcode(reply: Buffer): number {
  if (readU16(reply, 10) === 0) return headerRcode(reply);
  return fullRcode(reply, scanMessage(reply)?.opt);
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class Forwarder implements Plugin {
  readonly name = 'forward';
  readonly upstreams: Upstream[];
  private readonly policy: Policy;
  private readonly nextRcodes: ReadonlySet<number>;
  private readonly failoverRcodes: ReadonlySet<number>;
  /** max_connect_attempts: failed exchanges after which a query gets SERVFAIL; 0: no cap. */
  private readonly maxFailedExchanges: number;
  private inFlight = 0;

  constructor(
    readonly options: ForwardOptions,
    private readonly metrics: ForwardMetrics,
    private readonly log: Logger,
    private readonly timing: Timing = { deadlineMs: REQUEST_DEADLINE_MS, healthTimeoutMs: HEALTH_TIMEOUT_MS },
    /** The block's dnstap plugins, told of every exchange (filled as the block sets up). */
    private readonly taps: readonly ForwardTap[] = [],
  ) {
    this.upstreams = options.upstreams.map((s) => new Upstream(s, options, metrics, timing, log));
    this.policy = policyByName(options.policy);
    this.nextRcodes = new Set(options.next);
    this.failoverRcodes = new Set(options.failover);
    this.maxFailedExchanges = options.maxConnectAttempts ?? DEFAULTS.connectAttemptsPerUpstream * options.upstreams.length;
  }

  /** Queries in flight right now (bounded by max_concurrent). */
  get concurrent(): number {
    return this.inFlight;
  }

  /** True when `name` (lower-case, absolute) is ours to forward: under FROM and not excepted. */
  matches(name: string): boolean {
    const { from, except } = this.options;
    if (from !== '.' && !isSubdomain(name, from)) return false;
    // FROM itself is always forwarded, even when an except name covers it (as CoreDNS).
    if (except.length === 0 || name === from) return true;
    return !except.some((e) => isSubdomain(name, e));
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    if (!this.matches(req.name)) return next(req);
    const max = this.options.maxConcurrent;
    if (max > 0 && this.inFlight >= max) return this.onceRepliesAreRead(req, next, max);
    this.inFlight++;
    return this.forward(req, next);
  }

  /**
   * A query that finds max_concurrent queries in flight. kdns reads its sockets one after the
   * other on one thread: while it works through a burst of client queries (after a stall of its
   * own, say), replies that have already come back wait unread in the upstream sockets, and their
   * queries still count as in flight, where CoreDNS reads them concurrently. So the query waits
   * for the event loop to read its sockets — a few turns, no timer — and is REFUSED, as by CoreDNS,
   * only if the limit is still reached then.
   */
  private async onceRepliesAreRead(req: DnsRequest, next: Next, max: number): Promise<Reply | undefined> {
    for (let turn = 0; turn < TURNS_AT_LIMIT; turn++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.inFlight < max) {
        this.inFlight++;
        return this.forward(req, next);
      }
    }
    this.metrics.maxConcurrentRejects.inc();
    return errorReply(req, RCode.REFUSED, new PluginError('forward', RCode.REFUSED, `concurrent queries exceeded maximum ${max}`));
  }

  /** Upstreams queries may go to: all but those loop found sending our queries back to us. */
  usable(): Upstream[] {
    return this.upstreams.filter((u) => u.looping === undefined);
  }

  /** The order to try upstreams in for one query (healthy ones by policy; see README "Health"). */
  attemptOrder(): { order: readonly Upstream[]; broken: boolean } {
    // The common case, one upstream that answers: no arrays to build per query.
    if (this.upstreams.length === 1) {
      const only = this.upstreams[0] as Upstream;
      if (only.looping === undefined && !only.health.isDown(this.options.maxFails)) return { order: this.upstreams, broken: false };
    }
    const usable = this.usable();
    const ordered = this.policy.order(usable);
    const healthy = ordered.filter((u) => !u.health.isDown(this.options.maxFails));
    if (healthy.length > 0 || usable.length === 0) return { order: healthy, broken: false };
    return { order: shuffled(usable).slice(0, 1), broken: true };
  }

  /** Errors before any exchange, or undefined when `order` is worth trying. */
  private refusal(req: DnsRequest, order: readonly Upstream[], broken: boolean): Reply | undefined {
    if (order.length === 0) {
      return errorReply(req, RCode.SERVFAIL, new PluginError('forward', RCode.SERVFAIL, 'no upstream left: every upstream loops back to this server'));
    }
    if (broken) {
      this.metrics.healthcheckBroken.inc();
      if (this.options.failfastAllUnhealthy) {
        return errorReply(req, RCode.SERVFAIL, new PluginError('forward', RCode.SERVFAIL, 'no healthy upstreams'));
      }
    }
    return undefined;
  }

  /**
   * The upstreams in order until one answers, then again those that only timed out, while the
   * request deadline lasts. One async function for the whole miss, the exchange written out in
   * it: every async layer is a promise and a microtask more per query.
   */
  private async forward(req: DnsRequest, next: Next): Promise<Reply | undefined> {
    try {
      const { order: first, broken } = this.attemptOrder();
      const refused = this.refusal(req, first, broken);
      if (refused) return refused;
      const readTimeoutMs = this.options.readTimeoutMs;
      // A read_timeout beyond the 5 s budget still gets its whole time for the first exchange (as
      // CoreDNS, whose deadline only stops new attempts); the others share what is left.
      const deadline = Date.now() + Math.max(this.timing.deadlineMs, readTimeoutMs);
      let lastError: unknown;
      let failedExchanges = 0;
      /** The last reply with a `failover` RCODE, returned when no later upstream answers. */
      let held: { upstream: Upstream; wire: Buffer; rcode: number } | undefined;
      let order = first;
      rounds: while (order.length > 0) {
        /** Upstreams of this round that did not answer in time: maybe a datagram was lost. */
        const timedOut: Upstream[] = [];
        for (const u of order) {
          const left = deadline - Date.now();
          if (left <= 0) break;
          let wire: Buffer;
          // One upstream, one query: the request's own bytes (a plugin before us that wants to
          // change what goes upstream derives a new request), over the client's transport unless
          // force_tcp or prefer_udp say otherwise; a truncated UDP reply is asked again over TCP.
          const timeoutMs = Math.min(readTimeoutMs, left);
          const proto = this.protoFor(req);
          // performance.now() rather than hrtime.bigint(): no BigInt to allocate per exchange.
          const started = performance.now();
          /** The transport the exchange ended on: TCP after a truncated UDP reply. */
          let asked = proto;
          try {
            u.cells.requests.inc();
            wire = await u.client.exchange(req.raw, proto, timeoutMs);
            if (proto === 'udp' && !u.client.isTls && isTruncated(wire)) {
              asked = 'tcp';
              wire = await u.client.exchange(req.raw, 'tcp', Math.max(1, timeoutMs - (performance.now() - started)));
            }
            // The reply goes to the client as it came: one that does not parse is a failed exchange
            // (as CoreDNS's forward, which unpacks every reply), so the next upstream is tried.
            if (!isWellFormedMessage(wire)) throw new ExchangeError('malformed', u.client.protoFor(proto), u.label, 'reply does not parse');
          } catch (e) {
            if (this.taps.length > 0) this.tapExchange(req, u, asked, started, undefined);
            lastError = e;
            if (this.options.maxFails > 0) u.health.trigger();
            if (e instanceof ExchangeError && e.kind === 'timeout') timedOut.push(u);
            failedExchanges++;
            // max_connect_attempts: the query has cost the upstreams enough.
            if (this.maxFailedExchanges > 0 && failedExchanges >= this.maxFailedExchanges) break rounds;
            continue;
          }
          if (this.taps.length > 0) this.tapExchange(req, u, asked, started, wire);
          const rcode = replyRcode(wire);
          // Recorded under the reply's RCODE, as CoreDNS does; an exchange with no reply records none.
          u.cells.duration(rcode).observe((performance.now() - started) / 1e3);
          u.cells.response(rcode).inc();
          // failover: this upstream answered, but not usefully; the next one is asked, and this
          // reply is the answer only if none answers after it. It is not asked again.
          if (this.failoverRcodes.has(rcode)) {
            held = { upstream: u, wire, rcode };
            continue;
          }
          return this.answer(req, next, u, wire, rcode);
        }
        order = this.retryOrder(timedOut, broken, deadline);
      }
      // Every upstream was asked: the last failover reply is the upstreams' answer (CoreDNS returns
      // it only when the last exchange was the one that gave it, SERVFAIL of its own otherwise).
      if (held) return this.answer(req, next, held.upstream, held.wire, held.rcode);
      const why = lastError === undefined ? 'no healthy upstreams' : describe(lastError);
      this.log.debug(`${req.qname} ${req.qtype}: ${why}`);
      return errorReply(req, RCode.SERVFAIL, new PluginError('forward', RCode.SERVFAIL, why));
    } finally {
      this.inFlight--;
    }
  }

  /**
   * The reply `u` gave goes to the client, unless `next` lists its RCODE or it is NODATA with
   * `next_on_nodata`: then the next plugin (typically another forward) gets the query, and this
   * reply is returned only if that plugin has none.
   */
  private answer(req: DnsRequest, next: Next, u: Upstream, wire: Buffer, rcode: number): MaybePromise<Reply | undefined> {
    req.metadata.set('forward/upstream', u.label);
    const nodata = this.options.nextOnNodata && rcode === RCode.NOERROR && readU16(wire, 6) === 0;
    if (!nodata && !this.nextRcodes.has(rcode)) return Reply.fromWire(wire, rcode);
    const fromNext = next(req);
    if (fromNext instanceof Promise) return fromNext.then((r) => r ?? Reply.fromWire(wire, rcode));
    return fromNext ?? Reply.fromWire(wire, rcode);
  }

  /**
   * Who gets the query again once every upstream of a round has failed. As CoreDNS, forward goes
   * on asking while the request deadline lasts: a UDP query or its reply lost on the way, and its
   * copies too (see the client's retransmission), costs the query one exchange timeout, not its
   * answer. Only
   * upstreams that timed out are asked again, and only while not down: one that refused or cannot
   * be reached has said so, and asking it again at once would only spin. An upstream picked at
   * random because every one was down is tried once (as CoreDNS).
   */
  private retryOrder(timedOut: readonly Upstream[], broken: boolean, deadline: number): readonly Upstream[] {
    if (broken || deadline - Date.now() <= 0) return [];
    return timedOut.filter((u) => !u.health.isDown(this.options.maxFails));
  }

  /** Tells the block's dnstap plugins of one exchange with `u` (a reply, or undefined when none came). */
  private tapExchange(req: DnsRequest, u: Upstream, asked: Proto, sentAt: number, reply: Buffer | undefined): void {
    const protocol: UpstreamProtocol = u.spec.scheme === 'https' ? 'https' : u.client.isTls ? 'tls' : asked;
    const exchange = { host: u.spec.host, port: u.spec.port, protocol, query: req.raw, reply, sentAt };
    for (const tap of this.taps) tap.forwarded(req, exchange);
  }

  private protoFor(req: DnsRequest): Proto {
    const o = this.options;
    return o.forceTcp ? 'tcp' : o.preferUdp ? 'udp' : req.transport;
  }

  start(): void {
    // Nothing to do: sockets open on first use, health checks start on the first error.
  }

  stop(): void {
    for (const u of this.upstreams) u.close();
  }
}
