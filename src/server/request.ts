// One query in flight: what the client asked and who asked it. Built from the fast parse
// (header + question + OPT); the full message is decoded only if a plugin asks for it.

import { decodeMessage, encodeMessage, encodeQuery, parseQuery } from '../lib/dns/codec.js';
import type { Edns, Message, ParsedQuery } from '../lib/dns/types.js';
import { Opcode } from '../lib/dns/types.js';

export type TransportKind = 'udp' | 'tcp';

export interface ClientInfo {
  transport: TransportKind;
  remoteAddress: string;
  /**
   * The client's address family when the listener knows it without making the address string
   * (the native UDP socket: the text is made only for plugins that read it).
   */
  readonly remoteFamily?: 4 | 6;
  remotePort: number;
  localAddress: string;
  localPort: number;
}

/** The UDP payload a response may fill: 512 without EDNS, else the client's size (at least 512). */
/** An absolute name whose every octet parses back as itself: letters, digits, '-' and '_'. */
const PLAIN_NAME = /^[A-Za-z0-9_-]{1,63}(?:\.[A-Za-z0-9_-]{1,63})*\.$/;

export function udpLimit(edns: Edns | undefined): number {
  return edns ? Math.max(512, edns.udpSize) : 512;
}

export class DnsRequest {
  /** The zone of the server block that took the query (absolute, lower-case). */
  zone = '.';
  /** Largest UDP response for this client; `bufsize` may lower it. TCP ignores it. */
  maxUdpSize: number;
  /** Made on first use: most queries never carry any, and a Map per query was a tenth of what the hot path allocated. */
  private meta: Map<string, string> | undefined;
  /** When the server received it (process.hrtime.bigint()), for durations. */
  readonly received: bigint;
  private full?: Message;
  private bytes: Buffer;
  private lent: boolean;

  constructor(
    /** The query as received (or as re-encoded for a derived request). */
    raw: Buffer,
    readonly query: ParsedQuery,
    readonly client: ClientInfo,
    received?: bigint,
    /**
     * `raw` is the transport's to reuse once handling returns (a TCP connection's read buffer):
     * whoever keeps the request longer calls own() first.
     */
    lent = false,
  ) {
    this.bytes = raw;
    this.lent = lent;
    this.maxUdpSize = udpLimit(query.edns);
    this.received = received ?? process.hrtime.bigint();
  }

  /** The query as received (or as re-encoded for a derived request). */
  get raw(): Buffer {
    return this.bytes;
  }

  /**
   * Makes the query's bytes the request's own. A TCP connection lends the bytes it read, and
   * reuses that buffer for what it reads next (a buffer it keeps lives through collections;
   * a new one per read was most of what a pipelining client made the collector promote). So
   * work that goes on after handling has returned (an answer still under way, a cache refresh
   * behind a hit) calls this first: a forward retried on another upstream or over TCP sends
   * these bytes again. Costs one copy, and only for lent bytes.
   */
  own(): void {
    if (!this.lent) return;
    this.bytes = Buffer.from(this.bytes);
    this.lent = false;
  }

  /** Free-form data plugins leave for later plugins (CoreDNS's metadata). */
  get metadata(): Map<string, string> {
    this.meta ??= new Map();
    return this.meta;
  }

  get id(): number {
    return this.query.id;
  }
  /** Question name as the client wrote it (case preserved), absolute. */
  get qname(): string {
    return this.query.qname;
  }
  /** Lower-cased question name: use it for lookups and comparisons. */
  get name(): string {
    return this.query.name;
  }
  get qtype(): number {
    return this.query.qtype;
  }
  get qclass(): number {
    return this.query.qclass;
  }
  get edns(): Edns | undefined {
    return this.query.edns;
  }
  /** DNSSEC OK bit of the query. */
  get do(): boolean {
    return this.query.edns?.do ?? false;
  }
  get transport(): TransportKind {
    return this.client.transport;
  }

  /** The whole query message, decoded on first use. */
  message(): Message {
    this.full ??= decodeMessage(this.raw);
    return this.full;
  }

  /**
   * A request for another question from the same client (autopath candidates, CNAME chasing).
   * Keeps ID, flags and EDNS; the zone is kept too and may be changed by the caller.
   */
  derive(qname: string, qtype: number = this.qtype, edns: Edns | undefined = this.edns, qclass: number = this.qclass): DnsRequest {
    const sub = PLAIN_NAME.test(qname) ? this.derivePlain(qname, qtype, edns, qclass) : this.deriveEncoded(qname, qtype, edns, qclass);
    sub.zone = this.zone;
    sub.maxUdpSize = this.maxUdpSize;
    if (this.meta) sub.meta = new Map(this.meta);
    return sub;
  }

  /**
   * A name of letters, digits, '-' and '_' reads back from the wire as written, so the parsed
   * query is made here instead of by parsing the bytes again (autopath derives several per
   * lookup, and this was most of their cost).
   */
  private derivePlain(qname: string, qtype: number, edns: Edns | undefined, qclass: number): DnsRequest {
    const flags = (this.query.rd ? 0x0100 : 0) | (this.query.cd ? 0x0010 : 0);
    const { wire, questionEnd } = encodeQuery(this.id, flags, qname, qtype, qclass, edns);
    const query: ParsedQuery = {
      id: this.id,
      flags,
      opcode: Opcode.QUERY,
      rd: this.query.rd,
      cd: this.query.cd,
      qdcount: 1,
      qname,
      name: qname.toLowerCase(),
      qtype,
      qclass,
      questionEnd,
      edns,
    };
    return new DnsRequest(wire, query, this.client, this.received);
  }

  private deriveEncoded(qname: string, qtype: number, edns: Edns | undefined, qclass: number): DnsRequest {
    const msg: Message = {
      id: this.id,
      qr: false,
      opcode: Opcode.QUERY,
      aa: false,
      tc: false,
      rd: this.query.rd,
      ra: false,
      z: false,
      ad: false,
      cd: this.query.cd,
      rcode: 0,
      questions: [{ name: qname, type: qtype, class: qclass }],
      answers: [],
      authority: [],
      additional: [],
      edns,
    };
    const raw = encodeMessage(msg);
    return new DnsRequest(raw, parseQuery(raw), this.client, this.received);
  }
}
