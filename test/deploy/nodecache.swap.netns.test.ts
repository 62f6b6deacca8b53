// A node cache replaced the way the DaemonSet's rolling update with maxSurge does it: a second
// `kdns node-cache` with the same arguments starts beside the first on the same local address
// (SO_REUSEPORT), and once it serves the first gets SIGTERM. The leaving cache must leave the
// interface and the iptables rules to its successor and hand over its queries: a stream of
// lookups (a new UDP socket, and a new TCP connection, per lookup, as resolvers send them)
// sent across the swap is answered in full, on a node with the kernel's defaults
// (net.ipv4.tcp_migrate_req=0: a TCP listener that closes resets the connections queued in it,
// so the leaving cache must send new ones to its successor and take the queued ones first).
// Without a successor, SIGTERM tears down as node-cache does. Everything runs in a network
// namespace standing for the node.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { expectedSave, nodeLocalRules } from '../util/iptables.js';
import { kdnsCommand } from '../util/kdns.js';
import { sleep, waitFor } from '../util/net.js';
import { NetNs, netnsMissing, type Proc } from '../util/netns.js';
import { namedIn, scratchDir } from '../util/pod.js';
import { exampleZone } from '../util/upstream.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsMissing('named', 'iptables');
const skip = reason && !IN_CI ? reason : false;

const LOCAL_IP = '169.254.20.10';
const UPSTREAM_SVC_IP = '10.96.0.11';

const TEMPLATE = `.:53 {
    errors
    cache 30
    bind __PILLAR__LOCAL__DNS__
    forward . __PILLAR__CLUSTER__DNS__
    health ${LOCAL_IP}:8080
    prometheus :9253
}
`;

/**
 * A client in the namespace: from the moment it starts until SIGUSR2, a lookup of
 * www.example.test every EVERY_MS ms, alternating a fresh UDP socket and a fresh TCP connection
 * (with TCP_ONLY, TCP each time), each waiting up to 3 s with no retry. On SIGUSR2 it stops
 * sending and prints {sent, answered, missed} once every lookup has its answer or its timeout.
 */
const client = (o: { everyMs: number; tcpOnly: boolean }): string => `const EVERY_MS = ${o.everyMs}, TCP_ONLY = ${o.tcpOnly};
${CLIENT_BODY}`;
const CLIENT_BODY = `
const dgram = require('node:dgram'), net = require('node:net');
const q = (id) => { const h = Buffer.alloc(12); h.writeUInt16BE(id, 0); h.writeUInt16BE(0x0100, 2); h.writeUInt16BE(1, 4);
  return Buffer.concat([h, Buffer.from([3]), Buffer.from('www'), Buffer.from([7]), Buffer.from('example'), Buffer.from([4]), Buffer.from('test'), Buffer.from([0, 0, 1, 0, 1])]); };
let sent = 0, answered = 0, open = 0; const missed = [];
const udp = (id) => { const s = dgram.createSocket('udp4'); open++;
  const end = (ok, why) => { if (s.done) return; s.done = true; clearTimeout(t); s.close(); open--; if (ok) answered++; else missed.push('udp ' + why); };
  const t = setTimeout(() => end(false, 'timeout'), 3000); s.on('message', (m) => end(m.readUInt16BE(0) === id && (m.readUInt16BE(2) & 15) === 0)); s.on('error', () => end(false));
  s.send(q(id), 53, '${LOCAL_IP}'); };
const tcp = (id) => { const m = q(id), l = Buffer.alloc(2); l.writeUInt16BE(m.length); let got = Buffer.alloc(0), done = false; open++;
  const end = (ok, why) => { if (done) return; done = true; clearTimeout(t); c.destroy(); open--; if (ok) answered++; else missed.push('tcp ' + why); };
  const c = net.connect({ host: '${LOCAL_IP}', port: 53 }, () => c.write(Buffer.concat([l, m])));
  const t = setTimeout(() => end(false, 'timeout'), 3000);
  c.on('data', (d) => { got = Buffer.concat([got, d]); if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) end(got.readUInt16BE(2) === id && (got.readUInt16BE(5) & 15) === 0); });
  c.on('error', (e) => end(false, e.code)); c.on('close', () => end(false, 'closed')); };
const timer = setInterval(() => { sent++; (sent % 2 && !TCP_ONLY ? udp : tcp)(sent & 0xffff); }, EVERY_MS);
console.log('sending');
process.on('SIGUSR2', () => { clearInterval(timer); const w = setInterval(() => { if (open === 0) { clearInterval(w); console.log(JSON.stringify({ sent, answered, missed })); } }, 50); });
`;
const CLIENT = client({ everyMs: 10, tcpOnly: false });

describe('node cache: a successor on the same address, then SIGTERM', { skip }, () => {
  let ns: NetNs;
  let named: Proc;
  let dir: string;

  before(async () => {
    ns = NetNs.create('swap');
    ns.addDummy('cluster0', [`${UPSTREAM_SVC_IP}/32`]);
    // The kernel's default, whatever the host has: a TCP listener that closes resets the
    // connections waiting in its accept queue instead of moving them to another listener of the
    // address (tcp_migrate_req=1, Linux 5.14+), so the hand-over must not leave any there.
    ns.must(['sysctl', '-qw', 'net.ipv4.tcp_migrate_req=0']);
    named = await namedIn(ns, UPSTREAM_SVC_IP, { 'example.test': exampleZone() });
    dir = scratchDir('swap');
    writeFileSync(join(dir, 'Corefile.base'), TEMPLATE);
  });
  after(async () => {
    await named?.stop();
    ns?.delete();
  });

  const startCache = async (): Promise<Proc> => {
    const args = ['node-cache', '-localip', LOCAL_IP, '-conf', join(dir, 'Corefile'), '-basecorefile', join(dir, 'Corefile.base'), '-upstreamsvc', 'kube-dns-upstream'];
    const p = ns.spawn([process.execPath, ...kdnsCommand(args)], { env: { ...process.env, KUBE_DNS_UPSTREAM_SERVICE_HOST: UPSTREAM_SVC_IP } });
    await waitFor(() => p.output().includes(`listening on ${LOCAL_IP}:53`) || p.child.exitCode !== null, 30_000, 50);
    assert.equal(p.child.exitCode, null, p.output());
    return p;
  };
  const interfacePresent = (): boolean => ns.run(['ip', 'link', 'show', 'nodelocaldns']).status === 0;
  const rules = (): string[] => nodeLocalRules(ns.must(['iptables-save']));

  const cases: Array<{ name: string; successor: boolean; want: { exit: number; iface: boolean; rules: string[]; allAnswered: boolean; log: RegExp } }> = [
    {
      name: 'with a successor serving: interface and rules stay, every lookup across the swap is answered',
      successor: true,
      want: { exit: 0, iface: true, rules: expectedSave([LOCAL_IP]), allAnswered: true, log: /Leaving interface nodelocaldns and the iptables rules to the node cache that serves on/ },
    },
    {
      name: 'alone: SIGTERM removes the interface and the rules, as node-cache does',
      successor: false,
      want: { exit: 0, iface: false, rules: ['*raw', '*filter'], allAnswered: false, log: /Tearing down/ },
    },
  ];
  test('a worker killed with SIGKILL: its parent holds the sockets (bound before the interface was up), every lookup across the restart is answered', async () => {
    const cache = await startCache();
    try {
      // `ip netns exec` execs, so the process spawned is the kdns parent; its only child is the worker.
      const parent = cache.child.pid as number;
      const workerOf = (): number | undefined => Number(readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/)[0]) || undefined;
      const worker = workerOf() as number;
      const client = ns.spawn([process.execPath, '-e', CLIENT]);
      await waitFor(() => client.output().includes('sending'), 10_000, 20);
      await sleep(500);
      process.kill(worker, 'SIGKILL');
      await waitFor(() => (workerOf() ?? worker) !== worker && cache.output().split(`listening on ${LOCAL_IP}:53`).length === 3, 30_000, 50);
      await sleep(1_000);
      client.child.kill('SIGUSR2');
      await client.done;
      const { sent, answered, missed } = JSON.parse(client.output().trim().split('\n').at(-1) ?? '{}') as { sent: number; answered: number; missed: string[] };
      assert.equal(answered, sent, `missed: ${missed.join(', ')}`);
      assert.ok(sent > 100, `only ${sent} lookups sent`);
      assert.doesNotMatch(cache.output(), /not held across worker restarts/);
    } finally {
      await cache.stop();
    }
  });

  test('three swaps in a row under a stream of TCP lookups: no connection is reset or lost', async () => {
    let serving = await startCache();
    await waitFor(() => rules().length === 14, 10_000, 100);
    // One new connection every 2 ms: at each swap some wait in the leaving listener's queue
    // or handshake, where a close without the hand-over resets them.
    const stream = ns.spawn([process.execPath, '-e', client({ everyMs: 2, tcpOnly: true })]);
    await waitFor(() => stream.output().includes('sending'), 10_000, 20);
    const exits: Array<number | null> = [];
    try {
      await sleep(300);
      for (let swap = 0; swap < 3; swap++) {
        const next = await startCache();
        await sleep(300);
        exits.push(await serving.stop());
        serving = next;
      }
      await sleep(500);
    } finally {
      stream.child.kill('SIGUSR2');
      await stream.done;
      await serving.stop();
    }
    const { sent, answered, missed } = JSON.parse(stream.output().trim().split('\n').at(-1) ?? '{}') as { sent: number; answered: number; missed: string[] };
    assert.deepEqual({ exits, missed }, { exits: [0, 0, 0], missed: [] }, `${answered} of ${sent} answered`);
    assert.ok(sent > 500, `only ${sent} lookups sent`);
  });

  for (const c of cases) {
    test(c.name, async () => {
      const first = await startCache();
      await waitFor(() => rules().length === 14, 10_000, 100);
      const client = ns.spawn([process.execPath, '-e', CLIENT]);
      await waitFor(() => client.output().includes('sending'), 10_000, 20);
      await sleep(500);
      const second = c.successor ? await startCache() : undefined;
      await sleep(300);
      assert.equal(await first.stop(), c.want.exit, first.output());
      await sleep(1_000);
      client.child.kill('SIGUSR2');
      await client.done;
      const { sent, answered, missed } = JSON.parse(client.output().trim().split('\n').at(-1) ?? '{}') as { sent: number; answered: number; missed: string[] };
      const iface = interfacePresent();
      const after = rules();
      await second?.stop();
      assert.match(first.output(), c.want.log);
      assert.deepEqual({ iface, rules: after, allAnswered: answered === sent }, { iface: c.want.iface, rules: c.want.rules, allAnswered: c.want.allAnswered }, `${answered} of ${sent} answered; missed: ${missed.join(', ')}`);
      assert.ok(sent > 100, `only ${sent} lookups sent`);
    });
  }
});
