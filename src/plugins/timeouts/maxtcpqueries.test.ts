// `timeouts { maxtcpqueries N }` as a client sees it: N queries answered on one TCP connection,
// then the server closes it (after writing every answer), as CoreDNS 1.14 does; without the
// option, a connection takes as many queries as it sends.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { buildQuery } from '../../lib/dns/wire.js';
import { nameToWire } from '../../lib/dns/name.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

/** Sends `count` pipelined queries on one connection; resolves with the answers read and whether the server closed it. */
function pipeline(port: number, count: number): Promise<{ answers: number; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const c = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let answers = 0;
    const frames = Array.from({ length: count }, (_, i) => {
      const q = buildQuery(nameToWire('web.example.'), 1, 1, { id: i + 1 });
      return Buffer.concat([Buffer.from([q.length >> 8, q.length & 0xff]), q]);
    });
    const timer = setTimeout(() => {
      c.destroy();
      resolve({ answers, closedByServer: false });
    }, 3000);
    c.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        answers++;
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
    });
    c.on('end', () => {
      clearTimeout(timer);
      c.destroy();
      resolve({ answers, closedByServer: true });
    });
    c.on('error', reject);
    c.write(Buffer.concat(frames));
  });
}

describe('timeouts maxtcpqueries on the server', () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.stop();
  });
  const cases: Array<{ name: string; timeouts: string; sent: number; want: { answers: number; closedByServer: boolean } }> = [
    { name: 'a cap of 3: three answers, then the connection is closed', timeouts: '  timeouts {\n    maxtcpqueries 3\n  }\n', sent: 5, want: { answers: 3, closedByServer: true } },
    { name: 'a cap of 5 reached exactly: five answers, then closed', timeouts: '  timeouts {\n    maxtcpqueries 5\n  }\n', sent: 5, want: { answers: 5, closedByServer: true } },
    { name: '-1: no cap, the connection stays open', timeouts: '  timeouts {\n    maxtcpqueries -1\n  }\n', sent: 5, want: { answers: 5, closedByServer: false } },
    { name: 'no timeouts: no cap', timeouts: '', sent: 5, want: { answers: 5, closedByServer: false } },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const s = await startTestServer(`.:{PORT} {\n${c.timeouts}  hosts {\n    192.0.2.1 web.example\n  }\n}\n`);
      servers.push(s);
      assert.deepEqual(await pipeline(s.port, c.sent), c.want);
    });
  }
});
