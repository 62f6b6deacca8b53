import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, it } from 'node:test';
import { ask, decodeAnswer, encodeQuery } from './probe.js';

/** A response to `query` with the given answer records (already encoded), RCODE 0. */
function response(query: Buffer, answers: Buffer[], rcode = 0): Buffer {
  const head = Buffer.from(query);
  head[2] = 0x81;
  head[3] = 0x80 | rcode;
  head.writeUInt16BE(answers.length, 6);
  return Buffer.concat([head, ...answers]);
}
// Owner: a pointer to the question name at offset 12.
const A = (a: number, b: number, c: number, d: number): Buffer => Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, a, b, c, d]);

describe('probe', () => {
  it('encodes a query with RD set and no EDNS', () => {
    assert.deepEqual(
      [...encodeQuery(0x1234, 'ab.c.', 'AAAA')],
      [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0x61, 0x62, 1, 0x63, 0, 0, 28, 0, 1],
    );
  });

  it('refuses an empty label', () => {
    assert.throws(() => encodeQuery(1, 'a..b', 'A'), { message: 'a..b: label "" is empty or longer than 63 bytes' });
  });

  it('decodes RCODE, answer count, A addresses and SRV data through compression pointers', () => {
    const q = encodeQuery(7, '_http._tcp.web.ns.svc.cluster.local', 'SRV');
    // SRV 0 50 80 → "web-0" + pointer to "web.ns.svc.cluster.local" (offset 12 + 11 for "_http._tcp.")
    const srv = Buffer.from([0xc0, 12, 0, 33, 0, 1, 0, 0, 0, 5, 0, 14, 0, 0, 0, 50, 0, 80, 5, 0x77, 0x65, 0x62, 0x2d, 0x30, 0xc0, 23]);
    assert.deepEqual(decodeAnswer(response(q, [srv, A(10, 0, 0, 9)])), {
      rcode: 'NOERROR',
      answers: 2,
      addresses: ['10.0.0.9'],
      records: ['SRV 0 50 80 web-0.web.ns.svc.cluster.local.', 'A 10.0.0.9'],
    });
  });

  it('names NXDOMAIN', () => {
    const q = encodeQuery(8, 'x.example', 'A');
    assert.deepEqual(decodeAnswer(response(q, [], 3)), { rcode: 'NXDOMAIN', answers: 0, addresses: [], records: [] });
  });

  it('refuses a message cut inside a record', () => {
    const q = encodeQuery(9, 'x.example', 'A');
    assert.throws(() => decodeAnswer(response(q, [A(1, 2, 3, 4)]).subarray(0, -2)), { message: 'record data runs past the end of the message' });
  });

  it('asks a real UDP server and returns its answer; undefined from a silent one', async () => {
    const server = dgram.createSocket('udp4');
    server.on('message', (msg, from) => server.send(response(msg, [A(192, 0, 2, 1)]), from.port, from.address));
    await new Promise<void>((r) => server.bind(0, '127.0.0.1', r));
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
    try {
      assert.deepEqual(await ask(server.address().port, 'x.example', 'A'), { rcode: 'NOERROR', answers: 1, addresses: ['192.0.2.1'], records: ['A 192.0.2.1'] });
      assert.equal(await ask(silent.address().port, 'x.example', 'A', 200), undefined);
    } finally {
      server.close();
      silent.close();
    }
  });
});
