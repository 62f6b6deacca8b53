// loop: finds upstreams that send this server's queries back to it. Once the server listens,
// it asks each upstream of its block's forward plugins directly for a random name
// (`<random>.<random>.<FROM> HINFO`); an upstream that forwards that query back here has made
// a loop. CoreDNS then stops the process (and Kubernetes restarts it, over and over); kdns
// logs which upstream loops, stops forwarding to it, keeps serving everything else, and
// reports not-ready with the reason until the configuration changes.
import { randomBytes } from 'node:crypto';
import { DnsClient, type Proto } from '../../lib/dnsclient/client.js';
import { buildQuery } from '../../lib/dns/wire.js';
import { nameToWire } from '../../lib/dns/name.js';
import { DnsClass, RCode, RRType } from '../../lib/dns/types.js';
import type { Logger } from '../../server/log.js';
import type { BlockInfo, MaybePromise, Next, Plugin } from '../../server/plugin.js';
import { errorReply, type Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { BlockForwarder, BlockForwarders, ProbedUpstream } from '../pkg/forwarders.js';

export const TROUBLESHOOTING_URL = 'https://coredns.io/plugins/loop#troubleshooting';

/** A probe name in flight: who it was sent to, and how often it came back. */
export interface ProbeRecord {
  /** "self": the check that our own listener answers; else the upstream probed. */
  target: 'self' | ProbedUpstream;
  arrivals: number;
  /** Where the last arrival came from ("127.0.0.1:40000"). */
  from?: string;
}

/** Probe names of every loop plugin of the process (a looping query may come in on any block). */
export type ProbeTable = Map<string, ProbeRecord>;

export interface LoopTiming {
  /** Give up probing an upstream that never answers after this long (CoreDNS: 30 s). */
  windowMs: number;
  /** Wait between attempts at an upstream that did not answer (CoreDNS: 2 s). */
  retryMs: number;
  /** Timeout of one probe exchange. */
  probeTimeoutMs: number;
  /** Wait between checks that our own listener is up. */
  listenPollMs: number;
}

export const DEFAULT_LOOP_TIMING: LoopTiming = { windowMs: 30_000, retryMs: 2000, probeTimeoutMs: 2000, listenPollMs: 50 };

/** `<decimal>.<decimal>.<zone>`, like CoreDNS's probe names. */
export function probeName(zone: string): string {
  const b = randomBytes(16);
  const label = (off: number): string => b.readBigUInt64BE(off).toString();
  return zone === '.' ? `${label(0)}.${label(8)}.` : `${label(0)}.${label(8)}.${zone}`;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

export class LoopPlugin implements Plugin {
  readonly name = 'loop';
  /** Why we are not ready: one line per looping upstream. */
  private readonly loops: string[] = [];
  private firstRoundDone = false;
  private stopped = false;
  private readonly mine = new Set<string>();

  constructor(
    private readonly block: BlockInfo,
    /** The forward plugins of this block, complete once every plugin is set up. */
    private readonly forwarders: BlockForwarders,
    private readonly probes: ProbeTable,
    private readonly log: Logger,
    private readonly timing: LoopTiming = DEFAULT_LOOP_TIMING,
  ) {}

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    // Everything but HINFO passes at the cost of one comparison.
    if (req.qtype !== RRType.HINFO) return next(req);
    const probe = this.probes.get(req.name);
    if (!probe) return next(req);
    probe.arrivals++;
    probe.from = `${req.client.remoteAddress}:${req.client.remotePort}`;
    // Answer here: passing a looping probe on would send it around the loop again.
    return errorReply(req, probe.target === 'self' ? RCode.REFUSED : RCode.SERVFAIL);
  }

  ready(): true | string {
    if (this.loops.length > 0) return this.loops.join('; ');
    return this.firstRoundDone ? true : 'loop detection has not finished its first round';
  }

  /** Upstreams found looping so far, as "ip:port". */
  looping(): string[] {
    return this.forwarders.forwarders.flatMap((f) => f.upstreams.filter((u) => u.looping !== undefined).map((u) => u.label));
  }

  start(): void {
    // Not awaited: the listeners open after start() returns, and the probes need them.
    void this.detect().catch((e: unknown) => this.log.error(`loop detection failed: ${e instanceof Error ? e.message : String(e)}`));
  }

  stop(): void {
    this.stopped = true;
    for (const name of this.mine) this.probes.delete(name);
    this.mine.clear();
  }

  private register(zone: string, target: ProbeRecord['target']): string {
    const name = probeName(zone);
    this.probes.set(name, { target, arrivals: 0 });
    this.mine.add(name);
    return name;
  }

  private async detect(): Promise<void> {
    const deadline = Date.now() + this.timing.windowMs;
    if (!(await this.waitUntilListening(deadline))) return;
    const pending = this.forwarders.forwarders.flatMap((f) => f.upstreams.map((u) => ({ f, u })));
    let round = 0;
    while (pending.length > 0 && !this.stopped && Date.now() < deadline) {
      const results = await Promise.all(pending.map(({ f, u }) => this.probeUpstream(f, u)));
      // Keep only the upstreams that did not answer: they are tried again until the window closes.
      for (let i = results.length - 1; i >= 0; i--) if (results[i] !== 'no answer') pending.splice(i, 1);
      if (round++ === 0) this.firstRoundDone = true;
      if (pending.length > 0) await sleep(this.timing.retryMs);
    }
    this.firstRoundDone = true;
  }

  /** Sends probes to our own listener until one is answered (by us). False when stopped first. */
  private async waitUntilListening(deadline: number): Promise<boolean> {
    const host = this.block.settings.listenAddresses[0] ?? '127.0.0.1';
    const self = new DnsClient({ host: host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host, port: this.block.port });
    try {
      while (!this.stopped && Date.now() < deadline) {
        const name = this.register(this.block.zones[0] ?? '.', 'self');
        try {
          await self.exchange(buildQuery(nameToWire(name), RRType.HINFO, DnsClass.IN), 'udp', 200);
          return !this.stopped;
        } catch {
          await sleep(this.timing.listenPollMs);
        } finally {
          this.probes.delete(name);
          this.mine.delete(name);
        }
      }
      return false;
    } finally {
      self.close();
    }
  }

  private async probeUpstream(f: BlockForwarder, u: ProbedUpstream): Promise<'loop' | 'no loop' | 'no answer'> {
    if (u.looping !== undefined) return 'loop';
    const name = this.register(f.options.from, u);
    const query = buildQuery(nameToWire(name), RRType.HINFO, DnsClass.IN);
    const proto: Proto = f.options.forceTcp ? 'tcp' : 'udp';
    let answered = true;
    try {
      await u.client.exchange(query, proto, this.timing.probeTimeoutMs);
    } catch {
      answered = false;
    }
    const record = this.probes.get(name);
    this.probes.delete(name);
    this.mine.delete(name);
    // An arrival is proof even without an answer: the upstream passed our query back to us.
    if (record && record.arrivals > 0 && !this.stopped) {
      this.markLooping(f, u, name, record);
      return 'loop';
    }
    return answered ? 'no loop' : 'no answer';
  }

  private markLooping(f: BlockForwarder, u: ProbedUpstream, name: string, record: ProbeRecord): void {
    const reason = `upstream ${u.label} sends zone "${f.options.from}" back to this server`;
    u.looping = reason;
    this.loops.push(`loop detected: ${reason}`);
    const usable = f.usable().length;
    this.log.error(
      `forwarding loop for zone "${f.options.from}": the probe "HINFO ${name}" sent to upstream ${u.label} came back to this server` +
        ` (from ${record.from ?? 'unknown'}); no longer forwarding to ${u.label}` +
        (usable > 0 ? `, ${usable} upstream(s) left` : ', no upstream left for this zone') +
        `. See ${TROUBLESHOOTING_URL}`,
    );
  }
}
