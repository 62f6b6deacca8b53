import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { nameToWire } from '../dns/name.js';
import { freePort } from '../../../test/util/net.js';
import { DnsClient, hostPort, type Proto } from './client.js';
import { ExchangeError } from './errors.js';
import { sleep } from '../../../test/util/net.js';
import { exampleZone, missing, namedUpstream, selfSignedCert, slowUpstream, type NamedUpstream } from '../../../test/util/upstream.js';
import { buildQuery, fullRcode, readU16, scanMessage } from '../dns/wire.js';

const A = 1;
const IN = 1;

function query(name: string, id: number, type = A): Buffer {
  return buildQuery(nameToWire(name), type, IN, { id });
}

/** The A addresses of a reply, in order. */
function addresses(reply: Buffer): string[] {
  const scan = scanMessage(reply);
  assert.ok(scan, 'reply parses');
  return scan.records.filter((r) => r.type === A && r.section === 1).map((r) => [...reply.subarray(r.rdStart, r.end)].join('.'));
}

function failureKind(e: unknown): string {
  return e instanceof ExchangeError ? e.kind : `not an ExchangeError: ${String(e)}`;
}

const skip = missing('named', 'bind9') ?? missing('openssl', 'openssl');

describe('DnsClient against named', { skip }, () => {
  let named: NamedUpstream;
  let tlsPort: number;
  let certPem: string;

  before(async () => {
    const port = await freePort();
    tlsPort = await freePort();
    const cert = selfSignedCert(mkdtempSync(join(tmpdir(), 'kdns-cert-')));
    certPem = cert.certPem;
    // tcp-idle-timeout is in 100 ms units: named hangs up on idle connections after 1 s.
    named = namedUpstream({ zones: { 'example.test': exampleZone() }, port, tls: { port: tlsPort, ...cert }, options: 'tcp-idle-timeout 10;' });
    await named.start();
  });
  after(async () => {
    await named?.dispose();
  });

  const exchanges: Array<{ proto: Proto; tls: boolean; name: string; id: number; want: string[] }> = [
    { proto: 'udp', tls: false, name: 'www.example.test.', id: 0x1234, want: ['192.0.2.1'] },
    { proto: 'tcp', tls: false, name: 'WWW.Example.Test.', id: 0xbeef, want: ['192.0.2.1'] },
    { proto: 'tcp', tls: true, name: 'www.example.test.', id: 7, want: ['192.0.2.1'] },
  ];
  for (const c of exchanges) {
    it(`answers over ${c.tls ? 'tls' : c.proto} with the caller's ID (${c.name})`, async () => {
      const client = new DnsClient(c.tls ? { host: '127.0.0.1', port: tlsPort, tls: { servername: 'dns.test', ca: Buffer.from(certPem) } } : { host: '127.0.0.1', port: named.port });
      try {
        const reply = await client.exchange(query(c.name, c.id), c.proto, 2000);
        assert.equal(readU16(reply, 0), c.id);
        assert.deepEqual(addresses(reply), c.want);
        // The question comes back as the caller wrote it: named echoes the case.
        assert.equal(reply.subarray(12, 12 + nameToWire(c.name).length).toString('latin1'), Buffer.from(nameToWire(c.name)).toString('latin1'));
      } finally {
        client.close();
      }
    });
  }

  const reuse: Array<{ proto: Proto; tls: boolean; sequential: number; concurrent: number; hits: number; misses: number }> = [
    { proto: 'udp', tls: false, sequential: 5, concurrent: 0, hits: 4, misses: 1 },
    // More than one batch of the native socket (64) in flight at once, all on one socket.
    { proto: 'udp', tls: false, sequential: 0, concurrent: 200, hits: 199, misses: 1 },
    { proto: 'tcp', tls: false, sequential: 3, concurrent: 0, hits: 2, misses: 1 },
    // Pipelining: 20 queries at once share one connection.
    { proto: 'tcp', tls: false, sequential: 0, concurrent: 20, hits: 19, misses: 1 },
    { proto: 'tcp', tls: true, sequential: 0, concurrent: 10, hits: 9, misses: 1 },
  ];
  for (const c of reuse) {
    it(`reuses one ${c.tls ? 'tls' : c.proto} socket for ${c.sequential || c.concurrent} ${c.sequential ? 'sequential' : 'concurrent'} queries`, async () => {
      const client = new DnsClient(c.tls ? { host: '127.0.0.1', port: tlsPort, tls: { servername: 'dns.test', ca: Buffer.from(certPem) } } : { host: '127.0.0.1', port: named.port });
      try {
        for (let i = 0; i < c.sequential; i++) {
          assert.deepEqual(addresses(await client.exchange(query('multi.example.test.', i), c.proto, 2000)).length, 4);
        }
        // Distinct names, so a reply matched to the wrong query would show.
        const names = Array.from({ length: c.concurrent }, (_, i) => `n${i}.wild.example.test.`);
        const replies = await Promise.all(names.map((n, i) => client.exchange(query(n, 1000 + i), c.proto, 2000)));
        replies.forEach((r, i) => {
          assert.equal(readU16(r, 0), 1000 + i);
          assert.deepEqual(addresses(r), ['192.0.2.99']);
          assert.match(r.subarray(12).toString('latin1'), new RegExp(`n${i}\\x04wild`));
        });
        const stats = client.connStats().find((s) => s.proto === client.protoFor(c.proto))?.stats;
        assert.deepEqual(stats, { hits: c.hits, misses: c.misses });
      } finally {
        client.close();
      }
    });
  }

  it('closes an idle connection after expire and opens a new one next time', async () => {
    const client = new DnsClient({ host: '127.0.0.1', port: named.port }, { expireMs: 150 });
    try {
      await client.exchange(query('www.example.test.', 1), 'tcp', 2000);
      await sleep(400);
      await client.exchange(query('www.example.test.', 2), 'tcp', 2000);
      assert.deepEqual(client.connStats().find((s) => s.proto === 'tcp')?.stats, { hits: 0, misses: 2 });
    } finally {
      client.close();
    }
  });

  it('survives the upstream hanging up on a reused connection', async () => {
    const client = new DnsClient({ host: '127.0.0.1', port: named.port }, { expireMs: 60_000 });
    try {
      await client.exchange(query('www.example.test.', 1), 'tcp', 2000);
      await sleep(1500); // named closes it after its 1 s idle timeout
      const reply = await client.exchange(query('www.example.test.', 2), 'tcp', 2000);
      assert.deepEqual(addresses(reply), ['192.0.2.1']);
    } finally {
      client.close();
    }
  });

  const closing: Proto[] = ['udp', 'tcp'];
  for (const proto of closing) {
    it(`close() over ${proto} lets the query in flight finish and refuses new ones`, async () => {
      const client = new DnsClient({ host: '127.0.0.1', port: named.port });
      const inFlight = client.exchange(query('www.example.test.', 5), proto, 2000);
      client.close();
      assert.deepEqual(addresses(await inFlight), ['192.0.2.1']);
      await assert.rejects(client.exchange(query('www.example.test.', 6), proto, 2000), (e) => failureKind(e) === 'shutdown');
    });
  }

  it('rejects a certificate it cannot verify', async () => {
    const client = new DnsClient({ host: '127.0.0.1', port: tlsPort, tls: { servername: 'dns.test' } });
    try {
      await assert.rejects(client.exchange(query('www.example.test.', 1), 'tcp', 2000), (e) => failureKind(e) === 'tls');
    } finally {
      client.close();
    }
  });

  it('returns NXDOMAIN replies as replies, not errors', async () => {
    const client = new DnsClient({ host: '127.0.0.1', port: named.port });
    try {
      const reply = await client.exchange(query('nope.example.test.', 9), 'udp', 2000);
      assert.equal(fullRcode(reply, scanMessage(reply)?.opt), 3);
    } finally {
      client.close();
    }
  });
});

describe('DnsClient failures', () => {
  const cases: Array<{ what: string; proto: Proto; slowMs?: number; timeoutMs: number; kind: string; within: number }> = [
    { what: 'nothing listens (UDP: ICMP port unreachable)', proto: 'udp', timeoutMs: 2000, kind: 'refused', within: 500 },
    { what: 'nothing listens (TCP: RST)', proto: 'tcp', timeoutMs: 2000, kind: 'refused', within: 500 },
    { what: 'the upstream is slower than the timeout', proto: 'udp', slowMs: 1000, timeoutMs: 100, kind: 'timeout', within: 500 },
  ];
  for (const c of cases) {
    it(`fails with "${c.kind}" when ${c.what}`, async () => {
      const slow = c.slowMs ? await slowUpstream(c.slowMs) : undefined;
      const port = slow?.port ?? (await freePort());
      const client = new DnsClient({ host: '127.0.0.1', port });
      const started = Date.now();
      try {
        await assert.rejects(client.exchange(query('www.example.test.', 1), c.proto, c.timeoutMs), (e) => failureKind(e) === c.kind);
        assert.ok(Date.now() - started < c.within, `took ${Date.now() - started} ms`);
      } finally {
        client.close();
        await slow?.close();
      }
    });
  }

  // In a network namespace with no route, connect() on the UDP socket itself fails (ENETUNREACH):
  // the query must fail as unreachable (a failed exchange, like a timeout), and the process go on.
  it('fails as "unreachable" when UDP connect finds no route, and the process goes on', { skip: process.getuid?.() === 0 ? false : 'needs root (unshare --net)' }, () => {
    const clientUrl = new URL('./client.ts', import.meta.url).href;
    const wireUrl = new URL('../dns/wire.ts', import.meta.url).href;
    const nameUrl = new URL('../dns/name.ts', import.meta.url).href;
    const code = `
      const { DnsClient } = await import(${JSON.stringify(clientUrl)});
      const { buildQuery } = await import(${JSON.stringify(wireUrl)});
      const { nameToWire } = await import(${JSON.stringify(nameUrl)});
      const client = new DnsClient({ host: '192.0.2.53', port: 53 });
      const q = buildQuery(nameToWire('www.example.test.'), 1, 1, { id: 7 });
      const outcome = await client.exchange(q, 'udp', 2000).then(() => 'answered', (e) => e.kind);
      client.close();
      await new Promise((r) => setTimeout(r, 100));
      console.log('outcome ' + outcome);`;
    const r = spawnSync('unshare', ['--net', process.execPath, '--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'outcome unreachable');
  });

  it('names upstreams as CoreDNS does', () => {
    assert.deepEqual(
      [hostPort('127.0.0.1', 53), hostPort('::1', 5353), hostPort('2001:db8::1', 853)],
      ['127.0.0.1:53', '[::1]:5353', '[2001:db8::1]:853'],
    );
  });
});
