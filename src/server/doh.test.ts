// DNS over HTTPS end to end (RFC 8484): kdig +https (HTTP/2, POST and GET), dig +https, curl and
// Node's own https client against https:// blocks; the HTTP errors CoreDNS gives; max-age.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import { promisify } from 'node:util';
import { decodeMessage, encodeMessage } from '../lib/dns/codec.js';
import { RCode } from '../lib/dns/types.js';
import type { Message, ResourceRecord } from '../lib/dns/types.js';
import { makeTestCerts, type TestCerts } from '../../test/util/certs.js';
import { kdig } from '../../test/util/kdig.js';
import { dig } from '../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { startKdns } from '../../test/util/kdns.js';
import { freePort, waitFor } from '../../test/util/net.js';
import { maxAge, queryFromGet } from './doh.js';

const run = promisify(execFile);

function message(id: number, name: string, flags: Partial<Message> = {}): Buffer {
  const m: Message = { id, qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, z: false, ad: false, cd: false, rcode: 0, questions: [{ name, type: 1, class: 1 }], answers: [], authority: [], additional: [], ...flags };
  return encodeMessage(m);
}

const base64url = (b: Buffer): string => b.toString('base64url');

interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One HTTP/1.1 request through Node's https client, trusting the test CA. */
function request(port: number, ca: Buffer, method: string, path: string, body?: Buffer, client?: { cert: Buffer; key: Buffer }): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, method, path, ca, servername: 'localhost', headers: body ? { 'content-type': 'application/dns-message', 'content-length': body.length } : {}, ...client, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let certs: TestCerts;
let ca: Buffer;
before(() => {
  certs = makeTestCerts();
  ca = readFileSync(certs.ca);
});

function corefile(tlsLine: string): string {
  return `https://example.org:{PORT} {
    bind 127.0.0.1
    ${tlsLine}
    hosts {
        10.1.2.3 www.example.org
        ttl 300
    }
}
`;
}

describe('DoH over TLS', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(corefile(`tls ${certs.serverCert} ${certs.serverKey}`));
  });
  after(() => s.stop());

  for (const method of ['POST', 'GET']) {
    test(`kdig +https (HTTP/2, ${method}) gets the answer of the block chain`, async () => {
      const r = await kdig(s.port, [`+tls-ca=${certs.ca}`, '+tls-hostname=localhost', '+https', ...(method === 'GET' ? ['+https-get'] : []), 'www.example.org', 'A']);
      assert.equal(r.code, 0, r.output);
      assert.deepEqual(r.answers.map((a) => [a.status, a.answer]), [['NOERROR', ['www.example.org. A 10.1.2.3']]]);
    });
  }

  test('dig +https (bind9) gets the same answer', async () => {
    const r = await dig('www.example.org', 'A', { server: '127.0.0.1', port: s.port, args: ['+https'] });
    assert.equal(r.status, 'NOERROR', r.raw);
    assert.deepEqual(r.answer.map((a) => a.data), ['10.1.2.3']);
  });

  test('curl POST over HTTP/2: 200, application/dns-message, max-age from the answer TTL', async () => {
    const { stdout } = await run('sh', ['-c', `printf '%s' "$Q" | base64 -d | curl -s --http2 --cacert "$CA" -H 'content-type: application/dns-message' --data-binary @- -D - -o /dev/null "https://localhost:$PORT/dns-query" --resolve "localhost:$PORT:127.0.0.1"`], {
      env: { ...process.env, Q: message(1, 'www.example.org.').toString('base64'), CA: certs.ca, PORT: String(s.port) },
    });
    const lines = stdout.split('\r\n');
    assert.equal(lines[0], 'HTTP/2 200 ');
    assert.ok(lines.includes('content-type: application/dns-message'), stdout);
    assert.ok(lines.includes('cache-control: max-age=300'), stdout);
  });

  test('Node https GET (HTTP/1.1) with ?dns= base64url', async () => {
    const r = await request(s.port, ca, 'GET', `/dns-query?dns=${base64url(message(0, 'www.example.org.'))}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/dns-message');
    const reply = decodeMessage(r.body);
    assert.deepEqual(reply.answers.map((a) => [a.name, a.ttl]), [['www.example.org.', 300]]);
  });

  // The HTTP answers CoreDNS gives to requests that carry no DNS query.
  const refusals: Array<{ what: string; method: string; path: string; body?: () => Buffer; status: number }> = [
    { what: 'another path', method: 'GET', path: '/resolve?dns=AAAA', status: 404 },
    { what: 'GET without dns', method: 'GET', path: '/dns-query', status: 400 },
    { what: 'GET with two dns values', method: 'GET', path: `/dns-query?dns=${base64url(message(1, 'a.example.org.'))}&dns=${base64url(message(2, 'b.example.org.'))}`, status: 400 },
    { what: 'GET with padded base64', method: 'GET', path: `/dns-query?dns=${base64url(message(1, 'ab.example.org.'))}%3D`, status: 400 },
    { what: 'GET with standard base64 characters', method: 'GET', path: '/dns-query?dns=AAAB%2BAAA', status: 400 },
    { what: 'PUT', method: 'PUT', path: '/dns-query', body: () => message(1, 'www.example.org.'), status: 400 },
    { what: 'POST of a body larger than any DNS message', method: 'POST', path: '/dns-query', body: () => Buffer.alloc(70_000), status: 400 },
    { what: 'POST of less than a header', method: 'POST', path: '/dns-query', body: () => Buffer.from([1, 2, 3, 4, 5]), status: 400 },
    { what: 'POST of a response', method: 'POST', path: '/dns-query', body: () => message(1, 'www.example.org.', { qr: true }), status: 400 },
  ];
  for (const c of refusals) {
    test(`${c.what}: ${c.status}`, async () => {
      const r = await request(s.port, ca, c.method, c.path, c.body?.());
      assert.equal(r.status, c.status);
    });
  }

  test('a name outside the block zones is answered REFUSED inside a 200', async () => {
    const r = await request(s.port, ca, 'POST', '/dns-query', message(5, 'www.example.net.'));
    assert.equal(r.status, 200);
    assert.equal(decodeMessage(r.body).rcode, RCode.REFUSED);
    assert.equal(r.headers['cache-control'], 'max-age=5');
  });

  test('responses are counted by status in coredns_dns_https_responses_total', async () => {
    const metric = s.server.shared.metrics.getSingleMetric('coredns_dns_https_responses_total');
    assert.ok(metric, 'metric registered');
    const values = (await metric.get()).values;
    const server = `https://127.0.0.1:${s.port}`;
    const count = (status: string): number => values.find((v) => v.labels.server === server && v.labels.status === status)?.value ?? 0;
    assert.ok(count('200') >= 4, JSON.stringify(values));
    assert.ok(count('400') >= 8, JSON.stringify(values));
    assert.ok(count('404') >= 1, JSON.stringify(values));
  });
});

describe('DoH variants', () => {
  test('https:// without tls serves cleartext HTTP/1.1, with a warning', async () => {
    const s = await startTestServer(corefile(''));
    try {
      const { stdout } = await run('sh', ['-c', `curl -s -o - "http://127.0.0.1:$PORT/dns-query?dns=$Q" | base64 -w0`], { env: { ...process.env, PORT: String(s.port), Q: base64url(message(7, 'www.example.org.')) } });
      const reply = decodeMessage(Buffer.from(stdout, 'base64'));
      assert.deepEqual([reply.id, reply.answers.length], [7, 1]);
      assert.ok(s.logs.includes(`[WARNING] https://127.0.0.1:${s.port} has no tls directive: serving DoH over plain HTTP`), s.logs.join('\n'));
    } finally {
      await s.stop();
    }
  });

  test('client_auth require_and_verify: a client certificate from the CA is needed', async () => {
    const s = await startTestServer(corefile(`tls ${certs.serverCert} ${certs.serverKey} ${certs.ca} {\n        client_auth require_and_verify\n    }`));
    try {
      await assert.rejects(request(s.port, ca, 'POST', '/dns-query', message(1, 'www.example.org.')));
      const ok = await request(s.port, ca, 'POST', '/dns-query', message(1, 'www.example.org.'), { cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) });
      assert.equal(ok.status, 200);
      const r = await kdig(s.port, [`+tls-ca=${certs.ca}`, '+tls-hostname=localhost', `+tls-certfile=${certs.clientCert}`, `+tls-keyfile=${certs.clientKey}`, '+https', 'www.example.org', 'A']);
      assert.deepEqual(r.answers.map((a) => a.status), ['NOERROR'], r.output);
    } finally {
      await s.stop();
    }
  });
});

describe('kdns serve with plain, tls:// and https:// blocks', () => {
  test('one process answers the same zone over UDP, DoT and DoH', async () => {
    const [dnsPort, dotPort, dohPort] = [await freePort(), await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'kdns-doh-'));
    const zone = `
    bind 127.0.0.1
    hosts {
        10.1.2.3 www.example.org
    }`;
    writeFileSync(
      join(dir, 'Corefile'),
      `example.org:${dnsPort} {${zone}\n}\ntls://example.org:${dotPort} {\n    tls ${certs.serverCert} ${certs.serverKey}${zone}\n}\nhttps://example.org:${dohPort} {\n    tls ${certs.serverCert} ${certs.serverKey}${zone}\n}\n`,
    );
    const kdns = startKdns(['serve', '--conf', join(dir, 'Corefile')]);
    try {
      const trust = [`+tls-ca=${certs.ca}`, '+tls-hostname=localhost'];
      const viaDoh = await waitFor(async () => (await kdig(dohPort, [...trust, '+https', 'www.example.org', 'A'])).answers[0], 15_000, 200).catch((e: unknown) => {
        throw new Error(`${String(e)}\n${kdns.output()}`);
      });
      const viaDot = (await kdig(dotPort, [...trust, 'www.example.org', 'A'])).answers[0];
      const viaUdp = await dig('www.example.org', 'A', { server: '127.0.0.1', port: dnsPort });
      assert.deepEqual(
        [viaUdp.answer.map((a) => a.data), viaDot?.answer, viaDoh.answer],
        [['10.1.2.3'], ['www.example.org. A 10.1.2.3'], ['www.example.org. A 10.1.2.3']],
      );
    } finally {
      await kdns.stop();
    }
  });
});

describe('DoH max-age (CoreDNS MinimalTTL)', () => {
  const rr = (type: number, ttl: number): ResourceRecord => ({ name: 'x.', type, class: 1, ttl, data: { address: '10.0.0.1' } as ResourceRecord['data'] });
  const base: Message = { id: 1, qr: true, opcode: 0, aa: false, tc: false, rd: true, ra: true, z: false, ad: false, cd: false, rcode: 0, questions: [], answers: [], authority: [], additional: [] };
  const cases: Array<{ what: string; msg: Partial<Message>; want: number }> = [
    { what: 'smallest TTL of every section', msg: { answers: [rr(1, 300), rr(1, 60)], authority: [rr(2, 120)], additional: [rr(1, 30)] }, want: 30 },
    { what: 'capped at one hour', msg: { answers: [rr(1, 86400)] }, want: 3600 },
    { what: 'a zero TTL gives zero', msg: { answers: [rr(1, 0)] }, want: 0 },
    { what: 'NXDOMAIN: the SOA TTL', msg: { rcode: RCode.NXDOMAIN, authority: [rr(6, 900)] }, want: 900 },
    { what: 'no records: five seconds', msg: {}, want: 5 },
    { what: 'SERVFAIL: five seconds', msg: { rcode: RCode.SERVFAIL, answers: [rr(1, 300)] }, want: 5 },
    { what: 'a referral: five seconds', msg: { authority: [rr(2, 3600)] }, want: 5 },
  ];
  for (const c of cases) test(c.what, () => assert.equal(maxAge({ ...base, ...c.msg }), c.want));
});

describe('DoH GET parameter', () => {
  const cases: Array<{ query: string; want?: string; error?: string }> = [
    { query: 'dns=AAEAAAABAAAAAAAA', want: '000100000001000000000000' },
    { query: '', error: "no 'dns' query parameter found" },
    { query: 'dns=AAAA&dns=AAAA', error: "multiple 'dns' query values found" },
    { query: 'dns=AA%3D%3D', error: 'dns parameter is not unpadded base64url' },
    { query: `dns=${'A'.repeat(87_382)}`, error: 'dns query too large' },
  ];
  for (const c of cases) {
    test(c.query.slice(0, 30) || '(none)', () => {
      const url = new URL(`http://x/dns-query?${c.query}`);
      if (c.error) assert.throws(() => queryFromGet(url), { message: c.error });
      else assert.equal(queryFromGet(url).toString('hex'), c.want);
    });
  }
});
