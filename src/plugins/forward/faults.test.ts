// forward when replies are late or lost: replies that arrive while kdns cannot read wait in its
// upstream sockets (none dropped, none asked twice), a query whose reply was lost is asked again
// within its deadline, and an upstream that refuses is not asked again for the same query.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { DnsClient } from '../../lib/dnsclient/client.js';
import { nameToWire } from '../../lib/dns/name.js';
import { buildQuery, headerRcode, questionEnd } from '../../lib/dns/wire.js';
import { nativeUdp } from '../../lib/native/udp.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { startTestServer } from '../../../test/util/server.js';
import { holdingUpstream, sendBurst, startKdnsProcess } from '../../../test/util/udpburst.js';
import { bareReply } from '../../../test/util/upstream.js';

/** Sum of a metric's samples whose labels include `labels`. */
async function metric(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = registry.getSingleMetric(name);
  if (!m) return 0;
  const { values } = await m.get();
  return values.filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k as keyof typeof v.labels]) === want)).reduce((s, v) => s + v.value, 0);
}

/**
 * Scripted because no real server can be told to lose a datagram: ignores the first copy of each
 * question and answers every later one (an empty NOERROR reply). Counts copies per name.
 */
async function losesFirstCopy(): Promise<{ port: number; copies: Map<string, number>; close(): Promise<void> }> {
  const udp = dgram.createSocket('udp4');
  const copies = new Map<string, number>();
  udp.on('message', (msg, rinfo) => {
    // The question's name in wire form (the question without its type and class).
    const name = msg.subarray(12, questionEnd(msg) - 4).toString('latin1');
    const n = (copies.get(name) ?? 0) + 1;
    copies.set(name, n);
    if (n > 1) udp.send(bareReply(msg, 0x0400), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  return { port: udp.address().port, copies, close: () => new Promise<void>((r) => udp.close(() => r())) };
}

const transports = [
  { via: 'native', env: {}, skip: !nativeUdp() && process.env.CI !== 'true' ? 'native UDP socket not built (npm run build:native)' : false },
  { via: 'dgram', env: { KDNS_UDP: 'dgram' }, skip: false },
] as const;

describe('forward: late and lost replies', () => {
  for (const t of transports) {
    it(`replies that arrive while kdns is stopped all wait in its upstream sockets: every query answered, none asked twice (${t.via})`, { skip: t.skip }, async () => {
      // 1,000 replies: four times what the kernel's default buffer (208 KiB) holds of them.
      const n = 1000;
      const upstream = await holdingUpstream();
      const kdns = await startKdnsProcess(`.:{PORT} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${upstream.port}\n}\n`, t.env);
      try {
        const burst = await sendBurst(
          kdns.port,
          Array.from({ length: n }, (_, i) => `q${i}.burst.test`),
        );
        await waitFor(() => upstream.received === n, 15_000).catch(() => assert.fail(`the upstream got ${upstream.received} of ${n} queries\n${kdns.output()}`));
        kdns.pause();
        await upstream.release();
        // Loopback hands each datagram to the receiving socket within the send; a moment more
        // for the kernel to finish before kdns runs again.
        await new Promise((r) => setTimeout(r, 100));
        kdns.resume();
        const got = await burst.answers(15_000);
        assert.deepEqual(got, { rcodes: { NOERROR: n }, unanswered: 0 }, kdns.output());
        assert.equal(upstream.received, n, 'no query was asked again: no reply was dropped');
      } finally {
        await kdns.stop();
        await upstream.close();
      }
    });
  }

  it('asks again, within the query deadline, an upstream whose reply was lost', async () => {
    const upstream = await losesFirstCopy();
    const s = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${upstream.port}\n}\n`);
    const client = new DnsClient({ host: '127.0.0.1', port: s.port });
    try {
      const names = ['a.lost.test.', 'b.lost.test.', 'c.lost.test.'];
      const rcodes = await Promise.all(names.map(async (name, i) => headerRcode(await client.exchange(buildQuery(nameToWire(name), 1, 1, { id: i + 1 }), 'udp', 4500))));
      assert.deepEqual(rcodes, [0, 0, 0]);
      // Each question twice (the health check's `. NS`, started by the timeouts, is counted apart).
      assert.deepEqual(
        names.map((name) => upstream.copies.get(Buffer.from(nameToWire(name)).toString('latin1'))),
        [2, 2, 2],
      );
      assert.equal(await metric(s.server.shared.metrics, 'coredns_forward_requests_total'), 6);
    } finally {
      client.close();
      await s.stop();
      await upstream.close();
    }
  });

  it('does not ask again an upstream that refused (nothing listens on its port): SERVFAIL after one try', async () => {
    const closed = await freePort();
    const s = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${closed}\n}\n`);
    const client = new DnsClient({ host: '127.0.0.1', port: s.port });
    try {
      const names = ['a.refused.test.', 'b.refused.test.', 'c.refused.test.'];
      const rcodes = await Promise.all(names.map(async (name, i) => headerRcode(await client.exchange(buildQuery(nameToWire(name), 1, 1, { id: i + 1 }), 'udp', 4500))));
      assert.deepEqual(rcodes, [2, 2, 2]);
      assert.equal(await metric(s.server.shared.metrics, 'coredns_forward_requests_total', { to: `127.0.0.1:${closed}` }), 3);
    } finally {
      client.close();
      await s.stop();
    }
  });
});
