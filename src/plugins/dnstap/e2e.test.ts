// The dnstap plugin inside a running kdns, read by the real dnstap reader (Debian's
// golang-github-dnstap-golang-dnstap-cli: `dnstap -u SOCKET -j`), which does the Frame Streams
// handshake (READY/ACCEPT/START ... STOP/FINISH) and decodes each protobuf message. The forward
// case asks a real named, so the FORWARDER messages name a real upstream's address and port.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dig } from '../../../test/util/dig.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { missing, startExampleUpstream, type NamedUpstream } from '../../../test/util/upstream.js';

interface Tapped {
  type: string;
  identity: string;
  version: string;
  message: { type: string; socket_family: string; socket_protocol: string; query_address: string; query_message?: string; response_message?: string };
}

describe('dnstap end to end', { skip: missing('dnstap', 'golang-github-dnstap-golang-dnstap-cli') ?? missing('dig', 'bind9-dnsutils') }, () => {
  let dir: string;
  let reader: ChildProcess;
  let out = '';
  let kdns: TestServer | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kdns-dnstap-'));
    const socket = join(dir, 'tap.sock');
    reader = spawn('dnstap', ['-u', socket, '-j'], { stdio: ['ignore', 'pipe', 'ignore'] });
    reader.stdout?.setEncoding('utf8');
    reader.stdout?.on('data', (c: string) => (out += c));
    await waitFor(() => existsSync(socket), 5000);
    kdns = await startTestServer(`.:{PORT} {
    bind 127.0.0.1
    dnstap unix://${socket} full {
        identity tap-test
        version v9
    }
    whoami
}
`);
  });
  after(async () => {
    await kdns?.stop();
    reader.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('every query and response reaches the reader, decoded as CoreDNS would send them', async () => {
    await dig('www.example.org', 'A', { port: kdns!.port });
    await dig('foo.test', 'AAAA', { port: kdns!.port, args: ['+tcp'] });
    // Stopping kdns sends STOP: the reader has every frame once the connection ends.
    await kdns!.stop();
    kdns = undefined;
    const lines = await waitFor(() => {
      const l = out.split('\n').filter((x) => x.trim() !== '');
      return l.length >= 4 ? l : undefined;
    }, 5000);
    const tapped = lines.map((l) => JSON.parse(l) as Tapped);
    const question = (m: Tapped['message']): string => /;; QUESTION SECTION:\n;(\S+)\s+IN\s+(\w+)/.exec(m.query_message ?? m.response_message ?? '')?.slice(1).join(' ') ?? '';
    assert.deepEqual(
      tapped.map((t) => ({ type: t.type, identity: t.identity, version: t.version, message: t.message.type, family: t.message.socket_family, protocol: t.message.socket_protocol, from: t.message.query_address, question: question(t.message) })),
      [
        { type: 'MESSAGE', identity: 'tap-test', version: 'v9', message: 'CLIENT_QUERY', family: 'INET', protocol: 'UDP', from: '127.0.0.1', question: 'www.example.org. A' },
        { type: 'MESSAGE', identity: 'tap-test', version: 'v9', message: 'CLIENT_RESPONSE', family: 'INET', protocol: 'UDP', from: '127.0.0.1', question: 'www.example.org. A' },
        { type: 'MESSAGE', identity: 'tap-test', version: 'v9', message: 'CLIENT_QUERY', family: 'INET', protocol: 'TCP', from: '127.0.0.1', question: 'foo.test. AAAA' },
        { type: 'MESSAGE', identity: 'tap-test', version: 'v9', message: 'CLIENT_RESPONSE', family: 'INET', protocol: 'TCP', from: '127.0.0.1', question: 'foo.test. AAAA' },
      ],
    );
    assert.match(tapped[1]?.message.response_message ?? '', /flags: qr aa rd/);
  });
});

interface TappedExchange {
  message: {
    type: string;
    socket_protocol: string;
    query_address?: string;
    response_address?: string;
    response_port?: number;
    query_message?: string;
    response_message?: string;
  };
}

describe('dnstap end to end: forward tells the block dnstap of its exchanges', { skip: missing('dnstap', 'golang-github-dnstap-golang-dnstap-cli') ?? missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils') }, () => {
  let dir: string;
  let named: NamedUpstream;
  let closedPorts: [number, number];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kdns-dnstap-fwd-'));
    named = await startExampleUpstream();
    closedPorts = [await freePort(), await freePort()];
  });
  after(async () => {
    await named.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs kdns with `block` under a dnstap to a fresh reader, asks `queries`, returns what the reader decoded. */
  async function tapped(name: string, block: string, queries: Array<{ name: string; args?: string[] }>, want: number): Promise<TappedExchange['message'][]> {
    const socket = join(dir, `${name}.sock`);
    let out = '';
    const reader = spawn('dnstap', ['-u', socket, '-j'], { stdio: ['ignore', 'pipe', 'ignore'] });
    reader.stdout?.setEncoding('utf8');
    reader.stdout?.on('data', (c: string) => (out += c));
    try {
      await waitFor(() => existsSync(socket), 5000);
      const kdns = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    dnstap unix://${socket} full\n${block}}\n`);
      try {
        for (const q of queries) await dig(q.name, 'A', { port: kdns.port, args: q.args ?? [] });
      } finally {
        await kdns.stop();
      }
      const lines = await waitFor(() => {
        const l = out.split('\n').filter((x) => x.trim() !== '');
        return l.length >= want ? l : undefined;
      }, 5000);
      return lines.map((l) => (JSON.parse(l) as TappedExchange).message);
    } finally {
      reader.kill('SIGKILL');
    }
  }

  const question = (m: TappedExchange['message']): string => /;; QUESTION SECTION:\n;(\S+)\s+IN\s+(\w+)/.exec(m.query_message ?? m.response_message ?? '')?.slice(1).join(' ') ?? '';

  interface Case {
    what: string;
    block: string;
    queries: Array<{ name: string; args?: string[] }>;
    /** Expected messages in order: type, protocol, upstream address and port ('' for none), question. */
    want: Array<[string, string, string, string]>;
  }
  const cases = (): Case[] => [
    {
      what: 'a UDP query forwarded over UDP: the upstream is the response address, both messages carry the bytes',
      block: `    forward . 127.0.0.1:${named.port}\n`,
      queries: [{ name: 'www.example.test' }],
      want: [
        ['CLIENT_QUERY', 'UDP', '', 'www.example.test. A'],
        ['FORWARDER_QUERY', 'UDP', `127.0.0.1:${named.port}`, 'www.example.test. A'],
        ['FORWARDER_RESPONSE', 'UDP', `127.0.0.1:${named.port}`, 'www.example.test. A'],
        ['CLIENT_RESPONSE', 'UDP', '', 'www.example.test. A'],
      ],
    },
    {
      what: 'force_tcp: the forwarder messages say TCP whatever the client used',
      block: `    forward . 127.0.0.1:${named.port} {\n        force_tcp\n    }\n`,
      queries: [{ name: 'www.example.test' }],
      want: [
        ['CLIENT_QUERY', 'UDP', '', 'www.example.test. A'],
        ['FORWARDER_QUERY', 'TCP', `127.0.0.1:${named.port}`, 'www.example.test. A'],
        ['FORWARDER_RESPONSE', 'TCP', `127.0.0.1:${named.port}`, 'www.example.test. A'],
        ['CLIENT_RESPONSE', 'UDP', '', 'www.example.test. A'],
      ],
    },
    {
      what: 'upstreams that refuse the connection: a FORWARDER_QUERY for each one tried and no FORWARDER_RESPONSE',
      block: `    forward . 127.0.0.1:${closedPorts[0]} 127.0.0.1:${closedPorts[1]} {\n        force_tcp\n        policy sequential\n    }\n`,
      queries: [{ name: 'www.example.test' }],
      want: [
        ['CLIENT_QUERY', 'UDP', '', 'www.example.test. A'],
        ['FORWARDER_QUERY', 'TCP', `127.0.0.1:${closedPorts[0]}`, 'www.example.test. A'],
        ['FORWARDER_QUERY', 'TCP', `127.0.0.1:${closedPorts[1]}`, 'www.example.test. A'],
        ['CLIENT_RESPONSE', 'UDP', '', 'www.example.test. A'],
      ],
    },
  ];

  test('the messages of each exchange, in order, as the reader decodes them', { timeout: 60_000 }, async () => {
    for (const [i, c] of cases().entries()) {
      const messages = await tapped(`case${i}`, c.block, c.queries, c.want.length);
      const got = messages.map((m): [string, string, string, string] => [m.type, m.socket_protocol, m.response_address ? `${m.response_address}:${m.response_port}` : '', question(m)]);
      assert.deepEqual(got, c.want, c.what);
      // The client's address stays the query address of every message, forwarder ones too (as CoreDNS).
      assert.deepEqual([...new Set(messages.map((m) => m.query_address))], ['127.0.0.1'], c.what);
    }
  });
});
