// Queries waiting for their reply on one socket or connection, keyed by the ID we gave them on
// the wire. Shared by the UDP and stream transports, which differ only in how bytes move.
import { DeadlineQueue, type Deadline } from './deadlines.js';
import { ExchangeError, type ExchangeFailure } from './errors.js';
import { freeId } from './ids.js';
import { ResendQueues, RTO_MARGIN_MIN_MS, type Resendable, type RttEstimator } from './retransmit.js';
import { HEADER_SIZE, headerRcode, isResponse, readU16, sameQuestion, writeU16 } from '../dns/wire.js';

interface Waiting extends Deadline, Resendable {
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
  /** A REFUSED that answered one of its copies, kept while another reply may still come. */
  refusal: Buffer | undefined;
}

/** Above this many queries in flight a transport opens another socket rather than share IDs thinner. */
export const MAX_IN_FLIGHT_PER_SOCKET = 8192;

const RCODE_REFUSED = 5;

/** Replies read from one socket in one turn of the event loop that suggest more are waiting. */
const BACKLOG_SIGN = 32;
/** At most this many turns a sweep waits for its socket to be read empty. */
const MAX_SWEEP_DEFERRALS = 16;

/** How a datagram socket asks again when a reply is late (see retransmit.ts); streams have none. */
export interface Retransmission {
  /** The upstream's reply times, shared by all its sockets. */
  estimator: RttEstimator;
  /** Puts the query's bytes (as first sent: same ID) on the socket again. */
  resend: (wire: Buffer) => void;
  /** Counts every copy sent. */
  resent?: { inc(): void };
}

export class PendingQueries {
  private readonly waiting = new Map<number, Waiting>();
  /** Sum of the `cost` of the queries in flight: what their replies may take of the socket's receive buffer. */
  reserved = 0;
  private readonly deadlines = new DeadlineQueue<Waiting>((w) => {
    this.waiting.delete(w.id);
    this.reserved -= w.cost;
    if (w.refusal) {
      writeU16(w.refusal, 0, w.callerId);
      w.resolve(w.refusal);
    } else {
      w.reject(new ExchangeError('timeout', this.proto, this.upstream, `no reply within ${w.timeoutMs} ms`));
    }
    w.onSettled();
  });

  /** Queries that may need another copy, when this socket retransmits. */
  private readonly resendQueues: ResendQueues<Waiting> | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** When the armed sweep fires (Infinity: none armed). */
  private sweepAt = Number.POSITIVE_INFINITY;
  /** Messages handed to deliver(), and their count when the sweep last looked (see `sweep`). */
  private received = 0;
  private receivedSeen = 0;
  /** Turns of the event loop the current sweep has waited for the socket to be read empty. */
  private sweepDeferrals = 0;

  constructor(
    private readonly proto: string,
    private readonly upstream: string,
    private readonly retransmission?: Retransmission,
  ) {
    if (retransmission) this.resendQueues = new ResendQueues<Waiting>();
  }

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
    const now = performance.now();
    const w: Waiting = {
      deadline: now + timeoutMs,
      done: false,
      firstSentAt: now,
      lastSentAt: now,
      heard: false,
      refusal: undefined,
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
    if (this.resendQueues) {
      this.resendQueues.add(w);
      // The sweep never sleeps longer than the least margin while queries wait, so a timeout
      // that shrinks (the first replies after a stall of our own) applies within that much.
      if (this.sweepAt === Number.POSITIVE_INFINITY) this.armSweep(now + Math.min((this.retransmission as Retransmission).estimator.rtoMs, RTO_MARGIN_MIN_MS));
    }
    return { wire, reply };
  }

  private armSweep(at: number): void {
    if (at >= this.sweepAt) return;
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepAt = at;
    this.sweepTimer = setTimeout(this.onSweepTimer, Math.max(1, at - performance.now()));
    // The deadline timer keeps the process up while queries wait; this one need not.
    this.sweepTimer.unref();
  }

  private stopSweep(): void {
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.sweepTimer = undefined;
    this.sweepAt = Number.POSITIVE_INFINITY;
  }

  /**
   * Timers run before the event loop reads its sockets: after a stall of our own, replies that
   * came meanwhile still wait in the socket. The sweep runs once they are read (setImmediate runs
   * after the poll phase), so only queries still unanswered get a copy.
   */
  private readonly onSweepTimer = (): void => {
    this.sweepTimer = undefined;
    this.sweepAt = Number.POSITIVE_INFINITY;
    this.receivedSeen = this.received;
    this.sweepDeferrals = 0;
    setImmediate(this.sweep);
  };

  private readonly sweep = (): void => {
    const queues = this.resendQueues;
    const r = this.retransmission;
    if (!queues || !r) return;
    if (this.waiting.size === 0) {
      queues.clear();
      return;
    }
    // One turn of the loop reads a bounded number of datagrams from a socket (32 for node:dgram,
    // 512 for the native socket). As many as that in this turn means replies may still wait
    // unread, as after a stall of ours with many queries in flight: read on first, for a few turns.
    const readThisTurn = this.received - this.receivedSeen;
    this.receivedSeen = this.received;
    if (readThisTurn >= BACKLOG_SIGN && this.sweepDeferrals < MAX_SWEEP_DEFERRALS) {
      this.sweepDeferrals++;
      setImmediate(this.sweep);
      return;
    }
    const now = performance.now();
    const { nextDue, awaitingReply } = queues.sweep(now, r.estimator.rtoMs, r.estimator.lastReplyAt, this.resendOne);
    // Due queries waiting for a sign that the upstream answers are looked at again a tick later.
    if (awaitingReply || nextDue !== Number.POSITIVE_INFINITY) this.armSweep(Math.min(nextDue, now + RTO_MARGIN_MIN_MS));
  };

  private readonly resendOne = (w: Waiting): void => {
    const r = this.retransmission as Retransmission;
    r.resent?.inc();
    r.resend(w.sent);
  };

  /**
   * Hands a received message to the query it answers. Messages that answer nothing we asked
   * (late replies after a timeout, another question under a matching ID) are ignored, so a
   * spoofed packet can at most be dropped, never delivered. `measure` false: the reply may have
   * waited in our own socket while we were busy (all but the last of a batch read at once), so
   * its time says more about us than about the upstream and is not used for the timeout; the
   * last one of the batch, measured, also tells that the upstream answers.
   */
  deliver(msg: Buffer, measure = true): boolean {
    this.received++;
    if (msg.length < HEADER_SIZE || !isResponse(msg)) return false;
    const id = readU16(msg, 0);
    const w = this.waiting.get(id);
    if (!w) return false;
    // A reply without a question (FORMERR, NOTIMP from some servers) can only be matched by ID.
    if (readU16(msg, 4) !== 0 && !sameQuestion(w.sent, w.questionEnd, msg)) return false;
    if (this.retransmission) {
      // One clock read per batch: the last reply, measured, also tells that the upstream answers.
      if (measure) {
        const now = performance.now();
        this.retransmission.estimator.sample(now - w.firstSentAt, now);
      }
      // A copy can reach an upstream that does not recognise it as one (CoreDNS, kdns) while the
      // first is still being worked on there, and be REFUSED by a full max_concurrent. That says
      // nothing of the first: the exchange waits on for another reply, sends no more copies, and
      // returns this REFUSED only if nothing else comes before its deadline.
      if (w.lastSentAt !== w.firstSentAt && w.refusal === undefined && headerRcode(msg) === RCODE_REFUSED) {
        w.refusal = msg;
        w.heard = true;
        return true;
      }
    }
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
    this.resendQueues?.clear();
    this.stopSweep();
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
