// The rig's decisions before anything runs (no root needed): which nameservers a resolv.conf
// gives, where each one's queries may go, from where, and how the lookup program's output reads.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isLoopback, nameserversOf, parseRoute, planRun, type PlanInput } from './plan.js';
import { parseClientOutput } from './run.js';

describe('nameserversOf', () => {
  const cases: Array<{ name: string; conf: string; want: string[] }> = [
    { name: 'in file order', conf: 'nameserver 169.254.20.10\nnameserver 10.96.0.10\n', want: ['169.254.20.10', '10.96.0.10'] },
    { name: 'a repeated address once', conf: 'nameserver 10.96.0.10\nnameserver 10.96.0.10\n', want: ['10.96.0.10'] },
    { name: 'IPv6', conf: 'nameserver fd00::10\n', want: ['fd00::10'] },
    { name: 'tab after the keyword, words after the address', conf: 'nameserver\t10.96.0.10 # cluster\n', want: ['10.96.0.10'] },
    { name: 'not an address: skipped, as the libcs do', conf: 'nameserver dns.example\nnameserver 10.96.0.10\n', want: ['10.96.0.10'] },
    { name: 'none: 127.0.0.1, the libcs\' default', conf: 'search a.example\n', want: ['127.0.0.1'] },
    { name: 'an indented line is not read by the libcs', conf: ' nameserver 10.96.0.10\n', want: ['127.0.0.1'] },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(nameserversOf(c.conf), c.want));

  test('a scoped IPv6 address is an error naming the line', () => {
    assert.throws(() => nameserversOf('search a\nnameserver fe80::1%eth0\n'), /^Error: resolvConf line 2: scoped address fe80::1%eth0/);
  });
});

describe('isLoopback', () => {
  const cases: Array<[string, boolean]> = [
    ['127.0.0.1', true],
    ['127.0.0.11', true],
    ['127.255.255.254', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['128.0.0.1', false],
    ['10.96.0.10', false],
    ['::ffff:127.0.0.1', false],
    ['localhost', false],
  ];
  for (const [address, want] of cases) test(`${address}: ${want}`, () => assert.equal(isLoopback(address), want));
});

describe('parseRoute', () => {
  const good: Array<[string, ReturnType<typeof parseRoute>]> = [
    ['refuse', { kind: 'refuse' }],
    ['drop', { kind: 'drop' }],
    ['127.0.0.1:1053', { kind: 'relay', host: '127.0.0.1', port: 1053 }],
    ['127.0.0.53:53', { kind: 'relay', host: '127.0.0.53', port: 53 }],
    ['[::1]:5353', { kind: 'relay', host: '::1', port: 5353 }],
  ];
  for (const [text, want] of good) test(`${text}`, () => assert.deepEqual(parseRoute(text, 'server'), want));

  const bad: Array<[string, RegExp]> = [
    ['10.96.0.10:53', /^Error: server: 10\.96\.0\.10 is not a loopback address/],
    ['192.0.2.1:53', /^Error: server: 192\.0\.2\.1 is not a loopback address/],
    ['localhost:53', /^Error: server: "localhost" is not an IP address/],
    ['127.0.0.1', /^Error: server: "127\.0\.0\.1" is not HOST:PORT/],
    ['127.0.0.1:0', /^Error: server: port 0 is out of range/],
    ['127.0.0.1:70000', /^Error: server: port 70000 is out of range/],
    ['::1:53', /^Error: server: "::1:53" is not HOST:PORT/],
  ];
  for (const [text, want] of bad) test(`${text} is refused`, () => assert.throws(() => parseRoute(text, 'server'), want));
});

describe('planRun', () => {
  const TWO = 'nameserver 169.254.20.10\nnameserver 10.96.0.10\n';

  test('server for all, a route for one', () => {
    const plan = planRun({ resolvConf: TWO, server: '127.0.0.1:1053', routes: { '169.254.20.10': 'drop' } });
    assert.deepEqual([...plan.routes], [
      ['169.254.20.10', { kind: 'drop' }],
      ['10.96.0.10', { kind: 'relay', host: '127.0.0.1', port: 1053 }],
    ]);
    assert.deepEqual(plan.source, { v4: '127.0.0.1', v6: '::1' });
  });

  test('a source address for IPv4 servers', () => {
    assert.deepEqual(planRun({ resolvConf: TWO, server: '127.0.0.1:1053', source: '127.0.0.11' }).source, { v4: '127.0.0.11', v6: '::1' });
  });

  const bad: Array<{ name: string; input: PlanInput; want: RegExp }> = [
    { name: 'a nameserver without a route', input: { resolvConf: TWO, routes: { '169.254.20.10': 'refuse' } }, want: /^Error: nameserver 10\.96\.0\.10: no route \(give server, or routes\["10\.96\.0\.10"\]\)/ },
    { name: 'a route for an address the file does not list', input: { resolvConf: TWO, server: '127.0.0.1:1053', routes: { '169.254.20.11': 'drop' } }, want: /^Error: routes\["169\.254\.20\.11"\]: not a nameserver of resolvConf \(169\.254\.20\.10, 10\.96\.0\.10\)/ },
    { name: 'a route elsewhere than loopback', input: { resolvConf: TWO, server: '127.0.0.1:1053', routes: { '10.96.0.10': '10.96.0.10:53' } }, want: /^Error: routes\["10\.96\.0\.10"\]: 10\.96\.0\.10 is not a loopback address/ },
    { name: 'a source that is not loopback', input: { resolvConf: TWO, server: '127.0.0.1:1053', source: '10.244.0.5' }, want: /^Error: source: 10\.244\.0\.5 is not a loopback address/ },
    { name: 'an IPv6 source for an IPv4 server', input: { resolvConf: TWO, server: '127.0.0.1:1053', source: '::1' }, want: /^Error: source: ::1 cannot reach 127\.0\.0\.1, the server of nameserver 169\.254\.20\.10/ },
  ];
  for (const c of bad) test(`${c.name} is refused`, () => assert.throws(() => planRun(c.input), c.want));
});

describe('parseClientOutput', () => {
  test('addresses and the call\'s time', () => {
    assert.deepEqual(parseClientOutput('192.0.2.10\n2001:db8::10\n# 1700000000000000 1700000000012500\n', 0), {
      status: 0,
      eai: null,
      addresses: ['192.0.2.10', '2001:db8::10'],
      startMs: 1700000000000,
      endMs: 1700000000012.5,
    });
  });
  test('a failure: the EAI name', () => {
    assert.deepEqual(parseClientOutput('EAI_AGAIN\n# 1700000000000000 1700000005000000\n', 2), { status: 2, eai: 'EAI_AGAIN', addresses: [], startMs: 1700000000000, endMs: 1700000005000 });
  });
  test('no timing line is an error', () => {
    assert.throws(() => parseClientOutput('192.0.2.10\n', 0), /^Error: the client's output has no timing line: "192\.0\.2\.10\\n"/);
  });
});
