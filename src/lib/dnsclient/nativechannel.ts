// A UDP channel to one upstream over kdns's own batched socket (src/lib/native/udp.c): queries
// asked in one turn of the event loop leave in one sendmmsg, replies arrive in batches of up to
// 64 per recvmmsg. node:dgram spends a send request, an array, a callback and a syscall per
// query, and a Buffer, an rinfo object and an address string per reply; in a profile of the
// miss workload it was the largest single cost of forwarding. Same contract as the dgram
// channel in udp.ts: connected (ICMP errors fail the queries at once), IDs in PendingQueries.
import net from 'node:net';
import { constants } from 'node:os';
import { describeSocketError, ExchangeError } from './errors.js';
import { UdpChannelBase, type ChannelContext } from './channel.js';
import { UPSTREAM_RECEIVE_BUFFER } from './rcvbuf.js';
import type { NativeSocket, NativeUdp } from '../native/udp.js';

const ERRNO_NAMES = new Map<number, string>(Object.entries(constants.errno).map(([name, n]) => [n, name]));

/** An Error like the ones node's sockets give, so describeSocketError reads its code. */
function errnoError(errno: number, what: string): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
  const err: NodeJS.ErrnoException = new Error(`${what} ${code}`);
  err.code = code;
  err.errno = -errno;
  return err;
}

/**
 * Receive slots shared by every upstream socket: onBatch copies each reply out before it
 * returns, and JavaScript runs one batch at a time, so one set serves them all.
 */
interface Shared {
  rx: Buffer;
  meta: Buffer;
  tx: Buffer;
  txmeta: Buffer;
  /** Meta records of the datagrams sendBatch sends: length, address length 0 (connected). */
  sendMeta: Buffer;
}
let shared: Shared | undefined;

function sharedBuffers(addon: NativeUdp): Shared {
  shared ??= {
    rx: Buffer.alloc(addon.BATCH * addon.SLOT),
    meta: Buffer.alloc(addon.BATCH * addon.META),
    tx: Buffer.alloc(addon.BATCH * addon.SLOT),
    txmeta: Buffer.alloc(addon.BATCH * 8),
    sendMeta: Buffer.alloc(addon.BATCH * addon.META),
  };
  return shared;
}

export class NativeUdpChannel extends UdpChannelBase {
  private readonly socket: NativeSocket | undefined;
  private readonly buffers: Shared;
  /** Why the socket could not be opened or connected; every exchange then fails with it. */
  private readonly failure: ExchangeError | undefined;
  /** Queries waiting for this turn's sendBatch. */
  private queued: Buffer[] = [];

  constructor(
    private readonly addon: NativeUdp,
    host: string,
    port: number,
    upstream: string,
    context: ChannelContext,
    /** Bind here rather than to any address (forward's source_address). */
    localAddress?: string,
  ) {
    super(upstream, context);
    this.buffers = sharedBuffers(addon);
    const v6 = net.isIPv6(host);
    let socket: NativeSocket | undefined;
    let failure: Error | undefined;
    try {
      const { rx, meta, tx, txmeta } = this.buffers;
      socket = addon.open(v6 ? 6 : 4, localAddress ?? (v6 ? '::' : '0.0.0.0'), 0, rx, meta, tx, txmeta, this.onBatch);
      this.capacity = addon.setReceiveBuffer(socket, UPSTREAM_RECEIVE_BUFFER);
      const rc = addon.connect(socket, host, port);
      if (rc !== 0) failure = errnoError(rc, 'connect');
    } catch (e) {
      failure = e instanceof Error ? e : new Error(String(e));
    }
    this.socket = socket;
    if (failure) {
      const { kind, detail } = describeSocketError(failure);
      this.failure = new ExchangeError(kind, 'udp', upstream, detail);
      this.close();
    }
  }

  exchange(query: Uint8Array, questionEnd: number, timeoutMs: number, cost: number): Promise<Buffer> {
    if (this.failure) return Promise.reject(this.failure);
    const { wire, reply } = this.pending.add(query, questionEnd, timeoutMs, this.onSettled, cost);
    this.enqueue(wire);
    return reply;
  }

  protected resend(wire: Buffer): void {
    this.enqueue(wire);
  }

  /** Sends `wire` with the others of this turn, in one sendBatch. */
  private enqueue(wire: Buffer): void {
    if (this.queued.length === 0) process.nextTick(this.flush);
    this.queued.push(wire);
    if (this.queued.length === this.addon.BATCH) this.flush();
  }

  private readonly flush = (): void => {
    const batch = this.queued;
    if (batch.length === 0) return;
    this.queued = [];
    if (this.closed || !this.socket) return;
    const { SLOT, META } = this.addon;
    const { tx, sendMeta: meta } = this.buffers;
    let count = 0;
    for (const wire of batch) {
      if (wire.length > SLOT) continue; // no query we forward comes near 4 KB
      tx.set(wire, count * SLOT);
      meta.writeInt32LE(wire.length, count * META);
      meta.writeInt32LE(0, count * META + 4);
      count++;
    }
    const rc = this.addon.sendBatch(this.socket, tx, meta, count);
    if (rc !== 0) {
      // The kernel refused (a pending ICMP error, no route now): like dgram's 'error' event.
      const { kind, detail } = describeSocketError(errnoError(rc, 'send'));
      this.pending.failAll(kind, detail);
    }
  };

  private readonly onBatch = (count: number): void => {
    if (count < 0) {
      const { kind, detail } = describeSocketError(errnoError(-count, 'recv'));
      this.pending.failAll(kind, detail);
      return;
    }
    const { SLOT, META } = this.addon;
    const { rx, meta } = this.buffers;
    for (let i = 0; i < count; i++) {
      const length = meta.readInt32LE(i * META);
      if (length < 0) continue;
      const msg = Buffer.allocUnsafe(length);
      rx.copy(msg, 0, i * SLOT, i * SLOT + length);
      // The socket is a queue: the last reply of a batch came last, the others may have waited
      // there while we were busy. Only the last one's time measures the upstream.
      this.pending.deliver(msg, i === count - 1);
    }
  };

  override close(): void {
    this.flush();
    super.close();
  }

  protected release(): void {
    if (this.socket) this.addon.close(this.socket);
  }
}
