// Frame Streams (fstrm), the transport of dnstap, as a writer in bidirectional mode: on each
// connection READY (with the content type) → the reader's ACCEPT → START, then data frames
// (a 32-bit big-endian length and the payload), and STOP → the reader's FINISH when closing.
// Control frames are an escape (a zero length), their own length, a type and fields.
//
// Frames wait in a bounded queue while there is no connection, and are dropped beyond it (the
// log says how many, every 10 s), so a dead collector never holds queries up or memory growing.

import net from 'node:net';
import type { Logger } from '../../server/log.js';

export const CONTENT_TYPE = 'protobuf:dnstap.Dnstap';

export const Control = { ACCEPT: 1, START: 2, STOP: 3, READY: 4, FINISH: 5 } as const;
const FIELD_CONTENT_TYPE = 1;

/** A control frame of `type`, with the content type field when given. */
export function controlFrame(type: number, contentType?: string): Buffer {
  const ct = contentType === undefined ? Buffer.alloc(0) : Buffer.from(contentType);
  const fields = contentType === undefined ? 0 : 8 + ct.length;
  const out = Buffer.alloc(12 + fields);
  out.writeUInt32BE(0, 0); // escape: a control frame follows
  out.writeUInt32BE(4 + fields, 4);
  out.writeUInt32BE(type, 8);
  if (contentType !== undefined) {
    out.writeUInt32BE(FIELD_CONTENT_TYPE, 12);
    out.writeUInt32BE(ct.length, 16);
    ct.copy(out, 20);
  }
  return out;
}

/** A data frame. */
export function dataFrame(payload: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(payload.length);
  return Buffer.concat([len, payload]);
}

/**
 * Reads control frames from `buf`: the parsed ones (type, content types) and the bytes left.
 * A reader sends only control frames to a writer.
 */
export function readControlFrames(buf: Buffer): { frames: Array<{ type: number; contentTypes: string[] }>; rest: Buffer } {
  const frames: Array<{ type: number; contentTypes: string[] }> = [];
  let at = 0;
  while (buf.length - at >= 8) {
    if (buf.readUInt32BE(at) !== 0) throw new Error('fstrm: a reader sent a data frame');
    const len = buf.readUInt32BE(at + 4);
    if (len < 4 || len > 512) throw new Error(`fstrm: control frame of ${len} bytes`);
    if (buf.length - at < 8 + len) break;
    const type = buf.readUInt32BE(at + 8);
    const contentTypes: string[] = [];
    let f = at + 12;
    const end = at + 8 + len;
    while (end - f >= 8) {
      const field = buf.readUInt32BE(f);
      const flen = buf.readUInt32BE(f + 4);
      if (f + 8 + flen > end) throw new Error('fstrm: control field past its frame');
      if (field === FIELD_CONTENT_TYPE) contentTypes.push(buf.toString('latin1', f + 8, f + 8 + flen));
      f += 8 + flen;
    }
    frames.push({ type, contentTypes });
    at = end;
  }
  return { frames, rest: buf.subarray(at) };
}

export type Endpoint = { kind: 'unix'; path: string } | { kind: 'tcp'; host: string; port: number };

export interface WriterOptions {
  /** Frames kept while not connected; beyond, new ones are dropped. */
  queueLimit: number;
  /** Wait before connecting again after a failure. */
  retryMs: number;
  /** Give up a connect or a handshake after this long. */
  timeoutMs: number;
}

export const DEFAULT_WRITER_OPTIONS: WriterOptions = { queueLimit: 10_000, retryMs: 2_000, timeoutMs: 4_000 };

export class FrameStreamWriter {
  private socket: net.Socket | undefined;
  /** START sent: data frames may go. */
  private started = false;
  private queue: Buffer[] = [];
  private dropped = 0;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly dropReport: NodeJS.Timeout;

  constructor(
    readonly endpoint: Endpoint,
    private readonly log: Logger,
    private readonly opts: WriterOptions = DEFAULT_WRITER_OPTIONS,
  ) {
    this.dropReport = setInterval(() => this.reportDrops(), 10_000);
    this.dropReport.unref();
  }

  /** Where frames go, for messages. */
  get description(): string {
    return this.endpoint.kind === 'unix' ? `unix://${this.endpoint.path}` : `tcp://${this.endpoint.host}:${this.endpoint.port}`;
  }

  connect(): void {
    if (this.closed || this.socket) return;
    const s = this.endpoint.kind === 'unix' ? net.connect(this.endpoint.path) : net.connect(this.endpoint.port, this.endpoint.host);
    this.socket = s;
    s.setTimeout(this.opts.timeoutMs, () => s.destroy(new Error('timed out')));
    let pending: Buffer = Buffer.alloc(0);
    s.on('connect', () => s.write(controlFrame(Control.READY, CONTENT_TYPE)));
    s.on('data', (chunk: Buffer) => {
      try {
        const { frames, rest } = readControlFrames(Buffer.concat([pending, chunk]));
        pending = rest;
        for (const f of frames) this.onControl(s, f);
      } catch (e) {
        s.destroy(e as Error);
      }
    });
    s.on('error', (e) => {
      if (!this.closed) this.log.warn(`dnstap: ${this.description}: ${e.message}`);
    });
    s.on('close', () => {
      if (this.socket === s) {
        this.socket = undefined;
        this.started = false;
      }
      if (!this.closed) this.retry = setTimeout(() => this.connect(), this.opts.retryMs);
    });
  }

  private onControl(s: net.Socket, f: { type: number; contentTypes: string[] }): void {
    if (f.type === Control.ACCEPT && !this.started) {
      if (f.contentTypes.length > 0 && !f.contentTypes.includes(CONTENT_TYPE)) {
        s.destroy(new Error(`reader does not accept ${CONTENT_TYPE}`));
        return;
      }
      s.write(controlFrame(Control.START, CONTENT_TYPE));
      s.setTimeout(0);
      this.started = true;
      this.flush();
    } else if (f.type === Control.FINISH) {
      s.end();
    }
  }

  /** Sends a dnstap payload now, or queues it until connected (dropped when the queue is full). */
  write(payload: Buffer): void {
    if (this.closed) return;
    const frame = dataFrame(payload);
    const s = this.socket;
    if (this.started && s && this.queue.length === 0 && !s.writableNeedDrain) {
      // Once the socket says "full", frames queue (bounded) until it drains.
      if (!s.write(frame)) s.once('drain', () => this.flush());
      return;
    }
    if (this.queue.length >= this.opts.queueLimit) {
      this.dropped++;
      return;
    }
    this.queue.push(frame);
  }

  private flush(): void {
    const s = this.socket;
    if (!s || !this.started) return;
    while (this.queue.length > 0) {
      const ok = s.write(this.queue.shift() as Buffer);
      if (!ok) {
        s.once('drain', () => this.flush());
        return;
      }
    }
  }

  private reportDrops(): void {
    if (this.dropped === 0) return;
    this.log.warn(`dnstap: dropped ${this.dropped} messages: ${this.description} is not taking them`);
    this.dropped = 0;
  }

  /** Sends what is queued and STOP, waits briefly for FINISH, and closes. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.dropReport);
    this.reportDrops();
    const s = this.socket;
    if (!s) return;
    if (this.started) {
      this.flush();
      s.write(controlFrame(Control.STOP));
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        s.destroy();
        resolve();
      }, 1000);
      s.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (!this.started) s.destroy();
    });
  }
}
