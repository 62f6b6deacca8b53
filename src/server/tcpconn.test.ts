// The TCP connection limits on real sockets: pipelining in bulk, clients that do not read,
// idle and half-frame connections, and the connection cap.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { answers, dig } from '../testutil/dig.js';
import { sleep, waitFor } from '../testutil/net.js';
import { startTestServer, type TestServer } from '../testutil/server.js';
import { queryBytes } from '../testutil/tcpabuse.js';

const COREFILE = `example.org:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        10.0.0.1 a.example.org\n    }\n}\n`;

function framedQueries(count: number): Buffer {
  return Buffer.concat(
    Array.from({ length: count }, (_, id) => {
      const q = queryBytes('a.example.org', id);
      const f = Buffer.alloc(q.length + 2);
      f.writeUInt16BE(q.length, 0);
      q.copy(f, 2);
      return f;
    }),
  );
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
}

/** Resolves when the server closes `s` (end or reset). */
function closedByServer(s: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    if (s.destroyed) return resolve();
    s.once('close', () => resolve());
    s.once('end', () => resolve());
  });
}

/** `p`, or a failure saying `what` when it takes longer than `ms`. */
async function within(p: Promise<void>, ms: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

const isOpen = (s: net.Socket): boolean => !s.destroyed && s.readable;

describe('TCP connections', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(COREFILE, { tcpLimits: { idleTimeoutMs: 600, stalledTimeoutMs: 2000, maxConnections: 6 } });
  });
  after(() => s.stop());

  test('thousands of queries in one write are all answered, in turns', { timeout: 30_000 }, async () => {
    const count = 5000;
    const c = await connect(s.port);
    const ids = new Set<number>();
    let buf = Buffer.alloc(0);
    const done = new Promise<void>((resolve, reject) => {
      c.once('close', () => reject(new Error(`closed after ${ids.size} answers`)));
      c.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          ids.add(buf.readUInt16BE(2));
          buf = buf.subarray(2 + buf.readUInt16BE(0));
        }
        if (ids.size === count) resolve();
      });
    });
    c.write(framedQueries(count));
    await done;
    c.destroy();
    assert.equal(ids.size, count);
  });

  test('a client that never reads is paused, then closed; others are answered meanwhile', { timeout: 30_000 }, async () => {
    const abuser = await connect(s.port);
    abuser.pause();
    const closed = closedByServer(abuser);
    const block = framedQueries(2000);
    const pump = (): void => {
      while (!abuser.destroyed && abuser.write(block));
      if (!abuser.destroyed) abuser.once('drain', pump);
    };
    pump();
    assert.deepEqual(answers(await dig('a.example.org', 'A', { port: s.port, args: ['+tcp'] })), ['A 10.0.0.1']);
    await within(closed, 30_000, 'the non-reading client was not closed');
    abuser.destroy();
  });

  const idleCases: Array<{ what: string; send: (c: net.Socket) => void }> = [
    { what: 'a connection that sends nothing', send: () => undefined },
    { what: 'a connection stuck half-way through a length prefix', send: (c) => c.write(Buffer.from([0])) },
    {
      what: 'a connection trickling a frame one byte at a time',
      send: (c) => {
        c.write(Buffer.from([0, 200]));
        const t = setInterval(() => (c.destroyed ? clearInterval(t) : c.write(Buffer.from([0]))), 150);
      },
    },
  ];
  for (const c of idleCases) {
    test(`idle timeout closes ${c.what}`, { timeout: 30_000 }, async () => {
      const conn = await connect(s.port);
      conn.on('error', () => undefined);
      c.send(conn);
      const started = Date.now();
      await within(closedByServer(conn), 10_000, 'not closed');
      assert.ok(Date.now() - started >= 500, `closed after ${Date.now() - started} ms, before the 600 ms idle timeout`);
      conn.destroy();
    });
  }
});

describe('TCP connection cap', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(COREFILE, { tcpLimits: { maxConnections: 6 } });
  });
  after(() => s.stop());

  test('a new client closes the connection idle for longest and is answered', { timeout: 30_000 }, async () => {
    const held: net.Socket[] = [];
    for (let i = 0; i < 6; i++) {
      const c = await connect(s.port);
      c.on('error', () => undefined);
      held.push(c);
      await sleep(20);
    }
    held[1]!.write(Buffer.from([0])); // half a frame: still idle
    held[0]!.write(framedQueries(1)); // the first one asks: now the youngest
    await sleep(100);
    assert.deepEqual(answers(await dig('a.example.org', 'A', { port: s.port, args: ['+tcp'] })), ['A 10.0.0.1']);
    await waitFor(() => !isOpen(held[1]!), 2000);
    assert.deepEqual(held.map(isOpen), [true, false, true, true, true, true]);
    for (const c of held) c.destroy();
  });
});
