// The dnstap plugin inside a running kdns, read by the real dnstap reader (Debian's
// golang-github-dnstap-golang-dnstap-cli: `dnstap -u SOCKET -j`), which does the Frame Streams
// handshake (READY/ACCEPT/START ... STOP/FINISH) and decodes each protobuf message.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dig } from '../../../test/util/dig.js';
import { waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { missing } from '../../../test/util/upstream.js';

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
