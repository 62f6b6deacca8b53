// The per-query path shared by UDP and TCP: sanity checks, zone routing, the plugin chain, and
// the bytes to send back. Returns undefined to drop a packet (unparseable, or a response).

import { DnsFormatError, parseQuery } from '../dns/codec.js';
import { RCode } from '../dns/types.js';
import type { LoadedBlock } from './config.js';
import { routeByZone } from './config.js';
import { finalizeReply } from './finalize.js';
import { PluginError, type Plugin } from './plugin.js';
import { errorReply, type Reply } from './reply.js';
import { DnsRequest, type ClientInfo } from './request.js';

export type Outcome = Buffer | undefined | Promise<Buffer | undefined>;

export interface DispatchHooks {
  /** A plugin threw something that is not a PluginError: a bug. Logged and counted. */
  onPanic(err: unknown, req: DnsRequest): void;
}

/** The first plugin of the listener's blocks that watches queries no block takes. */
function unroutedObserver(zones: Map<string, LoadedBlock>): Plugin | undefined {
  for (const block of zones.values()) {
    const p = block.plugins.find((x) => x.observeUnrouted !== undefined);
    if (p) return p;
  }
  return undefined;
}

const QR = 0x8000;

/** Header-only error reply (no question could be echoed). */
function headerReply(raw: Buffer, rcode: number): Buffer {
  const out = Buffer.alloc(12);
  raw.copy(out, 0, 0, 4);
  // QR set, opcode and RD kept, AA/TC/RA/Z/AD/CD and RCODE cleared, then our RCODE.
  const flags = (raw.readUInt16BE(2) & 0x7900) | QR | (rcode & 0xf);
  out.writeUInt16BE(flags, 2);
  return out;
}

/** Error reply echoing the question bytes as received (used when the rest did not parse). */
function questionReply(raw: Buffer, questionEnd: number, rcode: number): Buffer {
  const out = Buffer.alloc(questionEnd);
  raw.copy(out, 0, 0, questionEnd);
  out.writeUInt16BE((raw.readUInt16BE(2) & 0x7900) | QR | (rcode & 0xf), 2);
  out.writeUInt16BE(1, 4);
  out.writeUInt32BE(0, 6);
  out.writeUInt16BE(0, 10);
  return out;
}

function isPromise<T>(v: unknown): v is Promise<T> {
  return typeof (v as { then?: unknown } | undefined)?.then === 'function';
}

export class Dispatcher {
  private unrouted: Plugin | undefined;
  private zoneMap!: Map<string, LoadedBlock>;
  /**
   * The `debug` plugin's switch: an error thrown by a plugin is not recovered but ends the
   * process with its stack, as CoreDNS does when its recover() is off.
   */
  debug = false;

  constructor(
    zones: Map<string, LoadedBlock>,
    private readonly hooks: DispatchHooks,
  ) {
    this.zones = zones;
  }

  /** zone → block; replaced wholesale on reload. */
  get zones(): Map<string, LoadedBlock> {
    return this.zoneMap;
  }

  set zones(zones: Map<string, LoadedBlock>) {
    this.zoneMap = zones;
    this.unrouted = unroutedObserver(zones);
  }

  handle(raw: Buffer, client: ClientInfo): Outcome {
    if (raw.length < 12) return undefined;
    const flags = raw.readUInt16BE(2);
    if (flags & QR) return undefined; // never answer a response: that is how loops start
    if (raw.readUInt16BE(4) !== 1) return headerReply(raw, RCode.FORMERR);
    let query;
    try {
      query = parseQuery(raw);
    } catch (e) {
      if (e instanceof DnsFormatError && e.questionEnd !== undefined) return questionReply(raw, e.questionEnd, RCode.FORMERR);
      return undefined;
    }
    const req = new DnsRequest(raw, query, client);
    if (query.opcode !== 0) return finalizeReply(req, errorReply(req, RCode.NOTIMP));
    if (query.edns && query.edns.version > 0) return finalizeReply(req, errorReply(req, RCode.BADVERS));
    const zone = routeByZone(this.zoneMap, query.name);
    if (zone === undefined) {
      const refused = errorReply(req, RCode.REFUSED);
      this.unrouted?.observeUnrouted?.(req, refused);
      return finalizeReply(req, refused);
    }
    req.zone = zone;
    const block = this.zoneMap.get(zone) as LoadedBlock;
    let result;
    try {
      result = block.handle(req);
    } catch (e) {
      return this.fail(req, e);
    }
    if (isPromise<Reply | undefined>(result)) {
      return result.then(
        (r) => this.finish(req, r),
        (e: unknown) => this.fail(req, e),
      );
    }
    return this.finish(req, result);
  }

  private finish(req: DnsRequest, reply: Reply | undefined): Buffer | undefined {
    // Nothing in the chain answered: CoreDNS's "no next plugin found" is a SERVFAIL.
    const r = reply ?? errorReply(req, RCode.SERVFAIL);
    if (r.dropped) return undefined;
    try {
      return finalizeReply(req, r);
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

  /** Rethrows outside every listener's promise handling, so it reaches Node's uncaught-exception exit. */
  private crash(e: unknown): undefined {
    process.nextTick(() => {
      throw e;
    });
    return undefined;
  }
}
