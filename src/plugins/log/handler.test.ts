import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { a, ns, soa } from '../../lib/dns/rr.js';
import { RCode, RRType, type Message } from '../../lib/dns/types.js';
import { PluginError, type Next } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { dig } from '../../../test/util/dig.js';
import { testRequest } from '../../../test/util/request.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { compileFormat } from './format.js';
import { classify, LogPlugin, type LogRule, type ResponseClass } from './handler.js';

function request(name = 'www.example.org.', qtype: number = RRType.A): DnsRequest {
  return testRequest(name, qtype, { id: 7 });
}

const SOA = soa('example.org.', 60, { mname: 'ns.example.org.', rname: 'h.example.org.', serial: 1, refresh: 7200, retry: 1800, expire: 86400, minimum: 60 });

function response(req: DnsRequest, rcode: number, parts: Partial<Pick<Message, 'answers' | 'authority' | 'opcode'>> = {}): Message {
  return { ...responseFor(req, rcode), ...parts };
}

describe('classify: CoreDNS response classes', () => {
  const req = request();
  const axfr = request('example.org.', RRType.AXFR);
  const cases: Array<{ name: string; msg: Message; want: ResponseClass }> = [
    { name: 'answer with NOERROR', msg: response(req, RCode.NOERROR, { answers: [a('www.example.org.', 5, '10.0.0.1')] }), want: 'success' },
    { name: 'NOERROR, no answer, no SOA', msg: response(req, RCode.NOERROR), want: 'success' },
    { name: 'referral (NS in authority)', msg: response(req, RCode.NOERROR, { authority: [ns('example.org.', 5, 'ns.example.org.')] }), want: 'success' },
    { name: 'NODATA: NOERROR with SOA', msg: response(req, RCode.NOERROR, { authority: [SOA] }), want: 'denial' },
    { name: 'NXDOMAIN with SOA', msg: response(req, RCode.NXDOMAIN, { authority: [SOA] }), want: 'denial' },
    { name: 'NXDOMAIN without SOA', msg: response(req, RCode.NXDOMAIN), want: 'error' },
    { name: 'SERVFAIL', msg: response(req, RCode.SERVFAIL), want: 'error' },
    { name: 'REFUSED', msg: response(req, RCode.REFUSED), want: 'error' },
    { name: 'zone transfer', msg: response(axfr, RCode.NOERROR, { answers: [SOA] }), want: 'error' },
    { name: 'UPDATE', msg: response(req, RCode.NOERROR, { opcode: 5 }), want: 'error' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(classify(c.msg), c.want));
});

function rule(scope: string, classes: ResponseClass[], format = '{name} {rcode}', minDurationMs = 0): LogRule {
  return { scope, format, parts: compileFormat(format), classes: new Set(classes), minDurationMs };
}

describe('LogPlugin: which queries get a line, and which line', () => {
  const nxdomain: Next = (req) => Reply.of(response(req, RCode.NXDOMAIN, { authority: [SOA] }));
  const answer: Next = (req) => Reply.of(response(req, RCode.NOERROR, { answers: [a(req.qname, 5, '10.0.0.1')] }));
  const refusedError: Next = () => {
    throw new PluginError('acl', RCode.REFUSED, 'blocked');
  };
  const bug: Next = () => {
    throw new TypeError('oops');
  };
  const nothing: Next = () => undefined;
  const slowAnswer: Next = async (req) => {
    await new Promise((r) => setTimeout(r, 30));
    return answer(req);
  };
  const cases: Array<{ name: string; rules: LogRule[]; next: Next; qname?: string; want: string[]; throws?: string }> = [
    { name: 'all: answer logged', rules: [rule('.', ['all'])], next: answer, want: ['www.example.org. NOERROR'] },
    { name: 'denial only: NXDOMAIN with SOA logged', rules: [rule('.', ['denial'])], next: nxdomain, want: ['www.example.org. NXDOMAIN'] },
    { name: 'denial only: answer not logged', rules: [rule('.', ['denial'])], next: answer, want: [] },
    { name: 'success+denial: answer logged', rules: [rule('.', ['success', 'denial'])], next: answer, want: ['www.example.org. NOERROR'] },
    { name: 'name outside the scope: not logged', rules: [rule('other.org.', ['all'])], next: answer, want: [] },
    { name: 'first matching scope decides', rules: [rule('example.org.', ['error']), rule('.', ['all'])], next: answer, want: [] },
    { name: 'scope is case-insensitive', rules: [rule('example.org.', ['all'])], qname: 'WWW.Example.ORG.', next: answer, want: ['www.example.org. NOERROR'] },
    { name: 'thrown PluginError: its rcode, then rethrown', rules: [rule('.', ['all'])], next: refusedError, want: ['www.example.org. REFUSED'], throws: 'plugin/acl: blocked' },
    { name: 'thrown bug: SERVFAIL, then rethrown', rules: [rule('.', ['error'])], next: bug, want: ['www.example.org. SERVFAIL'], throws: 'oops' },
    { name: 'nothing answered: the SERVFAIL the server sends', rules: [rule('.', ['all'])], next: nothing, want: ['www.example.org. SERVFAIL'] },
    { name: 'minDuration logs a slow success under an error-only rule', rules: [rule('.', ['error'], '{name} {rcode}', 10)], next: slowAnswer, want: ['www.example.org. NOERROR'] },
    { name: 'minDuration does not log a fast one', rules: [rule('.', ['error'], '{name} {rcode}', 1000)], next: answer, want: [] },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const lines: string[] = [];
      const plugin = new LogPlugin(c.rules, (l) => lines.push(l));
      const run = async () => plugin.serve(request(c.qname), c.next);
      if (c.throws) await assert.rejects(run, { message: c.throws });
      else await run();
      assert.deepEqual(lines, c.want);
    });
  }

  test('the reply passes through unchanged', async () => {
    const plugin = new LogPlugin([rule('.', ['all'])], () => undefined);
    const req = request();
    const reply = answer(req) as Reply;
    assert.equal(await plugin.serve(req, () => reply), reply);
  });
});

describe('log end to end: real dig, real server', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(`
example.org:{PORT} {
    bind 127.0.0.1
    log
    hosts {
        10.1.2.3 www.example.org
    }
}
`);
  });
  after(() => s.stop());

  test('one common-format line per query, with what the client got', async () => {
    const r = await dig('www.example.org', 'A', { port: s.port, args: ['+bufsize=1232'] });
    assert.equal(r.status, 'NOERROR');
    const lines = s.logs.filter((l) => l.includes(`"A IN www.example.org.`));
    assert.equal(lines.length, 1, s.logs.join('\n'));
    const re = new RegExp(`^\\[INFO\\] 127\\.0\\.0\\.1:\\d+ - ${r.id} "A IN www\\.example\\.org\\. udp \\d+ false 1232" NOERROR qr,aa,rd ${r.size} \\d+\\.\\d+s$`);
    assert.match(lines[0] as string, re);
  });

  test('TCP query: proto tcp and bufsize 65535', async () => {
    const r = await dig('nothere.example.org', 'AAAA', { port: s.port, args: ['+tcp'] });
    const line = s.logs.find((l) => l.includes('"AAAA IN nothere.example.org.'));
    assert.ok(line, s.logs.join('\n'));
    assert.match(line, new RegExp(` tcp \\d+ false 65535" ${r.status} `));
  });
});
