// An answer on its way back: a structured Message, or wire bytes already made for this request
// (the cache's and the pre-encoded fast paths). Plugins that only look (log, prometheus) use
// rcode and `view()`; plugins that change the answer use `edit()`, which drops stale bytes.

import { decodeMessage } from '../lib/dns/codec.js';
import type { Message, Question } from '../lib/dns/types.js';
import { RCode } from '../lib/dns/types.js';
import type { DnsRequest } from './request.js';

/** The smallest and largest TTL in a reply (for a SOA, its MINIMUM field counts too). */
export interface TtlRange {
  readonly min: number;
  readonly max: number;
}

export class Reply {
  /** Why the answer is an error (for the `errors` plugin), when a plugin had one to tell. */
  error?: Error;
  /** The plugin that made this reply (set by the chain; CoreDNS's `plugin` metric label). */
  plugin?: string;
  /** Bytes as the server will send them (set by the server or by a plugin that measures size). */
  finalWire?: Buffer;
  /**
   * Set by a plugin that keeps this answer pre-encoded and drops it itself the moment its data
   * changes (kubernetes): the range of TTLs in it. A cache in front need not keep a copy of such
   * an answer — the copy would only cost memory and go stale. Editing the reply clears it.
   */
  kept?: TtlRange;
  /** Set by a plugin that answers by not answering (acl's drop): the server sends nothing. */
  dropped?: boolean;
  /**
   * The messages that follow this one in an answer of several (a zone transfer, RFC 5936 §2.2):
   * made one at a time as the client reads them, each sent in its own TCP frame. Only a TCP
   * connection sends them; any other transport sends this first message alone.
   */
  more?: Iterable<Message>;

  private constructor(
    private msg: Message | undefined,
    private bytes: Buffer | undefined,
    private code: number,
  ) {}

  static of(msg: Message): Reply {
    return new Reply(msg, undefined, msg.rcode);
  }

  /**
   * Wire bytes answering this request: ID and question already match it. `rcode` saves a
   * decode for plugins that only need the code.
   */
  static fromWire(bytes: Buffer, rcode: number): Reply {
    return new Reply(undefined, bytes, rcode);
  }

  get rcode(): number {
    return this.code;
  }

  /** The wire form, when the reply was made as bytes and nobody has edited it since. */
  get wire(): Buffer | undefined {
    return this.bytes;
  }

  /** The message, decoded on first use. Do not change it: use edit(). */
  view(): Message {
    this.msg ??= decodeMessage(this.bytes as Buffer);
    return this.msg;
  }

  /** The message, for changing it: the stored bytes are dropped. */
  edit(): Message {
    const m = this.view();
    this.bytes = undefined;
    this.finalWire = undefined;
    this.kept = undefined;
    return m;
  }

  /** Call after edit() changed rcode. */
  syncRcode(): void {
    if (this.msg) this.code = this.msg.rcode;
  }
}

/** The question echoed back exactly as the client wrote it. */
export function questionOf(req: DnsRequest): Question {
  return { name: req.qname, type: req.qtype, class: req.qclass };
}

/**
 * A response skeleton for the request: same ID, opcode, RD and CD, question echoed, QR set,
 * empty sections. The server adds OPT for EDNS clients when it writes the reply.
 */
export function responseFor(req: DnsRequest, rcode: number = RCode.NOERROR, authoritative = false): Message {
  return {
    id: req.id,
    qr: true,
    opcode: req.query.opcode,
    aa: authoritative,
    tc: false,
    rd: req.query.rd,
    ra: false,
    z: false,
    ad: false,
    cd: req.query.cd,
    rcode,
    questions: [questionOf(req)],
    answers: [],
    authority: [],
    additional: [],
  };
}

/** A bare error reply (SERVFAIL, REFUSED, …) for the request. */
export function errorReply(req: DnsRequest, rcode: number, error?: Error): Reply {
  const r = Reply.of(responseFor(req, rcode));
  if (error) r.error = error;
  return r;
}
