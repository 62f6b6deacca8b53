// UDP through kdns's own socket (src/lib/native/udp.c): datagrams arrive in batches in memory
// shared with the addon, replies leave in one sendmmsg per batch. node:dgram spends about
// 3 µs of CPU per query on a Buffer, an rinfo object, an address string and a send request;
// here a query costs one copy of its bytes and a slot in the reply batch.
//
// The addon and its loader are in src/lib/native (the upstream client uses them too). Where it is
// missing (no C compiler, not Linux) or KDNS_UDP=dgram is set, listeners.ts uses node:dgram instead.

import net from 'node:net';
import { formatIPv4, formatIPv6 } from '../lib/dns/ip.js';
import { isPromise } from './promise.js';
import type { Dispatcher, Outcome } from './dispatch.js';
import type { ClientInfo, TransportKind } from './request.js';
import type { NativeUdp } from '../lib/native/udp.js';

/**
 * UDP datagrams longer than this are dropped unread, on both transports: no DNS query comes
 * near it (EDNS queries are a few hundred bytes), and the native socket reads into slots of
 * this size.
 */
export const MAX_UDP_QUERY = 4096;

/**
 * The receive buffer a UDP listener asks for (the kernel's figure, which counts each datagram at
 * its allocated size: 832 bytes for a 60-byte query on Linux 6). Queries wait there whenever
 * kdns is not reading: a garbage collection, the first second of compiled code, another process
 * on the same CPU. The kernel's default, 208 KiB, holds about 250 queries — 10 ms of a 25,000
 * QPS load — and drops the rest; 8 MiB holds about 10,000. The kernel caps the request at
 * twice net.core.rmem_max unless kdns has CAP_NET_ADMIN.
 */
export const LISTENER_RECEIVE_BUFFER = 8 << 20;

const AF_INET = 2;
const SOCKADDR_IN_SIZE = 16;

/**
 * The sender of one datagram. The address string is made only when a plugin asks for it (log,
 * whoami, acl...): most answers never need it. The bytes are copied out of the shared meta
 * slot at once, because the slot is reused by the next batch while an answer may still be
 * pending.
 */
class UdpClient implements ClientInfo {
  readonly transport: TransportKind = 'udp';
  readonly remotePort: number;
  private text: string | undefined;
  private readonly v4: number;
  /** An IPv6 sender's whole sockaddr_in6 (scope included), to answer it later. */
  private readonly sa6: Buffer | undefined;

  constructor(
    meta: Buffer,
    offset: number,
    readonly localAddress: string,
    readonly localPort: number,
  ) {
    // meta record: int32 length, int32 address length, then struct sockaddr_in / sockaddr_in6.
    const family = meta.readUInt16LE(offset + 8);
    this.remotePort = meta.readUInt16BE(offset + 10);
    if (family === AF_INET) {
      this.v4 = meta.readUInt32BE(offset + 12);
      this.sa6 = undefined;
    } else {
      this.v4 = 0;
      this.sa6 = Buffer.from(meta.subarray(offset + 8, offset + 8 + meta.readInt32LE(offset + 4)));
    }
  }

  get remoteFamily(): 4 | 6 {
    return this.sa6 === undefined || isMapped(this.sa6, 8) ? 4 : 6;
  }

  get remoteAddress(): string {
    if (this.text === undefined) this.text = this.sa6 ? plainIPv6(this.sa6.subarray(8, 24)) : formatV4Number(this.v4);
    return this.text;
  }

  set remoteAddress(value: string) {
    this.text = value;
  }

  /** Writes this sender's address length and sockaddr into the meta record at `offset`. */
  writeAddress(meta: Buffer, offset: number): void {
    if (this.sa6) {
      meta.writeInt32LE(this.sa6.length, offset + 4);
      this.sa6.copy(meta, offset + 8);
      return;
    }
    meta.writeInt32LE(SOCKADDR_IN_SIZE, offset + 4);
    meta.writeUInt16LE(AF_INET, offset + 8);
    meta.writeUInt16BE(this.remotePort, offset + 10);
    meta.writeUInt32BE(this.v4, offset + 12);
    meta.fill(0, offset + 16, offset + 8 + SOCKADDR_IN_SIZE);
  }

  /** The sockaddr bytes on their own (for sendTo). */
  address(): Buffer {
    const meta = Buffer.alloc(8 + (this.sa6?.length ?? SOCKADDR_IN_SIZE));
    this.writeAddress(meta, 0);
    return meta.subarray(8);
  }
}

function formatV4Number(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}`;
}

/** Dual-stack sockets see IPv4 clients as ::ffff:a.b.c.d; plugins want a.b.c.d, as with dgram. */
function plainIPv6(b: Buffer): string {
  return isMapped(b) ? formatIPv4(b, 12) : formatIPv6(b);
}

/** ::ffff:a.b.c.d — an IPv4 client of a dual-stack socket (address at `at` in `b`). */
function isMapped(b: Buffer, at = 0): boolean {
  return b.readUInt32BE(at) === 0 && b.readUInt32BE(at + 4) === 0 && b.readUInt32BE(at + 8) === 0xffff;
}

export interface NativeListener {
  readonly port: number;
  close(): Promise<void>;
  /** Takes no more queries, answers those already read or queued, then closes (see drain below). */
  drain(): Promise<void>;
}

/** How long a draining socket must have been quiet (nothing read, no answer under way) before it closes. */
const DRAIN_QUIET_MS = 50;
/** A draining socket closes after this even with answers still under way (an upstream that never answers). */
const DRAIN_LIMIT_MS = 5_000;

/**
 * Opens address:port (address '' = every address, dual-stack) on the native socket, or serves
 * `inheritedFd`, a socket already bound to it (src/server/inherited.ts). Throws like a dgram
 * bind would (the error's code is EADDRINUSE, EACCES, ...).
 */
export function listenUdpNative(addon: NativeUdp, address: string, port: number, localAddress: string, dispatcher: Dispatcher, inheritedFd?: number): NativeListener {
  const { BATCH, SLOT, META } = addon;
  if (SLOT !== MAX_UDP_QUERY) throw new Error(`kdns_udp.node reads ${SLOT}-byte slots, this kdns expects ${MAX_UDP_QUERY}: rebuild it (npm run build:native)`);
  const rx = Buffer.alloc(BATCH * SLOT);
  const meta = Buffer.alloc(BATCH * META);
  const tx = Buffer.alloc(BATCH * SLOT);
  const txmeta = Buffer.alloc(BATCH * 8);
  const txIndex = new Int32Array(txmeta.buffer, txmeta.byteOffset, BATCH * 2);
  const family: 4 | 6 = address === '' || net.isIPv6(address) ? 6 : 4;
  let localPort = 0;

  // Replies finished after their batch (forwarded queries) gather here and leave together
  // with one sendmmsg once the promise jobs of this turn have run: at cache-miss rates a
  // sendto per reply was a seventh of the server's CPU.
  const lateTx = Buffer.alloc(BATCH * SLOT);
  const lateMeta = Buffer.alloc(BATCH * META);
  let late = 0;
  let lateScheduled = false;
  const flushLate = (): void => {
    lateScheduled = false;
    if (late > 0) addon.sendBatch(socket, lateTx, lateMeta, late);
    late = 0;
  };
  const sendLate = (bytes: Buffer, client: UdpClient): void => {
    if (bytes.length > SLOT) {
      addon.sendTo(socket, bytes, client.address());
      return;
    }
    if (late === BATCH) flushLate();
    const o = late * META;
    lateMeta.writeInt32LE(bytes.length, o);
    client.writeAddress(lateMeta, o);
    lateTx.set(bytes, late * SLOT);
    late++;
    if (!lateScheduled) {
      lateScheduled = true;
      process.nextTick(flushLate);
    }
  };

  let underway = 0;
  let lastBatchAt = 0;
  const onBatch = (count: number): void => {
    lastBatchAt = performance.now();
    let replies = 0;
    for (let i = 0; i < count; i++) {
      const o = i * META;
      const length = meta.readInt32LE(o);
      if (length < 0) continue; // longer than a slot: no DNS query is, so it is not one
      const start = i * SLOT;
      const msg = Buffer.allocUnsafe(length);
      rx.copy(msg, 0, start, start + length);
      const client = new UdpClient(meta, o, localAddress, localPort);
      const out = dispatcher.handle(msg, client);
      if (out === undefined) continue;
      if (isPromise(out)) {
        underway++;
        out
          .then((bytes) => {
            if (bytes) sendLate(bytes, client);
          })
          .finally(() => underway--);
      } else if (out.length > SLOT) {
        addon.sendTo(socket, out, client.address());
      } else {
        tx.set(out, replies * SLOT);
        txIndex[2 * replies] = i;
        txIndex[2 * replies + 1] = out.length;
        replies++;
      }
    }
    if (replies > 0) addon.flush(socket, replies);
  };

  const socket =
    inheritedFd === undefined ? addon.open(family, address === '' ? '::' : address, port, rx, meta, tx, txmeta, onBatch) : addon.adopt(inheritedFd, rx, meta, tx, txmeta, onBatch);
  addon.setReceiveBuffer(socket, LISTENER_RECEIVE_BUFFER);
  localPort = socket.port;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    if (!closed) {
      addon.close(socket);
      // libuv releases the descriptor on its next turn; the port is free after that.
      closed = new Promise((r) => setImmediate(r));
    }
    return closed;
  };
  return {
    port: socket.port,
    close,
    /**
     * For a successor bound beside this socket (SO_REUSEPORT): connecting the socket to its own
     * address takes it out of the kernel's choice for every other sender, so new queries go to
     * the successor's sockets, while those already queued here stay readable. They are read
     * and answered (replies to other addresses still leave a connected socket on Linux) until
     * nothing has arrived and nothing is under way for DRAIN_QUIET_MS and the kernel holds
     * nothing unread for it; then it closes.
     */
    async drain() {
      if (closed) return closed;
      const self = address === '' ? '::1' : address;
      const rc = addon.connect(socket, self, socket.port);
      if (rc !== 0) return close();
      lastBatchAt = performance.now();
      const limit = lastBatchAt + DRAIN_LIMIT_MS;
      for (;;) {
        await new Promise((r) => setTimeout(r, 10));
        const now = performance.now();
        if (now > limit) break;
        // Quiet by the clock is not enough: timers run before the poll, so datagrams can wait
        // unread after the process was off the CPU for longer than the quiet spell.
        if (underway === 0 && late === 0 && now - lastBatchAt >= DRAIN_QUIET_MS && addon.waiting(socket) <= 0) break;
      }
      return close();
    },
  };
}
