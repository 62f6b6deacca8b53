// The codec against a real client: dig (BIND 9) sends its queries to a UDP socket on loopback,
// parseQuery reads them, encodeMessage answers, and dig must print what was encoded.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { encodeMessage, parseQuery } from './codec.js';
import { ipToReverseName } from './name.js';
import * as R from './rr.js';
import { message } from '../../../test/util/dnstestkit.js';
import type { Edns, ParsedQuery, ResourceRecord } from './types.js';
import { RCode } from './types.js';

const run = promisify(execFile);

interface Reply {
  answers?: (q: ParsedQuery) => ResourceRecord[];
  rcode?: number;
}

interface Case {
  title: string;
  args: string[];
  reply: Reply;
  /** Patterns dig's output must match. */
  output: RegExp[];
  /** What the server must have seen. */
  query: (q: ParsedQuery) => void;
}

const serverEdns: Edns = { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [] };

const cases: Case[] = [
  {
    title: 'an A query with dig defaults (EDNS, cookie)',
    args: ['foo.example.', 'A'],
    reply: { answers: (q) => [R.a(q.qname, 30, '10.0.0.1')] },
    output: [/^foo\.example\.\s+30\s+IN\s+A\s+10\.0\.0\.1$/m, /status: NOERROR/, /; EDNS: version: 0/],
    query: (q) => {
      assert.equal(q.qtype, 1);
      assert.equal(q.edns?.udpSize, 1232);
      assert.ok(q.edns?.options.some((o) => o.code === 10 && o.data.length === 8), 'client cookie');
    },
  },
  {
    title: 'no EDNS',
    args: ['+noedns', 'foo.example.', 'AAAA'],
    reply: { answers: (q) => [R.aaaa(q.qname, 30, 'fd00::1')] },
    output: [/^foo\.example\.\s+30\s+IN\s+AAAA\s+fd00::1$/m],
    query: (q) => assert.equal(q.edns, undefined),
  },
  {
    title: 'mixed case is echoed as sent and looked up lower-cased',
    args: ['FoO.ExAmPlE.', 'A'],
    reply: { answers: (q) => [R.a(q.qname, 30, '10.0.0.2')] },
    output: [/^;FoO\.ExAmPlE\.\s+IN\s+A$/m, /^FoO\.ExAmPlE\.\s+30\s+IN\s+A\s+10\.0\.0\.2$/m],
    query: (q) => {
      assert.equal(q.qname, 'FoO.ExAmPlE.');
      assert.equal(q.name, 'foo.example.');
    },
  },
  {
    title: 'an escaped dot inside a label',
    args: ['a\\.b.example.', 'A'],
    reply: { answers: (q) => [R.a(q.qname, 30, '10.0.0.3')] },
    output: [/^a\\\.b\.example\.\s+30\s+IN\s+A\s+10\.0\.0\.3$/m],
    query: (q) => assert.equal(q.qname, 'a\\.b.example.'),
  },
  {
    title: 'TXT strings with quotes, backslashes and high bytes',
    args: ['t.example.', 'TXT'],
    reply: { answers: (q) => [R.txt(q.qname, 30, ['say "hi"', 'back\\slash', '\xff'])] },
    output: [/^t\.example\.\s+30\s+IN\s+TXT\s+"say \\"hi\\"" "back\\\\slash" "\\255"$/m],
    query: (q) => assert.equal(q.qtype, 16),
  },
  {
    title: 'SRV, MX, SOA, CNAME and an unknown type in one answer',
    // dig sends ANY over TCP, so ask for SRV and get the lot.
    args: ['+nocookie', 'multi.example.', 'SRV'],
    reply: {
      answers: (q) => [
        R.srv(q.qname, 30, 0, 100, 53, 'dns.example.'),
        R.mx(q.qname, 30, 10, 'mx.example.'),
        R.soa(q.qname, 30, { mname: 'ns.example.', rname: 'hostmaster.example.', serial: 7, refresh: 60, retry: 30, expire: 600, minimum: 5 }),
        R.cname('alias.example.', 30, q.qname),
        R.opaque(q.qname, 65280, 30, Uint8Array.from([1, 2, 3])),
      ],
    },
    output: [
      /^multi\.example\.\s+30\s+IN\s+SRV\s+0 100 53 dns\.example\.$/m,
      /^multi\.example\.\s+30\s+IN\s+MX\s+10 mx\.example\.$/m,
      /^multi\.example\.\s+30\s+IN\s+SOA\s+ns\.example\. hostmaster\.example\. 7 60 30 600 5$/m,
      /^alias\.example\.\s+30\s+IN\s+CNAME\s+multi\.example\.$/m,
      /^multi\.example\.\s+30\s+IN\s+TYPE65280\s+\\# 3 010203$/m,
    ],
    query: (q) => {
      assert.equal(q.qtype, 33);
      assert.equal(q.edns?.options.length, 0);
    },
  },
  {
    title: 'a reverse query from dig -x',
    args: ['-x', '10.0.0.1'],
    reply: { answers: (q) => [R.ptr(q.qname, 30, 'web.ns.svc.cluster.local.')] },
    output: [/^1\.0\.0\.10\.in-addr\.arpa\.\s+30\s+IN\s+PTR\s+web\.ns\.svc\.cluster\.local\.$/m],
    query: (q) => assert.equal(q.name, ipToReverseName('10.0.0.1')),
  },
  {
    title: 'BADVERS to an EDNS version 1 query',
    args: ['+edns=1', '+noednsnegotiation', 'foo.example.', 'A'],
    reply: { rcode: RCode.BADVERS },
    output: [/status: BADVERS/],
    query: (q) => assert.equal(q.edns?.version, 1),
  },
  {
    title: 'truncation at the client-advertised size',
    args: ['+bufsize=512', '+ignore', 'many.example.', 'A'],
    reply: { answers: (q) => Array.from({ length: 100 }, (_, k) => R.a(q.qname, 30, `10.0.1.${k}`)) },
    output: [/flags: qr aa tc rd; QUERY: 1, ANSWER: 29,/, /MSG SIZE\s+rcvd: 505/],
    query: (q) => assert.equal(q.edns?.udpSize, 512),
  },
];

describe('dig against the codec', () => {
  const socket = dgram.createSocket('udp4');
  let port = 0;
  let reply: Reply = {};
  let seen: ParsedQuery | undefined;

  before(async () => {
    socket.on('message', (raw, from) => {
      const q = parseQuery(raw);
      seen = q;
      const msg = message({
        id: q.id,
        rd: q.rd,
        cd: q.cd,
        aa: true,
        rcode: reply.rcode ?? RCode.NOERROR,
        questions: [{ name: q.qname, type: q.qtype, class: q.qclass }],
        answers: reply.answers ? reply.answers(q) : [],
        edns: q.edns ? serverEdns : undefined,
      });
      const maxSize = q.edns ? Math.max(512, q.edns.udpSize) : 512;
      socket.send(encodeMessage(msg, { maxSize }), from.port, from.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    port = (socket.address() as AddressInfo).port;
  });
  after(() => socket.close());

  for (const c of cases) {
    it(c.title, async () => {
      reply = c.reply;
      seen = undefined;
      const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=3', ...c.args]);
      assert.ok(seen, 'the server saw no query');
      c.query(seen);
      for (const pattern of c.output) assert.match(stdout, pattern);
    });
  }
});
