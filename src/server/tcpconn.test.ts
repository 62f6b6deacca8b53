// The TCP connection limits on real sockets: pipelining in bulk, clients that do not read,
// idle and half-frame connections, and the connection cap.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { withFileLimit } from '../../test/util/kdns.js';
import { answers, dig } from '../../test/util/dig.js';
import { freePort, sleep, waitFor } from '../../test/util/net.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { queryBytes } from '../../test/util/tcpabuse.js';
import { IDLE_CLOSES_PER_TURN } from './tcpconn.js';
import { exampleZone, missing, namedUpstream, truncatingUpstream, type NamedUpstream, type Scripted } from '../../test/util/upstream.js';
import { decodeMessage } from '../lib/dns/codec.js';

const COREFILE = `example.org:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        10.0.0.1 a.example.org\n    }\n}\n`;

function framedQueries(count: number, name = 'a.example.org'): Buffer {
  return framedQueryList(Array.from({ length: count }, () => name), 0);
}

/** One framed query per name, IDs counting from `firstId`. */
function framedQueryList(names: readonly string[], firstId: number): Buffer {
  return Buffer.concat(
    names.map((name, i) => {
      const q = queryBytes(name, firstId + i);
      const f = Buffer.alloc(q.length + 2);
      f.writeUInt16BE(q.length, 0);
      q.copy(f, 2);
      return f;
    }),
  );
}

/** ID and question name (lower case, no final dot) of each answer `c` receives, until `count`. */
function answeredQuestions(c: net.Socket, count: number): { answers: Array<{ id: number; name: string }>; done: Promise<void> } {
  const got: Array<{ id: number; name: string }> = [];
  let buf = Buffer.alloc(0);
  const done = new Promise<void>((resolve, reject) => {
    c.once('close', () => reject(new Error(`closed after ${got.length} answers`)));
    c.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const m = decodeMessage(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        got.push({ id: m.id, name: (m.questions[0]?.name ?? '').replace(/\.$/, '').toLowerCase() });
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (got.length >= count) resolve();
    });
  });
  return { answers: got, done };
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
    const { answers, done } = answeredQuestions(c, count);
    c.write(framedQueries(count));
    await done;
    c.destroy();
    assert.equal(new Set(answers.map((a) => a.id)).size, count);
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

/**
 * Counts, for each turn of this process's event loop, the `what` events of `sockets`: the server
 * runs in this process too, so the closes it makes in one turn reach the clients together in the
 * next poll. Returns the per-turn counts and a stop function.
 */
function perTurn(sockets: readonly net.Socket[], what: 'end'): { counts: Map<number, number>; stop: () => void } {
  let turn = 0;
  let running = true;
  const tick = (): void => {
    turn++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const counts = new Map<number, number>();
  for (const s of sockets) s.once(what, () => counts.set(turn, (counts.get(turn) ?? 0) + 1));
  return { counts, stop: () => void (running = false) };
}

describe('TCP idle sweep', () => {
  let s: TestServer;
  // A sweep every 500 ms: connections opened within it fall idle in the same sweep.
  before(async () => {
    s = await startTestServer(COREFILE, { tcpLimits: { idleTimeoutMs: 2000, maxConnections: 1000 } });
  });
  after(() => s.stop());

  test(`connections that fall idle together are closed ${IDLE_CLOSES_PER_TURN} per turn, not all in one`, { timeout: 30_000 }, async () => {
    const count = 200;
    const held = await Promise.all(Array.from({ length: count }, () => connect(s.port)));
    for (const c of held) {
      c.on('error', () => undefined);
      c.resume();
    }
    const ends = perTurn(held, 'end');
    await waitFor(() => held.every((c) => c.readableEnded), 15_000);
    ends.stop();
    for (const c of held) c.destroy();
    const total = [...ends.counts.values()].reduce((a, b) => a + b, 0);
    const most = Math.max(...ends.counts.values());
    assert.equal(total, count);
    // The sweep's own turn and the one it continues in land in one poll of the clients.
    assert.ok(most <= 2 * IDLE_CLOSES_PER_TURN, `${most} of ${count} connections closed in one turn`);
  });
});

/**
 * In a process of its own (a new, small descriptor table): opens a TCP listener with a cap of
 * `maxConnections`, waits for the table to grow, and reports the table's size (FDSize) and the
 * open descriptors before and after.
 */
async function descriptorTableAround(maxConnections: number): Promise<{ before: { size: number; open: number }; after: { size: number; open: number } }> {
  const listeners = new URL('./listeners.ts', import.meta.url).href;
  const tcpconn = new URL('./tcpconn.ts', import.meta.url).href;
  const code = `
    import { readFileSync, readdirSync } from 'node:fs';
    const { listenTcp, DEFAULT_TCP_LIMITS } = await import(${JSON.stringify(listeners)});
    const { descriptorTableGrown } = await import(${JSON.stringify(tcpconn)});
    const table = () => ({ size: Number(/FDSize:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'latin1'))[1]), open: readdirSync('/proc/self/fd').length });
    const before = table();
    const listener = await listenTcp('127.0.0.1', 0, { handle: () => undefined }, { ...DEFAULT_TCP_LIMITS, maxConnections: ${maxConnections} });
    await descriptorTableGrown();
    const after = table();
    await listener.close();
    console.log(JSON.stringify({ before, after }));
  `;
  const [cmd, argv] = withFileLimit(8192, ['--import', 'tsx', '--input-type=module', '-e', code]);
  const { stdout } = await promisify(execFile)(cmd, argv, { timeout: 30_000 });
  return JSON.parse(stdout) as { before: { size: number; open: number }; after: { size: number; open: number } };
}

describe('TCP descriptor table', { skip: process.platform !== 'linux' && 'the descriptor table is read from /proc (Linux)' }, () => {
  // Linux grows a threaded process's table with an RCU wait that stopped the loop inside
  // accept(2) for 10–30 ms at each power of two a connect flood crossed; a listener grows it
  // for its cap at once, off the loop.
  test('a listener grows the table to hold its connection cap, and closes what it opened to do so', { timeout: 60_000 }, async () => {
    const t = await descriptorTableAround(3000);
    assert.ok(t.before.size <= 256, `a new process starts with a small table: ${JSON.stringify(t)}`);
    assert.equal(t.after.size, 4096);
    // The listening socket and what the listener itself needs; none of the /dev/null opens.
    assert.ok(t.after.open - t.before.open <= 4, `descriptors left open: ${JSON.stringify(t)}`);
  });
});

/** A client that pipelines queries without end and reads its answers; counts them. */
function readingPipeliner(port: number): { answered: () => number; stop: () => void } {
  let answered = 0;
  let buf: Buffer = Buffer.alloc(0);
  const block = framedQueries(2000);
  const c = net.connect(port, '127.0.0.1');
  c.on('error', () => undefined);
  c.on('data', (d: Buffer) => {
    buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      answered++;
      buf = buf.subarray(2 + buf.readUInt16BE(0));
    }
  });
  const pump = (): void => {
    while (!c.destroyed && c.write(block));
    if (!c.destroyed) c.once('drain', pump);
  };
  c.once('connect', pump);
  return { answered: () => answered, stop: () => c.destroy() };
}

/** Opens `count` connections that each ask once; resolves when all are answered. */
function burstOfClients(port: number, count: number): Promise<void> {
  const query = framedQueries(1);
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve, reject) => {
          const c = net.connect(port, '127.0.0.1', () => c.write(query));
          c.on('error', reject);
          c.once('data', () => {
            c.destroy();
            resolve();
          });
        }),
    ),
  ).then(() => undefined);
}

describe('TCP accept under pipelined load', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(COREFILE);
  });
  after(() => s.stop());

  // The connections reach the kernel's accept queue together (the loop is held while their
  // handshakes complete); the server accepts one per turn of its loop, so what counts is how
  // much pipelined work it does per turn while the queue drains: few answers per accept.
  const cases = [
    { pipeliners: 4, burst: 100, maxPipelinedPerAccept: 8 },
    { pipeliners: 8, burst: 100, maxPipelinedPerAccept: 8 },
  ];
  for (const c of cases) {
    test(`${c.burst} connections at once beside ${c.pipeliners} pipeliner(s) are accepted in short turns`, { timeout: 60_000 }, async () => {
      const pipes = Array.from({ length: c.pipeliners }, () => readingPipeliner(s.port));
      const total = (): number => pipes.reduce((n, p) => n + p.answered(), 0);
      try {
        await waitFor(() => pipes.every((p) => p.answered() > 2000), 20_000);
        const before = total();
        const answered = burstOfClients(s.port, c.burst);
        // Hold the loop after the connects are issued, so they all wait in the accept queue.
        process.nextTick(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300));
        await answered;
        const perAccept = (total() - before) / c.burst;
        assert.ok(perAccept < c.maxPipelinedPerAccept, `${perAccept.toFixed(0)} pipelined answers per accepted connection`);
      } finally {
        for (const p of pipes) p.stop();
      }
    });
  }
});

describe('TCP framing across reads', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(COREFILE);
  });
  after(() => s.stop());

  // Each case writes the same framed queries cut at the given offsets, each piece its own
  // write a little after the last (so each tends to arrive as its own read): bytes that wait
  // past a read are kept by the connection and joined with the next read.
  const frames = framedQueries(40);
  const frameLength = frames.readUInt16BE(0) + 2;
  const cases: Array<{ what: string; cuts: number[] }> = [
    { what: 'all in one write (more than one slice waits past the read)', cuts: [] },
    { what: 'a length prefix split between reads', cuts: [1, frameLength + 1] },
    { what: 'a frame split three ways', cuts: [5, 20] },
    { what: 'every cut in the middle of a frame, leftovers each time', cuts: [frameLength * 17 + 3, frameLength * 18 + 1, frameLength * 30 + 7] },
    { what: 'one byte at a time for the first two frames', cuts: Array.from({ length: frameLength * 2 }, (_, i) => i + 1) },
  ];
  for (const c of cases) {
    test(`every query answered once: ${c.what}`, { timeout: 30_000 }, async () => {
      const conn = await connect(s.port);
      const { answers, done } = answeredQuestions(conn, 40);
      let from = 0;
      for (const cut of [...c.cuts, frames.length]) {
        conn.write(frames.subarray(from, cut));
        from = cut;
        await sleep(2);
      }
      await done;
      conn.destroy();
      assert.deepEqual(answers.map((a) => a.id).sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i));
    });
  }
});

describe('TCP query bytes outlive the read they came in', { skip: missing('named', 'bind9') }, () => {
  // A connection reuses the buffer its waiting queries are read from; a query whose answer is
  // still under way when the next read lands there must keep its bytes. Here forward (prefer_udp)
  // gets a truncated UDP reply late and asks again over TCP with the query's bytes, by then
  // written over by later reads if they were not copied: the client would get another
  // question's answer.
  let named: NamedUpstream;
  let tc: Scripted;
  let server: TestServer;
  before(async () => {
    named = namedUpstream({ zones: { 'example.test': exampleZone() }, port: await freePort() });
    await named.start();
    tc = await truncatingUpstream(named.port, 300);
    server = await startTestServer(`.:{PORT} {\n  bind 127.0.0.1\n  forward . 127.0.0.1:${tc.port} {\n    prefer_udp\n  }\n}\n`);
  });
  after(async () => {
    await server.stop();
    await tc.close();
    await named.dispose();
  });

  test('each answer is for the question asked while the connection reads on', { timeout: 30_000 }, async () => {
    const batches = 3;
    const perBatch = 120; // more than a slice and than SMALL_TAIL bytes: the rest waits in the reused buffer
    const nameOf = (id: number): string => `q${id}.batch${Math.floor(id / perBatch)}.wild.example.test`;
    const frames = Array.from({ length: batches }, (_, b) => framedQueryList(Array.from({ length: perBatch }, (_, i) => nameOf(b * perBatch + i)), b * perBatch));
    const client = await connect(server.port);
    const got = answeredQuestions(client, batches * perBatch);
    // Each write but the last ends one byte into the next batch's first frame, so the waiting
    // bytes never run out and the connection keeps (and writes into) the same buffer.
    for (let b = 0; b < batches; b++) {
      const start = b === 0 ? 0 : 1;
      const tail = b + 1 < batches ? (frames[b + 1] as Buffer).subarray(0, 1) : Buffer.alloc(0);
      client.write(Buffer.concat([(frames[b] as Buffer).subarray(start), tail]));
      await waitFor(() => tc.udpQueries >= (b + 1) * perBatch, 10_000);
    }
    await within(got.done, 20_000, 'all answers');
    client.destroy();
    const wrong = got.answers.filter((a) => a.name !== nameOf(a.id));
    assert.deepEqual(
      wrong.slice(0, 3).map((a) => `${a.id}: ${a.name}`),
      [],
      `${wrong.length} of ${got.answers.length} answers were for another question`,
    );
    assert.equal(tc.tcpQueries > 0, true, 'the truncated replies were asked again over TCP');
  });
});
