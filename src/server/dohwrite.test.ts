// `timeouts write` on DNS over HTTPS, as Go's http.Server WriteTimeout in CoreDNS: a response not
// sent within it of its request is abandoned (an HTTP/2 stream reset, the session kept; an
// HTTP/1.1 connection closed). The answer behind it is slow on purpose: an upstream that replies
// after 3 s over UDP (`prefer_udp`: DoH queries arrive as TCP).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import { buildQuery } from '../lib/dns/wire.js';
import { nameToWire } from '../lib/dns/name.js';
import { makeTestCerts, type TestCerts } from '../../test/util/certs.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { slowUpstream, type Scripted } from '../../test/util/upstream.js';

const UPSTREAM_DELAY_MS = 3000;

/** What became of one DoH request, and after how long. */
interface Outcome {
  /** The HTTP status, or how the request failed ('reset' for an HTTP/2 stream, 'closed' for HTTP/1.1). */
  got: number | 'reset' | 'closed';
  ms: number;
}

function query(name: string): Buffer {
  return buildQuery(nameToWire(name), 1, 1, { id: 7 });
}

function overHttp2(session: http2.ClientHttp2Session, name: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const body = query(name);
    const stream = session.request({ ':method': 'POST', ':path': '/dns-query', 'content-type': 'application/dns-message', 'content-length': body.length });
    let status = 0;
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.on('close', () => resolve({ got: stream.rstCode === http2.constants.NGHTTP2_NO_ERROR && status > 0 ? status : 'reset', ms: performance.now() - started }));
    stream.end(body);
  });
}

function overHttp1(port: number, ca: Buffer, name: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const body = query(name);
    const req = https.request({ host: '127.0.0.1', port, method: 'POST', path: '/dns-query', ca, servername: 'localhost', agent: false, headers: { 'content-type': 'application/dns-message', 'content-length': body.length } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve({ got: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', () => resolve({ got: 'closed', ms: performance.now() - started }));
    req.end(body);
  });
}

interface Case {
  what: string;
  /** The block's `timeouts` lines ('' for CoreDNS's default write of 5 s). */
  timeouts: string;
  http: 1 | 2;
  want: Outcome['got'];
  /** When the outcome must come (ms after the request). */
  within: [number, number];
}

const cases: Case[] = [
  { what: 'write 1s, HTTP/2: the slow answer is abandoned with a stream reset', timeouts: 'write 1s', http: 2, want: 'reset', within: [900, 2800] },
  { what: 'write 1s, HTTP/1.1: the slow answer is abandoned by closing the connection', timeouts: 'write 1s', http: 1, want: 'closed', within: [900, 2800] },
  { what: 'write 10s, HTTP/2: the slow answer arrives', timeouts: 'write 10s', http: 2, want: 200, within: [UPSTREAM_DELAY_MS - 100, 9000] },
  { what: 'default write (5s), HTTP/1.1: the slow answer arrives', timeouts: '', http: 1, want: 200, within: [UPSTREAM_DELAY_MS - 100, 4900] },
];

describe('timeouts write on DNS over HTTPS', () => {
  let certs: TestCerts;
  let ca: Buffer;
  let upstream: Scripted;
  const servers: TestServer[] = [];
  before(async () => {
    certs = makeTestCerts();
    ca = readFileSync(certs.ca);
    upstream = await slowUpstream(UPSTREAM_DELAY_MS);
  });
  after(async () => {
    for (const s of servers) await s.stop();
    await upstream.close();
  });

  async function start(timeouts: string): Promise<TestServer> {
    const block = timeouts ? `    timeouts {\n        ${timeouts}\n    }\n` : '';
    const s = await startTestServer(`https://.:{PORT} {
    bind 127.0.0.1
    tls ${certs.serverCert} ${certs.serverKey}
${block}    hosts {
        10.1.2.3 www.fast.test
        fallthrough
    }
    forward . 127.0.0.1:${upstream.port} {
        read_timeout 8s
        prefer_udp
    }
}
`);
    servers.push(s);
    return s;
  }

  for (const c of cases) {
    test(c.what, { timeout: 20_000 }, async () => {
      const s = await start(c.timeouts);
      let outcome: Outcome;
      if (c.http === 2) {
        const session = http2.connect(`https://127.0.0.1:${s.port}`, { ca, servername: 'localhost' });
        session.on('error', () => undefined);
        outcome = await overHttp2(session, 'www.slow.test.');
        session.close();
      } else {
        outcome = await overHttp1(s.port, ca, 'www.slow.test.');
      }
      assert.equal(outcome.got, c.want, `after ${Math.round(outcome.ms)} ms`);
      assert.ok(outcome.ms >= c.within[0] && outcome.ms <= c.within[1], `came after ${Math.round(outcome.ms)} ms, want ${c.within[0]}..${c.within[1]}`);
    });
  }

  test('write 1s, HTTP/2: the session outlives the reset stream and answers the next request', { timeout: 20_000 }, async () => {
    const s = await start('write 1s');
    const session = http2.connect(`https://127.0.0.1:${s.port}`, { ca, servername: 'localhost' });
    session.on('error', () => undefined);
    const slow = await overHttp2(session, 'www.slow.test.');
    const fast = await overHttp2(session, 'www.fast.test.');
    session.close();
    assert.deepEqual([slow.got, fast.got], ['reset', 200]);
  });
});
