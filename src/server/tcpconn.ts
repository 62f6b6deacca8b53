// DNS over TCP connections, served fairly (RFC 7766): 2-byte length framing, pipelined queries
// answered as they complete, and limits so that no client can take the process from the others.
//
// - Bounded work per turn of the event loop: every TCP connection together answers at most
//   QUERIES_PER_TURN queries before UDP and the rest of the loop get their turn, and one
//   connection at most QUERIES_PER_SLICE before the next one ready gets its slice. A client that
//   pipelines thousands of queries in one write is paused while its queries wait their turn.
// - A connection whose unsent answers exceed pauseQueuedBytes is not read until they drain
//   (a client that does not read its answers stops being served), and a connection with answers
//   unsent for stalledTimeoutMs (`timeouts write`) is closed.
// - A connection with no complete query within readTimeoutMs of its connect (`timeouts read`),
//   or for idleTimeoutMs after its last query or answer (`timeouts idle`), is closed; at maxConnections a new
//   connection closes the one idle for longest (idle or stuck half-way through a frame, RFC 7766
//   §6.2.3), and is refused only when every open connection has work under way.

import { close, open, readFileSync } from 'node:fs';
import type net from 'node:net';
import type { Dispatcher, MessageStream, Outcome } from './dispatch.js';
import type { ClientInfo } from './request.js';
import { isPromise } from './promise.js';

export interface TcpLimits {
  /** Close a connection with no complete query this long after its connect (ms; `timeouts read`). */
  readTimeoutMs: number;
  /** Close a connection with no complete query this long after its last query or answer (ms; `timeouts idle`). */
  idleTimeoutMs: number;
  /** Open connections at most; beyond, a new one replaces the idlest, or is refused. */
  maxConnections: number;
  /** Queries of one connection awaiting an asynchronous answer; reading pauses beyond it. */
  maxInflightPerConnection: number;
  /** Stop reading a connection while more than this many bytes of its answers are unsent. */
  pauseQueuedBytes: number;
  /** Close a connection whose answers stay unsent this long (ms; `timeouts write`). */
  stalledTimeoutMs: number;
  /** Close a connection at once when this much is unsent (answers that were under way when it paused). */
  maxQueuedBytes: number;
  /**
   * Queries served on one connection, then it is closed once their answers are out (`timeouts
   * maxtcpqueries`, so a client's next connection may reach another replica); 0: no cap.
   */
  maxQueriesPerConnection: number;
}

/** read 3 s, write 5 s and idle 10 s are CoreDNS 1.14's defaults (core/dnsserver). */
export const DEFAULT_TCP_LIMITS: TcpLimits = {
  readTimeoutMs: 3_000,
  idleTimeoutMs: 10_000,
  maxConnections: 1000,
  maxInflightPerConnection: 128,
  pauseQueuedBytes: 64 << 10,
  stalledTimeoutMs: 5_000,
  maxQueuedBytes: 1 << 20,
  maxQueriesPerConnection: 0,
};

/** Queries answered over all TCP connections per turn of the event loop. */
const QUERIES_PER_TURN = 128;
/** Queries of one connection answered before the next ready connection gets its turn. */
const QUERIES_PER_SLICE = 16;
/**
 * Queries answered over all TCP connections in a turn that follows an accept. libuv (1.45 on)
 * accepts one connection per turn of the loop, so while connections wait in the kernel's accept
 * queue the loop must turn as fast as it can: with full turns of pipelined work, a burst of
 * connects drained at about 1,500 a second and a new client waited behind it for up to 1.6 s;
 * 16 queries a turn still left it 170 ms behind, 4 left 77 ms, 1 leaves 52 ms. Clients that
 * connect to ask are served at the pace they are accepted; pipeliners wait out the burst.
 */
const QUERIES_PER_TURN_ACCEPTING = 1;

/**
 * Connections the idle sweep closes per turn of the event loop. A close costs the loop a
 * close(2), which on loopback delivers the FIN to the peer in the same call (20–35 µs of CPU each):
 * a flood of connections opened within a second also falls idle within a second, and closing
 * the ~1,000 of them in one sweep took ~20 ms of CPU in one turn, and longer on a shared core,
 * while UDP and every other client waited. Past this many, the sweep goes on in the next turn,
 * after the loop has polled every socket again.
 */
export const IDLE_CLOSES_PER_TURN = 16;

const EMPTY = Buffer.alloc(0);

/** A connection's own buffer for waiting bytes: one read chunk's worth (Node reads 64 KiB at most). */
const OWN_BYTES = 64 * 1024;
/** Waiting bytes up to this many are copied into a buffer of their size instead. */
const SMALL_TAIL = 4096;

/**
 * Shares the event loop among TCP connections. A connection with new bytes is answered at once,
 * one slice, while the turn's budget lasts; what remains waits for a turn, run from
 * setImmediate, which comes after the loop has polled every socket (UDP included). A turn serves
 * one slice per waiting connection while its budget lasts, first the light ones (whose bytes
 * came when the budget was spent) and then the backlogged (still holding queries after a
 * slice): a client with one query does not wait behind a round of pipeliners with thousands.
 * So a turn of the loop does at most two budgets of TCP work, whatever the clients send.
 */
class TurnScheduler {
  private light: TcpConnection[] = [];
  private backlogged: TcpConnection[] = [];
  /** Queries answered at once (in 'data' callbacks) since the last turn. */
  private spentAtOnce = 0;
  private scheduled = false;
  /** A connection was accepted since the last turn: more may be waiting in the accept queue. */
  private accepting = false;

  /** A connection was accepted: the next turns are short while accepts keep coming. */
  accepted(): void {
    this.accepting = true;
  }

  private budget(): number {
    return this.accepting ? QUERIES_PER_TURN_ACCEPTING : QUERIES_PER_TURN;
  }

  /** A connection has new bytes, room to write again, or an answer settled. */
  offer(c: TcpConnection): void {
    if (c.queued) return;
    let n = 0;
    const budget = this.budget();
    if (this.spentAtOnce < budget) {
      n = c.serve(Math.min(QUERIES_PER_SLICE, budget - this.spentAtOnce));
      this.spentAtOnce += n;
      if (n > 0) this.wake();
    }
    this.flow(c, n === 0 ? this.light : this.backlogged);
  }

  /** After a slice: read on, wait in `queue`, or wait for the client/the answers. */
  private flow(c: TcpConnection, queue: TcpConnection[]): void {
    if (c.closed) return;
    if (c.blocked()) {
      c.pauseReading();
      return;
    }
    if (c.hasQuery()) {
      c.pauseReading();
      c.queued = true;
      queue.push(c);
      this.wake();
      return;
    }
    c.resumeReading();
  }

  private wake(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.turn);
  }

  private readonly turn = (): void => {
    this.scheduled = false;
    this.spentAtOnce = 0;
    const budget = this.budget();
    this.accepting = false;
    // The queues as the turn found them: whoever is queued during it waits for the next.
    const waiting = this.light.length > 0 ? this.light.concat(this.backlogged) : this.backlogged;
    this.light = [];
    this.backlogged = [];
    let spent = 0;
    let i = 0;
    for (; i < waiting.length && spent < budget; i++) {
      const c = waiting[i] as TcpConnection;
      c.queued = false;
      if (c.closed) continue;
      spent += c.serve(Math.min(QUERIES_PER_SLICE, budget - spent));
      this.flow(c, this.backlogged);
    }
    // Those the budget did not reach keep their place, ahead of the ones served just now.
    if (i < waiting.length) this.backlogged = waiting.slice(i).concat(this.backlogged);
    if (this.light.length > 0 || this.backlogged.length > 0) this.wake();
  };
}

const scheduler = new TurnScheduler();

/** One TCP connection: its unparsed bytes, answers under way, and the flow control above. */
export class TcpConnection {
  queued = false;
  closed = false;
  /** performance.now() of the last complete query or answer written (or of the connect). */
  lastQueryAt = performance.now();
  /** Queries taken from this connection: until the first, the read timeout applies, then the idle one. */
  served = 0;
  /** Neighbours in its ConnectionTable's age order (older towards the head). */
  older: TcpConnection | undefined;
  younger: TcpConnection | undefined;
  /** Bytes received and not yet taken as queries: pending[offset..]. */
  private pending: Buffer = EMPTY;
  private offset = 0;
  /**
   * Where many bytes that wait past the 'data' callback are kept: made on first need, reused
   * while the connection keeps queries waiting, let go once it has none. Keeping Node's read
   * chunks instead (a new 64 KiB per read from a pipelining client) let each outlive scavenges
   * while its queries waited their turn: promoted, and a pipelining flood set off a full
   * collection several times a second. Queries are lent out of it (DnsRequest.own): a request
   * still under way when handling returns copies its bytes before they are written over.
   */
  private own: Buffer | undefined;
  private inflight = 0;
  /** A multi-message answer is being sent: no other answer may come between its messages. */
  private streaming = false;
  private stallTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly socket: net.Socket,
    private readonly client: ClientInfo,
    private readonly dispatcher: Dispatcher,
    private readonly limits: TcpLimits,
    private readonly onQuery: (c: TcpConnection) => void,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.append(chunk);
      scheduler.offer(this);
      this.keepLeftover();
    });
    socket.on('drain', () => {
      this.clearStall();
      scheduler.offer(this);
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.closed = true;
      this.clearStall();
    });
  }

  /** Adds a read chunk after the bytes waiting (the chunk itself when none wait). */
  private append(chunk: Buffer): void {
    if (this.pending.length === this.offset) {
      this.pending = chunk;
      this.offset = 0;
      return;
    }
    this.gather(chunk);
  }

  /** After the 'data' callback: bytes still waiting move out of Node's read chunk. */
  private keepLeftover(): void {
    if (this.pending.length === this.offset || this.closed || this.pending.buffer === this.own?.buffer) return;
    this.gather(EMPTY);
  }

  /** Moves the waiting bytes, and `chunk` after them, to the start of room of their own. */
  private gather(chunk: Buffer): void {
    const left = this.pending.length - this.offset;
    const into = this.room(left + chunk.length);
    this.pending.copy(into, 0, this.offset); // `into` may hold pending itself: copy moves as memmove does
    chunk.copy(into, left);
    this.pending = into.subarray(0, left + chunk.length);
    this.offset = 0;
  }

  /**
   * Where `n` waiting bytes go: a few (a frame sent in pieces, the tail of a read) get a buffer
   * of their size, so that a connection trickling bytes holds no more than it sent; more go
   * into the connection's own buffer, made or grown on first need.
   */
  private room(n: number): Buffer {
    if (n <= SMALL_TAIL) return Buffer.allocUnsafeSlow(n);
    if (this.own === undefined || this.own.length < n) this.own = Buffer.allocUnsafeSlow(Math.max(n, OWN_BYTES));
    return this.own;
  }

  /** No query under way, no answer unsent: closing it loses nothing but a half-sent frame. */
  isIdle(): boolean {
    return this.inflight === 0 && !this.hasQuery() && this.socket.writableLength === 0;
  }

  hasQuery(): boolean {
    const left = this.pending.length - this.offset;
    return left >= 2 && left >= 2 + this.pending.readUInt16BE(this.offset);
  }

  /** Waiting for the client to read its answers, or for answers under way. */
  blocked(): boolean {
    const s = this.socket;
    // needDrain: a write said "full", so 'drain' will come and serve this connection again.
    if (s.writableNeedDrain && s.writableLength > this.limits.pauseQueuedBytes) return true;
    return this.streaming || this.inflight >= this.limits.maxInflightPerConnection;
  }

  pauseReading(): void {
    if (!this.socket.isPaused()) this.socket.pause();
  }

  resumeReading(): void {
    if (this.socket.isPaused()) this.socket.resume();
  }

  /**
   * Answers up to `max` complete queries; returns how many it took. The answers made at once
   * leave in one write (a frame and a write request each made a third more scavenges under a
   * pipelining flood).
   */
  serve(max: number): number {
    let n = 0;
    let ready: Buffer[] | undefined;
    let bytes = 0;
    while (n < max && !this.closed && !this.atCap() && this.hasQuery() && !this.blocked()) {
      const at = this.offset;
      const len = this.pending.readUInt16BE(at);
      const msg = this.pending.subarray(at + 2, at + 2 + len);
      this.offset = at + 2 + len;
      const lent = this.pending.buffer === this.own?.buffer;
      if (this.offset === this.pending.length) {
        this.pending = EMPTY;
        this.offset = 0;
        this.own = undefined;
      }
      n++;
      this.served++;
      const out = this.dispatcher.handleStream(msg, this.client, lent);
      if (isPromise(out)) {
        this.later(out);
      } else if (isStream(out)) {
        // What is ready goes first, so answers keep the order of their queries.
        if (ready) this.write(ready, bytes);
        ready = undefined;
        bytes = 0;
        this.stream(out);
      } else if (out) {
        (ready ??= []).push(out);
        bytes += out.length + 2;
      }
    }
    if (ready) this.write(ready, bytes);
    if (n > 0) this.onQuery(this);
    this.closeIfCapped();
    return n;
  }

  private atCap(): boolean {
    const cap = this.limits.maxQueriesPerConnection;
    return cap > 0 && this.served >= cap;
  }

  /** At the query cap: no more reading, and the connection ends once every answer is written. */
  private closeIfCapped(): void {
    if (!this.atCap() || this.closed) return;
    this.pauseReading();
    if (this.inflight === 0) this.socket.end();
  }

  /** An answer still under way: written when it settles, and the connection offered again. */
  private later(out: Promise<Buffer | MessageStream | undefined>): void {
    this.inflight++;
    const settle = (answer: Buffer | MessageStream | undefined): void => {
      this.inflight--;
      if (isStream(answer)) return this.stream(answer);
      if (answer) {
        this.write([answer], answer.length + 2);
        // Idleness counts from the answer too: a slow upstream does not eat the client's idle time.
        if (!this.closed) this.onQuery(this);
      }
      this.closeIfCapped();
      if (!this.closed) scheduler.offer(this);
    };
    out.then(settle, () => settle(undefined));
  }

  /**
   * Sends the messages of a multi-message answer (a zone transfer) one frame at a time, each
   * made only once the socket has taken the one before: a zone of any size holds one message in
   * memory, not the whole transfer. The connection takes no other query meanwhile (blocked()),
   * and is closed when the client stops reading for stalledTimeoutMs.
   */
  private stream(s: MessageStream): void {
    this.inflight++;
    this.streaming = true;
    const rest = s.rest[Symbol.iterator]();
    const done = (): void => {
      this.inflight--;
      this.streaming = false;
      this.closeIfCapped();
      if (!this.closed) scheduler.offer(this);
    };
    const pump = (): void => {
      while (!this.closed) {
        let item: IteratorResult<Buffer>;
        try {
          item = rest.next();
        } catch {
          // A message that cannot be made ends the transfer: the client sees no closing SOA.
          this.socket.destroy();
          break;
        }
        if (item.done) break;
        this.write([item.value], item.value.length + 2);
        if (this.socket.writableNeedDrain) {
          // write() started the write timeout for what is unsent; 'drain' goes on with the rest.
          this.socket.once('drain', pump);
          return;
        }
      }
      done();
    };
    this.write([s.first], s.first.length + 2);
    pump();
  }

  /** Frames `answers` (`bytes` in all, prefixes included) into one buffer and writes it. */
  private write(answers: readonly Buffer[], bytes: number): void {
    if (this.closed) return;
    const frames = Buffer.allocUnsafe(bytes);
    let p = 0;
    for (const a of answers) {
      frames.writeUInt16BE(a.length, p);
      a.copy(frames, p + 2);
      p += a.length + 2;
    }
    const s = this.socket;
    s.write(frames);
    if (s.writableLength > this.limits.maxQueuedBytes) s.destroy();
    else if (s.writableLength > 0) this.watchUnsent();
  }

  /**
   * Answers the kernel would not take (the client does not read) must leave within the write
   * timeout, as each write must finish within Go's write deadline: what was unsent when the
   * timer started has to be out when it fires, or the connection goes. Later answers get a
   * timer of their own; 'drain' clears it.
   */
  private watchUnsent(): void {
    if (this.stallTimer !== undefined) return;
    const s = this.socket;
    const flushed = (): number => s.bytesWritten - s.writableLength;
    const mustReach = s.bytesWritten;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      if (flushed() < mustReach) s.destroy();
      else if (s.writableLength > 0) this.watchUnsent();
    }, this.limits.stalledTimeoutMs);
  }

  private clearStall(): void {
    if (this.stallTimer === undefined) return;
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }
}

function isStream(out: Buffer | MessageStream | undefined): out is MessageStream {
  return out !== undefined && !Buffer.isBuffer(out);
}

/**
 * Room in the process's descriptor table for the connections its listeners may hold. Linux grows
 * a process's table when a new descriptor does not fit (to the next power of two), and in a
 * process with threads (Node always has some) each growth waits for an RCU grace period while
 * any thread that allocates a descriptor waits with it: under a connect flood the event loop
 * slept 10–30 ms inside accept(2) each time the open descriptors crossed 256, 512, 1,024 and
 * 2,048 (expand_fdtable → synchronize_rcu), with UDP and every new client waiting. So a listener
 * grows the table as soon as it opens, by opening /dev/null from libuv's threadpool (the waits
 * fall on its threads, not on the loop) up to the descriptor its cap implies, and closing them:
 * the kernel never shrinks a table.
 */
class DescriptorRoom {
  /** Connections the open listeners may hold together. */
  private wanted = 0;
  private growth: Promise<void> = Promise.resolve();

  reserve(connections: number): void {
    this.wanted += connections;
    const wanted = this.wanted;
    this.growth = this.growth.then(() => this.grow(wanted));
  }

  release(connections: number): void {
    this.wanted -= connections;
  }

  /** Resolves once the growth asked so far is done. */
  grown(): Promise<void> {
    return this.growth;
  }

  private async grow(connections: number): Promise<void> {
    if (process.platform !== 'linux') return;
    const held: number[] = [];
    try {
      const first = await openNull();
      held.push(first);
      const target = Math.min(first + connections + DESCRIPTOR_SLACK, openFileLimit() - LIMIT_HEADROOM);
      // The table has room already (it grows by doubling): nothing to open.
      if (target < descriptorTableSize()) return;
      let highest = first;
      while (highest < target) {
        const batch = await Promise.allSettled(Array.from({ length: Math.min(OPENS_AT_ONCE, target - highest) }, openNull));
        for (const r of batch) {
          if (r.status !== 'fulfilled') continue;
          held.push(r.value);
          highest = Math.max(highest, r.value);
        }
        // EMFILE or any other refusal: as much room as the process may have.
        if (batch.some((r) => r.status === 'rejected')) break;
      }
    } catch {
      // No /dev/null, no descriptor to spare: the table grows on demand, as without this.
    } finally {
      await Promise.all(held.map((fd) => new Promise<void>((done) => close(fd, () => done()))));
    }
  }
}

/** Descriptors beyond the connections: the listeners themselves, timers' and upstreams' sockets. */
const DESCRIPTOR_SLACK = 64;
/** Left unopened below the open-file limit while the table grows, for whatever else opens then. */
const LIMIT_HEADROOM = 128;
/** /dev/null opens in flight at once while the table grows (libuv's threadpool runs four). */
const OPENS_AT_ONCE = 32;

function openNull(): Promise<number> {
  return new Promise((resolve, reject) => open('/dev/null', 'r', (err, fd) => (err ? reject(err) : resolve(fd))));
}

/** Entries in the process's descriptor table (FDSize in /proc/self/status); 0 when unknown. */
function descriptorTableSize(): number {
  try {
    const size = Number(/^FDSize:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1]);
    return Number.isFinite(size) ? size : 0;
  } catch {
    return 0;
  }
}

/** The soft limit on open files (/proc/self/limits); unbounded when it cannot be read. */
function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'latin1')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s+/)[3]);
    return Number.isFinite(soft) ? soft : Infinity;
  } catch {
    return Infinity;
  }
}

const descriptorRoom = new DescriptorRoom();

/** Resolves once the descriptor table holds room for every open listener's connection cap. */
export function descriptorTableGrown(): Promise<void> {
  return descriptorRoom.grown();
}

/**
 * The open connections of one listener, oldest complete query first: the idle-timeout sweep
 * and the choice of whom to close at the cap both read from the front. A list linked through
 * the connections themselves: moving one to the young end on every query allocates nothing
 * (as a Set it cost a deletion each time, and the Set's rebuilt tables were most of what a
 * pipelining flood made the collector promote).
 */
export class ConnectionTable {
  private oldest: TcpConnection | undefined;
  private youngest: TcpConnection | undefined;
  private count = 0;
  /**
   * Admitted in this turn of the loop: not read yet, so not known to be idle. A burst of
   * connections accepted in one go must not close a client whose query is already waiting.
   */
  private readonly fresh = new Set<TcpConnection>();
  private readonly sweeper: NodeJS.Timeout;
  /** The sweep stopped at IDLE_CLOSES_PER_TURN and goes on in the next turn. */
  private sweepContinues = false;
  private closedAll = false;

  constructor(private readonly limits: TcpLimits) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(10, Math.min(1000, Math.min(limits.readTimeoutMs, limits.idleTimeoutMs) / 4)));
    this.sweeper.unref();
    descriptorRoom.reserve(limits.maxConnections);
  }

  get size(): number {
    return this.count;
  }

  /** Takes a new connection, making room at the cap; false when it had to be refused. */
  admit(c: TcpConnection): boolean {
    scheduler.accepted();
    if (this.count >= this.limits.maxConnections) {
      const idlest = this.idlest();
      if (!idlest) return false;
      this.drop(idlest);
    }
    this.append(c);
    if (this.fresh.size === 0) setImmediate(() => this.fresh.clear());
    this.fresh.add(c);
    c.socket.on('close', () => {
      this.unlink(c);
      this.fresh.delete(c);
    });
    return true;
  }

  /** A connection completed a query: it moves to the young end. */
  touch(c: TcpConnection): void {
    c.lastQueryAt = performance.now();
    if (this.youngest === c || !this.unlink(c)) return;
    this.append(c);
  }

  /**
   * Some connection has a query under way or an answer unsent, or was accepted or asked within
   * `recentMs` (its query may still be on its way: the kernel has it, kdns has not read it).
   */
  busy(recentMs: number): boolean {
    const since = performance.now() - recentMs;
    for (let c = this.oldest; c !== undefined; c = c.younger) if (!c.isIdle() || c.lastQueryAt > since) return true;
    return false;
  }

  closeAll(): void {
    if (!this.closedAll) descriptorRoom.release(this.limits.maxConnections);
    this.closedAll = true;
    clearInterval(this.sweeper);
    for (let c = this.oldest; c !== undefined; ) {
      const next = c.younger;
      this.unlink(c);
      c.socket.destroy();
      c = next;
    }
    this.fresh.clear();
  }

  private append(c: TcpConnection): void {
    c.older = this.youngest;
    c.younger = undefined;
    if (this.youngest) this.youngest.younger = c;
    else this.oldest = c;
    this.youngest = c;
    this.count++;
  }

  /** Takes `c` out of the order; false when it was not in it. */
  private unlink(c: TcpConnection): boolean {
    if (c.older === undefined && this.oldest !== c) return false;
    if (c.older) c.older.younger = c.younger;
    else this.oldest = c.younger;
    if (c.younger) c.younger.older = c.older;
    else this.youngest = c.older;
    c.older = undefined;
    c.younger = undefined;
    this.count--;
    return true;
  }

  private idlest(): TcpConnection | undefined {
    for (let c = this.oldest; c !== undefined; c = c.younger) if (c.isIdle() && !this.fresh.has(c)) return c;
    return undefined;
  }

  private drop(c: TcpConnection): void {
    this.unlink(c);
    c.socket.destroy();
  }

  /**
   * Closes the connections past their timeout — the read timeout for one that has sent no query
   * yet, the idle timeout after — IDLE_CLOSES_PER_TURN per turn of the loop.
   */
  private closeIdle(): void {
    if (this.sweepContinues || this.closedAll) return;
    const now = performance.now();
    const { readTimeoutMs, idleTimeoutMs } = this.limits;
    // The list is in lastQueryAt order: past the shorter timeout's line nobody is due.
    const line = now - Math.min(readTimeoutMs, idleTimeoutMs);
    let closed = 0;
    for (let c = this.oldest; c !== undefined; ) {
      if (c.lastQueryAt > line) return;
      const next = c.younger;
      const due = c.lastQueryAt <= now - (c.served === 0 ? readTimeoutMs : idleTimeoutMs);
      // An answer still under way is not idleness; the stall timer watches unsent answers.
      if (due && c.isIdle()) {
        if (closed === IDLE_CLOSES_PER_TURN) {
          this.sweepContinues = true;
          setImmediate(() => {
            this.sweepContinues = false;
            this.closeIdle();
          });
          return;
        }
        this.drop(c);
        closed++;
      }
      c = next;
    }
  }
}
