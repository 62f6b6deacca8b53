// What the UDP channels (node:dgram in udp.ts, the native socket in nativechannel.ts) share:
// queries in PendingQueries, and retiring — no new queries, closed once the last is settled.
import { PendingQueries } from './pending.js';

export abstract class UdpChannelBase {
  protected readonly pending: PendingQueries;
  private retiring = false;
  closed = false;
  readonly openedAt = Date.now();

  constructor(upstream: string) {
    this.pending = new PendingQueries('udp', upstream);
  }

  get inFlight(): number {
    return this.pending.size;
  }

  abstract exchange(query: Uint8Array, questionEnd: number, timeoutMs: number): Promise<Buffer>;

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
