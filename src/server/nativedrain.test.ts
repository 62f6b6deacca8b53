// A native UDP listener handed over to a successor (drain) answers every query already queued
// in its socket before it closes, however long the process was kept from running meanwhile.
// Found with scripts/nodecache-swap.mjs at a load average of 17: a node cache's leaving worker
// closed with queries unread, because its quiet check (a timer) ran before the poll that would
// have read them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nativeUdp, type NativeSocket, type NativeUdp } from '../lib/native/udp.js';
import { listenUdpNative } from './nativeudp.js';
import type { Dispatcher } from './dispatch.js';

/** Answers every query at once with itself, QR set: enough to count replies. */
const echo = {
  handle(msg: Buffer): Buffer {
    const out = Buffer.from(msg);
    out[2] = (out[2] ?? 0) | 0x80;
    return out;
  },
} as unknown as Dispatcher;

function sockaddr4(port: number): Buffer {
  const sa = Buffer.alloc(16);
  sa.writeUInt16LE(2, 0); // AF_INET
  sa.writeUInt16BE(port, 2);
  sa.writeUInt32BE(0x7f000001, 4);
  return sa;
}

function query(id: number): Buffer {
  const q = Buffer.from('0000010000010000000000000161076578616d706c650000010001', 'hex');
  q.writeUInt16BE(id, 0);
  return q;
}

/** A client socket on the addon itself: its sends are system calls made before the call returns. */
function client(addon: NativeUdp): { socket: NativeSocket; replies: () => number } {
  let replies = 0;
  const buffers = [addon.BATCH * addon.SLOT, addon.BATCH * addon.META, addon.BATCH * addon.SLOT, addon.BATCH * 8].map((n) => Buffer.alloc(n));
  const [rx, meta, tx, txmeta] = buffers as [Buffer, Buffer, Buffer, Buffer];
  const socket = addon.open(4, '127.0.0.1', 0, rx, meta, tx, txmeta, (count) => {
    if (count > 0) replies += count;
  });
  return { socket, replies: () => replies };
}

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const cases = [
  { name: 'queued before the hand-over, process busy for 3× the quiet spell', queued: 20, busyMs: 150 },
  { name: 'queued before the hand-over, process not held up', queued: 20, busyMs: 0 },
  { name: 'a full batch and more queued, process busy', queued: 200, busyMs: 150 },
];

for (const c of cases) {
  test(`drain answers what is queued: ${c.name}`, async (t) => {
    const addon = nativeUdp();
    if (!addon) {
      assert.notEqual(process.env.CI, 'true', 'CI needs the native UDP socket (npm run build:native)');
      t.diagnostic('native UDP socket not built');
      return;
    }
    const listener = listenUdpNative(addon, '127.0.0.1', 0, '127.0.0.1', echo);
    const { socket, replies } = client(addon);
    try {
      const to = sockaddr4(listener.port);
      // From the check phase, as a signal handler's work runs: the event loop's next step is its
      // timers, then the poll (started from a timer, the same turn may poll first).
      await new Promise((r) => setImmediate(r));
      for (let i = 0; i < c.queued; i++) assert.equal(addon.sendTo(socket, query(i), to), 0);
      const drained = listener.drain();
      busy(c.busyMs);
      await drained;
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(replies(), c.queued);
    } finally {
      addon.close(socket);
      await listener.close();
    }
  });
}
