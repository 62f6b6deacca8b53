// The per-query path shared by UDP and TCP: sanity checks, zone routing, the plugin chain, and
// the bytes to send back. Returns undefined to drop a packet (unparseable, or a response).

import { DnsFormatError, parseQuery } from '../lib/dns/codec.js';
import { RCode } from '../lib/dns/types.js';
import { isPromise } from './promise.js';
import type { LoadedBlock } from './config.js';
import { routeQuery, ZoneRoutes } from './config.js';
import { finalizeReply } from './finalize.js';
import { PluginError, type Plugin } from './plugin.js';
import { Reply, errorReply } from './reply.js';
import type { Message } from '../lib/dns/types.js';
import { DnsRequest, type ClientInfo } from './request.js';

export type Outcome = Buffer | undefined | Promise<Buffer | undefined>;

/** An answer of several messages (a zone transfer): the first, then the rest, made as they are sent. */
export interface MessageStream {
  readonly first: Buffer;
  readonly rest: Iterable<Buffer>;
}

/** What a TCP connection sends back: one message, several, or nothing. */
export type StreamOutcome = Buffer | MessageStream | undefined | Promise<Buffer | MessageStream | undefined>;

export interface DispatchHooks {
  /** A plugin threw something that is not a PluginError: a bug. Logged and counted. */
  onPanic(err: unknown, req: DnsRequest): void;
}

/** The first plugin of the listener's blocks that watches queries no block takes. */
function unroutedObserver(zones: Map<string, LoadedBlock[]>): Plugin | undefined {
  for (const blocks of zones.values()) {
    for (const block of blocks) {
      const p = block.plugins.find((x) => x.observeUnrouted !== undefined);
      if (p) return p;
    }
  }
  return undefined;
}

/**
 * Plugins that open a server to classes other than IN (CoreDNS's EnableChaos): without one of
 * them in any block of the listener, such queries are refused before routing.
 */
const OPENS_OTHER_CLASSES: ReadonlySet<string> = new Set(['chaos', 'forward']);

/** True when a block of the listener has a plugin that takes queries of classes other than IN. */
function takesOtherClasses(zones: Map<string, LoadedBlock[]>): boolean {
  for (const blocks of zones.values()) {
    if (blocks.some((block) => block.plugins.some((p) => OPENS_OTHER_CLASSES.has(p.name)))) return true;
  }
  return false;
}

const CLASS_IN = 1;
const QR = 0x8000;
const OPCODE = 0x7800;

/** Header-only error reply (no question could be echoed). */
function headerReply(raw: Buffer, rcode: number): Buffer {
  const out = Buffer.alloc(12);
  raw.copy(out, 0, 0, 4);
  // QR set, opcode and RD kept, AA/TC/RA/Z/AD/CD and RCODE cleared, then our RCODE.
  const flags = (raw.readUInt16BE(2) & 0x7900) | QR | (rcode & 0xf);
  out.writeUInt16BE(flags, 2);
  return out;
}

/**
 * True when the one question [12, questionEnd) is plain labels. A compression pointer in it can
 * only point into the header (anything later would loop), and the reply's header differs from
 * the query's: echoed, such a name would point at flags and counts and the reply would not parse.
 * A name ends at its root label (a 0) or at a pointer (two octets, the first 0b11xxxxxx), so the
 * last two octets tell, in constant time. (A label whose last octet is 0xc0 or more before the
 * root is reported as compressed: such names only get the slower, still correct, treatment.)
 */
function questionIsSelfContained(raw: Buffer, questionEnd: number): boolean {
  const nameEnd = questionEnd - 4;
  return raw[nameEnd - 1] === 0 && (nameEnd - 1 === 12 || ((raw[nameEnd - 2] as number) & 0xc0) !== 0xc0);
}

/**
 * Error reply for a query whose question was read but not the rest: the question bytes as
 * received when they stand on their own, else the header alone.
 */
function questionReply(raw: Buffer, questionEnd: number, rcode: number): Buffer {
  if (!questionIsSelfContained(raw, questionEnd)) return headerReply(raw, rcode);
  const out = Buffer.alloc(questionEnd);
  raw.copy(out, 0, 0, questionEnd);
  out.writeUInt16BE((raw.readUInt16BE(2) & 0x7900) | QR | (rcode & 0xf), 2);
  out.writeUInt16BE(1, 4);
  out.writeUInt32BE(0, 6);
  out.writeUInt16BE(0, 10);
  return out;
}

/** The messages after the first of a multi-message reply, finalized one at a time as they are sent. */
function* finalizeEach(req: DnsRequest, messages: Iterable<Message>): Iterable<Buffer> {
  for (const m of messages) yield finalizeReply(req, Reply.of(m));
}

export class Dispatcher {
  private unrouted: Plugin | undefined;
  private otherClasses = false;
  private zoneMap!: Map<string, LoadedBlock[]>;
  private routes!: ZoneRoutes;
  /**
   * The `debug` plugin's switch: an error thrown by a plugin is not recovered but ends the
   * process with its stack, as CoreDNS does when its recover() is off.
   */
  debug = false;

  constructor(
    zones: Map<string, LoadedBlock[]>,
    private readonly hooks: DispatchHooks,
  ) {
    this.zones = zones;
  }

  /** zone → its blocks; replaced wholesale on reload. */
  get zones(): Map<string, LoadedBlock[]> {
    return this.zoneMap;
  }

  set zones(zones: Map<string, LoadedBlock[]>) {
    this.zoneMap = zones;
    this.routes = new ZoneRoutes(zones);
    this.unrouted = unroutedObserver(zones);
    this.otherClasses = takesOtherClasses(zones);
  }

  /**
   * Answers one query. `lent`: the caller reuses `raw` once this returns (see DnsRequest.own);
   * a request whose answer is still under way then gets its own copy here.
   */
  handle(raw: Buffer, client: ClientInfo, lent = false): Outcome {
    // Without streams, finish() makes one Buffer of every reply: the first message of several.
    return this.answer(raw, client, lent, false) as Outcome;
  }

  /**
   * As handle(), for a TCP connection: a reply of several messages (a zone transfer) comes back
   * as a MessageStream, each message to go in its own frame.
   */
  handleStream(raw: Buffer, client: ClientInfo, lent = false): StreamOutcome {
    return this.answer(raw, client, lent, true);
  }

  private answer(raw: Buffer, client: ClientInfo, lent: boolean, streams: boolean): StreamOutcome {
    if (raw.length < 12) return undefined;
    const flags = raw.readUInt16BE(2);
    if (flags & QR) return undefined; // never answer a response: that is how loops start
    // The opcode comes first, as in CoreDNS: any other than QUERY is NOTIMP, whatever the
    // sections hold (an UPDATE's zone count, a NOTIFY without a question).
    const refusal = flags & OPCODE ? RCode.NOTIMP : RCode.FORMERR;
    if (raw.readUInt16BE(4) !== 1) return headerReply(raw, refusal);
    let query;
    try {
      query = parseQuery(raw);
    } catch (e) {
      if (e instanceof DnsFormatError && e.questionEnd !== undefined) return questionReply(raw, e.questionEnd, refusal);
      return undefined;
    }
    let req = new DnsRequest(raw, query, client, undefined, lent);
    if (query.opcode !== 0) return finalizeReply(req, errorReply(req, RCode.NOTIMP));
    if (query.qclass !== CLASS_IN && !this.otherClasses) return this.refuse(req);
    if (query.edns && query.edns.version > 0) return finalizeReply(req, errorReply(req, RCode.BADVERS));
    const block = routeQuery(this.routes, req);
    if (block === undefined) return this.refuse(req);
    const zone = req.zone;
    // Plugins answer by copying the question's bytes into their reply (hosts, kubernetes, cache);
    // a name compressed into the header would point at the reply's header, which is not the
    // query's. Such a query (nothing but a crafted one has it) goes on spelled out.
    if (!questionIsSelfContained(raw, query.questionEnd)) req = req.derive(query.qname);
    req.zone = zone;
    const view = block.info.settings.view;
    if (view !== undefined) req.metadata.set('view/name', view.name);
    let result;
    try {
      result = block.handle(req);
    } catch (e) {
      return this.fail(req, e);
    }
    if (isPromise<Reply | undefined>(result)) {
      req.own();
      return result.then(
        (r) => this.finish(req, r, streams),
        (e: unknown) => this.fail(req, e),
      );
    }
    return this.finish(req, result, streams);
  }

  /** REFUSED before any block sees the query, counted by the plugin that watches those. */
  private refuse(req: DnsRequest): Buffer {
    const refused = errorReply(req, RCode.REFUSED);
    this.unrouted?.observeUnrouted?.(req, refused);
    return finalizeReply(req, refused);
  }

  private finish(req: DnsRequest, reply: Reply | undefined, streams: boolean): Buffer | MessageStream | undefined {
    // Nothing in the chain answered: CoreDNS's "no next plugin found" is a SERVFAIL.
    const r = reply ?? errorReply(req, RCode.SERVFAIL);
    if (r.dropped) return undefined;
    try {
      const first = finalizeReply(req, r);
      if (streams && r.more !== undefined) return { first, rest: finalizeEach(req, r.more) };
      return first;
    } catch (e) {
      if (this.debug) return this.crash(e);
      this.hooks.onPanic(e, req);
      return finalizeReply(req, errorReply(req, RCode.SERVFAIL));
    }
  }

  private fail(req: DnsRequest, e: unknown): Buffer | undefined {
    if (e instanceof PluginError) return finalizeReply(req, errorReply(req, e.rcode, e));
    if (this.debug) return this.crash(e);
    this.hooks.onPanic(e, req);
    return finalizeReply(req, errorReply(req, RCode.SERVFAIL, e instanceof Error ? e : new Error(String(e))));
  }

  /**
   * Ends the process with the error's stack, as a Go panic without recover() does. Not a rethrow:
   * the commands' process guard would catch an uncaught error and keep kdns running.
   */
  private crash(e: unknown): undefined {
    process.nextTick(() => {
      process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    });
    return undefined;
  }
}
