// rewrite: rule syntax, the request the next plugin sees, and the reply the client gets. Cases are
// transcribed from CoreDNS's plugin/rewrite tests (rewrite_test.go, name_test.go, ttl_test.go,
// rcode_test.go), run through kdns's own chain.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { a, cname, mx, rrToString, srv } from '../../lib/dns/rr.js';
import { DnsClass, RCode, RRType, type EdnsOption, type ResourceRecord } from '../../lib/dns/types.js';
import type { Next } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { edns, testBlock, testRequest, testShared } from '../../../test/util/request.js';
import { RewritePlugin } from './handler.js';
import { parseRewrite } from './setup.js';

/** A plugin holding one rule per line (each line is `rewrite ...` or a `rewrite ... { }` block). */
function rewriter(...rules: string[]): RewritePlugin {
  const p = new RewritePlugin();
  for (const r of rules) p.rules.push(parseRewrite(directiveIn(r)));
  return p;
}

interface Seen {
  name: string;
  type: number;
  class: number;
  options: EdnsOption[] | undefined;
}

/**
 * The next plugin: records the request it got and answers it with `records` (default: one A
 * record for the name it was asked, TTL 5, as CoreDNS's test msgPrinter does).
 */
function recorder(records?: (req: DnsRequest) => ResourceRecord[], rcode: number = RCode.NOERROR): { next: Next; seen: Seen[] } {
  const seen: Seen[] = [];
  const next: Next = (req) => {
    seen.push({ name: req.qname, type: req.qtype, class: req.qclass, options: req.edns?.options });
    const m = responseFor(req, rcode);
    m.answers = records ? records(req) : [a(req.qname, 5, '10.0.0.1')];
    return Reply.of(m);
  };
  return { next, seen };
}

async function ask(p: RewritePlugin, req: DnsRequest, next: Next): Promise<Reply> {
  const r = await p.serve(req, next);
  assert.ok(r, 'a reply');
  return r;
}

describe('rewrite: rule syntax', () => {
  // TestNewRule, TestNewTTLRule, TestNewRCodeRule, TestNameRuleAnswers (argument checks).
  const valid = [
    'rewrite name a.com b.com',
    'rewrite name exact a.com b.com',
    'rewrite name prefix a.com b.com',
    'rewrite name suffix a.com b.com',
    'rewrite name substring a.com b.com',
    'rewrite name regex ([a])\\.com new-{1}.com',
    'rewrite name regex (dns)\\.(core)\\.(rocks) {2}.{1}.{3} answer name (core)\\.(dns)\\.(rocks) {2}.{1}.{3}',
    'rewrite name substring fcore.dns.rocks dns.fcore.rocks answer name (fcore)\\.(dns)\\.(rocks) {2}.{1}.{3}',
    'rewrite name regex srv1.coredns.rocks 10',
    'rewrite name regex (.*).coredns.rocks {1}.coredns.rocks',
    'rewrite name suffix staging.mydomain.com coredns.rock answer auto',
    'rewrite name regex staging.mydomain.com coredns.rock answer auto',
    'rewrite name regex staging.mydomain.com coredns.rock answer name coredns.rock staging.mydomain.com',
    'rewrite name regex staging.mydomain.com coredns.rock answer name (.*).coredns.rock {1}.staging.mydomain.com name (.*).coredns.rock {1}.staging.mydomain.com',
    'rewrite name regex staging.mydomain.com coredns.rock answer name (.*).coredns.rock {1}.staging.mydomain.com answer value (.*).coredns.rock {1}.staging.mydomain.com',
    'rewrite name suffix staging.mydomain.com. coredns.rock. answer value (.*).coredns.rock {1}.staging.mydomain.com name (.*).coredns.rock {1}.staging.mydomain.com',
    'rewrite type any a',
    'rewrite class ch in',
    'rewrite edns0 local set 65518 abcdefg',
    'rewrite edns0 local set 0xffee abcdefg revert',
    'rewrite edns0 local append 0xffee abcdefg',
    'rewrite edns0 local replace 0xffee abcdefg',
    'rewrite edns0 local unset 0xffee',
    'rewrite edns0 nsid set',
    'rewrite edns0 nsid append revert',
    'rewrite edns0 nsid unset',
    'rewrite edns0 local set 0xffee {qname}',
    'rewrite edns0 local append 0xffee {client_ip}',
    'rewrite edns0 local replace 0xffee {server_port} revert',
    'rewrite edns0 local set 0xffee {kubernetes/client-namespace}',
    'rewrite edns0 subnet set 24 56',
    'rewrite edns0 subnet append 24 56 revert',
    'rewrite edns0 subnet unset',
    'rewrite stop name a.com b.com',
    'rewrite continue type any a',
    'rewrite continue edns0 subnet replace 24 56',
    'rewrite ttl srv1.coredns.rocks 10',
    'rewrite continue ttl regex (srv1)\\.(coredns)\\.(rocks) 35',
    'rewrite ttl range.coredns.rocks 1-2',
    'rewrite ttl ceil.coredns.rocks -2',
    'rewrite ttl floor.coredns.rocks 1-',
    'rewrite rcode numeric.rcode.coredns.rocks 2 0',
    'rewrite rcode exact match.string.rcode.coredns.rocks SERVFAIL NOERROR',
    'rewrite continue rcode regex (regex)\\.rcode\\.(coredns)\\.(rocks) FORMERR NOERROR',
    'rewrite continue cname exact def.example.com xyz.example.com',
    'rewrite continue cname regex (.*)\\.web\\.(.*)\\.site\\. {1}.webapp.{2}.org.',
    'rewrite stop {\n  name regex (.*)-(us-west-1)\\.coredns\\.rocks {1}.service.{2}.consul\n  answer name (.*)\\.service\\.(us-west-1)\\.consul {1}-{2}.coredns.rocks\n}',
  ];
  for (const line of valid) {
    test(`accepts: ${line}`, () => {
      assert.doesNotThrow(() => parseRewrite(directiveIn(line)));
    });
  }

  // Each wrong rule is a Corefile error naming the line (line 2 is the directive, 3+ its block).
  const invalid: Array<[string, string]> = [
    ['rewrite', 'Corefile:2: invalid rewrite rule: no rule type specified for rewrite'],
    ['rewrite foo', 'Corefile:2: invalid rewrite rule: invalid rule type "foo"'],
    ['rewrite name', 'Corefile:2: invalid rewrite rule: too few arguments for a name rule'],
    ['rewrite name a.com', 'Corefile:2: invalid rewrite rule: too few arguments for a name rule'],
    ['rewrite name a.com b.com c.com', 'Corefile:2: invalid rewrite rule: name rule supports only exact, prefix, suffix, substring, and regex name matching, got "a.com"'],
    ['rewrite name regex ([a]\\.com new-{1}.com', 'Corefile:2: invalid rewrite rule: invalid regex "([a]\\\\.com": Unterminated group'],
    ['rewrite name regex (adns)\\.(core)\\.(rocks) {2}.{1}.{3} answer name (core)\\.(adns)\\.(rocks) {2}.{1}.{3} too.long way.too.long', 'Corefile:2: invalid rewrite rule: invalid type "too.long" for an answer rule (expected auto, name or value)'],
    ['rewrite name regex (bdns)\\.(core)\\.(rocks) {2}.{1}.{3} NoAnswer name (core)\\.(bdns)\\.(rocks) {2}.{1}.{3}', 'Corefile:2: invalid rewrite rule: unexpected "NoAnswer" in a name rule: response rewrites begin with "answer"'],
    ['rewrite name regex (cdns)\\.(core)\\.(rocks) {2}.{1}.{3} answer ttl (core)\\.(cdns)\\.(rocks) {2}.{1}.{3}', 'Corefile:2: invalid rewrite rule: invalid type "ttl" for an answer rule (expected auto, name or value)'],
    ['rewrite name substring a.com b.com c.com', 'Corefile:2: invalid rewrite rule: invalid arguments for a name rule: expected "answer auto", "answer name FROM TO" or "answer value FROM TO"'],
    ['rewrite name regex (.*).coredns.rocks {1}.{2}.coredns.rocks', 'Corefile:2: invalid rewrite rule: the rewrite pattern "{1}.{2}.coredns.rocks" uses more groups than the matching pattern "(.*).coredns.rocks" has'],
    ['rewrite name suffix staging.mydomain.com coredns.rock answer', 'Corefile:2: invalid rewrite rule: invalid arguments for a name rule: expected "answer auto", "answer name FROM TO" or "answer value FROM TO"'],
    ['rewrite name suffix staging.mydomain.com coredns.rock answer name', 'Corefile:2: invalid rewrite rule: answer name needs 2 arguments: FROM TO'],
    ['rewrite name suffix staging.mydomain.com coredns.rock answer other', 'Corefile:2: invalid rewrite rule: invalid type "other" for an answer rule (expected auto, name or value)'],
    ['rewrite name regex staging.mydomain.com coredns.rock answer name (.*).coredns.rock {1}.{2}.staging.mydomain.com', 'Corefile:2: invalid rewrite rule: the rewrite pattern "{1}.{2}.staging.mydomain.com" uses more groups than the matching pattern "(.*).coredns.rock" has'],
    ['rewrite name regex staging.mydomain.com coredns.rock answer name (.*).coredns.rock {1}.staging.mydomain.com name (.*).coredns.rock', 'Corefile:2: invalid rewrite rule: answer name needs 2 arguments: FROM TO'],
    ['rewrite name regex a b answer auto answer name (.*) {1}', 'Corefile:2: invalid rewrite rule: "answer auto" cannot be combined with "answer name" rules'],
    ['rewrite type', 'Corefile:2: invalid rewrite rule: type rules must have exactly two arguments: FROM TO'],
    ['rewrite type a', 'Corefile:2: invalid rewrite rule: type rules must have exactly two arguments: FROM TO'],
    ['rewrite type any a a', 'Corefile:2: invalid rewrite rule: type rules must have exactly two arguments: FROM TO'],
    ['rewrite type XY WV', 'Corefile:2: invalid rewrite rule: invalid type "XY"'],
    ['rewrite type ANY WV', 'Corefile:2: invalid rewrite rule: invalid type "WV"'],
    ['rewrite class IN', 'Corefile:2: invalid rewrite rule: class rules must have exactly two arguments: FROM TO'],
    ['rewrite class IN WV', 'Corefile:2: invalid rewrite rule: invalid class "WV"'],
    ['rewrite edns0', 'Corefile:2: invalid rewrite rule: too few arguments for an EDNS0 rule'],
    ['rewrite edns0 unknown-rule-type set', 'Corefile:2: invalid rewrite rule: invalid EDNS0 rule type "unknown-rule-type" (expected local, nsid or subnet)'],
    ['rewrite edns0 local', 'Corefile:2: invalid rewrite rule: too few arguments for an EDNS0 rule'],
    ['rewrite edns0 local set 0xffee', 'Corefile:2: invalid rewrite rule: EDNS0 local rules take CODE and DATA'],
    ['rewrite edns0 local set invalid-uint abcdefg', 'Corefile:2: invalid rewrite rule: invalid EDNS0 option code "invalid-uint"'],
    ['rewrite edns0 local unset 0xffee abcdefg', 'Corefile:2: invalid rewrite rule: EDNS0 local unset takes exactly one argument: CODE'],
    ['rewrite edns0 local unset 0xffee revert', 'Corefile:2: invalid rewrite rule: EDNS0 local unset takes exactly one argument: CODE'],
    ['rewrite edns0 local foo 0xffee abcdefg', 'Corefile:2: invalid rewrite rule: invalid EDNS0 action "foo" (expected set, append, replace or unset)'],
    ['rewrite edns0 local set 0xffee 0xabcdefg', 'Corefile:2: invalid rewrite rule: invalid hex data "0xabcdefg"'],
    ['rewrite edns0 nsid set junk', 'Corefile:2: invalid rewrite rule: EDNS0 nsid rules take no arguments'],
    ['rewrite edns0 nsid unset revert', 'Corefile:2: invalid rewrite rule: EDNS0 nsid rules take no arguments'],
    ['rewrite edns0 local set 0xffee {dummy}', 'Corefile:2: invalid rewrite rule: unsupported variable name "{dummy}"'],
    ['rewrite edns0 subnet set -1 56', 'Corefile:2: invalid rewrite rule: invalid IPv4 bit mask length "-1" (0-32)'],
    ['rewrite edns0 subnet set 33 56', 'Corefile:2: invalid rewrite rule: invalid IPv4 bit mask length "33" (0-32)'],
    ['rewrite edns0 subnet set 24 129', 'Corefile:2: invalid rewrite rule: invalid IPv6 bit mask length "129" (0-128)'],
    ['rewrite edns0 subnet append 24 56 72', 'Corefile:2: invalid rewrite rule: EDNS0 subnet rules take IPv4 and IPv6 prefix lengths'],
    ['rewrite edns0 subnet unset 24 56', 'Corefile:2: invalid rewrite rule: EDNS0 subnet unset takes no arguments'],
    ['rewrite unknown-action name a.com b.com', 'Corefile:2: invalid rewrite rule: invalid rule type "unknown-action"'],
    ['rewrite stop', 'Corefile:2: invalid rewrite rule: stop rule must begin with a rule type'],
    ['rewrite answer name a b', 'Corefile:2: invalid rewrite rule: response rewrites must begin with a name rule'],
    ['rewrite ttl srv1.coredns.rocks 12345678901234567890', 'Corefile:2: invalid rewrite rule: invalid TTL "12345678901234567890" for a ttl rule (expected SECONDS or MIN-MAX)'],
    ['rewrite ttl srv1.coredns.rocks coredns.rocks', 'Corefile:2: invalid rewrite rule: invalid TTL "coredns.rocks" for a ttl rule (expected SECONDS or MIN-MAX)'],
    ['rewrite ttl srv1.coredns.rocks #1', 'Corefile:2: invalid rewrite rule: too few arguments for a ttl rule'],
    ['rewrite ttl invalid.coredns.rocks -', 'Corefile:2: invalid rewrite rule: invalid TTL "-" for a ttl rule (expected SECONDS or MIN-MAX)'],
    ['rewrite ttl invalid.coredns.rocks 2-1', 'Corefile:2: invalid rewrite rule: invalid TTL "2-1" for a ttl rule (expected SECONDS or MIN-MAX)'],
    ['rewrite ttl invalid.coredns.rocks 5-10-20', 'Corefile:2: invalid rewrite rule: invalid TTL "5-10-20" for a ttl rule (expected SECONDS or MIN-MAX)'],
    ['rewrite ttl fancy invalid.coredns.rocks 5', 'Corefile:2: invalid rewrite rule: ttl rule supports only exact, prefix, suffix, substring, and regex name matching'],
    ['rewrite rcode too.few.rcode.coredns.rocks 2', 'Corefile:2: invalid rewrite rule: too few arguments for a rcode rule'],
    ['rewrite rcode exact too.many.rcode.coredns.rocks 2 1 0', 'Corefile:2: invalid rewrite rule: too many arguments for a rcode rule'],
    ['rewrite rcode invalid.rcode.coredns.rocks random nothing', 'Corefile:2: invalid rewrite rule: invalid matching RCODE "random" for a rcode rule'],
    ['rewrite rcode invalid.rcode.coredns.rocks 0 nothing', 'Corefile:2: invalid rewrite rule: invalid replacement RCODE "nothing" for a rcode rule'],
    ['rewrite rcode x.example 24 0', 'Corefile:2: invalid rewrite rule: invalid matching RCODE "24" for a rcode rule'],
    ['rewrite cname a.example.', 'Corefile:2: invalid rewrite rule: a cname rule takes [TYPE] FROM TO, got 1 arguments'],
    ['rewrite cname fancy a.example. b.example.', 'Corefile:2: invalid rewrite rule: unknown cname rewrite type "fancy"'],
    ['rewrite cname regex (a b', 'Corefile:2: invalid rewrite rule: invalid regex "(a": Unterminated group'],
    ['rewrite name a.example. b.example. {\n}', 'Corefile:2: a rewrite rule written on its line takes no block'],
    // In a block the error names the line of the word at fault.
    ['rewrite stop {\n  name regex (.*)\\.example {1}.test\n  answer name (.*)\\.test {1}.{2}.example\n}', 'Corefile:4: invalid rewrite rule: the rewrite pattern "{1}.{2}.example" uses more groups than the matching pattern "(.*)\\\\.test" has'],
    ['rewrite {\n  name exact a.example\n  b.example\n  answer value (x b.example\n}', 'Corefile:5: invalid rewrite rule: invalid regex "(x": Unterminated group'],
  ];
  for (const [line, message] of invalid) {
    test(`rejects: ${line.split('\n').join(' ')}`, () => {
      assert.throws(() => parseRewrite(directiveIn(line)), { message });
    });
  }
});

describe('rewrite: the question the next plugin sees', () => {
  // TestRewrite: twelve rules in one list, stop/continue, name/class/type.
  const rules = [
    'rewrite name from.nl. to.nl.',
    'rewrite name regex (core)\\.(dns)\\.(rocks)\\.(nl) {2}.{1}.{3}.{4} answer name (dns)\\.(core)\\.(rocks)\\.(nl) {2}.{1}.{3}.{4}',
    'rewrite name exact from.exact.nl. to.nl.',
    'rewrite name prefix prefix to',
    'rewrite name suffix .suffix. .nl.',
    'rewrite name substring from.substring to',
    'rewrite name regex (f.*m)\\.regex\\.(nl) to.{2}',
    'rewrite continue name regex consul\\.(rocks) core.dns.{1}',
    'rewrite name core.dns.rocks to.nl.',
    'rewrite continue class HS CH',
    'rewrite stop class CH IN',
    'rewrite stop type ANY HINFO',
  ];
  const { A, ANY, HINFO } = RRType;
  const { IN, CH, HS } = DnsClass;
  const cases: Array<[string, number, number, string, number, number]> = [
    ['from.nl.', A, IN, 'to.nl.', A, IN],
    ['a.nl.', A, IN, 'a.nl.', A, IN],
    ['a.nl.', A, CH, 'a.nl.', A, IN],
    ['a.nl.', ANY, IN, 'a.nl.', HINFO, IN],
    // the name is rewritten, the type is not: the first rule stops
    ['from.nl.', ANY, IN, 'to.nl.', ANY, IN],
    ['from.exact.nl.', A, IN, 'to.nl.', A, IN],
    ['prefix.nl.', A, IN, 'to.nl.', A, IN],
    ['to.suffix.', A, IN, 'to.nl.', A, IN],
    ['from.substring.nl.', A, IN, 'to.nl.', A, IN],
    ['from.regex.nl.', A, IN, 'to.nl.', A, IN],
    ['consul.rocks.', A, IN, 'to.nl.', A, IN],
    // class is rewritten (second class rule stops), type is not
    ['a.nl.', ANY, CH, 'a.nl.', ANY, IN],
    // class twice through continue: HS to CH, CH to IN
    ['a.nl.', ANY, HS, 'a.nl.', ANY, IN],
    ['core.dns.rocks.nl.', A, IN, 'dns.core.rocks.nl.', A, IN],
    // names are matched case-insensitively
    ['FROM.nl.', A, IN, 'to.nl.', A, IN],
  ];
  for (const [from, fromT, fromC, to, toT, toC] of cases) {
    test(`${from} ${fromT}/${fromC} → ${to} ${toT}/${toC}`, async () => {
      const { next, seen } = recorder();
      const reply = await ask(rewriter(...rules), testRequest(from, fromT, { qclass: fromC }), next);
      assert.deepEqual(seen.map((s) => [s.name, s.type, s.class]), [[to, toT, toC]]);
      // The client always gets its own question back.
      assert.deepEqual(reply.view().questions, [{ name: from, type: fromT, class: fromC }]);
    });
  }

  test('a query no rule matches goes on as it came', async () => {
    const req = testRequest('other.example.', RRType.A);
    let got: DnsRequest | undefined;
    const p = rewriter('rewrite name exact foo.example. bar.example.');
    await p.serve(req, (r) => {
      got = r;
      return undefined;
    });
    assert.equal(got, req);
  });

  test('a rewrite to a name that is no domain name is SERVFAIL', async () => {
    const { next, seen } = recorder();
    const reply = await ask(rewriter(`rewrite name regex (.*)\\.example\\. {1}.${'x'.repeat(64)}.example.`), testRequest('a.example.', RRType.A), next);
    assert.equal(reply.rcode, RCode.SERVFAIL);
    assert.deepEqual(seen, []);
  });
});

describe('rewrite: answers mapped back', () => {
  // TestRewriteDefaultRevertPolicy, TestNewNameRule (answers) and the README's examples.
  const cases: Array<{ rules: string[]; query: string; upstream: string; answer: string; value?: [string, string] }> = [
    { rules: ['rewrite name prefix prefix to'], query: 'prefix.nl.', upstream: 'to.nl.', answer: 'to.nl.' },
    { rules: ['rewrite name suffix .suffix. .nl.'], query: 'to.suffix.', upstream: 'to.nl.', answer: 'to.nl.' },
    { rules: ['rewrite name substring from.substring to'], query: 'from.substring.nl.', upstream: 'to.nl.', answer: 'to.nl.' },
    { rules: ['rewrite name regex (f.*m)\\.regex\\.(nl) to.{2}'], query: 'from.regex.nl.', upstream: 'to.nl.', answer: 'to.nl.' },
    { rules: ['rewrite name prefix foo bar answer auto'], query: 'foo.example.com.', upstream: 'bar.example.com.', answer: 'foo.example.com.' },
    { rules: ['rewrite name prefix foo. bar. answer auto'], query: 'foo.example.com.', upstream: 'bar.example.com.', answer: 'foo.example.com.' },
    { rules: ['rewrite name suffix com org answer auto'], query: 'foo.example.com.', upstream: 'foo.example.org.', answer: 'foo.example.com.' },
    { rules: ['rewrite name suffix .com .org answer auto'], query: 'foo.example.com.', upstream: 'foo.example.org.', answer: 'foo.example.com.' },
    {
      rules: ['rewrite name suffix .ingress.coredns.rocks nginx.coredns.rocks answer auto'],
      query: 'coredns.ingress.coredns.rocks.',
      upstream: 'corednsnginx.coredns.rocks.',
      answer: 'coredns.ingress.coredns.rocks.',
    },
    { rules: ['rewrite name exact coredns.rocks service.consul answer auto'], query: 'coredns.rocks.', upstream: 'service.consul.', answer: 'coredns.rocks.' },
    { rules: ['rewrite name exact coredns.rocks. service.consul.'], query: 'coredns.rocks.', upstream: 'service.consul.', answer: 'coredns.rocks.' },
    { rules: ['rewrite name exact coredns.org. service.consul.'], query: 'coredns.rocks.', upstream: 'coredns.rocks.', answer: 'coredns.rocks.' },
    { rules: ['rewrite name regex (.*).coredns.rocks {1}.coredns.maps answer auto'], query: 'foo.coredns.rocks.', upstream: 'foo.coredns.maps.', answer: 'foo.coredns.rocks.' },
    {
      rules: ['rewrite name regex (.*).coredns.rocks {1}.coredns.maps answer name (.*).coredns.maps {1}.coredns.works'],
      query: 'foo.coredns.rocks.',
      upstream: 'foo.coredns.maps.',
      answer: 'foo.coredns.works.',
    },
    { rules: ['rewrite name regex (.*).coredns.rocks {1}.coredns.maps'], query: 'foo.coredns.rocks.', upstream: 'foo.coredns.maps.', answer: 'foo.coredns.maps.' },
    {
      rules: ['rewrite stop {\n  name regex (.*)-(us-west-1)\\.coredns\\.rocks {1}.service.{2}.consul\n  answer name (.*)\\.service\\.(us-west-1)\\.consul {1}-{2}.coredns.rocks\n}'],
      query: 'ftp-us-west-1.coredns.rocks.',
      upstream: 'ftp.service.us-west-1.consul.',
      answer: 'ftp-us-west-1.coredns.rocks.',
    },
    // answer value: the CNAME target is mapped too (auto maps names under the rewritten one)
    {
      rules: ['rewrite name suffix .coredns.rocks .service.consul answer auto'],
      query: 'www.coredns.rocks.',
      upstream: 'www.service.consul.',
      answer: 'www.coredns.rocks.',
      value: ['web.service.consul.', 'web.coredns.rocks.'],
    },
    {
      rules: ['rewrite name exact www.example. web.internal. answer value (.*)\\.internal\\. {1}.example.'],
      query: 'www.example.',
      upstream: 'web.internal.',
      answer: 'www.example.',
      value: ['lb.internal.', 'lb.example.'],
    },
  ];
  for (const c of cases) {
    test(`${c.rules.join('; ').split('\n').join(' ')}: ${c.query}`, async () => {
      const { next, seen } = recorder((req) => (c.value ? [cname(req.qname, 5, c.value[0])] : [a(req.qname, 5, '10.0.0.1')]));
      const reply = await ask(rewriter(...c.rules), testRequest(c.query, RRType.A), next);
      assert.equal(seen[0]?.name, c.upstream);
      const msg = reply.view();
      assert.equal(msg.questions[0]?.name, c.query);
      assert.equal(msg.answers[0]?.name, c.answer);
      if (c.value) assert.deepEqual(msg.answers[0]?.data, { target: c.value[1] });
    });
  }

  test('answer value maps MX, SRV and PTR targets in every section', async () => {
    const p = rewriter('rewrite name regex (.*)\\.corp\\. {1}.svc.consul. answer auto answer value (.*)\\.service\\.consul\\. {1}.corp.');
    const next: Next = (req) => {
      const m = responseFor(req);
      m.answers = [mx(req.qname, 5, 10, 'mail.service.consul.'), srv(req.qname, 5, 0, 1, 25, 'smtp.service.consul.')];
      m.additional = [a('mail.service.consul.', 5, '10.0.0.9')];
      return Reply.of(m);
    };
    const msg = (await ask(p, testRequest('box.corp.', RRType.MX), next)).view();
    assert.deepEqual(
      msg.answers.map((r) => [r.name, r.data]),
      [
        ['box.corp.', { preference: 10, exchange: 'mail.corp.' }],
        ['box.corp.', { priority: 0, weight: 1, port: 25, target: 'smtp.corp.' }],
      ],
    );
    // The additional record's owner is a value name, not the rewritten question: left alone.
    assert.equal(msg.additional[0]?.name, 'mail.service.consul.');
  });
});

describe('rewrite: ttl', () => {
  // TestTtlRewrite
  const rules = [
    'rewrite stop ttl srv1.coredns.rocks 1',
    'rewrite stop ttl exact srv15.coredns.rocks 15',
    'rewrite stop ttl prefix srv30 30',
    'rewrite stop ttl suffix 45.coredns.rocks 45',
    'rewrite stop ttl substring rv50 50',
    'rewrite stop ttl regex (srv10)\\.(coredns)\\.(rocks) 10',
    'rewrite stop ttl regex (srv20)\\.(coredns)\\.(rocks) 20',
    'rewrite stop ttl range.example.com. 30-300',
    'rewrite stop ttl ceil.example.com. -11',
    'rewrite stop ttl floor.example.com. 5-',
  ];
  const cases: Array<[string, number, number]> = [
    ['srv1.coredns.rocks.', 5, 1],
    ['srv15.coredns.rocks.', 5, 15],
    ['srv30.coredns.rocks.', 5, 30],
    ['srv45.coredns.rocks.', 5, 45],
    ['srv50.coredns.rocks.', 5, 50],
    ['srv10.coredns.rocks.', 5, 10],
    ['xmpp.coredns.rocks.', 5, 5],
    ['srv15.coredns.rocks.', 5, 15],
    ['srv30.coredns.rocks.', 5, 30],
    ['srv20.coredns.rocks.', 5, 20],
    ['range.example.com.', 5, 30],
    ['range.example.com.', 55, 55],
    ['range.example.com.', 500, 300],
    ['ceil.example.com.', 5, 5],
    ['ceil.example.com.', 15, 11],
    ['floor.example.com.', 0, 5],
    ['floor.example.com.', 30, 30],
  ];
  for (const [name, ttl, want] of cases) {
    test(`${name} TTL ${ttl} → ${want}`, async () => {
      const { next } = recorder((req) => [a(req.qname, ttl, '10.0.0.1')]);
      const msg = (await ask(rewriter(...rules), testRequest(name, RRType.A), next)).view();
      assert.deepEqual(
        msg.answers.map((r) => r.ttl),
        [want],
      );
    });
  }
});

describe('rewrite: rcode', () => {
  // TestRCodeRewrite and the README example.
  const cases: Array<{ rule: string; name: string; rcode: number; want: number }> = [
    { rule: 'rewrite rcode exact srv1.coredns.rocks SERVFAIL FORMERR', name: 'srv1.coredns.rocks.', rcode: RCode.SERVFAIL, want: RCode.FORMERR },
    { rule: 'rewrite rcode exact srv1.coredns.rocks SERVFAIL FORMERR', name: 'srv1.coredns.rocks.', rcode: RCode.NXDOMAIN, want: RCode.NXDOMAIN },
    { rule: 'rewrite rcode exact srv1.coredns.rocks SERVFAIL FORMERR', name: 'srv2.coredns.rocks.', rcode: RCode.SERVFAIL, want: RCode.SERVFAIL },
    { rule: 'rewrite continue rcode regex (.*)\\.coredns\\.rocks 2 0', name: 'a.coredns.rocks.', rcode: RCode.SERVFAIL, want: RCode.NOERROR },
    { rule: 'rewrite rcode suffix example.org NXDOMAIN NOERROR', name: 'gone.example.org.', rcode: RCode.NXDOMAIN, want: RCode.NOERROR },
  ];
  for (const c of cases) {
    for (const records of [[], [a(c.name, 5, '10.0.0.1')]]) {
      test(`${c.rule}: ${c.name} rcode ${c.rcode} with ${records.length} record(s)`, async () => {
        const { next } = recorder(() => records, c.rcode);
        const reply = await ask(rewriter(c.rule), testRequest(c.name, RRType.A), next);
        assert.equal(reply.rcode, c.want);
        assert.equal(reply.view().rcode, c.want);
      });
    }
  }
});

describe('rewrite: edns0', () => {
  const local = (code: number, data: string | number[]): EdnsOption => ({ code, data: Uint8Array.from(typeof data === 'string' ? Buffer.from(data) : data) });
  const nsid: EdnsOption = { code: 3, data: new Uint8Array(0) };
  const subnet = (family: number, mask: number, address: number[]): EdnsOption => ({ code: 8, data: Uint8Array.from([0, family, mask, 0, ...address]) });
  // TestRewriteEDNS0Local, TestEdns0MultiRule (request side; the client 10.240.0.1 as in CoreDNS's
  // test writer), plus unset and the other variables.
  // `to: undefined`: no rule applied, so the query went on untouched, without an OPT record.
  const cases: Array<{ rules: string[]; from?: EdnsOption[]; to: EdnsOption[] | undefined; client?: string }> = [
    { rules: ['rewrite edns0 local set 0xffee 0xabcdef'], to: [local(0xffee, [0xab, 0xcd, 0xef])] },
    { rules: ['rewrite edns0 local append 0xffee abcdefghijklmnop'], to: [local(0xffee, 'abcdefghijklmnop')] },
    { rules: ['rewrite edns0 local replace 0xffee abcdefghijklmnop'], to: undefined },
    { rules: ['rewrite edns0 nsid set'], to: [nsid] },
    { rules: ['rewrite edns0 nsid append'], to: [nsid] },
    { rules: ['rewrite edns0 nsid replace'], to: undefined },
    { rules: ['rewrite stop edns0 local replace 0xffee abcdef', 'rewrite stop edns0 local set 0xffee fedcba'], to: [local(0xffee, 'fedcba')] },
    { rules: ['rewrite stop edns0 local replace 0xffee abcdef', 'rewrite stop edns0 local set 0xffee fedcba'], from: [local(0xffee, 'foobar')], to: [local(0xffee, 'abcdef')] },
    { rules: ['rewrite stop edns0 local replace 0xffee {qname}', 'rewrite stop edns0 local set 0xffee {qtype}'], to: [local(0xffee, [0, 1])] },
    { rules: ['rewrite stop edns0 local replace 0xffee {qname}', 'rewrite stop edns0 local set 0xffee {qtype}'], from: [local(0xffee, 'foobar')], to: [local(0xffee, 'example.com.')] },
    { rules: ['rewrite stop edns0 nsid replace', 'rewrite stop edns0 nsid set'], to: [nsid] },
    { rules: ['rewrite stop edns0 nsid replace', 'rewrite stop edns0 nsid set'], from: [local(0xffee, 'foobar')], to: [local(0xffee, 'foobar'), nsid] },
    { rules: ['rewrite stop edns0 nsid replace', 'rewrite stop edns0 nsid set'], from: [nsid], to: [nsid] },
    { rules: ['rewrite stop edns0 subnet replace 32 56', 'rewrite stop edns0 subnet set 0 56'], to: [subnet(1, 0, [])] },
    { rules: ['rewrite stop edns0 subnet replace 32 56', 'rewrite stop edns0 subnet set 0 56'], from: [subnet(1, 0, [])], to: [subnet(1, 32, [10, 240, 0, 1])] },
    { rules: ['rewrite edns0 subnet set 24 56'], to: [subnet(1, 24, [10, 240, 0])] },
    { rules: ['rewrite edns0 subnet set 24 56'], client: '2001:db8:1:2:3::9', to: [subnet(2, 56, [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0])] },
    { rules: ['rewrite edns0 subnet append 24 56'], from: [subnet(1, 8, [10])], to: [subnet(1, 8, [10])] },
    { rules: ['rewrite edns0 subnet unset'], from: [subnet(1, 8, [10]), nsid], to: [nsid] },
    { rules: ['rewrite edns0 local unset 0xffee'], from: [local(0xffee, 'a'), nsid, local(0xffee, 'b')], to: [nsid] },
    { rules: ['rewrite edns0 local append 0xffee abc'], from: [local(0xffee, 'x')], to: [local(0xffee, 'x')] },
    { rules: ['rewrite edns0 local set 0xffee {client_ip}'], to: [local(0xffee, [10, 240, 0, 1])] },
    { rules: ['rewrite edns0 local set 0xffee {client_port}'], to: [local(0xffee, [0x9c, 0x40])] },
    { rules: ['rewrite edns0 local set 0xffee {protocol}'], to: [local(0xffee, 'udp')] },
    { rules: ['rewrite edns0 local set 0xffee {server_ip}'], to: [local(0xffee, [127, 0, 0, 1])] },
    { rules: ['rewrite edns0 local set 0xffee {server_port}'], to: [local(0xffee, [0, 53])] },
    // metadata nobody set: no option
    { rules: ['rewrite edns0 local set 0xffee {kubernetes/client-namespace}'], to: undefined },
  ];
  for (const c of cases) {
    test(`${c.rules.join('; ')} on [${(c.from ?? []).map((o) => o.code).join(',')}]`, async () => {
      const { next, seen } = recorder();
      const req = testRequest('example.com.', RRType.A, { edns: c.from ? edns(4096, { options: c.from }) : undefined, client: { remoteAddress: c.client ?? '10.240.0.1' } });
      await ask(rewriter(...c.rules), req, next);
      assert.deepEqual(
        seen[0]?.options?.map((o) => ({ code: o.code, data: [...o.data] })),
        c.to?.map((o) => ({ code: o.code, data: [...o.data] })),
      );
    });
  }

  test('metadata another plugin left becomes the option', async () => {
    const { next, seen } = recorder();
    const req = testRequest('example.com.', RRType.A);
    req.metadata.set('kubernetes/client-namespace', 'prod');
    await ask(rewriter('rewrite edns0 local set 0xffee {kubernetes/client-namespace}'), req, next);
    assert.deepEqual(seen[0]?.options, [local(0xffee, 'prod')]);
  });

  test('the client without EDNS gets no OPT back', async () => {
    const { next } = recorder();
    const reply = await ask(rewriter('rewrite edns0 nsid set'), testRequest('example.com.', RRType.A), next);
    assert.equal(reply.view().edns, undefined);
  });
});

describe('rewrite: several rules', () => {
  test('continue runs the next rule on the rewritten name; answers map back last rule first', async () => {
    const p = rewriter('rewrite continue name suffix .a.example .b.example answer auto', 'rewrite name suffix .b.example .c.example answer auto');
    const { next, seen } = recorder();
    const msg = (await ask(p, testRequest('www.a.example.', RRType.A), next)).view();
    assert.equal(seen[0]?.name, 'www.c.example.');
    assert.equal(msg.answers[0]?.name, 'www.a.example.');
  });

  test('stop ends the list at the first rule that applies', async () => {
    const p = rewriter('rewrite name suffix .a.example .b.example', 'rewrite name suffix .b.example .c.example');
    const { next, seen } = recorder();
    await ask(p, testRequest('www.a.example.', RRType.A), next);
    assert.equal(seen[0]?.name, 'www.b.example.');
  });

  test('an async next plugin gets the same treatment', async () => {
    const p = rewriter('rewrite name exact from.example to.example', 'rewrite ttl to.example 60');
    const next: Next = async (req) => {
      const m = responseFor(req);
      m.answers = [a(req.qname, 5, '10.0.0.1')];
      return Reply.of(m);
    };
    const msg = (await ask(p, testRequest('from.example.', RRType.A), next)).view();
    assert.deepEqual([msg.questions[0]?.name, msg.answers[0]?.name, msg.answers[0]?.ttl], ['from.example.', 'from.example.', 5]);
  });
});

describe('rewrite: cname', () => {
  // TestCNameTargetRewrite: the rules, the answer the next plugin gives, the answer it gives for
  // the new target (CoreDNS's mocked upstream), and what the client gets.
  const rules = [
    'rewrite continue cname exact def.example.com xyz.example.com',
    'rewrite continue cname prefix chat.openai.com bard.google.com',
    'rewrite continue cname suffix uvw. xyz.',
    'rewrite continue cname substring efgh zzzz.www',
    'rewrite continue cname regex (.*)\\.web\\.(.*)\\.site\\. {1}.webapp.{2}.org.',
    'rewrite continue cname exact music.truncated.spotify.com. music.truncated.spotify.com.',
    'rewrite continue cname suffix prod. staging.',
  ];
  const upstream: Record<string, string[]> = {
    'xyz.example.com.': ['xyz.example.com. 3600 IN A 3.4.5.6'],
    'bard.google.com.cdn.cloudflare.net.': ['bard.google.com.cdn.cloudflare.net. 1800 IN A 9.7.2.1'],
    'www.hosting.xyz.': ['www.hosting.xyz. 500 IN A 20.30.40.50'],
    'abcd.zzzz.www.pqrst.': ['abcd.zzzz.www.pqrst. 120 IN A 101.20.5.1', 'abcd.zzzz.www.pqrst. 120 IN A 101.20.5.2'],
    'orders.webapp.eu.org.': ['orders.webapp.eu.org. 120 IN A 20.0.0.9'],
    'music.truncated.spotify.com.': ['music.truncated.spotify.com. 120 IN A 10.1.0.9'],
    'intermediate-2.staging.': ['intermediate-2.staging. 200 IN CNAME final.staging.net.', 'final.staging.net. 120 IN A 5.6.7.8'],
  };
  const cases: Array<{ from: string; answer: string[]; want: string[]; tc?: boolean }> = [
    { from: 'abc.example.com.', answer: ['abc.example.com. 5 IN CNAME def.example.com.', 'def.example.com. 5 IN A 1.2.3.4'], want: ['abc.example.com. 5 IN CNAME xyz.example.com.', 'xyz.example.com. 3600 IN A 3.4.5.6'] },
    {
      from: 'chat.openai.com.',
      answer: ['chat.openai.com. 20 IN CNAME chat.openai.com.cdn.cloudflare.net.', 'chat.openai.com.cdn.cloudflare.net. 30 IN A 23.2.1.2', 'chat.openai.com.cdn.cloudflare.net. 30 IN A 24.6.0.8'],
      want: ['chat.openai.com. 20 IN CNAME bard.google.com.cdn.cloudflare.net.', 'bard.google.com.cdn.cloudflare.net. 1800 IN A 9.7.2.1'],
    },
    { from: 'coredns.io.', answer: ['coredns.io. 100 IN CNAME www.hosting.uvw.', 'www.hosting.uvw. 200 IN A 7.2.3.4'], want: ['coredns.io. 100 IN CNAME www.hosting.xyz.', 'www.hosting.xyz. 500 IN A 20.30.40.50'] },
    {
      from: 'core.dns.rocks.',
      answer: ['core.dns.rocks. 200 IN CNAME abcd.efgh.pqrst.', 'abcd.efgh.pqrst. 100 IN A 200.30.45.67'],
      want: ['core.dns.rocks. 200 IN CNAME abcd.zzzz.www.pqrst.', 'abcd.zzzz.www.pqrst. 120 IN A 101.20.5.1', 'abcd.zzzz.www.pqrst. 120 IN A 101.20.5.2'],
    },
    { from: 'order.service.eu.', answer: ['order.service.eu. 200 IN CNAME orders.web.eu.site.', 'orders.web.eu.site. 50 IN A 10.10.15.1'], want: ['order.service.eu. 200 IN CNAME orders.webapp.eu.org.', 'orders.webapp.eu.org. 120 IN A 20.0.0.9'] },
    { from: 'music.spotify.com.', answer: ['music.spotify.com. 200 IN CNAME music.truncated.spotify.com.'], want: ['music.spotify.com. 200 IN CNAME music.truncated.spotify.com.', 'music.truncated.spotify.com. 120 IN A 10.1.0.9'], tc: true },
    {
      from: 'cname-chain.org.',
      answer: ['cname-chain.org. 200 IN CNAME intermediate-1.com.', 'intermediate-1.com. 200 IN CNAME intermediate-2.prod.', 'intermediate-2.prod. 200 IN CNAME final.prod.net.', 'final.prod.net. 120 IN A 1.2.3.4'],
      want: ['cname-chain.org. 200 IN CNAME intermediate-1.com.', 'intermediate-1.com. 200 IN CNAME intermediate-2.staging.', 'intermediate-2.staging. 200 IN CNAME final.staging.net.', 'final.staging.net. 120 IN A 5.6.7.8'],
    },
    // no CNAME to rewrite: the answer is left as it is
    { from: 'plain.example.', answer: ['plain.example. 5 IN A 10.0.0.1'], want: ['plain.example. 5 IN A 10.0.0.1'] },
  ];
  const text = (rr: ResourceRecord): string => rrToString(rr).split('\t').join(' ');
  for (const c of cases) {
    test(`${c.from} → ${c.want[c.want.length - 1]}`, async () => {
      const next: Next = (req) => {
        const m = responseFor(req);
        const lines = req.name === c.from ? c.answer : (upstream[req.name] ?? []);
        m.answers = lines.map(record);
        if (req.name === 'music.truncated.spotify.com.') m.tc = true;
        return Reply.of(m);
      };
      const reply = await ask(rewriter(...rules), testRequest(c.from, RRType.A), next);
      const msg = reply.view();
      assert.deepEqual(msg.answers.map(text), c.want);
      assert.equal(msg.tc, c.tc ?? false);
      assert.equal(msg.questions[0]?.name, c.from);
    });
  }
});

/** "name ttl IN TYPE data" for the A and CNAME records of the cname cases. */
function record(line: string): ResourceRecord {
  const [name, ttl, , type, data] = line.split(' ') as [string, string, string, string, string];
  return type === 'CNAME' ? cname(name, Number(ttl), data) : a(name, Number(ttl), data);
}

describe('rewrite: setup', () => {
  test('the rewrites of a block are one rule list; another block has its own', async () => {
    const { setup } = await import('./setup.js');
    const instance = new Map<string, unknown>();
    const ctx = (line: string, blockLine: number) => ({
      directive: directiveIn(line),
      block: testBlock(['.'], { line: blockLine }),
      corefilePath: '/tmp/Corefile',
      shared: testShared(),
      options: { defaultPort: 53 },
      instance,
      server: { reload: async () => true, corefileText: () => '', readiness: () => [], shuttingDown: () => false },
    });
    const first = (await setup(ctx('rewrite continue name a.example b.example', 1))) as RewritePlugin;
    const second = await setup(ctx('rewrite name b.example c.example', 1));
    const other = (await setup(ctx('rewrite name x.example y.example', 9))) as RewritePlugin;
    assert.equal(first.rules.length, 2);
    assert.equal(second.serve, undefined);
    assert.equal(other.rules.length, 1);
    const { next, seen } = recorder();
    await ask(first, testRequest('a.example.', RRType.A), next);
    assert.equal(seen[0]?.name, 'c.example.');
  });
});
