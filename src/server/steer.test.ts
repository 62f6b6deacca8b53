// Steering a leaving TCP listener's new connections to its successor (steer.ts): the programs
// for each step of a hand-over, the wait for what the listener already holds, and the whole
// hand-over on real loopback sockets of one SO_REUSEPORT group.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handOverConnections, steerAway, steerBeforeClose, HANDOVER_QUIET_MS, type GroupShare, type SteeredListener, type Steering } from './steer.js';
import { startTestServer } from '../../test/util/server.js';
import { nativeUdp } from '../lib/native/udp.js';

describe('steer: the programs of a hand-over', () => {
  const away: Array<[string, GroupShare, Steering | undefined]> = [
    ['one leaving socket, one successor socket: index 1', { own: 1, others: 1 }, { skip: 1, spread: 1 }],
    ['two leaving workers, three successor sockets: indexes 2..4', { own: 2, others: 3 }, { skip: 2, spread: 3 }],
    ['no successor socket: nothing to steer to', { own: 1, others: 0 }, undefined],
    ['none of ours listening: nothing to steer', { own: 0, others: 2 }, undefined],
  ];
  for (const [name, share, want] of away) test(`steerAway: ${name}`, () => assert.deepEqual(steerAway(share), want));

  // [name, group at the start, own sockets listening now (this one included), program]
  const beforeClose: Array<[string, GroupShare, number, Steering | undefined]> = [
    ['the only leaving socket, one successor: index 1, past the end once it closes', { own: 1, others: 1 }, 1, { skip: 1, spread: 1 }],
    ['the only leaving socket, two successors: index 2', { own: 1, others: 2 }, 1, { skip: 2, spread: 1 }],
    ['the first of two leaving, two successors: index 2 (the other successor fills its slot)', { own: 2, others: 2 }, 2, { skip: 2, spread: 1 }],
    ['the first of two leaving, three successors: indexes 2..3', { own: 2, others: 3 }, 2, { skip: 2, spread: 2 }],
    ['the second of three leaving, four successors (one left already): indexes 3..4', { own: 3, others: 4 }, 2, { skip: 3, spread: 2 }],
    ['the last of two leaving, two successors: index 2', { own: 2, others: 2 }, 1, { skip: 2, spread: 1 }],
    ['the first of two leaving, one successor: no index is the successor both before and after', { own: 2, others: 1 }, 2, undefined],
    ['the last of two leaving, one successor: likewise', { own: 2, others: 1 }, 1, undefined],
    ['no successor at the start', { own: 1, others: 0 }, 1, undefined],
  ];
  for (const [name, start, ownNow, want] of beforeClose) test(`steerBeforeClose: ${name}`, () => assert.deepEqual(steerBeforeClose(start, ownNow), want));
});

/** A listener that records the programs set on it; `accepts` are times (ms after the start) at which it pretends to accept. */
function fakeListener(o: { steerResult?: number; accepts?: number[]; queue?: () => number }): SteeredListener & { programs: Array<[number, number]> } {
  const start = performance.now();
  const programs: Array<[number, number]> = [];
  return {
    fd: 7,
    address: '169.254.20.10',
    port: 53,
    programs,
    steer: (_fd, skip, spread) => {
      programs.push([skip, spread]);
      return o.steerResult ?? 0;
    },
    acceptQueue: () => o.queue?.() ?? 0,
    lastAccept: () => {
      const now = performance.now() - start;
      const past = (o.accepts ?? []).filter((t) => t <= now);
      return past.length === 0 ? 0 : start + Math.max(...past);
    },
  };
}

describe('steer: handOverConnections', () => {
  test('steers away, waits until nothing came for the quiet time, sets the program for its close', async () => {
    const l = fakeListener({});
    const shares = [{ own: 1, others: 2 }, { own: 1, others: 2 }];
    const t0 = performance.now();
    await handOverConnections(l, () => shares.shift());
    assert.deepEqual(l.programs, [[1, 2], [2, 1]]);
    assert.ok(performance.now() - t0 >= HANDOVER_QUIET_MS, 'returned before the quiet time');
  });
  test('a connection accepted meanwhile starts the quiet time again', async () => {
    const l = fakeListener({ accepts: [150] });
    const t0 = performance.now();
    await handOverConnections(l, () => ({ own: 1, others: 1 }));
    assert.ok(performance.now() - t0 >= 150 + HANDOVER_QUIET_MS, 'returned before the quiet time after the last accept');
  });
  test('connections waiting in the accept queue keep it waiting', async () => {
    let polls = 0;
    const l = fakeListener({ queue: () => (++polls < 30 ? 1 : 0) });
    await handOverConnections(l, () => ({ own: 1, others: 1 }));
    assert.ok(polls >= 30, `stopped with connections queued (${polls} polls)`);
  });
  const atOnce: Array<[string, GroupShare | undefined, number, Array<[number, number]>]> = [
    ['no successor in the group', { own: 1, others: 0 }, 0, []],
    ['the group cannot be counted', undefined, 0, []],
    ['the kernel refuses the program', { own: 1, others: 1 }, 22, [[1, 1]]],
  ];
  for (const [name, share, steerResult, programs] of atOnce) {
    test(`returns at once, steering nothing more: ${name}`, async () => {
      const l = fakeListener({ steerResult });
      const t0 = performance.now();
      await handOverConnections(l, () => share);
      assert.deepEqual(l.programs, programs);
      assert.ok(performance.now() - t0 < HANDOVER_QUIET_MS, 'waited');
    });
  }
});

/**
 * A client process: opens `n` TCP connections to 127.0.0.1:port, creates `marker` once all are
 * established (waiting in a listener's accept queue), then asks one query on each and prints
 * {answered, errors} when each has its answer or its error (3 s at most).
 */
const QUEUED_CLIENT = `
const net = require('node:net'), fs = require('node:fs');
const [port, n, marker] = process.argv.slice(1).map((a, i) => (i < 2 ? Number(a) : a));
const h = Buffer.alloc(12); h.writeUInt16BE(0x0100, 2); h.writeUInt16BE(1, 4);
const q = Buffer.concat([h, Buffer.from([7]), Buffer.from('example'), Buffer.from([3]), Buffer.from('org'), Buffer.from([0, 0, 1, 0, 1])]);
const frame = Buffer.concat([Buffer.from([0, q.length]), q]);
let connected = 0, answered = 0; const errors = [], socks = [];
const finish = () => { if (answered + errors.length === n) { console.log(JSON.stringify({ answered, errors })); process.exit(0); } };
for (let i = 0; i < n; i++) {
  let got = 0, done = false; const end = (err) => { if (done) return; done = true; if (err) errors.push(err); else answered++; c.destroy(); finish(); };
  const c = net.connect(port, '127.0.0.1', () => { if (++connected === n) { fs.writeFileSync(marker, ''); for (const s of socks) s.write(frame); } });
  c.on('data', (d) => { got += d.length; if (got >= 2 + 12) end(); });
  c.on('error', (e) => end(e.code)); c.on('close', () => end('closed'));
  socks.push(c);
}
setTimeout(() => { console.log(JSON.stringify({ answered, errors, timeout: true })); process.exit(0); }, 3000);
`;

describe('steer: a hand-over on loopback', { skip: nativeUdp() ? false : 'needs the native socket module (npm run build:native)' }, () => {
  test('connections queued in the leaving listener when it is asked to hand over are all answered', async () => {
    const corefile = '.:{PORT} {\n    bind 127.0.0.1\n    whoami\n}\n';
    const leaving = await startTestServer(corefile);
    const successor = await startTestServer(corefile, { port: leaving.port });
    const marker = join(mkdtempSync(join(tmpdir(), 'kdns-steer-')), 'connected');
    const n = 40;
    const child = spawn(process.execPath, ['-e', QUEUED_CLIENT, '--', String(leaving.port), String(n), marker], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const ended = new Promise((r) => child.on('close', r));
    try {
      // Both servers run in this process: while it waits here neither accepts, so the
      // connections stay in the two listeners' accept queues (the kernel splits them by hash)
      // until the hand-over begins.
      const deadline = Date.now() + 10_000;
      while (!existsSync(marker) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      assert.ok(existsSync(marker), 'the client did not connect');
      // The group: the leaving server's socket joined first (index 0), the successor's second.
      await leaving.server.shutdown({ handOver: true, shareOf: () => ({ own: 1, others: 1 }) });
      await ended;
    } finally {
      child.kill();
      await leaving.stop();
      await successor.stop();
    }
    assert.deepEqual(JSON.parse(out), { answered: n, errors: [] });
  });
});
