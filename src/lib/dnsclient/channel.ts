// What the UDP channels (node:dgram in udp.ts, the native socket in nativechannel.ts) share:
// queries in PendingQueries, the room their replies may take in the receive buffer (rcvbuf.ts),
// copies of queries whose replies are late (retransmit.ts), and retiring — no new queries, closed
// once the last is settled.
import { PendingQueries } from './pending.js';
import { DEFAULT_RECEIVE_BUFFER } from './rcvbuf.js';
import type { RttEstimator } from './retransmit.js';

/** What a UDP channel shares with the other sockets to its upstream. */
export interface ChannelContext {
  /** The upstream's reply times, which decide when a late reply's query is sent again; none: never. */
  estimator?: RttEstimator;
  /** Counts every copy sent again. */
  resent?: { inc(): void };
}

export abstract class UdpChannelBase {
  protected readonly pending: PendingQueries;
  private retiring = false;
  closed = false;
  readonly openedAt = Date.now();
  /** The socket's receive buffer in bytes, as the kernel counts it. */
  protected capacity = DEFAULT_RECEIVE_BUFFER;

  constructor(upstream: string, context: ChannelContext) {
    const { estimator, resent } = context;
    this.pending = new PendingQueries('udp', upstream, estimator ? { estimator, resent, resend: (wire) => this.resend(wire) } : undefined);
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * True while a reply costing `cost` (replyCost) fits the receive buffer beside the replies of
   * the queries in flight; a channel with nothing in flight takes any query.
   */
  fits(cost: number): boolean {
    return this.pending.size === 0 || this.pending.reserved + cost <= this.capacity;
  }

  /** `cost`: receive-buffer bytes held for the reply while the query is in flight (replyCost). */
  abstract exchange(query: Uint8Array, questionEnd: number, timeoutMs: number, cost: number): Promise<Buffer>;

  /** Sends a query again, the same bytes under the same ID (its reply is late). */
  protected abstract resend(wire: Buffer): void;

  /** Lets go of the socket (the queries in flight are failed already). */
  protected abstract release(): void;

  /** Takes no new queries; closes once the ones in flight are settled. */
  retire(): void {
    this.retiring = true;
    if (this.pending.size === 0) this.close();
  }

  protected readonly onSettled = (): void => {
    if (this.retiring && this.pending.size === 0) this.close();
  };

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending.failAll('shutdown', 'client closed');
    this.release();
  }
}
