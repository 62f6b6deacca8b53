import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { freePort } from '../../../test/util/net.js';
import { HttpEndpoint, loopbackUrl } from './endpoint.js';
import { parseHttpAddress, type HttpAddress } from './httpaddress.js';

describe('parseHttpAddress: Go SplitHostPort shapes', () => {
  const cases: Array<{ text: string; want: Omit<HttpAddress, 'text'> | string }> = [
    { text: ':8080', want: { host: undefined, port: 8080 } },
    { text: '127.0.0.1:8080', want: { host: '127.0.0.1', port: 8080 } },
    { text: 'localhost:9153', want: { host: '127.0.0.1', port: 9153 } },
    { text: '[::1]:8181', want: { host: '::1', port: 8181 } },
    { text: '[::]:8181', want: { host: '::', port: 8181 } },
    { text: '0.0.0.0:0', want: { host: '0.0.0.0', port: 0 } },
    { text: '8080', want: 'address 8080: missing port in address' },
    { text: 'host:', want: 'address host:: invalid port ""' },
    { text: ':65536', want: 'address :65536: invalid port "65536"' },
    { text: '::1:80', want: 'address ::1:80: too many colons in address' },
    { text: '[::1]80', want: 'address [::1]80: missing port in address' },
    { text: '[nothost]:80', want: 'address [nothost]:80: invalid IPv6 address' },
  ];
  for (const c of cases) {
    test(c.text, () => {
      const got = parseHttpAddress(c.text);
      assert.deepEqual(typeof got === 'string' ? got : { host: got.host, port: got.port }, c.want);
    });
  }
});

describe('loopbackUrl: where the process reaches its own listener', () => {
  const cases: Array<{ address: string; want: string }> = [
    { address: ':8080', want: 'http://127.0.0.1:8080/health' },
    { address: '0.0.0.0:8080', want: 'http://127.0.0.1:8080/health' },
    { address: '[::]:8080', want: 'http://[::1]:8080/health' },
    { address: '[::1]:8080', want: 'http://[::1]:8080/health' },
    { address: '127.0.0.2:8080', want: 'http://127.0.0.2:8080/health' },
  ];
  for (const c of cases) {
    test(c.address, () => {
      const a = parseHttpAddress(c.address) as HttpAddress;
      assert.equal(loopbackUrl(a, a.port, '/health'), c.want);
    });
  }
});

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

describe('HttpEndpoint: one listener, shared claims', () => {
  test('paths of several owners on one port; the latest claim answers; closes with the last release', async () => {
    const port = await freePort();
    const ep = new HttpEndpoint(parseHttpAddress(`127.0.0.1:${port}`) as HttpAddress);
    const base = `http://127.0.0.1:${port}`;
    const releaseHealth = await ep.claim('/health', (_q, r) => void r.end('health'), 'health');
    const releaseOld = await ep.claim('/metrics', (_q, r) => void r.end('old config'), 'prometheus');
    const releaseNew = await ep.claim('/metrics', (_q, r) => void r.end('new config'), 'prometheus');
    assert.deepEqual(await get(`${base}/metrics`), { status: 200, body: 'new config' });
    assert.deepEqual(await get(`${base}/health?x=1`), { status: 200, body: 'health' });
    assert.equal((await get(`${base}/nothing`)).status, 404);
    await releaseOld();
    assert.deepEqual(await get(`${base}/metrics`), { status: 200, body: 'new config' });
    await releaseNew();
    assert.equal((await get(`${base}/metrics`)).status, 404);
    assert.equal(ep.listening, true);
    await releaseHealth();
    await releaseHealth(); // a second release is a no-op
    assert.equal(ep.listening, false);
    await assert.rejects(fetch(`${base}/health`));
  });

  test('a port taken by someone else: a clear error naming the plugin and address', async () => {
    const port = await freePort();
    const other = net.createServer();
    await new Promise<void>((r) => other.listen(port, '127.0.0.1', () => r()));
    try {
      const ep = new HttpEndpoint(parseHttpAddress(`127.0.0.1:${port}`) as HttpAddress);
      await assert.rejects(ep.claim('/health', () => undefined, 'health'), { message: `plugin/health: cannot listen on 127.0.0.1:${port}: address already in use` });
      assert.equal(ep.listening, false);
    } finally {
      other.close();
    }
  });

  test('a handler that throws answers 500 with the message', async () => {
    const port = await freePort();
    const ep = new HttpEndpoint(parseHttpAddress(`127.0.0.1:${port}`) as HttpAddress);
    const release = await ep.claim(
      '/metrics',
      () => {
        throw new Error('registry broke');
      },
      'prometheus',
    );
    try {
      assert.deepEqual(await get(`http://127.0.0.1:${port}/metrics`), { status: 500, body: 'registry broke' });
    } finally {
      await release();
    }
  });
});
