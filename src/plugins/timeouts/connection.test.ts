// `timeouts { read, write, idle }` on real sockets, as a client meets them: a connection that
// sends nothing is closed after `read` (3 s by default, as CoreDNS), one that asked and went
// quiet after `idle`, one that does not read its answers after `write`; DNS over TLS the same.
// Each case states when the connection must still be open and by when it must be closed.
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { buildQuery } from '../../lib/dns/wire.js';
import { nameToWire } from '../../lib/dns/name.js';
import { makeTestCerts, type TestCerts } from '../../../test/util/certs.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

function frame(id: number): Buffer {
  const q = buildQuery(nameToWire('web.example.'), 1, 1, { id });
  return Buffer.concat([Buffer.from([q.length >> 8, q.length & 0xff]), q]);
}

/** Milliseconds from `since` until the server closes `s`, or Infinity if still open after `giveUpMs`. */
function closedAfter(s: net.Socket, since: number, giveUpMs: number): Promise<number> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(Infinity), giveUpMs);
    const done = (): void => {
      clearTimeout(timer);
      resolve(performance.now() - since);
    };
    if (s.destroyed) return done();
    s.once('close', done);
    s.once('end', done);
    s.on('error', () => undefined);
  });
}

type Client = 'silent' | 'asks once, then quiet' | 'never reads' | 'tls, no handshake';

/** Opens the connection and behaves as `kind`; resolves with the socket and when its quiet began. */
async function behave(kind: Client, port: number): Promise<{ socket: net.Socket; quietFrom: number }> {
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const c = net.connect(port, '127.0.0.1', () => resolve(c));
    c.once('error', reject);
  });
  if (kind === 'silent' || kind === 'tls, no handshake') return { socket, quietFrom: performance.now() };
  if (kind === 'asks once, then quiet') {
    socket.write(frame(1));
    await new Promise<void>((r) => socket.once('data', () => r()));
    return { socket, quietFrom: performance.now() };
  }
  // Never reads: pipelines queries for as long as the server takes them.
  socket.pause();
  const block = Buffer.concat(Array.from({ length: 2000 }, (_, i) => frame(i)));
  const pump = (): void => {
    while (!socket.destroyed && socket.write(block));
    if (!socket.destroyed) socket.once('drain', pump);
  };
  pump();
  return { socket, quietFrom: performance.now() };
}

interface Case {
  what: string;
  /** The `timeouts` block ('' for none) and the transport. */
  timeouts: string;
  scheme: 'dns' | 'tls';
  client: Client;
  /** Still open this long after the client went quiet (ms)... */
  openAtLeast: number;
  /** ...and closed by then (ms); Infinity: still open when the test stops looking. */
  closedBy: number;
}

const cases: Case[] = [
  { what: 'read 1s: a TCP client that sends nothing is closed after read, not idle', timeouts: 'read 1s\n    idle 6s', scheme: 'dns', client: 'silent', openAtLeast: 900, closedBy: 4000 },
  { what: 'no timeouts: a silent TCP client is closed after the default read of 3 s', timeouts: '', scheme: 'dns', client: 'silent', openAtLeast: 2900, closedBy: 8000 },
  { what: 'idle 2s: a client that asked and went quiet is closed after idle, not read', timeouts: 'read 1s\n    idle 2s', scheme: 'dns', client: 'asks once, then quiet', openAtLeast: 1900, closedBy: 5000 },
  { what: 'idle 5s: a client that asked is left open past read', timeouts: 'read 1s\n    idle 5s', scheme: 'dns', client: 'asks once, then quiet', openAtLeast: 3000, closedBy: Infinity },
  { what: 'write 1s: a client that never reads its answers is closed', timeouts: 'write 1s', scheme: 'dns', client: 'never reads', openAtLeast: 0, closedBy: 4500 },
  { what: 'write 30s: the same client is still open after 4 s', timeouts: 'write 30s', scheme: 'dns', client: 'never reads', openAtLeast: 4000, closedBy: Infinity },
  { what: 'DNS over TLS, read 1s: a client that never starts its handshake is closed', timeouts: 'read 1s\n    idle 6s', scheme: 'tls', client: 'tls, no handshake', openAtLeast: 900, closedBy: 4000 },
];

describe('timeouts read, write and idle on the server', () => {
  let certs: TestCerts;
  const servers: TestServer[] = [];
  before(() => {
    certs = makeTestCerts();
  });
  after(async () => {
    for (const s of servers) await s.stop();
  });

  for (const c of cases) {
    test(c.what, { timeout: 30_000 }, async () => {
      const block = c.timeouts ? `  timeouts {\n    ${c.timeouts}\n  }\n` : '';
      const tlsLine = c.scheme === 'tls' ? `  tls ${certs.serverCert} ${certs.serverKey}\n` : '';
      const s = await startTestServer(`${c.scheme}://.:{PORT} {\n  bind 127.0.0.1\n${tlsLine}${block}  hosts {\n    192.0.2.1 web.example\n  }\n}\n`);
      servers.push(s);
      const { socket, quietFrom } = await behave(c.client, s.port);
      const look = c.closedBy === Infinity ? c.openAtLeast : c.closedBy;
      const closed = await closedAfter(socket, quietFrom, look);
      socket.destroy();
      if (c.closedBy === Infinity) assert.equal(closed, Infinity, `closed after ${Math.round(closed)} ms`);
      else assert.ok(closed >= c.openAtLeast && closed < c.closedBy, `closed after ${Math.round(closed)} ms, want ${c.openAtLeast}..${c.closedBy}`);
    });
  }

  test('DNS over TLS, idle 2s: a client that asked and went quiet is closed after idle', { timeout: 30_000 }, async () => {
    const s = await startTestServer(`tls://.:{PORT} {\n  bind 127.0.0.1\n  tls ${certs.serverCert} ${certs.serverKey}\n  timeouts {\n    read 1s\n    idle 2s\n  }\n  hosts {\n    192.0.2.1 web.example\n  }\n}\n`);
    servers.push(s);
    const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const t = tls.connect({ host: '127.0.0.1', port: s.port, ca: readFileSync(certs.ca), servername: 'localhost' }, () => resolve(t));
      t.once('error', reject);
    });
    socket.write(frame(1));
    await new Promise<void>((r) => socket.once('data', () => r()));
    const closed = await closedAfter(socket, performance.now(), 6000);
    socket.destroy();
    assert.ok(closed >= 1900 && closed < 6000, `closed after ${Math.round(closed)} ms, want 1900..6000`);
  });
});
