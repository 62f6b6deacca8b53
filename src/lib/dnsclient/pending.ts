// Queries waiting for their reply on one socket or connection, keyed by the ID we gave them on
// the wire. Shared by the UDP and stream transports, which differ only in how bytes move.
import { DeadlineQueue, type Deadline } from './deadlines.js';
import { ExchangeError, type ExchangeFailure } from './errors.js';
import { freeId } from './ids.js';
import { HEADER_SIZE, isResponse, readU16, sameQuestion, writeU16 } from '../dns/wire.js';

interface Waiting extends Deadline {
  id: number;
  resolve: (reply: Buffer) => void;
  reject: (err: ExchangeError) => void;
  /** The query as sent (our ID), kept to check the reply's question. */
  sent: Buffer;
  questionEnd: number;
  /** The caller's ID, put back on the reply. */
  callerId: number;
  timeoutMs: number;
  onSettled: () => void;
  /** Receive-buffer bytes held for its reply (see `reserved`). */
  cost: number;
}

/** Above this many queries in flight a transport opens another socket rather than share IDs thinner. */
export const MAX_IN_FLIGHT_PER_SOCKET = 8192;

export class PendingQueries {
  private readonly waiting = new Map<number, Waiting>();
  /** Sum of the `cost` of the queries in flight: what their replies may take of the socket's receive buffer. */
  reserved = 0;
  private readonly deadlines = new DeadlineQueue<Waiting>((w) => {
    this.waiting.delete(w.id);
    this.reserved -= w.cost;
    w.reject(new ExchangeError('timeout', this.proto, this.upstream, `no reply within ${w.timeoutMs} ms`));
    w.onSettled();
  });

  constructor(
    private readonly proto: string,
    private readonly upstream: string,
  ) {}

  get size(): number {
    return this.waiting.size;
  }

  /**
   * Registers a query and returns the bytes to send (a copy of `query` under a fresh ID) and the
   * promise of its reply. The clock starts now, so connecting counts against the same budget.
   * `onSettled` runs after the query is answered, fails or times out. `cost` is added to
   * `reserved` while the query waits.
   */
  add(query: Uint8Array, questionEnd: number, timeoutMs: number, onSettled: () => void, cost = 0): { wire: Buffer; reply: Promise<Buffer> } {
    const id = freeId(this.waiting);
    const wire = Buffer.allocUnsafe(query.length);
    wire.set(query);
    writeU16(wire, 0, id);
    let resolve!: (reply: Buffer) => void;
    let reject!: (err: ExchangeError) => void;
    const reply = new Promise<Buffer>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const w: Waiting = {
      deadline: Date.now() + timeoutMs,
      done: false,
      id,
      resolve,
      reject,
      sent: wire,
      questionEnd,
      callerId: readU16(query, 0),
      timeoutMs,
      onSettled,
      cost,
    };
    this.reserved += cost;
    this.waiting.set(id, w);
    this.deadlines.add(w);
    return { wire, reply };
  }

  /**
   * Hands a received message to the query it answers. Messages that answer nothing we asked
   * (late replies after a timeout, another question under a matching ID) are ignored, so a
   * spoofed packet can at most be dropped, never delivered.
   */
  deliver(msg: Buffer): boolean {
    if (msg.length < HEADER_SIZE || !isResponse(msg)) return false;
    const id = readU16(msg, 0);
    const w = this.waiting.get(id);
    if (!w) return false;
    // A reply without a question (FORMERR, NOTIMP from some servers) can only be matched by ID.
    if (readU16(msg, 4) !== 0 && !sameQuestion(w.sent, w.questionEnd, msg)) return false;
    this.settle(w);
    writeU16(msg, 0, w.callerId);
    w.resolve(msg);
    w.onSettled();
    return true;
  }

  /** Fails one query (its send failed). */
  fail(wire: Buffer, kind: ExchangeFailure, detail: string): void {
    const id = readU16(wire, 0);
    const w = this.waiting.get(id);
    if (!w || w.sent !== wire) return;
    this.settle(w);
    w.reject(new ExchangeError(kind, this.proto, this.upstream, detail));
    w.onSettled();
  }

  /** Fails every query in flight. `kindOf` may pick a kind per query (see stream.ts). */
  failAll(kind: ExchangeFailure | ((sent: Buffer) => ExchangeFailure), detail: string): void {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    this.reserved = 0;
    this.deadlines.clear();
    for (const w of all) {
      w.done = true;
      w.reject(new ExchangeError(typeof kind === 'function' ? kind(w.sent) : kind, this.proto, this.upstream, detail));
      w.onSettled();
    }
  }

  private settle(w: Waiting): void {
    this.waiting.delete(w.id);
    this.reserved -= w.cost;
    w.done = true;
    this.deadlines.trim();
  }
}
