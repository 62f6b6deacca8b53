// The addresses kdns answers on are only those a Corefile names: a server block with `bind`
// answers on its addresses alone (a query arriving on another address of the host is not its
// to answer, before and after a reload), and the prometheus, health and ready listeners bind
// only the host they are given. Asked on loopback with the real dig and real HTTP connections.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { dig } from '../../test/util/dig.js';
import { freePort } from '../../test/util/net.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';

/** What a client at `server` sees: the rcode and addresses, or "no reply". */
async function asked(server: string, port: number, transport: 'udp' | 'tcp'): Promise<string> {
  try {
    const r = await dig('secret.example', 'A', { server, port, timeout: 1, args: transport === 'tcp' ? ['+tcp'] : [] });
    return `${r.status} ${r.answer.map((a) => a.data).join(' ')}`.trim();
  } catch {
    return 'no reply';
  }
}

describe('bind: a block answers only on its own addresses', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    hosts {
        192.0.2.1 secret.example
    }
}
.:{PORT} {
    bind 127.0.0.2 ::1
    hosts {
        192.0.2.2 secret.example
    }
}
`,
    );
  });
  after(() => s.stop());

  const cases: Array<{ server: string; transport: 'udp' | 'tcp'; want: string }> = [
    { server: '127.0.0.1', transport: 'udp', want: 'NOERROR 192.0.2.1' },
    { server: '127.0.0.1', transport: 'tcp', want: 'NOERROR 192.0.2.1' },
    { server: '127.0.0.2', transport: 'udp', want: 'NOERROR 192.0.2.2' },
    { server: '127.0.0.2', transport: 'tcp', want: 'NOERROR 192.0.2.2' },
    { server: '::1', transport: 'udp', want: 'NOERROR 192.0.2.2' },
    { server: '::1', transport: 'tcp', want: 'NOERROR 192.0.2.2' },
    { server: '127.0.0.3', transport: 'udp', want: 'no reply' },
    { server: '127.0.0.3', transport: 'tcp', want: 'no reply' },
  ];
  for (const c of cases) {
    test(`${c.server} over ${c.transport}`, async () => assert.equal(await asked(c.server, s.port, c.transport), c.want));
  }

  test('after a reload moves the second block to 127.0.0.3, 127.0.0.2 is no longer answered', async () => {
    writeFileSync(s.corefilePath, readFileSync(s.corefilePath, 'utf8').replace('bind 127.0.0.2 ::1', 'bind 127.0.0.3'));
    assert.equal(await s.server.reload(), true);
    const got = [];
    for (const server of ['127.0.0.1', '127.0.0.2', '::1', '127.0.0.3']) {
      for (const transport of ['udp', 'tcp'] as const) got.push(`${server} ${transport}: ${await asked(server, s.port, transport)}`);
    }
    assert.deepEqual(got, [
      '127.0.0.1 udp: NOERROR 192.0.2.1',
      '127.0.0.1 tcp: NOERROR 192.0.2.1',
      '127.0.0.2 udp: no reply',
      '127.0.0.2 tcp: no reply',
      '::1 udp: no reply',
      '::1 tcp: no reply',
      '127.0.0.3 udp: NOERROR 192.0.2.2',
      '127.0.0.3 tcp: NOERROR 192.0.2.2',
    ]);
  });
});

/** HTTP status of GET http://host:port/path, or the connection error's code. */
function get(host: string, port: number, path: string): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path, timeout: 2000 }, (res) => {
      res.resume();
      resolve(String(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

describe('prometheus, health and ready listen only where they are told', () => {
  let s: TestServer;
  const ports = { metrics: 0, health: 0, ready: 0 };
  before(async () => {
    ports.metrics = await freePort();
    ports.health = await freePort();
    ports.ready = await freePort();
    s = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    prometheus 127.0.0.2:${ports.metrics}
    health localhost:${ports.health}
    ready [::1]:${ports.ready}
    whoami
}
`,
    );
  });
  after(() => s.stop());

  const cases: Array<{ listener: keyof typeof ports; path: string; host: string; want: string }> = [
    { listener: 'metrics', path: '/metrics', host: '127.0.0.2', want: '200' },
    { listener: 'metrics', path: '/metrics', host: '127.0.0.1', want: 'ECONNREFUSED' },
    { listener: 'metrics', path: '/metrics', host: '::1', want: 'ECONNREFUSED' },
    // localhost is 127.0.0.1, as Go takes it: not ::1 as well, and no other address.
    { listener: 'health', path: '/health', host: '127.0.0.1', want: '200' },
    { listener: 'health', path: '/health', host: '127.0.0.2', want: 'ECONNREFUSED' },
    { listener: 'health', path: '/health', host: '::1', want: 'ECONNREFUSED' },
    { listener: 'ready', path: '/ready', host: '::1', want: '200' },
    { listener: 'ready', path: '/ready', host: '127.0.0.1', want: 'ECONNREFUSED' },
  ];
  for (const c of cases) {
    test(`${c.listener} asked at ${c.host}`, async () => assert.equal(await get(c.host, ports[c.listener], c.path), c.want));
  }
});
