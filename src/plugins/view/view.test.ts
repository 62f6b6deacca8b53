import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RRType } from '../../lib/dns/types.js';
import { directiveIn } from '../../../test/util/corefile.js';
import { dig } from '../../../test/util/dig.js';
import { freePort } from '../../../test/util/net.js';
import { parseExposition, value } from '../../../test/util/prom.js';
import { testRequest } from '../../../test/util/request.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { missing } from '../../../test/util/upstream.js';
import { compileExpression, holds } from './expr.js';
import { incidr, parseView, RequestFacts } from './setup.js';

/** A query for www.example.org. A from 10.1.2.3:5353 over UDP to 10.0.0.10:53, ID 42, EDNS 1232 with DO. */
const req = testRequest('WWW.Example.org.', RRType.A, {
  id: 42,
  edns: { udpSize: 1232, version: 0, do: true, zFlags: 0, options: [] },
  client: { remoteAddress: '10.1.2.3', remotePort: 5353, localAddress: '10.0.0.10', localPort: 53 },
});
const facts = new RequestFacts(req);

describe('view expressions: what each one gives for a query', () => {
  const cases: Array<[string, boolean]> = [
    ["incidr(client_ip(), '10.0.0.0/8')", true],
    ["incidr(client_ip(), '192.168.0.0/16')", false],
    ["incidr(client_ip(), '2001:db8::/32')", false],
    ["incidr(server_ip(), '10.0.0.10/32')", true],
    ["name() == 'www.example.org.'", true], // lower-case, absolute
    ["type() == 'A'", true],
    ["type() in ['A', 'AAAA']", true],
    ["type() not in ['A', 'AAAA']", false],
    ["class() == 'IN'", true],
    ["proto() == 'udp'", true],
    ["port() == '5353'", true],
    ["server_port() == '53'", true],
    ['id() == 42', true],
    ['opcode() == 0', true],
    ['do()', true],
    ['!do()', false],
    ['not do()', false],
    ['bufsize() == 1232', true],
    ['bufsize() > 512 && size() > 12', true],
    ["name() matches '^www\\\\..*\\\\.org\\\\.$'", true],
    ["name() matches '^abc\\\\.'", false],
    ["name() not matches '^abc\\\\.'", true],
    ["name() endsWith '.example.org.'", true],
    ["name() startsWith 'www.'", true],
    ["name() contains 'example'", true],
    ["(type() == 'AAAA' && name() == 'www.example.org.') || client_ip() == '10.1.2.3'", true],
    ["type() == 'AAAA' and name() == 'www.example.org.' or client_ip() == '10.9.9.9'", false],
    ["client_ip() + ':' + port() == '10.1.2.3:5353'", true],
    ['id() % 2 == 0 && id() / 4 == 10.5', true],
    ['-id() < 0', true],
    ["'A' in [type()]", true],
    ['true', true],
    // Not a match: anything but true, and failures on the query's data (CoreDNS's run errors).
    ["incidr('not-an-ip', '10.0.0.0/8')", false],
    ["incidr(client_ip(), 'garbage')", false],
    ["incidr(client_ip(), 'garbage' + '')", false], // a CIDR made at run time: checked at run time
    // A pattern made at run time is compiled then: www.example.org. matches itself.
    ['name() matches name()', true],
  ];
  for (const [text, want] of cases) test(`${text} → ${want}`, () => assert.equal(holds(compileExpression(text), facts, incidr), want));
});

describe('view expressions that are refused at setup, naming the fault', () => {
  const cases: Array<[string, string]> = [
    ["type() == 1", 'invalid operation: == (mismatched types string and int)'],
    ["incidr(client_ip())", 'incidr() takes 2 arguments, got 1'],
    ["incidr(1, '10.0.0.0/8')", 'argument 1 of incidr() must be a string, not a int'],
    ['client_ip', 'unknown name "client_ip" at column 1 (view\'s values are functions: write client_ip())'],
    ['lookup()', 'unknown function lookup() at column 1 (view offers bufsize(), class(), client_ip(), do(), id(), name(), opcode(), port(), proto(), server_ip(), server_port(), size(), type(), incidr())'],
    ["metadata('kubernetes/client-namespace') == 'x'", "metadata() is not available in kdns's view expressions: kdns's plugins set metadata while they answer, after the view is chosen"],
    ['name()', 'the expression gives a string, not a bool'],
    ["type() in 'A'", 'invalid operation: in (mismatched types string and string)'],
    ["type() == 'A' &&", 'the expression ends too early'],
    ["(type() == 'A'", 'expected ")", found the end of the expression'],
    ["name() == 'x", 'string at column 11 is not closed'],
    ["name() == 'a\\.b'", 'unknown escape \\. in the string at column 13'],
    ["name() matches 'a(b'", 'invalid regex "a(b": Unterminated group'],
    ["name() matches '(?=x)'", 'invalid regex "(?=x)": lookaround is not supported'],
    ['type() == $x', 'unexpected "$" at column 11'],
    ['do() && 1', 'invalid operation: && (mismatched types bool and int)'],
  ];
  for (const [text, error] of cases) test(text, () => assert.throws(() => compileExpression(text), { message: error }));
});

describe('view setup', () => {
  test('name and expressions, the words of each line joined', () => {
    const v = parseView(directiveIn("view internal {\n expr incidr(client_ip(), '10.0.0.0/8')\n expr type() in ['A', 'AAAA']\n}"));
    assert.deepEqual([v.name, v.expressions.map((e) => e.text)], ['internal', ["incidr(client_ip(), '10.0.0.0/8')", "type() in ['A', 'AAAA']"]]);
  });
  const invalid: Array<[string, string]> = [
    ['view', 'Corefile:2: wrong argument count for "view": expected 1, got 0'],
    ['view a b', 'Corefile:2: wrong argument count for "view": expected 1, got 2'],
    ['view a {\n when true\n}', 'Corefile:3: unknown property "when" in view block'],
    ['view a {\n expr\n}', 'Corefile:3: expr needs an expression'],
    ['view a {\n expr type() == 1\n}', 'Corefile:3: view a: invalid expression "type() == 1": invalid operation: == (mismatched types string and int)'],
  ];
  for (const [text, error] of invalid) test(`invalid: ${JSON.stringify(text)}`, () => assert.throws(() => parseView(directiveIn(text)), { message: error }));
});

describe('server blocks sharing a zone', () => {
  const refused: Array<[string, string, RegExp]> = [
    ['two blocks without view', '.:{PORT} {\n    whoami\n}\n.:{PORT} {\n    whoami\n}\n', /Corefile:4: cannot serve dns:\/\/\.:\d+ - it is already defined \(first at \/.*\/Corefile:1\)$/],
    ['view twice in a block', ".:{PORT} {\n    view a {\n        expr true\n    }\n    view b {\n        expr true\n    }\n    whoami\n}\n", /\/Corefile:5: view can only be used once per server block$/],
  ];
  for (const [what, corefile, error] of refused) test(`refused: ${what}`, async () => assert.rejects(startTestServer(corefile), { message: error }));
});

// Real dig from different loopback addresses (127.0.0.2, 127.0.0.3) and over IPv6 (::1) against
// one kdns whose blocks for "." differ by view, as CoreDNS's README example does.
describe('view end to end: split horizon with real dig', { skip: missing('dig', 'bind9-dnsutils') }, () => {
  let s: TestServer;
  let metrics: number;
  before(async () => {
    metrics = await freePort();
    s = await startTestServer(`
.:{PORT} {
    bind 127.0.0.1 ::1
    prometheus 127.0.0.1:${metrics}
    view lab {
        expr incidr(client_ip(), '127.0.0.2/32')
    }
    hosts {
        1.1.1.1 test
    }
}
.:{PORT} {
    bind 127.0.0.1 ::1
    view v6 {
        expr incidr(client_ip(), '::1/128')
    }
    hosts {
        2001:db8::1 test
    }
}
.:{PORT} {
    bind 127.0.0.1 ::1
    view txt {
        expr type() in ['TXT'] && incidr(client_ip(), '127.0.0.3/32')
    }
    whoami
}
.:{PORT} {
    bind 127.0.0.1 ::1
    view abc {
        expr name() matches '^abc\\\\..*\\\\.example\\\\.com\\\\.$'
    }
    hosts {
        7.7.7.7 abc.x.example.com
    }
}
example.org:{PORT} {
    bind 127.0.0.1 ::1
    view never {
        expr proto() == 'sctp'
    }
    hosts {
        9.9.9.9 www.example.org
    }
}
.:{PORT} {
    bind 127.0.0.1 ::1
    prometheus 127.0.0.1:${metrics}
    hosts {
        3.3.3.3 test
        8.8.8.8 abc.x.example.com
        5.5.5.5 www.example.org
    }
}
`);
  });
  after(() => s.stop());

  const cases: Array<{ what: string; server: string; source?: string; name: string; type: string; answer: string[] }> = [
    { what: 'a client in the lab view', server: '127.0.0.1', source: '127.0.0.2', name: 'test', type: 'A', answer: ['1.1.1.1'] },
    { what: 'an IPv6 client', server: '::1', name: 'test', type: 'AAAA', answer: ['2001:db8::1'] },
    { what: 'any other client: the block without view', server: '127.0.0.1', source: '127.0.0.4', name: 'test', type: 'A', answer: ['3.3.3.3'] },
    { what: 'TXT from 127.0.0.3: whoami', server: '127.0.0.1', source: '127.0.0.3', name: 'test', type: 'TXT', answer: [] },
    { what: 'a name matching the regular expression', server: '127.0.0.1', source: '127.0.0.4', name: 'abc.x.example.com', type: 'A', answer: ['7.7.7.7'] },
    { what: 'a zone whose only block does not match: the next zone up answers', server: '127.0.0.1', source: '127.0.0.4', name: 'www.example.org', type: 'A', answer: ['5.5.5.5'] },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const r = await dig(c.name, c.type, { port: s.port, server: c.server, args: c.source ? ['-b', c.source] : [] });
      assert.equal(r.status, 'NOERROR', r.raw);
      assert.deepEqual(r.answer.filter((a) => a.type === c.type && c.type !== 'TXT').map((a) => a.data), c.answer);
      if (c.type === 'TXT') assert.ok(r.additional.some((a) => a.type === 'A' && a.data === '127.0.0.3'), r.raw);
    });
  }

  test('the view label of the metrics names the view that answered', async () => {
    const scrape = async () => parseExposition(await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text());
    const lab = { server: `dns://127.0.0.1:${s.port}`, zone: '.', view: 'lab', type: 'A' };
    const plain = { ...lab, view: '' };
    const before = await scrape();
    await dig('test', 'A', { port: s.port, server: '127.0.0.1', args: ['-b', '127.0.0.2'] });
    await dig('test', 'A', { port: s.port, server: '127.0.0.1', args: ['-b', '127.0.0.5'] });
    await dig('test', 'A', { port: s.port, server: '127.0.0.1', args: ['-b', '127.0.0.5'] });
    const after = await scrape();
    const delta = (m: Record<string, string>) => value(after, 'coredns_dns_requests_total', m) - value(before, 'coredns_dns_requests_total', m);
    assert.deepEqual([delta(lab), delta(plain)], [1, 2]);
    await dig('test', 'A', { port: s.port, server: '127.0.0.1', args: ['-b', '127.0.0.2', '-c', 'CH'] });
    const dropped = await scrape();
    assert.deepEqual(
      dropped.filter((x) => x.name === 'coredns_dns_requests_total' && x.labels.zone === 'dropped').map((x) => x.labels.view),
      [''],
      'a query no block takes belongs to no view',
    );
    assert.equal(value(after, 'coredns_plugin_enabled', { server: `dns://127.0.0.1:${s.port}`, view: 'lab', name: 'hosts' }), 1);
  });
});
