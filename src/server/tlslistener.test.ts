// DNS over TLS end to end: the real kdig (and dig +tls) against tls:// blocks, certificates made
// by openssl; RFC 7858 framing and pipelining, idle timeout, every client_auth mode, reload.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import net from 'node:net';
import { encodeMessage, decodeMessage } from '../lib/dns/codec.js';
import type { Message } from '../lib/dns/types.js';
import { makeTestCerts, type TestCerts } from '../../test/util/certs.js';
import { kdig } from '../../test/util/kdig.js';
import { dig } from '../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { freePort } from '../../test/util/net.js';
import { startServer } from './server.js';
import { createLogger } from './log.js';

let certs: TestCerts;
before(() => {
  certs = makeTestCerts();
});

function corefile(clientAuth: string): string {
  return `tls://example.org:{PORT} {
    bind 127.0.0.1
    tls ${certs.serverCert} ${certs.serverKey} ${certs.ca} {
        client_auth ${clientAuth}
    }
    hosts {
        10.1.2.3 www.example.org
        ttl 300
    }
}
`;
}

/** kdig options that verify the server against the test CA. */
const verified = (): string[] => [`+tls-ca=${certs.ca}`, '+tls-hostname=localhost'];
const withCert = (cert: string, key: string): string[] => [`+tls-certfile=${cert}`, `+tls-keyfile=${key}`];

function query(id: number, name: string): Buffer {
  const msg: Message = { id, qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, z: false, ad: false, cd: false, rcode: 0, questions: [{ name, type: 1, class: 1 }], answers: [], authority: [], additional: [] };
  return encodeMessage(msg);
}

function frame(msg: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(msg.length);
  return Buffer.concat([len, msg]);
}

/** Reads `count` length-prefixed messages from a socket. */
function readMessages(socket: tls.TLSSocket, count: number): Promise<Message[]> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const out: Message[] = [];
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        out.push(decodeMessage(buf.subarray(2, 2 + buf.readUInt16BE(0))));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (out.length === count) resolve(out);
    });
    socket.on('error', reject);
  });
}

function connectTls(port: number, client?: { cert: string; key: string }): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const own = client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {};
    const s = tls.connect({ host: '127.0.0.1', port, ca: readFileSync(certs.ca), servername: 'localhost', ...own }, () => resolve(s));
    s.once('error', reject);
  });
}

/**
 * Whether a query over a connection presenting `client` (always sent, whatever CAs the server
 * names: kdig's GnuTLS would withhold a certificate from another CA) is answered.
 */
async function answeredWith(port: number, client?: { cert: string; key: string }): Promise<boolean> {
  let socket: tls.TLSSocket;
  try {
    socket = await connectTls(port, client);
  } catch {
    return false;
  }
  try {
    const reply = readMessages(socket, 1).then(() => true, () => false);
    const closed = new Promise<boolean>((r) => socket.once('close', () => r(false)));
    socket.write(frame(query(9, 'www.example.org.')));
    return await Promise.race([reply, closed]);
  } finally {
    socket.destroy();
  }
}

describe('DoT with client_auth nocert', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(corefile('nocert'));
  });
  after(() => s.stop());

  test('kdig +tls gets the answer of the block chain, verified against the CA', async () => {
    const r = await kdig(s.port, [...verified(), 'www.example.org', 'A']);
    assert.equal(r.code, 0, r.output);
    assert.equal(r.answers.length, 1, r.output);
    assert.deepEqual(r.answers[0]?.answer, ['www.example.org. A 10.1.2.3']);
    assert.equal(r.answers[0]?.status, 'NOERROR');
    assert.equal(r.answers[0]?.from, `127.0.0.1@${s.port}(TCP)`);
  });

  test('a name outside the block zones is REFUSED, as on plain DNS', async () => {
    const r = await kdig(s.port, [...verified(), 'www.example.net', 'A']);
    assert.equal(r.answers[0]?.status, 'REFUSED', r.output);
  });

  test('kdig refuses a server certificate for another name', async () => {
    const r = await kdig(s.port, [`+tls-ca=${certs.ca}`, '+tls-hostname=other.example', 'www.example.org', 'A']);
    assert.notEqual(r.code, 0);
    assert.match(r.output, /handshake failed/);
  });

  test('dig +tls (bind9) gets the same answer', async () => {
    const r = await dig('www.example.org', 'A', { server: '127.0.0.1', port: s.port, args: ['+tls'] });
    assert.equal(r.status, 'NOERROR', r.raw);
    assert.deepEqual(r.answer.map((a) => a.data), ['10.1.2.3']);
  });

  test('two queries written at once on one connection are both answered (RFC 7858 framing, pipelining)', async () => {
    const socket = await connectTls(s.port);
    try {
      const answers = readMessages(socket, 2);
      socket.write(Buffer.concat([frame(query(1, 'www.example.org.')), frame(query(2, 'www.example.net.'))]));
      const got = (await answers).map((m) => `${m.id} ${m.rcode} ${m.answers.map((a) => a.name).join(',')}`).sort();
      assert.deepEqual(got, ['1 0 www.example.org.', '2 5 ']);
    } finally {
      socket.destroy();
    }
  });

  test('a client speaking plain DNS to the TLS port is dropped; the listener keeps serving', async () => {
    const plain = net.connect(s.port, '127.0.0.1');
    plain.write(frame(query(3, 'www.example.org.')));
    await new Promise<void>((r) => plain.once('close', () => r()));
    const r = await kdig(s.port, [...verified(), 'www.example.org', 'A']);
    assert.equal(r.answers[0]?.status, 'NOERROR', r.output);
  });
});

describe('DoT client_auth', () => {
  // Each mode against three clients: no certificate, one from the CA, one from an unknown CA.
  const cases: Array<{ mode: string; none: boolean; trusted: boolean; stranger: boolean }> = [
    { mode: 'request', none: true, trusted: true, stranger: true },
    { mode: 'require', none: false, trusted: true, stranger: true },
    { mode: 'verify_if_given', none: true, trusted: true, stranger: false },
    { mode: 'require_and_verify', none: false, trusted: true, stranger: false },
  ];
  for (const c of cases) {
    test(`${c.mode}: no certificate ${c.none ? 'in' : 'out'}, trusted in, unknown CA ${c.stranger ? 'in' : 'out'}`, async () => {
      const s = await startTestServer(corefile(c.mode));
      try {
        assert.deepEqual(
          {
            none: await answeredWith(s.port),
            trusted: await answeredWith(s.port, { cert: certs.clientCert, key: certs.clientKey }),
            stranger: await answeredWith(s.port, { cert: certs.strangerCert, key: certs.strangerKey }),
          },
          { none: c.none, trusted: c.trusted, stranger: c.stranger },
        );
        // kdig (GnuTLS) with the trusted certificate, the way a real client presents it.
        const r = await kdig(s.port, [...verified(), ...withCert(certs.clientCert, certs.clientKey), 'www.example.org', 'A']);
        assert.equal(r.answers[0]?.status, 'NOERROR', r.output);
      } finally {
        await s.stop();
      }
    });
  }

  test('a reload that turns on require_and_verify refuses new clients without a certificate', async () => {
    const s = await startTestServer(corefile('nocert'));
    try {
      assert.equal((await kdig(s.port, [...verified(), 'www.example.org', 'A'])).answers[0]?.status, 'NOERROR');
      writeFileSync(s.corefilePath, corefile('require_and_verify').replaceAll('{PORT}', String(s.port)));
      assert.equal(await s.server.reload(), true);
      const without = await kdig(s.port, [...verified(), 'www.example.org', 'A']);
      assert.equal(without.answers.length, 0, without.output);
      const withOne = await kdig(s.port, [...verified(), ...withCert(certs.clientCert, certs.clientKey), 'www.example.org', 'A']);
      assert.equal(withOne.answers[0]?.status, 'NOERROR', withOne.output);
    } finally {
      await s.stop();
    }
  });
});

describe('DoT connections', () => {
  test('a reload turns TLS on and off on the same port, without closing it', async () => {
    const plain = 'tls://example.org:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        10.1.2.3 www.example.org\n    }\n}\n';
    const s = await startTestServer(plain);
    try {
      const overTls = async (): Promise<string | undefined> => (await kdig(s.port, [...verified(), 'www.example.org', 'A'])).answers[0]?.status;
      const overTcp = async (): Promise<string> => (await dig('www.example.org', 'A', { server: '127.0.0.1', port: s.port, args: ['+tcp'] })).status;
      assert.equal(await overTcp(), 'NOERROR');
      writeFileSync(s.corefilePath, corefile('nocert').replaceAll('{PORT}', String(s.port)));
      assert.equal(await s.server.reload(), true);
      assert.equal(await overTls(), 'NOERROR');
      assert.deepEqual(s.server.listening(), [{ transport: 'tls', secure: true, address: '127.0.0.1', port: s.port }]);
      writeFileSync(s.corefilePath, plain.replaceAll('{PORT}', String(s.port)));
      assert.equal(await s.server.reload(), true);
      assert.equal(await overTcp(), 'NOERROR');
      assert.equal(s.logs.filter((l) => l.includes('has no tls directive')).length, 2, s.logs.join('\n'));
    } finally {
      await s.stop();
    }
  });

  test('an idle connection is closed after the idle timeout', async () => {
    const port = await freePort();
    const dir = certs.dir;
    const path = join(dir, 'Corefile.idle');
    writeFileSync(path, corefile('nocert').replaceAll('{PORT}', String(port)));
    const server = await startServer({ corefilePath: path, log: createLogger(() => undefined), tcpLimits: { idleTimeoutMs: 300 } });
    try {
      const socket = await connectTls(port);
      const started = Date.now();
      await new Promise<void>((r) => socket.once('close', () => r()));
      const waited = Date.now() - started;
      assert.ok(waited >= 250 && waited < 5000, `closed after ${waited} ms`);
    } finally {
      await server.stop();
    }
  });

  test('tls:// without a tls directive serves DNS over plain TCP, with a warning', async () => {
    const s = await startTestServer('tls://example.org:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        10.1.2.3 www.example.org\n    }\n}\n');
    try {
      const r = await dig('www.example.org', 'A', { server: '127.0.0.1', port: s.port, args: ['+tcp'] });
      assert.deepEqual(r.answer.map((a) => a.data), ['10.1.2.3']);
      assert.ok(s.logs.includes(`[WARNING] tls://127.0.0.1:${s.port} has no tls directive: serving DNS over plain TCP`), s.logs.join('\n'));
      assert.deepEqual(s.server.listening(), [{ transport: 'tls', secure: false, address: '127.0.0.1', port: s.port }]);
    } finally {
      await s.stop();
    }
  });
});
