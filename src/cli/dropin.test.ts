// The CoreDNS and node-cache command lines: Go flag syntax, which binary a command line is
// for, what kdns prints and exits with for each one-shot case, and `kdns serve -conf`.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dig } from '../../test/util/dig.js';
import { runKdns, startKdns } from '../../test/util/kdns.js';
import { freePort, waitFor } from '../../test/util/net.js';
import { missing } from '../../test/util/upstream.js';
import { GoFlagError, parseGoFlags, type GoFlagSet } from './goflags.js';
import { dropInMode } from './main.js';
import { parseSyncInterval } from './node-cache.js';
import { serveArgs } from './serve.js';

const SET: GoFlagSet = {
  conf: { kind: 'string', usage: '' },
  'dns.port': { kind: 'string', usage: '', default: '53' },
  quiet: { kind: 'bool', usage: '' },
  setupiptables: { kind: 'bool', usage: '', default: 'true' },
};

describe('parseGoFlags', () => {
  const ok: Array<{ args: string[]; values: Record<string, string | boolean>; rest?: string[]; help?: boolean }> = [
    { args: ['-conf', '/etc/coredns/Corefile'], values: { conf: '/etc/coredns/Corefile' } },
    { args: ['--conf=/etc/Corefile', '-dns.port', '1053'], values: { conf: '/etc/Corefile', 'dns.port': '1053' } },
    { args: ['-quiet', '-setupiptables=false'], values: { quiet: true, setupiptables: false } },
    { args: ['-quiet=T', '-setupiptables=0'], values: { quiet: true, setupiptables: false } },
    // The last of a repeated flag wins.
    { args: ['-conf', 'a', '-conf', 'b'], values: { conf: 'b' } },
    // A boolean takes no separate value: "false" is the first argument that is not a flag.
    { args: ['-quiet', 'false', '-conf', 'x'], values: { quiet: true }, rest: ['false', '-conf', 'x'] },
    { args: ['-conf', 'x', '--', '-quiet'], values: { conf: 'x' }, rest: ['-quiet'] },
    { args: ['-conf', 'x', '-'], values: { conf: 'x' }, rest: ['-'] },
    { args: ['-h'], values: {}, help: true },
    { args: ['--help'], values: {}, help: true },
  ];
  for (const c of ok) {
    test(JSON.stringify(c.args), () => {
      const p = parseGoFlags(c.args, SET);
      assert.deepEqual(Object.fromEntries(p.values), c.values);
      assert.deepEqual(p.rest, c.rest ?? []);
      assert.equal(p.help, c.help ?? false);
    });
  }
  const bad: Array<[string[], string]> = [
    [['-bogus'], 'flag provided but not defined: -bogus'],
    [['-conf'], 'flag needs an argument: -conf'],
    [['-quiet=maybe'], 'invalid boolean value "maybe" for -quiet: parse error'],
    [['---conf', 'x'], 'bad flag syntax: ---conf'],
    [['-=x'], 'bad flag syntax: -=x'],
  ];
  for (const [args, message] of bad) test(`refused: ${JSON.stringify(args)}`, () => assert.throws(() => parseGoFlags(args, SET), (e: unknown) => e instanceof GoFlagError && e.message === message));
});

describe('dropInMode: which binary a command line is for', () => {
  const cases: Array<[string, string[], ReturnType<typeof dropInMode>]> = [
    ["a CoreDNS Deployment's args", ['node', '/usr/local/bin/kdns', '-conf', '/etc/coredns/Corefile'], { mode: 'coredns', argsFrom: 2 }],
    ['CoreDNS -version', ['node', 'kdns', '-version'], { mode: 'coredns', argsFrom: 2 }],
    ["nodelocaldns.yaml's args", ['node', 'kdns', '-localip', '169.254.20.10,10.96.0.10', '-conf', '/etc/Corefile', '-upstreamsvc', 'kube-dns-upstream', '-pidfile', '/tmp/node-cache.pid'], { mode: 'node-cache', argsFrom: 2 }],
    ['a node-cache flag after CoreDNS ones', ['node', 'kdns', '-conf', '/etc/Corefile', '-skipteardown=true'], { mode: 'node-cache', argsFrom: 2 }],
    ['explicit kdns coredns', ['node', 'kdns', 'coredns', '-conf', 'x'], { mode: 'coredns', argsFrom: 3 }],
    ['explicit kdns node-cache', ['node', 'kdns', 'node-cache', '-localip', '169.254.20.10'], { mode: 'node-cache', argsFrom: 3 }],
    ['a link named coredns', ['node', '/coredns', '-conf', 'x'], { mode: 'coredns', argsFrom: 2 }],
    ['a link named node-cache', ['node', '/node-cache', '-localip', '169.254.20.10'], { mode: 'node-cache', argsFrom: 2 }],
    ['a kdns subcommand', ['node', 'kdns', 'serve', '-c', 'Corefile'], undefined],
    ['kdns --version', ['node', 'kdns', '--version'], undefined],
    ['kdns -V', ['node', 'kdns', '-V'], undefined],
    ['kdns -h', ['node', 'kdns', '-h'], undefined],
    ['no arguments', ['node', 'kdns'], undefined],
  ];
  for (const [name, argv, want] of cases) test(name, () => assert.deepEqual(dropInMode(argv), want));
});

describe('-syncinterval', () => {
  const cases: Array<[string, number | undefined]> = [
    ['60', 60_000],
    ['5', 5_000],
    ['1m', 60_000],
    ['1m30s', 90_000],
    ['500ms', 500],
    ['0', undefined],
    ['soon', undefined],
    ['10x', undefined],
  ];
  for (const [text, want] of cases) test(`"${text}"`, () => assert.equal(parseSyncInterval(text), want));
});

describe('the drop-in modes, one-shot', () => {
  const cases: Array<{ name: string; args: string[]; code: number; stdout?: RegExp; stderr?: RegExp }> = [
    { name: 'CoreDNS -version', args: ['-version'], code: 0, stdout: /^kdns-\d+\.\d+\.\d+\nlinux\/\w+, node v\d+/ },
    { name: 'CoreDNS -plugins: the loaders and plugins', args: ['-plugins'], code: 0, stdout: /^Server types:\n {2}dns\n\nCaddyfile loaders:\n {2}flag\n {2}default\n\nOther plugins:\n(?: {2}dns\.\w+\n)*? {2}dns\.forward\n/ },
    { name: 'an unknown flag: Go\'s message and usage, exit 2', args: ['-conf', 'x', '-bogus'], code: 2, stderr: /^flag provided but not defined: -bogus\nUsage of coredns:\n {2}-conf string\n/ },
    { name: 'CoreDNS: extra arguments', args: ['-conf', '/etc/coredns/Corefile', 'extra'], code: 1, stderr: /^extra command line arguments: \[extra\]\n$/ },
    { name: 'CoreDNS: a Corefile that is not there', args: ['-conf', '/nonexistent/Corefile'], code: 1, stderr: /^open \/nonexistent\/Corefile: no such file or directory\n$/ },
    { name: 'CoreDNS: a bad port', args: ['-dns.port', 'x53'], code: 2, stderr: /invalid port specified - "x53" \(-dns\.port\)/ },
    { name: 'kdns coredns -h: usage, exit 0', args: ['coredns', '-h'], code: 0, stderr: /^Usage of coredns:\n/ },
    { name: 'node-cache -version', args: ['node-cache', '-version'], code: 0, stdout: /^kdns-/ },
    { name: 'node-cache: a bad -localip', args: ['-localip', '169.254.20.10,nodelocal'], code: 1, stderr: /^Error parsing flags - invalid localip specified - "nodelocal", Exiting\n/ },
    { name: 'node-cache: an IPv6 link-local -localip', args: ['-localip', '169.254.20.10,fe80::10'], code: 1, stderr: /^Error parsing flags - invalid localip specified - "fe80::10": an IPv6 link-local address \(fe80::\/10\)/ },
    { name: 'node-cache: a bad -prometheus-listen-address', args: ['-localip', '169.254.20.10', '-prometheus-listen-address', '9253'], code: 1, stderr: /^Error parsing flags - invalid -prometheus-listen-address "9253": missing port in address/ },
    { name: 'node-cache: a bad boolean names its flag', args: ['-localip', '169.254.20.10', '-setupiptables=maybe'], code: 2, stderr: /^invalid boolean value "maybe" for -setupiptables: parse error\n/ },
    { name: 'node-cache: a bad -health-port', args: ['-localip', '169.254.20.10', '-health-port', 'http'], code: 1, stderr: /invalid healthcheck port specified - "http"/ },
    {
      name: 'node-cache: a template that is not there',
      args: ['-localip', '169.254.20.10', '-basecorefile', '/nonexistent/Corefile.base', '-conf', '/nonexistent/Corefile', '-setupinterface=false', '-setupiptables=false'],
      code: 1,
      stderr: /kdns node-cache: \/nonexistent\/Corefile\.base: ENOENT/,
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await runKdns(c.args);
      assert.equal(r.code, c.code, r.stdout + r.stderr);
      if (c.stdout) assert.match(r.stdout, c.stdout);
      if (c.stderr) assert.match(r.stderr, c.stderr);
    });
  }
});

describe('kdns serve with CoreDNS\'s single-dash spellings', () => {
  const cases: Array<[string[], string[]]> = [
    [['-conf', 'Corefile', '-dns.port', '1053'], ['--conf', 'Corefile', '--dns-port', '1053']],
    [['-conf=Corefile', '-cluster', 'dir'], ['--conf=Corefile', '--cluster', 'dir']],
    [['--conf', 'Corefile', '-c', 'x'], ['--conf', 'Corefile', '-c', 'x']],
    // Not serve's: left for commander to refuse.
    [['-quiet'], ['-quiet']],
  ];
  for (const [args, want] of cases) test(JSON.stringify(args), () => assert.deepEqual(serveArgs(args), want));

  test('kdns serve -conf FILE -dns.port N serves that Corefile on that port', { skip: missing('dig', 'bind9-dnsutils') }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-serve-go-'));
    writeFileSync(join(dir, 'Corefile'), '. {\n    bind 127.0.0.1\n    whoami\n}\n');
    const port = await freePort();
    const kdns = startKdns(['serve', '-conf', join(dir, 'Corefile'), '-dns.port', String(port)]);
    try {
      await waitFor(() => kdns.output().includes(`listening on 127.0.0.1:${port}`) || kdns.child.exitCode !== null, 20_000).catch(() => assert.fail(kdns.output()));
      const r = await dig('example.test', 'A', { port });
      assert.equal(r.status, 'NOERROR', kdns.output());
      // whoami: the client's address in the additional section.
      assert.deepEqual(r.additional.filter((a) => a.type === 'A').map((a) => a.data), ['127.0.0.1']);
    } finally {
      await kdns.stop();
    }
  });
});
