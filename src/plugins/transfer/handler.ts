// The transfer plugin: answers AXFR and IXFR over TCP for the zones of the plugins behind it that
// offer them (file, kubernetes), to the addresses its `to` lines allow, and sends NOTIFY to those
// addresses when a zone changes. IXFR is answered as CoreDNS does: the SOA alone when the client
// is up to date, else the whole zone (an AXFR-style answer, RFC 1995 §4).

import { canonicalIP } from '../../lib/cluster/keys.js';
import { RCode, RRType, type Message, type ResourceRecord, type SOAData } from '../../lib/dns/types.js';
import type { Logger } from '../../server/log.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import { Reply, errorReply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { TransferHub } from '../pkg/xfr.js';
import { sendNotify, type NotifyTarget } from './notify.js';

/** One `transfer` directive: the zones it covers and who may transfer them. */
export interface TransferConfig {
  /** Absolute, lower-case. */
  zones: string[];
  /** `*` (anyone), or the addresses allowed; each also gets NOTIFY (port 53 unless given). */
  to: Array<'*' | NotifyTarget>;
  /** Local address NOTIFY messages are sent from. */
  source?: string;
}

/**
 * The records of one message stay under this many bytes (CoreDNS's 63,000): a TCP message holds
 * 65,535, and the header, question and OPT record need some of the rest.
 */
export const MESSAGE_BUDGET = 63_000;

/** The longest of the configs' zones that holds `name`, and its config. */
export function longestMatch(configs: readonly TransferConfig[], name: string): { zone: string; config: TransferConfig } | undefined {
  let best: { zone: string; config: TransferConfig } | undefined;
  for (const config of configs) {
    for (const zone of config.zones) {
      if (!(zone === '.' || name === zone || name.endsWith(`.${zone}`))) continue;
      if (!best || zone.length > best.zone.length) best = { zone, config };
    }
  }
  return best;
}

/** `client` (an IP address) may transfer under `config`: `to *`, or its address is listed. */
export function allowed(config: TransferConfig, client: string): boolean {
  const ip = canonicalIP(client);
  return config.to.some((t) => t === '*' || (ip !== undefined && t.host === ip));
}

/**
 * Bytes a record takes on the wire at most, uncompressed: a name's presentation form is never
 * shorter than its wire form less one (escapes only make it longer).
 */
export function wireSizeBound(r: ResourceRecord): number {
  const name = (n: string): number => n.length + 2;
  const d = r.data as unknown as Record<string, unknown>;
  let rdata: number;
  switch (r.type) {
    case RRType.A:
      rdata = 4;
      break;
    case RRType.AAAA:
      rdata = 16;
      break;
    case RRType.SOA: {
      const s = r.data as SOAData;
      rdata = name(s.mname) + name(s.rname) + 20;
      break;
    }
    default:
      if (d.raw instanceof Uint8Array) rdata = d.raw.length;
      else if (Array.isArray(d.strings)) rdata = (d.strings as string[]).reduce((n, s) => n + s.length + 1, 0);
      else if (typeof d.cpu === 'string' && typeof d.os === 'string') rdata = d.cpu.length + d.os.length + 2;
      else if (typeof d.target === 'string') rdata = name(d.target) + 6; // NS, CNAME, PTR, DNAME; SRV adds 6
      else if (typeof d.exchange === 'string') rdata = name(d.exchange) + 2;
      else rdata = 65_535; // unknown shape: a message of its own
  }
  return name(r.name) + 10 + rdata;
}

/** Groups `records` into messages of at most MESSAGE_BUDGET bytes of records each, made as they are asked for. */
export function* batches(records: Iterable<ResourceRecord>, budget = MESSAGE_BUDGET): Generator<ResourceRecord[]> {
  let batch: ResourceRecord[] = [];
  let size = 0;
  for (const r of records) {
    const n = wireSizeBound(r);
    if (batch.length > 0 && size + n > budget) {
      yield batch;
      batch = [];
      size = 0;
    }
    batch.push(r);
    size += n;
  }
  if (batch.length > 0) yield batch;
}

/** The serial of an IXFR query: the SOA in its authority section (RFC 1995 §3), or undefined when it has none. */
export function ixfrSerial(query: Message): number | undefined {
  const soa = query.authority.length === 1 ? query.authority[0] : undefined;
  if (!soa || soa.type !== RRType.SOA) return undefined;
  return (soa.data as SOAData).serial;
}

export class TransferPlugin implements Plugin {
  readonly name = 'transfer';

  constructor(
    /** Every `transfer` directive of the block (CoreDNS takes them together, longest zone first). */
    readonly configs: TransferConfig[],
    private readonly hub: TransferHub,
    private readonly log: Logger,
  ) {
    // Listening from the start: the zone plugins announce their zones from their own start().
    hub.onChange((zone) => this.notify(zone));
  }

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    if (req.qtype !== RRType.AXFR && req.qtype !== RRType.IXFR) return next(req);
    // A transfer over UDP would not fit (and IXFR over UDP is optional): refused, as in CoreDNS.
    if (req.transport !== 'tcp') return errorReply(req, RCode.REFUSED);
    const match = longestMatch(this.configs, req.name);
    if (!match) return next(req);
    if (!allowed(match.config, req.client.remoteAddress)) {
      this.log.info(`refused ${req.qtype === RRType.AXFR ? 'AXFR' : 'IXFR'} of ${req.name} to ${req.client.remoteAddress}: not in "to"`);
      return errorReply(req, RCode.REFUSED);
    }
    let serial: number | undefined;
    if (req.qtype === RRType.IXFR) {
      serial = ixfrSerial(req.message());
      if (serial === undefined) return errorReply(req, RCode.FORMERR, new Error('plugin/transfer: IXFR query without an SOA in its authority section'));
    }
    for (const t of this.hub.transferers) {
      const records = t.transfer(req.name, serial);
      if (records) return this.reply(req, records);
    }
    return next(req);
  }

  /** The answer: one message per batch of records, the first now and the rest as the client reads. */
  private reply(req: DnsRequest, records: Iterable<ResourceRecord>): Reply {
    const messages = batches(records);
    const first = messages.next();
    const message = (answers: ResourceRecord[]): Message => ({ ...responseFor(req, RCode.NOERROR, true), answers });
    const head = first.done ? [] : first.value;
    const reply = Reply.of(message(head));
    const soa = head[0];
    const upToDate = first.done !== true && head.length === 1;
    const log = this.log;
    const client = req.client.remoteAddress;
    let count = head.length;
    if (upToDate) {
      log.info(`outgoing IXFR of zone ${req.name} to ${client}: up to date at SOA serial ${(soa?.data as SOAData).serial}`);
      return reply;
    }
    reply.more = {
      *[Symbol.iterator]() {
        for (const batch of messages) {
          count += batch.length;
          yield message(batch);
        }
        log.info(`outgoing transfer of ${count} records of zone ${req.name} to ${client} for SOA serial ${soa?.type === RRType.SOA ? (soa.data as SOAData).serial : 0}`);
      },
    };
    return reply;
  }

  /** NOTIFY for `zone` to every listed address, when a `transfer` of this block covers the zone. */
  private notify(zone: string): void {
    const match = longestMatch(this.configs, zone);
    if (!match) return;
    const targets = match.config.to.filter((t): t is NotifyTarget => t !== '*');
    for (const t of targets) {
      sendNotify(zone, t, match.config.source).then(
        () => this.log.debug(`sent NOTIFY for zone ${zone} to ${t.host} port ${t.port}`),
        (e: unknown) => this.log.warn(`NOTIFY for zone ${zone} to ${t.host} port ${t.port}: ${(e as Error).message}`),
      );
    }
  }
}
