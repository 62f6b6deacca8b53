// The runner's checks against a real UDP responder that answers SERVFAIL until it has "loaded".
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, it } from 'node:test';
import { checksWhenReady } from './runner.js';

/** A responder on loopback: SERVFAIL for its first `servfails` queries, then NXDOMAIN; counts them. */
async function loadingResponder(servfails: number): Promise<{ port: number; asked: () => number; close: () => void }> {
  const socket = dgram.createSocket('udp4');
  let asked = 0;
  socket.on('message', (msg, from) => {
    asked++;
    const reply = Buffer.from(msg);
    reply[2] = 0x81;
    reply[3] = 0x80 | (asked <= servfails ? 2 : 3);
    socket.send(reply, from.port, from.address);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  return { port: socket.address().port, asked: () => asked, close: () => socket.close() };
}

describe('bench runner checks', () => {
  const cases: Array<{ name: string; servfails: number; waitMs: number; want: string; asked: number }> = [
    { name: 'pass at once from a server that has its data', servfails: 0, waitMs: 5000, want: 'ok', asked: 1 },
    { name: 'pass once a loading server has its data', servfails: 2, waitMs: 5000, want: 'ok', asked: 3 },
    { name: 'fail with what the server said when it never gets there', servfails: 1_000_000, waitMs: 250, want: 'A gone.example: SERVFAIL/0, want NXDOMAIN/0', asked: 2 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const server = await loadingResponder(c.servfails);
      try {
        const got = await checksWhenReady(server.port, [{ name: 'gone.example', type: 'A', rcode: 'NXDOMAIN', answers: 0 }], Date.now() + c.waitMs);
        assert.deepEqual({ got, asked: server.asked() }, { got: c.want, asked: c.asked });
      } finally {
        server.close();
      }
    });
  }
});
