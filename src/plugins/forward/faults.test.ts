// forward when replies are late or lost: replies that arrive while kdns cannot read wait in its
// upstream sockets (none dropped), a query whose datagram was lost is sent again within its
// exchange once it is later than the upstream's replies usually are (its max_concurrent slot
// freed as soon), and an upstream that refuses is not asked again for the same query.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { DnsClient } from '../../lib/dnsclient/client.js';
import { nameToWire } from '../../lib/dns/name.js';
import { buildQuery, headerRcode } from '../../lib/dns/wire.js';
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

/** One datagram as the scripted upstream got it: the question's name and the ID on the wire. */
interface Received {
  name: string;
  id: number;
}

/** The question's name of a query, dotted, without the trailing dot ("." for the root). */
function questionName(msg: Buffer): string {
  const labels: string[] = [];
  for (let p = 12; p < msg.length && (msg[p] as number) > 0; p += (msg[p] as number) + 1) labels.push(msg.toString('latin1', p + 1, p + 1 + (msg[p] as number)));
  return labels.length === 0 ? '.' : labels.join('.');
}

/**
 * Scripted because no real server can be told to lose a datagram or refuse a copy. By the first
 * label of the question's name:
 *   lost…  the first copy is lost (ignored), later copies are answered;
 *   busy…  the first copy is worked on until a second comes, which is REFUSED (as a CoreDNS at its
 *          max_concurrent would) before the first is answered;
 *   full…  the first copy is lost, later copies are REFUSED;
 *   other  answered at once, health checks included.
 * Answers are empty, NOERROR unless said. Records every datagram in the order it came.
 */
async function lossyUpstream(): Promise<{ port: number; received: Received[]; close(): Promise<void> }> {
  const udp = dgram.createSocket('udp4');
  const received: Received[] = [];
  const firstCopies = new Map<string, Buffer>();
  udp.on('message', (msg, rinfo) => {
    const name = questionName(msg);
    received.push({ name, id: msg.readUInt16BE(0) });
    const first = firstCopies.get(name);
    if (first === undefined) firstCopies.set(name, msg);
    const reply = (m: Buffer, rcode = 0): void => void udp.send(bareReply(m, 0x0400, rcode), rinfo.port, rinfo.address);
    if (name.startsWith('lost')) {
      if (first !== undefined) reply(msg);
    } else if (name.startsWith('busy')) {
      if (first !== undefined) {
        reply(msg, 5);
        reply(first);
      }
    } else if (name.startsWith('full')) {
      if (first !== undefined) reply(msg, 5);
    } else {
      reply(msg);
    }
  });
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  return { port: udp.address().port, received, close: () => new Promise<void>((r) => udp.close(() => r())) };
}

/** The datagrams' names cut into groups of the given sizes, each group sorted (the order within a burst is the server's). */
function grouped(received: readonly Received[], sizes: readonly number[]): string[][] {
  const out: string[][] = [];
  let at = 0;
  for (const n of sizes) {
    out.push(received.slice(at, at + n).map((r) => r.name).sort());
    at += n;
  }
  if (at < received.length) out.push(received.slice(at).map((r) => r.name));
  return out;
}

/** Names whose copies did not all carry one ID. */
function copiesUnderOtherIds(received: readonly Received[]): string[] {
  const ids = new Map<string, Set<number>>();
  for (const r of received) ids.set(r.name, (ids.get(r.name) ?? new Set()).add(r.id));
  return [...ids].filter(([, set]) => set.size > 1).map(([name]) => name);
}

const transports = [
  { via: 'native', env: {}, skip: !nativeUdp() && process.env.CI !== 'true' ? 'native UDP socket not built (npm run build:native)' : false },
  { via: 'dgram', env: { KDNS_UDP: 'dgram' }, skip: false },
] as const;

describe('forward: late and lost replies', () => {
  for (const t of transports) {
    it(`replies that arrive while kdns is stopped all wait in its upstream sockets: every query answered, none asked again once the replies are out (${t.via})`, { skip: t.skip }, async () => {
      // 1,000 replies: four times what the kernel's default buffer (208 KiB) holds of them.
      const n = 1000;
      const upstream = await holdingUpstream();
      const kdns = await startKdnsProcess(`.:{PORT} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${upstream.port}\n}\n`, t.env);
      try {
        const burst = await sendBurst(
          kdns.port,
          Array.from({ length: n }, (_, i) => `q${i}.burst.test`),
        );
        await waitFor(() => upstream.received >= n, 15_000).catch(() => assert.fail(`the upstream got ${upstream.received} of ${n} queries\n${kdns.output()}`));
        kdns.pause();
        // A moment for the stop to land and for this process to read what kdns sent before it.
        // Copies kdns sent while the replies were held (a slow machine can hold them past its
        // first timeout) are fine: the point is what it asks once the replies are out.
        await new Promise((r) => setTimeout(r, 100));
        const askedBeforeReplies = upstream.received;
        await upstream.release();
        // Loopback hands each datagram to the receiving socket within the send; a moment more
        // for the kernel to finish before kdns runs again.
        await new Promise((r) => setTimeout(r, 100));
        kdns.resume();
        const got = await burst.answers(15_000);
        assert.deepEqual(got, { rcodes: { NOERROR: n }, unanswered: 0 }, kdns.output());
        // A reply dropped at kdns's socket would have its query asked again after the release.
        assert.equal(upstream.received - askedBeforeReplies, 0, 'nothing asked again once the replies were out: no reply was dropped');
      } finally {
        await kdns.stop();
        await upstream.close();
      }
    });
  }

  // kdns is asked by a plain socket here (sendBurst), which never sends a query twice, so every
  // copy the upstream gets is kdns's. A first query answered at once tells kdns how fast the
  // upstream is; one answered beside the lost ones shows that the upstream answers while they
  // wait (what a lost datagram looks like). A health check (". NS") would show that an exchange
  // ran out its 2 s.
  const ok20 = Array.from({ length: 20 }, (_, i) => `ok-${i}.test`);
  const lostCases: Array<{
    what: string;
    options: string;
    bursts: string[][];
    rcodes: Array<Record<string, number>>;
    /** What the upstream got, in groups: each group in any order, the groups in this order. */
    groups: string[][];
    metrics: Record<string, number>;
  }> = [
    {
      what: 'a lost datagram is sent again within its exchange, soon after replies show it is late: no exchange times out',
      options: '',
      bursts: [['warm.test'], ['lost-a.test', 'lost-b.test', 'lost-c.test', 'ok.test']],
      rcodes: [{ NOERROR: 1 }, { NOERROR: 4 }],
      groups: [['warm.test'], ['lost-a.test', 'lost-b.test', 'lost-c.test', 'ok.test'], ['lost-a.test', 'lost-b.test', 'lost-c.test']],
      metrics: { kdns_forward_retransmits_total: 3, coredns_forward_requests_total: 5, coredns_proxy_healthcheck_failures_total: 0 },
    },
    {
      what: 'a lost burst that fills max_concurrent frees its slots without waiting out a timeout: the next burst of as many is not REFUSED',
      options: ' {\n      max_concurrent 5\n    }',
      bursts: [['warm.test'], ['lost-1.test', 'lost-2.test', 'lost-3.test', 'lost-4.test', 'ok.test'], ['next-1.test', 'next-2.test', 'next-3.test', 'next-4.test', 'next-5.test']],
      rcodes: [{ NOERROR: 1 }, { NOERROR: 5 }, { NOERROR: 5 }],
      groups: [
        ['warm.test'],
        ['lost-1.test', 'lost-2.test', 'lost-3.test', 'lost-4.test', 'ok.test'],
        ['lost-1.test', 'lost-2.test', 'lost-3.test', 'lost-4.test'],
        ['next-1.test', 'next-2.test', 'next-3.test', 'next-4.test', 'next-5.test'],
      ],
      metrics: { kdns_forward_retransmits_total: 4, coredns_forward_max_concurrent_rejects_total: 0, coredns_proxy_healthcheck_failures_total: 0 },
    },
    {
      // Everything runs in this process: kdns reads the 20 queries in one go, forwards 10, and the
      // upstream's replies to them are read two turns of the event loop later.
      what: 'a burst of twice max_concurrent to an upstream that answers at once is not REFUSED: a query at the limit waits for replies already back to be read',
      options: ' {\n      max_concurrent 10\n    }',
      bursts: [ok20],
      rcodes: [{ NOERROR: 20 }],
      groups: [ok20],
      metrics: { kdns_forward_retransmits_total: 0, coredns_forward_max_concurrent_rejects_total: 0, coredns_proxy_healthcheck_failures_total: 0 },
    },
  ];
  for (const c of lostCases) {
    it(c.what, async () => {
      const upstream = await lossyUpstream();
      const s = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${upstream.port}${c.options}\n}\n`);
      try {
        const rcodes: Array<Record<string, number>> = [];
        for (const names of c.bursts) {
          const got = await (await sendBurst(s.port, names)).answers(10_000);
          assert.equal(got.unanswered, 0, `unanswered in burst ${names.join(' ')}`);
          rcodes.push(got.rcodes);
        }
        assert.deepEqual(rcodes, c.rcodes);
        assert.deepEqual(
          grouped(upstream.received, c.groups.map((g) => g.length)),
          c.groups.map((g) => [...g].sort()),
        );
        assert.deepEqual(copiesUnderOtherIds(upstream.received), [], 'a copy is the same query: same ID');
        const registry = s.server.shared.metrics;
        const got: Record<string, number> = {};
        for (const name of Object.keys(c.metrics)) got[name] = await metric(registry, name);
        assert.deepEqual(got, c.metrics);
      } finally {
        await s.stop();
        await upstream.close();
      }
    });
  }

  const channels = [
    { via: 'the native socket', expireMs: 10_000, skip: !nativeUdp() && process.env.CI !== 'true' ? 'native UDP socket not built (npm run build:native)' : false },
    { via: 'node:dgram (expire 0: a socket per query)', expireMs: 0, skip: false },
  ] as const;
  for (const ch of channels) {
    it(`DnsClient sends a late query again on ${ch.via}: answered within the exchange, one copy counted`, { skip: ch.skip }, async () => {
      const upstream = await lossyUpstream();
      let resent = 0;
      const client = new DnsClient({ host: '127.0.0.1', port: upstream.port }, { expireMs: ch.expireMs, retransmit: true, resent: { inc: () => resent++ } });
      try {
        const ask = async (name: string, id: number): Promise<number> => headerRcode(await client.exchange(buildQuery(nameToWire(name), 1, 1, { id }), 'udp', 2000));
        assert.equal(await ask('warm.test.', 1), 0);
        assert.deepEqual(await Promise.all([ask('lost.test.', 2), ask('ok.test.', 3)]), [0, 0]);
        assert.deepEqual(grouped(upstream.received, [1, 2, 1]), [['warm.test'], ['lost.test', 'ok.test'], ['lost.test']]);
        assert.deepEqual(copiesUnderOtherIds(upstream.received), []);
        assert.equal(resent, 1);
      } finally {
        client.close();
        await upstream.close();
      }
    });
  }

  const refusedCopies: Array<{ what: string; name: string; rcode: number }> = [
    { what: 'a copy REFUSED while the first is worked on does not end the exchange: the first one\'s answer does', name: 'busy.test', rcode: 0 },
    { what: 'a copy REFUSED when the first was lost: no more copies, REFUSED once the exchange runs out', name: 'full.test', rcode: 5 },
  ];
  for (const c of refusedCopies) {
    it(`DnsClient: ${c.what}`, async () => {
      const upstream = await lossyUpstream();
      const client = new DnsClient({ host: '127.0.0.1', port: upstream.port }, { retransmit: true });
      try {
        const ask = async (name: string, id: number): Promise<number> => headerRcode(await client.exchange(buildQuery(nameToWire(name), 1, 1, { id }), 'udp', 2000));
        assert.equal(await ask('warm.test.', 1), 0);
        assert.deepEqual(await Promise.all([ask(`${c.name}.`, 2), ask('ok.test.', 3)]), [c.rcode, 0]);
        assert.deepEqual(grouped(upstream.received, [1, 2, 1]), [['warm.test'], [c.name, 'ok.test'].sort(), [c.name]]);
      } finally {
        client.close();
        await upstream.close();
      }
    });
  }

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
