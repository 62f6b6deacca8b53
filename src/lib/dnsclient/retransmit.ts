// Asking an upstream again over UDP when a reply is late. A datagram lost on the way (an
// upstream's socket buffer overrun by a burst, a drop in the network) used to cost its query the
// whole exchange timeout, two seconds, and hold its max_concurrent slot all that time. Here such a
// query is sent again: the same bytes under the same ID on the same socket, so the upstream sees a
// retransmission it can recognise (BIND drops it as a duplicate, unbound joins it to the work under
// way) and a late reply to the first copy answers the query as well as a reply to the second.
//
// A copy goes out when two things hold:
//   * the reply is later than this upstream's replies usually are. How late that is, is learnt
//     from its replies as TCP does (RFC 6298): a smoothed reply time and its mean deviation; the
//     timeout is the smoothed time plus four deviations, but at least RTO_MARGIN_MIN_MS above it,
//     so that the usual jitter of a fast upstream on a busy node is not taken for loss;
//   * the upstream has answered something since the query's latest copy left. An upstream that
//     answers nothing at all is busy, stalled or gone, and another copy would only queue behind the
//     first or add to its load: the query waits out its exchange timeout as before, and the health
//     check decides. Replies to queries sent after this one, while this one's does not come, are
//     what a lost datagram looks like.
// Each further copy of one query waits twice as long as the one before, up to MAX_RESENDS.

/** Before the first reply nothing is known of the upstream: RFC 6298's initial timeout. */
export const RTO_INITIAL_MS = 1000;
/**
 * The least margin above the smoothed reply time. kdns's upstreams are a hop or two away and
 * answer from cache in well under a millisecond; twenty milliseconds late, while they answer
 * other queries, is rarely a slow answer, and a copy sent too early costs one datagram that the
 * upstream answers or drops as a duplicate.
 */
export const RTO_MARGIN_MIN_MS = 20;
/** No copy waits longer than this (CoreDNS's read timeout for an exchange). */
export const RTO_MAX_MS = 2000;
/**
 * Copies after the first, per exchange: with a 20 ms timeout they leave at about 20, 60, 140 and
 * 300 ms. An upstream that answers others but has not answered this one after that many is not
 * losing a datagram now and then; more copies would only add to its load.
 */
export const MAX_RESENDS = 4;

/** The reply-time estimate of one upstream, updated with every reply to a UDP query. */
export class RttEstimator {
  /** Smoothed reply time (ms); NaN until the first reply. */
  private srtt = Number.NaN;
  /** Smoothed mean deviation of the reply time (ms). */
  private rttvar = 0;
  /** When the last reply came (performance.now() ms). */
  lastReplyAt = Number.NEGATIVE_INFINITY;
  /** The current retransmission timeout in ms: how late a reply is before its query is sent again. */
  rtoMs = RTO_INITIAL_MS;

  /**
   * A reply came `rttMs` after its query was first sent. For a query sent more than once the
   * time is taken from the first copy, so a reply that was only slow teaches the estimate that
   * the upstream can be this slow, and a lost datagram makes it more patient, never less.
   */
  sample(rttMs: number, now: number): void {
    if (Number.isNaN(this.srtt)) {
      this.srtt = rttMs;
      this.rttvar = rttMs / 2;
    } else {
      this.rttvar = 0.75 * this.rttvar + 0.25 * Math.abs(this.srtt - rttMs);
      this.srtt = 0.875 * this.srtt + 0.125 * rttMs;
    }
    this.lastReplyAt = now;
    this.rtoMs = Math.min(RTO_MAX_MS, this.srtt + Math.max(RTO_MARGIN_MIN_MS, 4 * this.rttvar));
  }
}

/** What a query waiting on a UDP socket carries for retransmission (times in performance.now() ms). */
export interface Resendable {
  /** Settled: answered, failed or timed out. */
  done: boolean;
  /** A reply came that does not settle it yet (see PendingQueries.deliver): no more copies. */
  heard: boolean;
  /** When its exchange gives up. */
  deadline: number;
  /** When it was first sent. */
  firstSentAt: number;
  /** When its latest copy was sent. */
  lastSentAt: number;
}

/** When the queues of one socket want to be looked at again. */
export interface SweepResult {
  /** When the next query falls due (Infinity when none waits for its time). */
  nextDue: number;
  /** Some query is due but the upstream has answered nothing since it left: look again after the next reply. */
  awaitingReply: boolean;
}

/**
 * The queries of one socket that may need another copy, by how many they have had: those with
 * k copies after the first wait RTO·2^k after the latest, so within one level the first sent is
 * the first due, and the first to have been overtaken by a reply: a level is a queue. Settled
 * queries are skipped when they reach a queue's head.
 */
export class ResendQueues<T extends Resendable> {
  /** levels[k]: queries that have had k copies after the first and may get one more. */
  private readonly levels: T[][] = Array.from({ length: MAX_RESENDS }, () => []);
  private readonly heads: number[] = new Array<number>(MAX_RESENDS).fill(0);

  add(item: T): void {
    (this.levels[0] as T[]).push(item);
  }

  clear(): void {
    for (let k = 0; k < MAX_RESENDS; k++) {
      (this.levels[k] as T[]).length = 0;
      this.heads[k] = 0;
    }
  }

  /**
   * Sends a copy (`resend`) of every query whose wait has passed at `now` with timeout `rtoMs`
   * and whose latest copy the upstream has answered past (a reply at `lastReplyAt`, later than
   * it left). A query whose exchange has less than one timeout left gets no more copies: their
   * answer could not come in time.
   */
  sweep(now: number, rtoMs: number, lastReplyAt: number, resend: (item: T) => void): SweepResult {
    let nextDue = Number.POSITIVE_INFINITY;
    let awaitingReply = false;
    let wait = rtoMs;
    for (let k = 0; k < MAX_RESENDS; k++, wait *= 2) {
      const items = this.levels[k] as T[];
      let head = this.heads[k] as number;
      while (head < items.length) {
        const item = items[head] as T;
        if (item.done || item.heard || item.deadline - now < rtoMs) {
          head++;
          continue;
        }
        const due = item.lastSentAt + wait;
        if (due > now) {
          nextDue = Math.min(nextDue, due);
          break;
        }
        // Those behind it left later still: none of them has been answered past either.
        if (lastReplyAt <= item.lastSentAt) {
          awaitingReply = true;
          break;
        }
        head++;
        item.lastSentAt = now;
        resend(item);
        if (k + 1 < MAX_RESENDS) {
          (this.levels[k + 1] as T[]).push(item);
          nextDue = Math.min(nextDue, now + wait * 2);
        }
      }
      this.heads[k] = compacted(items, head);
    }
    return { nextDue, awaitingReply };
  }

  /** True when no query waits in any queue (settled ones may still sit behind a head). */
  get empty(): boolean {
    for (let k = 0; k < MAX_RESENDS; k++) if ((this.heads[k] as number) < (this.levels[k] as T[]).length) return false;
    return true;
  }
}

/** Drops the consumed entries before `head` once they are half the array; returns the new head. */
function compacted<T>(items: T[], head: number): number {
  if (head === items.length) {
    items.length = 0;
    return 0;
  }
  if (head >= 256 && head * 2 >= items.length) {
    items.splice(0, head);
    return 0;
  }
  return head;
}
