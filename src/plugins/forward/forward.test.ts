// forward end to end: kdns started on loopback with real named upstreams, asked with dig (and,
// for streams of queries, with the dnsclient over UDP), counting at the upstreams.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { DnsClient } from '../../lib/dnsclient/client.js';
import { buildQuery, headerRcode, readU16 } from '../../lib/dns/wire.js';
import { nameToWire } from '../../lib/dns/name.js';
import { dig } from '../../../test/util/dig.js';
import { freePort, sleep } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { exampleZone, missing, namedUpstream, rootZone, selfSignedCert, slowUpstream, truncatingUpstream, type NamedUpstream } from '../../../test/util/upstream.js';

const skip = missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils');

/** Sum of a metric's samples whose labels include `labels`. */
async function metric(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = registry.getSingleMetric(name);
  if (!m) return 0;
  const { values } = await m.get();
  return values.filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k as keyof typeof v.labels]) === want)).reduce((s, v) => s + v.value, 0);
}

function corefile(body: string): string {
  return `.:{PORT} {\n  bind 127.0.0.1\n${body}\n}\n`;
}

/** Asks kdns over UDP without dig (for streams of many queries): rcode of each. */
async function ask(client: DnsClient, name: string, id = 1): Promise<number> {
  const reply = await client.exchange(buildQuery(nameToWire(name), 1, 1, { id }), 'udp', 3000);
  assert.equal(readU16(reply, 0), id);
  return headerRcode(reply);
}

describe('forward end to end', { skip }, () => {
  const upstreams: NamedUpstream[] = [];
  let certPem = '';
  let tlsPort = 0;

  before(async () => {
    const cert = selfSignedCert(mkdtempSync(join(tmpdir(), 'kdns-cert-')));
    certPem = cert.certPem;
    tlsPort = await freePort();
    for (let i = 0; i < 3; i++) {
      const zones: Record<string, string> = { 'example.test': exampleZone(), '': rootZone() };
      // Only the third upstream knows only.test: the `next` test asks the first for it and gets NXDOMAIN.
      if (i === 2) zones['only.test'] = exampleZone('only.test');
      upstreams.push(namedUpstream({ zones, port: await freePort(), tls: i === 0 ? { port: tlsPort, ...cert } : undefined }));
    }
    await Promise.all(upstreams.map((u) => u.start()));
  });
  after(async () => {
    await Promise.all(upstreams.map((u) => u.dispose()));
  });

  const at = (i: number): string => `127.0.0.1:${(upstreams[i] as NamedUpstream).port}`;

  const policies: Array<{ policy: string; queries: number; want: (counts: number[]) => void; first?: number }> = [
    { policy: 'sequential', queries: 9, want: (c) => assert.deepEqual(c, [9, 0, 0]) },
    // CoreDNS's round robin: the first query goes to the second upstream, then the third, the first...
    { policy: 'round_robin', queries: 9, want: (c) => assert.deepEqual(c, [3, 3, 3]), first: 1 },
    {
      policy: 'random',
      queries: 60,
      want: (c) => {
        assert.equal(c.reduce((a, b) => a + b), 60);
        for (const n of c) assert.ok(n >= 8, `each upstream gets a share: ${c.join(' ')}`);
      },
    },
  ];
  for (const c of policies) {
    it(`policy ${c.policy}: upstream order counted at the upstreams`, async () => {
      const s = await startTestServer(corefile(`  forward . ${at(0)} ${at(1)} ${at(2)} {\n    policy ${c.policy}\n  }`));
      try {
        const tag = `${c.policy.replace('_', '')}${Date.now()}`;
        for (let i = 0; i < c.queries; i++) {
          const r = await dig(`q${i}.${tag}.wild.example.test`, 'A', { port: s.port });
          assert.equal(r.status, 'NOERROR');
        }
        const counts = upstreams.map((u) => u.queries.filter((q) => q.name.endsWith(`${tag}.wild.example.test`)).length);
        c.want(counts);
        if (c.first !== undefined) {
          const firstAt = upstreams.findIndex((u) => u.queriesFor(`q0.${tag}.wild.example.test`).length > 0);
          assert.equal(firstAt, c.first);
        }
        assert.equal(await metric(s.server.shared.metrics, 'coredns_forward_requests_total'), c.queries);
      } finally {
        await s.stop();
      }
    });
  }

  it('keeps answering while an upstream dies, health-checks it every 0.5 s, and uses it again when it is back', async () => {
    const a = upstreams[0] as NamedUpstream;
    const s = await startTestServer(corefile(`  forward . ${at(0)} ${at(1)} {\n    policy sequential\n  }`));
    const client = new DnsClient({ host: '127.0.0.1', port: s.port });
    const rcodes = new Map<number, number>();
    let sent = 0;
    const answered: Array<Promise<void>> = [];
    // Client traffic at a steady 200 queries/s, not waiting on each other: queries in flight
    // at the moment A dies wait out their timeout, the ones after it must not. Each tick sends
    // what the rate owes by now, so a loaded machine that fires timers late keeps the rate.
    const streamStart = Date.now();
    const stream = setInterval(() => {
      while (sent < (Date.now() - streamStart) / 5) {
        const n = sent++;
        answered.push(
          ask(client, `s${n}.stream.wild.example.test`, (n % 60000) + 1).then((rc) => {
            rcodes.set(rc, (rcodes.get(rc) ?? 0) + 1);
          }),
        );
      }
    }, 5);
    try {
      await sleep(300);
      await a.stop();
      const diedAt = Date.now();
      await sleep(1600);
      const checksWhileDead = await metric(s.server.shared.metrics, 'coredns_forward_healthcheck_failures_total', { to: at(0) });
      const deadFor = Date.now() - diedAt;
      const before = a.queries.length;
      await a.start();
      const backAt = Date.now();
      await sleep(1200);
      clearInterval(stream);
      await Promise.all(answered);
      // Every client query answered, none with SERVFAIL: B took over while A was dead.
      assert.deepEqual([...rcodes.keys()], [0], `rcodes seen: ${JSON.stringify([...rcodes])}`);
      assert.ok(sent > 400, `stream sent ${sent} queries`);
      assert.equal([...rcodes.values()].reduce((x, y) => x + y), sent);
      // One failed check per 0.5 s of being dead (the first right after the first error).
      const expected = deadFor / 500;
      assert.ok(checksWhileDead >= expected - 2 && checksWhileDead <= expected + 1.5, `${checksWhileDead} failed checks in ${deadFor} ms`);
      // Back: the next health check (. NS) gets a reply and client queries flow to A again.
      const after = a.queries.slice(before);
      const firstClientQuery = after.find((q) => q.name.includes('.stream.'));
      assert.ok(firstClientQuery, 'A got client queries again');
      assert.ok(firstClientQuery.at - backAt < 1000, `A used again ${firstClientQuery.at - backAt} ms after it came back`);
      assert.ok(after.some((q) => q.name === '.' && q.type === 'NS'), 'the health check that found A back is in its log');
    } finally {
      clearInterval(stream);
      await Promise.allSettled(answered);
      client.close();
      await s.stop();
      if (!a.running) await a.start();
    }
  });

  it('retries a truncated UDP reply over TCP and returns the full answer', async () => {
    const tc = await truncatingUpstream((upstreams[1] as NamedUpstream).port);
    const s = await startTestServer(corefile(`  forward . 127.0.0.1:${tc.port}`));
    try {
      const small = await dig('www.example.test', 'A', { port: s.port, args: ['+ignore'] });
      assert.deepEqual([small.status, small.flags.includes('tc'), small.answer.map((r) => r.data), small.transport], ['NOERROR', false, ['192.0.2.1'], 'UDP']);
      const big = await dig('txt-big.example.test', 'TXT', { port: s.port, args: ['+ignore', '+bufsize=4096'] });
      assert.deepEqual([big.status, big.flags.includes('tc'), big.answer.length], ['NOERROR', false, 12]);
      assert.deepEqual([tc.udpQueries, tc.tcpQueries], [2, 2]);
    } finally {
      await s.stop();
      await tc.close();
    }
  });

  it('bounds queries in flight to a slow upstream with max_concurrent, REFUSED past it, counted', async () => {
    const slow = await slowUpstream(800);
    const s = await startTestServer(corefile(`  forward . 127.0.0.1:${slow.port} {\n    max_concurrent 10\n  }`));
    const client = new DnsClient({ host: '127.0.0.1', port: s.port });
    try {
      const started = Date.now();
      const rcodes = await Promise.all(Array.from({ length: 50 }, (_, i) => ask(client, `c${i}.example.test`, i + 1)));
      const tally = (rc: number): number => rcodes.filter((r) => r === rc).length;
      assert.deepEqual([tally(0), tally(5)], [10, 40]);
      assert.equal(slow.maxHeld, 10);
      assert.ok(Date.now() - started < 2000);
      assert.equal(await metric(s.server.shared.metrics, 'coredns_forward_max_concurrent_rejects_total'), 40);
    } finally {
      client.close();
      await s.stop();
      await slow.close();
    }
  });

  it('routes by longest zone across forward blocks, and leaves except names to the next plugin', async () => {
    const text = `foo.test:{PORT} {
  bind 127.0.0.1
  forward . ${at(0)}
}
a.foo.test:{PORT} {
  bind 127.0.0.1
  forward . ${at(1)} {
    except private.a.foo.test
  }
}
`;
    const s = await startTestServer(text);
    try {
      const cases: Array<{ name: string; status: string; upstream: number | undefined }> = [
        // The upstreams serve the root zone but no foo.test: NXDOMAIN, from the upstream of the longest zone.
        { name: 'www.a.foo.test', status: 'NXDOMAIN', upstream: 1 },
        { name: 'www.foo.test', status: 'NXDOMAIN', upstream: 0 },
        { name: 'x.private.a.foo.test', status: 'SERVFAIL', upstream: undefined }, // except: nothing after forward answers
      ];
      for (const c of cases) {
        const r = await dig(c.name, 'A', { port: s.port });
        assert.equal(r.status, c.status, c.name);
        const seenAt = upstreams.map((u) => u.queriesFor(c.name).length);
        assert.deepEqual(
          seenAt,
          upstreams.map((_, i) => (i === c.upstream ? 1 : 0)),
          c.name,
        );
      }
    } finally {
      await s.stop();
    }
  });

  it('forwards over DNS-over-TLS, verifying the upstream certificate', async () => {
    const s = await startTestServer(corefile(`  forward . tls://127.0.0.1:${tlsPort} {\n    tls ca.pem\n    tls_servername dns.test\n  }`), { files: { 'ca.pem': certPem } });
    try {
      const r = await dig('www.example.test', 'AAAA', { port: s.port });
      assert.deepEqual([r.status, r.answer.map((x) => x.data)], ['NOERROR', ['2001:db8::1']]);
      assert.ok(upstreams[0]?.queriesFor('www.example.test').some((q) => q.tcp && q.type === 'AAAA'));
      assert.equal(await metric(s.server.shared.metrics, 'coredns_proxy_conn_cache_misses_total', { proto: 'tcp-tls' }), 1);
    } finally {
      await s.stop();
    }
  });

  it('hands NXDOMAIN to the next forward with `next NXDOMAIN`', async () => {
    const s = await startTestServer(corefile(`  forward . ${at(0)} {\n    next NXDOMAIN\n  }\n  forward . ${at(2)}`));
    try {
      const r = await dig('www.only.test', 'A', { port: s.port });
      assert.deepEqual([r.status, r.answer.map((x) => x.data)], ['NOERROR', ['192.0.2.1']]);
      const plain = await dig('www.example.test', 'A', { port: s.port });
      assert.equal(plain.status, 'NOERROR');
    } finally {
      await s.stop();
    }
  });

  it('when every upstream is down: one random try, or SERVFAIL at once with failfast_all_unhealthy_upstreams', async () => {
    const dead = [await freePort(), await freePort()];
    const cases: Array<{ failfast: boolean; broken: number }> = [
      { failfast: false, broken: 1 },
      { failfast: true, broken: 1 },
    ];
    for (const c of cases) {
      const s = await startTestServer(
        corefile(`  forward . 127.0.0.1:${dead[0]} 127.0.0.1:${dead[1]} {\n    health_check 50ms\n${c.failfast ? '    failfast_all_unhealthy_upstreams\n' : ''}  }`),
      );
      try {
        const first = await dig('www.example.test', 'A', { port: s.port });
        assert.equal(first.status, 'SERVFAIL');
        await sleep(300); // two failed checks each: both down
        const r = await dig('www.example.test', 'A', { port: s.port });
        assert.equal(r.status, 'SERVFAIL');
        assert.equal(await metric(s.server.shared.metrics, 'coredns_forward_healthcheck_broken_total'), c.broken);
        const requests = await metric(s.server.shared.metrics, 'coredns_forward_requests_total');
        // First query: both tried. Second: one random try, or none with failfast.
        assert.equal(requests, c.failfast ? 2 : 3, `failfast ${c.failfast}`);
      } finally {
        await s.stop();
      }
    }
  });
});
