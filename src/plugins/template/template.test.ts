// template: Corefile syntax, the answers, and the Go-template subset. Cases transcribed from
// CoreDNS's plugin/template tests (setup_test.go, template_test.go TestHandler and TestMultiSection).
import { describe, test } from 'node:test';
import { tmpdir } from 'node:os';
import { parseCorefile } from '../../lib/corefile/parser.js';
import assert from 'node:assert/strict';
import { a, rrToString } from '../../lib/dns/rr.js';
import { DnsClass, RCode, RRType } from '../../lib/dns/types.js';
import type { Next } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { edns, testRequest, testShared } from '../../../test/util/request.js';
import { compileTemplate, type TemplateValue } from './gotemplate.js';
import { TemplatePlugin, parseRecord } from './handler.js';
import { parseTemplate } from './setup.js';

const BLOCK_ZONES = ['domain.com.', 'dynamic.domain.com.'];

/** One plugin with a template per directive of `corefile` (the body of a `.` block). */
function templates(body: string, zones: string[] = ['.']): TemplatePlugin {
  const p = new TemplatePlugin({ server: 'dns://:53' });
  const [block] = parseCorefile(`. {\n${body}\n}\n`, { file: 'Corefile', baseDir: tmpdir() });
  p.templates.push(...(block?.directives ?? []).map((d) => parseTemplate(d, zones)));
  return p;
}

/** The next plugin: says who answered with an A record, so fallthrough is visible. */
const nextAnswers: Next = (req) => {
  const m = responseFor(req);
  m.answers = [a('next.plugin.', 1, '192.0.2.53')];
  return Reply.of(m);
};

describe('template: Corefile syntax', () => {
  const valid = [
    'template ANY ANY {\n  rcode NXDOMAIN\n}',
    'template ANY ANY {\n  answer "{{ parseInt }}"\n  additional "{{ parseInt }}"\n  authority "{{ parseInt }}"\n}',
    'template ANY ANY {\n\n}',
    'template ANY A example.com {\n  match ip-(?P<a>[0-9]*)-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]com\n  answer "{{ .Name }} A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Grup.d }}."\n  fallthrough\n}',
    'template ANY AAAA example.com {\n  match ip-(?P<a>[0-9]*)-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]com\n  authority "example.com 60 IN SOA ns.example.com hostmaster.example.com (1 60 60 60 60)"\n  fallthrough\n}',
    'template IN ANY example.com {\n  match "[.](example[.]com[.]dc1[.]example[.]com[.])$"\n  rcode NXDOMAIN\n  authority "{{ index .Match 1 }} 60 IN SOA ns.{{ index .Match 1 }} hostmaster.example.com (1 60 60 60 60)"\n  fallthrough example.com\n}',
    'template IN A example {\n  match ^ip0a(?P<b>[a-f0-9]{2})(?P<c>[a-f0-9]{2})(?P<d>[a-f0-9]{2})[.]example[.]$\n  answer "{{ .Name }} 3600 IN A 10.{{ parseInt .Group.b 16 8 }}.{{ parseInt .Group.c 16 8 }}.{{ parseInt .Group.d 16 8 }}"\n}',
    'template ANY ANY invalid {\n  rcode NXDOMAIN\n  authority "invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)"\n  ederror 21 "Blocked according to RFC2606"\n}',
    'template IN A example {\n  upstream\n}',
    'template IN A example {\n  upstream 10.0.0.1\n}',
  ];
  for (const corefile of valid) {
    test(`accepts: ${corefile.split('\n').join(' ')}`, () => {
      assert.doesNotThrow(() => parseTemplate(directiveIn(corefile), BLOCK_ZONES));
    });
  }

  const invalid: Array<[string, string]> = [
    ['template', 'Corefile:2: wrong argument count for "template": expected at least 2, got 0'],
    ['template X', 'Corefile:2: wrong argument count for "template": expected at least 2, got 1'],
    ['template ANY X', 'Corefile:2: invalid query type "X" for template'],
    ['template XX ANY', 'Corefile:2: invalid query class "XX" for template'],
    ['template ANY ANY {\n  notavailable\n}', 'Corefile:3: unknown property "notavailable" in template block'],
    // CoreDNS takes any word as a zone; kdns wants a domain name
    ['template ANY ANY .* {\n}', 'Corefile:2: invalid argument ".*" for "template": not a valid zone name'],
    ['template ANY ANY {\n  answer\n}', 'Corefile:3: wrong argument count for "answer": expected at least 1, got 0'],
    ['template ANY ANY {\n  additional\n}', 'Corefile:3: wrong argument count for "additional": expected at least 1, got 0'],
    ['template ANY ANY {\n  rcode\n}', 'Corefile:3: wrong argument count for "rcode": expected 1, got 0'],
    ['template ANY ANY {\n  rcode UNDEFINED\n}', 'Corefile:3: unknown rcode "UNDEFINED" for template (expected NOERROR, NXDOMAIN, SERVFAIL, REFUSED, …)'],
    ['template ANY ANY {\n  answer "{{"\n}', 'Corefile:3: could not compile answer template "{{": unclosed action in "{{"'],
    ['template ANY ANY {\n  additional "{{"\n}', 'Corefile:3: could not compile additional template "{{": unclosed action in "{{"'],
    ['template ANY ANY {\n  authority "{{"\n}', 'Corefile:3: could not compile authority template "{{": unclosed action in "{{"'],
    ['template ANY ANY {\n  answer "{{ notAFunction }}"\n}', 'Corefile:3: could not compile answer template "{{ notAFunction }}": function "notAFunction" not defined'],
    ['template ANY ANY {\n  answer "{{ if .Name }}x{{ end }}"\n}', 'Corefile:3: could not compile answer template "{{ if .Name }}x{{ end }}": "if" is not supported in kdns templates'],
    ['template ANY ANY {\n  match ([a\n}', 'Corefile:3: could not parse regex: invalid regex "([a": Unterminated character class'],
    ['template ANY ANY {\n  match\n}', 'Corefile:3: wrong argument count for "match": expected at least 1, got 0'],
    ['template ANY ANY {\n  ederror\n}', 'Corefile:3: wrong argument count for "ederror": expected at least 1, got 0'],
    ['template ANY ANY {\n  ederror 70000\n}', 'Corefile:3: extended DNS error code must be between 0 and 65535, got 70000'],
    ['template ANY ANY {\n  ederror x y\n}', 'Corefile:3: invalid extended DNS error code: "x" is not an integer'],
    ['template ANY ANY {\n  rcode NXDOMAIN\n  rcode NOERROR\n}', 'Corefile:4: duplicate property "rcode" in template block'],
    ['template ANY ANY {\n  var ip group(1)\n}', 'Corefile:3: "var" (expressions) is not supported by kdns\'s template plugin'],
    ['template ANY ANY {\n  answer "a. 60 IN A 10.0.0.1" "{{ .Name"\n}', 'Corefile:3: could not compile answer template "{{ .Name": unclosed action in "{{ .Name"'],
  ];
  for (const [corefile, message] of invalid) {
    test(`rejects: ${corefile.split('\n').join(' ')}`, () => {
      assert.throws(() => parseTemplate(directiveIn(corefile), BLOCK_ZONES), { message });
    });
  }

  test('zones default to the block, arguments are made absolute', () => {
    assert.deepEqual(parseTemplate(directiveIn('template IN A'), BLOCK_ZONES).zones, BLOCK_ZONES);
    assert.deepEqual(parseTemplate(directiveIn('template IN A Example.org in-addr.arpa.'), BLOCK_ZONES).zones, ['example.org.', 'in-addr.arpa.']);
  });
});

describe('template: answers', () => {
  const ipTemplate = (extra = ''): string =>
    `template ANY ANY {\n  match "(^|[.])ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$"\n  answer "{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"\n${extra}  fallthrough\n}`;
  // TestHandler, case for case. `records` are the sections as zone-file text; `fell` = the next plugin answered.
  const cases: Array<{
    name: string;
    template: string;
    qname: string;
    qtype?: number;
    qclass?: number;
    rcode: number;
    answer?: string[];
    authority?: string[];
    additional?: string[];
    fell?: boolean;
    error?: string;
  }> = [
    { name: 'RcodeServFail', template: 'template ANY ANY {\n  rcode SERVFAIL\n  fallthrough\n}', qname: 'test.invalid.', rcode: RCode.SERVFAIL, answer: [] },
    { name: 'ExampleDomainNameMismatch', template: ipTemplate(), qname: 'test.invalid.', rcode: RCode.NOERROR, fell: true },
    {
      name: 'BrokenTemplate',
      template: 'template ANY ANY {\n  match [.]example[.]$\n  answer "{{ .Name }} 60 IN TXT \\"{{ index .Match 2 }}\\""\n  fallthrough\n}',
      qname: 'test.example.',
      qtype: RRType.ANY,
      rcode: RCode.SERVFAIL,
      error: 'plugin/template: executing "index .Match 2": error calling index: index out of range: 2',
    },
    {
      name: 'NonRRTemplate',
      template: 'template ANY ANY {\n  match [.]example[.]$\n  answer "{{ .Name }}"\n  fallthrough\n}',
      qname: 'test.example.',
      qtype: RRType.ANY,
      rcode: RCode.SERVFAIL,
      error: 'plugin/template: answer:1: record without a type',
    },
    {
      name: 'NonRRAdditionalTemplate',
      template: 'template ANY ANY {\n  match [.]example[.]$\n  additional "{{ .Name }}"\n  fallthrough\n}',
      qname: 'test.example.',
      qtype: RRType.ANY,
      rcode: RCode.SERVFAIL,
      error: 'plugin/template: additional:1: record without a type',
    },
    {
      name: 'NonRRAuthorityTemplate',
      template: 'template ANY ANY {\n  match [.]example[.]$\n  authority "{{ .Name }}"\n  fallthrough\n}',
      qname: 'test.example.',
      qtype: RRType.ANY,
      rcode: RCode.SERVFAIL,
      error: 'plugin/template: authority:1: record without a type',
    },
    { name: 'ExampleIPMatch', template: 'template IN A {\n  answer "{{ .Name }} 60 IN A {{ .Remote }}"\n  fallthrough\n}', qname: 'test.example.', rcode: RCode.NOERROR, answer: ['test.example.\t60\tIN\tA\t10.240.0.1'] },
    { name: 'ExampleDomainMatch', template: ipTemplate(), qname: 'ip-10-95-12-8.example.', rcode: RCode.NOERROR, answer: ['ip-10-95-12-8.example.\t60\tIN\tA\t10.95.12.8'] },
    {
      name: 'ExampleDomainMatchHexIp',
      template:
        'template ANY ANY {\n  match "^ip0a(?P<b>[a-f0-9]{2})(?P<c>[a-f0-9]{2})(?P<d>[a-f0-9]{2})[.]example[.]$"\n  answer "{{ .Name }} 60 IN A 10.{{ parseInt .Group.b 16 8 }}.{{ parseInt .Group.c 16 8 }}.{{ parseInt .Group.d 16 8 }}"\n  fallthrough\n}',
      qname: 'ip0a5f0c09.example.',
      rcode: RCode.NOERROR,
      answer: ['ip0a5f0c09.example.\t60\tIN\tA\t10.95.12.9'],
    },
    {
      name: 'BrokenParseIntTemplate',
      template: 'template ANY ANY {\n  match [.]example[.]$\n  answer "{{ .Name }} 60 IN TXT \\"{{ parseInt \\"gg\\" 16 8 }}\\""\n  fallthrough\n}',
      qname: 'test.example.',
      qtype: RRType.ANY,
      rcode: RCode.SERVFAIL,
      error: 'plugin/template: executing "parseInt \\"gg\\" 16 8": error calling parseInt: strconv.ParseUint: parsing "gg": invalid syntax',
    },
    {
      name: 'ExampleDomainMXMatch',
      template: 'template ANY ANY {\n  match "(^|[.])ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$"\n  answer "{{ .Name }} 60 MX 10 {{ .Name }}"\n  additional "{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"\n  fallthrough\n}',
      qname: 'ip-10-95-12-8.example.',
      qtype: RRType.MX,
      rcode: RCode.NOERROR,
      answer: ['ip-10-95-12-8.example.\t60\tIN\tMX\t10 ip-10-95-12-8.example.'],
      additional: ['ip-10-95-12-8.example.\t60\tIN\tA\t10.95.12.8'],
    },
    {
      name: 'ExampleDomainANSMatch',
      template: ipTemplate('  additional "ns0.example. IN A 203.0.113.8"\n  authority "example. IN NS ns0.example.com."\n'),
      qname: 'ip-10-95-12-8.example.',
      rcode: RCode.NOERROR,
      answer: ['ip-10-95-12-8.example.\t60\tIN\tA\t10.95.12.8'],
      additional: ['ns0.example.\t3600\tIN\tA\t203.0.113.8'],
      authority: ['example.\t3600\tIN\tNS\tns0.example.com.'],
    },
    {
      name: 'ExampleInvalidNXDOMAIN',
      template: 'template ANY ANY {\n  match [.]invalid[.]$\n  rcode NXDOMAIN\n  answer "invalid. 60 {{ .Class }} SOA a.invalid. b.invalid. (1 60 60 60 60)"\n  fallthrough\n}',
      qname: 'test.invalid.',
      qtype: RRType.MX,
      rcode: RCode.NXDOMAIN,
      answer: ['invalid.\t60\tIN\tSOA\ta.invalid. b.invalid. 1 60 60 60 60'],
    },
    {
      name: 'CNAMEWithoutUpstream',
      template: 'template ANY ANY {\n  match example[.]net[.]\n  answer "example.net 60 IN CNAME target.example.com"\n  fallthrough\n}',
      qname: 'example.net.',
      qtype: RRType.MX,
      rcode: RCode.NOERROR,
      answer: ['example.net.\t60\tIN\tCNAME\ttarget.example.com.'],
    },
    {
      name: 'CNAME with the target from the rest of the chain',
      template: 'template ANY ANY {\n  match example[.]net[.]\n  answer "example.net 60 IN CNAME target.example.com"\n  fallthrough\n}',
      qname: 'example.net.',
      rcode: RCode.NOERROR,
      answer: ['example.net.\t60\tIN\tCNAME\ttarget.example.com.', 'next.plugin.\t1\tIN\tA\t192.0.2.53'],
    },
    {
      name: 'mdMissing',
      template: 'template ANY ANY {\n  match "(^|[.])ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$"\n  answer "{{ .Meta \\"foofoo\\" }}{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"\n  fallthrough\n}',
      qname: 'ip-10-95-12-8.example.',
      rcode: RCode.NOERROR,
      answer: ['ip-10-95-12-8.example.\t60\tIN\tA\t10.95.12.8'],
    },
    // class and type of the template filter the query; a class/type miss goes on
    { name: 'type miss goes on', template: 'template IN AAAA {\n  rcode NXDOMAIN\n}', qname: 'a.example.', rcode: RCode.NOERROR, fell: true },
    { name: 'class miss goes on', template: 'template CH ANY {\n  rcode NXDOMAIN\n}', qname: 'a.example.', rcode: RCode.NOERROR, fell: true },
    { name: 'zone miss goes on', template: 'template ANY ANY other.test {\n  rcode NXDOMAIN\n}', qname: 'a.example.', rcode: RCode.NOERROR, fell: true },
    // regex miss without fallthrough: SERVFAIL
    { name: 'regex miss, no fallthrough', template: 'template ANY ANY {\n  match ^nothing$\n  answer "a. 60 IN A 10.0.0.1"\n}', qname: 'a.example.', rcode: RCode.SERVFAIL, answer: [] },
    { name: 'regex miss, fallthrough elsewhere', template: 'template ANY ANY {\n  match ^nothing$\n  fallthrough other.test\n}', qname: 'a.example.', rcode: RCode.SERVFAIL, answer: [] },
    { name: 'regex miss, fallthrough here', template: 'template ANY ANY {\n  match ^nothing$\n  fallthrough example\n}', qname: 'a.example.', rcode: RCode.NOERROR, fell: true },
    // the other fields of the data
    {
      name: 'Zone, Type, Class, Question',
      template: 'template IN ANY example {\n  answer "{{ .Name }} 60 IN TXT \\"{{ .Zone }}\\" \\"{{ .Type }}\\" \\"{{ .Class }}\\" \\"{{ .Question.Name }}\\" \\"{{ .Message.Id }}\\""\n}',
      qname: 'Mixed.Example.',
      qtype: RRType.TXT,
      rcode: RCode.NOERROR,
      answer: ['mixed.example.\t60\tIN\tTXT\t"example." "TXT" "IN" "Mixed.Example." "1"'],
    },
    {
      name: 'ANY query takes the template type',
      template: 'template IN A example {\n  answer "{{ .Name }} 60 IN A 10.0.0.1"\n  additional "{{ .Name }} 60 IN TXT \\"{{ .Type }}\\""\n}',
      qname: 'a.example.',
      qtype: RRType.ANY,
      rcode: RCode.NOERROR,
      answer: ['a.example.\t60\tIN\tA\t10.0.0.1'],
      additional: ['a.example.\t60\tIN\tTXT\t"A"'],
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const p = templates(c.template);
      const req = testRequest(c.qname, c.qtype ?? RRType.A, { qclass: c.qclass ?? DnsClass.IN, client: { remoteAddress: '10.240.0.1' } });
      const reply = await p.serve(req, nextAnswers);
      assert.ok(reply);
      const msg = reply.view();
      assert.equal(reply.rcode, c.rcode);
      if (c.fell) {
        assert.deepEqual(msg.answers.map(rrToString), ['next.plugin.\t1\tIN\tA\t192.0.2.53']);
        return;
      }
      assert.equal(reply.error?.message, c.error);
      if (c.answer) assert.deepEqual(msg.answers.map(rrToString), c.answer);
      assert.deepEqual(msg.additional.map(rrToString), c.additional ?? []);
      assert.deepEqual(msg.authority.map(rrToString), c.authority ?? []);
      if (!c.error && c.rcode !== RCode.SERVFAIL) assert.equal(msg.aa, true);
    });
  }

  test('metadata in templates (mdMatch)', async () => {
    const p = templates(
      'template ANY ANY {\n  match "(^|[.])ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$"\n  answer "{{ .Meta \\"foo\\" }}-{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"\n  additional "{{ .Meta \\"bar\\" }}.example. IN A 203.0.113.8"\n  authority "example. IN NS {{ .Meta \\"bar\\" }}.example.com."\n}',
    );
    const req = testRequest('ip-10-95-12-8.example.', RRType.A);
    req.metadata.set('foo', 'myfoo');
    req.metadata.set('bar', 'mybar');
    const msg = (await p.serve(req, nextAnswers))?.view();
    assert.deepEqual(msg?.answers.map(rrToString), ['myfoo-ip-10-95-12-8.example.\t60\tIN\tA\t10.95.12.8']);
    assert.deepEqual(msg?.additional.map(rrToString), ['mybar.example.\t3600\tIN\tA\t203.0.113.8']);
    assert.deepEqual(msg?.authority.map(rrToString), ['example.\t3600\tIN\tNS\tmybar.example.com.']);
  });

  test('ederror attaches an Extended DNS Error (EDNS error)', async () => {
    const p = templates('template ANY ANY {\n  rcode NXDOMAIN\n  authority "invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)"\n  ederror 21 "Blocked due to RFC2606"\n}');
    const reply = await p.serve(testRequest('test.invalid.', RRType.A, { edns: edns() }), nextAnswers);
    const opts = reply?.view().edns?.options ?? [];
    assert.equal(reply?.rcode, RCode.NXDOMAIN);
    assert.deepEqual(
      opts.map((o) => [o.code, Buffer.from(o.data).readUInt16BE(0), Buffer.from(o.data).subarray(2).toString()]),
      [[15, 21, 'Blocked due to RFC2606']],
    );
  });

  test('several templates: the first that matches answers (TestMultiSection)', async () => {
    const body = [
      'template IN A {\n  rcode REFUSED\n}',
      'template IN TXT {\n  match "$^"\n  rcode SERVFAIL\n  fallthrough\n}',
      'template CH TXT coredns.invalid {\n  answer "{{ .Name }} 60 CH TXT \\"test\\""\n}',
      'template IN A example {\n  match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$\n  answer "{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"\n  fallthrough\n}',
      'template IN MX example {\n  match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$\n  answer "{{ .Name }} 60 IN MX 10 {{ .Name }}"\n  additional "{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}"\n}',
    ].join('\n');
    const p = templates(body, ['test.']);
    const cases: Array<[string, number, number, number, string[]]> = [
      ['some.test.', RRType.A, DnsClass.IN, RCode.REFUSED, []],
      ['some.test.', RRType.TXT, DnsClass.IN, RCode.NOERROR, ['next.plugin.\t1\tIN\tA\t192.0.2.53']],
      ['coredns.invalid.', RRType.TXT, DnsClass.CH, RCode.NOERROR, ['coredns.invalid.\t60\tCH\tTXT\t"test"']],
      ['ip-10-11-12-13.example.', RRType.A, DnsClass.IN, RCode.NOERROR, ['ip-10-11-12-13.example.\t60\tIN\tA\t10.11.12.13']],
      ['ip-10-11-12-13.example.', RRType.MX, DnsClass.IN, RCode.NOERROR, ['ip-10-11-12-13.example.\t60\tIN\tMX\t10 ip-10-11-12-13.example.']],
      ['other.example.', RRType.MX, DnsClass.IN, RCode.SERVFAIL, []],
    ];
    for (const [name, type, klass, rcode, answer] of cases) {
      const reply = await p.serve(testRequest(name, type, { qclass: klass }), nextAnswers);
      assert.equal(reply?.rcode, rcode, `${name} ${type}`);
      assert.deepEqual(reply?.view().answers.map(rrToString), answer, `${name} ${type}`);
    }
  });

  test('counts matches and failures', async () => {
    const shared = testShared();
    const { setup } = await import('./setup.js');
    const p = (await setup({
      directive: directiveIn('template IN ANY example {\n  answer "{{ .Name }}"\n}'),
      block: { keys: [], zones: ['.'], port: 53, settings: { listenAddresses: [] }, plugins: [], file: 'Corefile', line: 1 },
      corefilePath: '/tmp/Corefile',
      shared,
      options: { defaultPort: 53 },
      instance: new Map(),
      server: { reload: async () => true, corefileText: () => '', readiness: () => [], shuttingDown: () => false },
    })) as TemplatePlugin;
    await p.serve(testRequest('a.example.', RRType.A), nextAnswers);
    const text = await shared.metrics.metrics();
    assert.match(text, /coredns_template_matches_total\{server="dns:\/\/:53",zone="example.",view="",class="IN",type="A"\} 1/);
    assert.match(text, /coredns_template_rr_failures_total\{server="dns:\/\/:53",zone="example.",view="",class="IN",type="A",section="answer",template="\{\{ .Name \}\}"\} 1/);
  });
});

describe('template: Go template subset', () => {
  const data = new Map<string, TemplateValue>([
    ['Name', 'ip-10-1-2-3.example.'],
    ['Match', ['ip-10-1-2-3.example.', '1']],
    ['Group', new Map<string, TemplateValue>([['b', '0a'], ['1', '1']])],
  ]);
  const cases: Array<[string, string]> = [
    ['{{ .Name }} 60 IN A 10.0.0.1', 'ip-10-1-2-3.example. 60 IN A 10.0.0.1'],
    ['{{.Name}}', 'ip-10-1-2-3.example.'],
    ['{{ index .Match 1 }}', '1'],
    ['{{ .Group.b }}/{{ .Group.missing }}', '0a/<no value>'],
    ['{{ parseInt .Group.b 16 8 }}', '10'],
    ['{{ parseInt "0x1f" 0 64 }}', '31'],
    ['{{ .Group.b | printf "%s!" }}', '0a!'],
    ['{{ printf "%03d-%x" 7 255 }}', '007-ff'],
    ['{{ len .Match }} {{ slice .Name 0 2 }}', '2 ip'],
    ['a  {{- " b " -}}  c', 'a b c'],
    ['x{{/* a comment */}}y', 'xy'],
    ['{{ print (index .Match 1) "x" }}', '1x'],
    ['{{ .Match }}', '[ip-10-1-2-3.example. 1]'],
    ['{{ `raw` }}', 'raw'],
  ];
  for (const [source, want] of cases) {
    test(`${source} → ${want}`, () => {
      assert.equal(compileTemplate(source).execute(data), want);
    });
  }

  const failures: Array<[string, string]> = [
    ['{{ index .Match 2 }}', 'executing "index .Match 2": error calling index: index out of range: 2'],
    ['{{ parseInt "300" 10 8 }}', 'executing "parseInt \\"300\\" 10 8": error calling parseInt: strconv.ParseUint: parsing "300": value out of range'],
    ['{{ parseInt .Group.b 16 }}', 'executing "parseInt .Group.b 16": error calling parseInt: wrong number of args: want 3 got 2'],
  ];
  for (const [source, message] of failures) {
    test(`${source} fails: ${message}`, () => {
      assert.throws(() => compileTemplate(source).execute(data), { message });
    });
  }

  test('a missing struct field is an error, a missing map key prints <no value>', () => {
    const struct = { Name: 'x.' };
    assert.throws(() => compileTemplate('{{ .Grup.d }}').execute(struct), { message: 'executing ".Grup.d": can\'t evaluate field Grup' });
    assert.equal(compileTemplate('{{ .Name }}').execute(struct), 'x.');
  });
});

describe('template: record text', () => {
  const cases: Array<[string, string]> = [
    ['example.net 60 IN CNAME target.example.com', 'example.net.\t60\tIN\tCNAME\ttarget.example.com.'],
    ['ns0.example. IN A 203.0.113.8', 'ns0.example.\t3600\tIN\tA\t203.0.113.8'],
    ['a.example. 60 MX 10 a.example.', 'a.example.\t60\tIN\tMX\t10 a.example.'],
    ['version.bind. 0 CH TXT "kdns  1"', 'version.bind.\t0\tCH\tTXT\t"kdns  1"'],
    ['version.bind. CH 5 TXT "x"', 'version.bind.\t5\tCH\tTXT\t"x"'],
    ['invalid. 60 IN SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)', 'invalid.\t60\tIN\tSOA\tns.invalid. hostmaster.invalid. 1 60 60 60 60'],
  ];
  for (const [text, want] of cases) {
    test(text, () => {
      assert.equal(rrToString(parseRecord(text, 'answer')), want);
    });
  }
  test('no record is an error', () => {
    assert.throws(() => parseRecord('', 'answer'), { message: 'answer: template gave no record: ""' });
  });
});
