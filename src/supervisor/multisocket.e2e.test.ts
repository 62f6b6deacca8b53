// `multisocket` as users run it: `kdns serve` with a Corefile that asks for two workers, real
// processes, real sockets, dig and curl's view of /metrics. Each worker has its own SO_REUSEPORT
// sockets; the cluster is read from the API once for the pod; one /metrics shows the pod's sums.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answers, dig } from '../../test/util/dig.js';
import { FakeApiServer } from '../../test/util/fakeapi.js';
import { kdnsCommand } from '../../test/util/kdns.js';
import { freePort, waitFor } from '../../test/util/net.js';
import { spawnCollected, type CollectedProcess } from '../../test/util/proc.js';
import { alive, childrenOf, udpBurst, udpSocketsOn } from '../../test/util/workers.js';

const dir = mkdtempSync(join(tmpdir(), 'kdns-multisocket-'));

function serve(name: string, text: string): CollectedProcess {
  const file = join(dir, name);
  writeFileSync(file, text);
  // KDNS_SUPERVISE unset: multisocket alone makes the parent.
  const env = { ...process.env };
  delete env['KDNS_SUPERVISE'];
  return spawnCollected(process.execPath, kdnsCommand(['serve', '--conf', file]), { env, killAfterMs: 5000 });
}

async function lookup(name: string, port: number, tcp = false): Promise<string> {
  const r = await dig(name, 'A', { server: '127.0.0.1', port, args: tcp ? ['+tcp'] : [], timeout: 2, tries: 1 });
  return [r.status, ...answers(r)].join(' ');
}

async function scrape(port: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

/** The value of the one sample of `text` whose line starts with `prefix`; undefined when absent. */
function sample(text: string, prefix: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const hostsCorefile = (port: number, metricsPort: number, address: string): string =>
  `.:${port} {\n  bind 127.0.0.1\n  multisocket 2\n  prometheus 127.0.0.1:${metricsPort}\n  hosts {\n    ${address} web.example\n  }\n}\n`;

describe('kdns serve with multisocket 2 (hosts)', () => {
  let port: number;
  let metricsPort: number;
  let kdns: CollectedProcess;
  let parent: number;

  before(async () => {
    port = await freePort();
    metricsPort = await freePort();
    kdns = serve('Corefile-hosts', hostsCorefile(port, metricsPort, '192.0.2.1'));
    parent = kdns.child.pid as number;
    await waitFor(async () => childrenOf(parent).length === 2 && udpSocketsOn(port) === 2 && (await lookup('web.example', port).catch(() => '')) === 'NOERROR A 192.0.2.1', 30_000);
  });
  after(async () => {
    await kdns.stop();
  });

  test('one parent, two workers; both answer over UDP and TCP', async () => {
    assert.equal(childrenOf(parent).length, 2);
    assert.equal(await lookup('web.example', port), 'NOERROR A 192.0.2.1');
    assert.equal(await lookup('web.example', port, true), 'NOERROR A 192.0.2.1');
  });

  test('each worker holds sockets of its own: with one stopped, part of a burst waits for it, and all is answered once it runs', async () => {
    const [, second] = childrenOf(parent) as [number, number];
    process.kill(second, 'SIGSTOP');
    let whileStopped: number;
    const pending = udpBurst(port, 400, { sources: 32, waitMs: 1500 });
    try {
      whileStopped = await pending;
    } finally {
      process.kill(second, 'SIGCONT');
    }
    assert.ok(whileStopped < 400, `all 400 answered while worker ${second} was stopped: it holds no socket of the group`);
    assert.ok(whileStopped > 0, 'nothing answered: the other worker holds no socket either');
    assert.equal(await udpBurst(port, 400, { sources: 32, waitMs: 20_000 }), 400);
  });

  test('/metrics is the sum of both workers: requests counted once each', async () => {
    const before = sample(await scrape(metricsPort), `coredns_dns_requests_total{server="dns://127.0.0.1:${port}",zone=".",view="",proto="udp",family="1",type="A"}`) ?? 0;
    assert.equal(await udpBurst(port, 300, { sources: 32, waitMs: 20_000 }), 300);
    const text = await scrape(metricsPort);
    assert.equal(sample(text, `coredns_dns_requests_total{server="dns://127.0.0.1:${port}",zone=".",view="",proto="udp",family="1",type="A"}`), before + 300);
    assert.equal(sample(text, 'coredns_plugin_enabled{server="dns://127.0.0.1:' + port + '",zone=".",view="",name="multisocket"}'), 1);
    assert.equal(text.split('\n').filter((l) => l.startsWith('# TYPE coredns_dns_requests_total ')).length, 1);
  });

  test('a worker killed with SIGKILL is replaced; the burst sent meanwhile is answered whole', async () => {
    const [first, second] = childrenOf(parent) as [number, number];
    process.kill(first, 'SIGKILL');
    assert.equal(await udpBurst(port, 300, { sources: 32, waitMs: 20_000 }), 300);
    await waitFor(() => childrenOf(parent).length === 2 && !childrenOf(parent).includes(first) && udpSocketsOn(port) === 2, 20_000);
    assert.ok(childrenOf(parent).includes(second), 'the other worker kept running');
    assert.match(kdns.output(), new RegExp(`worker 0 \\(pid ${first}\\) ended \\(SIGKILL\\) while serving; starting another`));
  });

  test('SIGUSR1 reloads every worker: each answers from the changed Corefile', async () => {
    writeFileSync(join(dir, 'Corefile-hosts'), hostsCorefile(port, metricsPort, '192.0.2.2'));
    process.kill(parent, 'SIGUSR1');
    await waitFor(async () => {
      const seen = await Promise.all(Array.from({ length: 16 }, () => lookup('web.example', port).catch(() => 'no answer')));
      return seen.every((s) => s === 'NOERROR A 192.0.2.2');
    }, 20_000);
  });

  test('SIGTERM stops both workers and the parent, exit code 0', async () => {
    const workers = childrenOf(parent);
    assert.equal(await kdns.stop(), 0);
    for (const w of workers) assert.equal(alive(w), false);
  });
});

describe('kdns serve with multisocket 2: lameduck', () => {
  test('on SIGTERM both workers answer through health\'s lameduck, then all end with exit code 0', async () => {
    const port = await freePort();
    const healthPort = await freePort();
    const p = serve('Corefile-lameduck', `.:${port} {\n  bind 127.0.0.1\n  multisocket 2\n  health 127.0.0.1:${healthPort} {\n    lameduck 3s\n  }\n  hosts {\n    192.0.2.7 web.example\n  }\n}\n`);
    try {
      const parent = p.child.pid as number;
      await waitFor(async () => childrenOf(parent).length === 2 && (await udpBurst(port, 50, { sources: 16, waitMs: 500 })) === 50, 30_000);
      const workers = childrenOf(parent);
      p.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await udpBurst(port, 300, { sources: 32, waitMs: 2000 }), 300, 'a worker stopped answering during lameduck');
      assert.equal(await p.done, 0);
      for (const w of workers) assert.equal(alive(w), false);
    } finally {
      await p.stop();
    }
  });
});

describe('kdns serve with multisocket 2 (kubernetes from the API)', () => {
  let api: FakeApiServer;
  let port: number;
  let kdns: CollectedProcess;

  before(async () => {
    api = new FakeApiServer();
    api.seed('/api/v1/namespaces', [{ metadata: { name: 'shop' } }]);
    api.seed('/api/v1/services', [
      { metadata: { name: 'cart', namespace: 'shop' }, spec: { clusterIP: '10.96.44.12', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
      { metadata: { name: 'db', namespace: 'shop' }, spec: { clusterIP: 'None', ports: [{ name: 'sql', port: 5432, protocol: 'TCP' }] } },
    ]);
    api.seed('/apis/discovery.k8s.io/v1/endpointslices', [
      {
        metadata: { name: 'db-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'db' } },
        addressType: 'IPv4',
        endpoints: [
          { addresses: ['10.244.1.5'], zone: 'zone-a' },
          { addresses: ['10.244.2.5'], zone: 'zone-b' },
        ],
        ports: [{ name: 'sql', port: 5432, protocol: 'TCP' }],
      },
    ]);
    const url = await api.listen();
    port = await freePort();
    kdns = serve('Corefile-api', `cluster.local:${port} {\n  bind 127.0.0.1\n  multisocket 2\n  kubernetes {\n    endpoint ${url}\n    zonal\n  }\n}\n`);
    await waitFor(async () => childrenOf(kdns.child.pid as number).length === 2 && (await lookup('cart.shop.svc.cluster.local', port).catch(() => '')) === 'NOERROR A 10.96.44.12', 30_000);
  });
  after(async () => {
    await kdns?.stop();
    await api?.close();
  });

  test('the API is listed and watched once per resource, not once per worker', async () => {
    // Both workers answer by now (each of 16 lookups lands on either).
    for (let i = 0; i < 16; i++) assert.equal(await lookup('cart.shop.svc.cluster.local', port), 'NOERROR A 10.96.44.12');
    const reads = (path: string, watch: boolean): number => api.requests.filter((r) => r.method === 'GET' && r.path === path && r.watch === watch).length;
    assert.deepEqual(
      ['/api/v1/namespaces', '/api/v1/services', '/apis/discovery.k8s.io/v1/endpointslices'].map((p) => [p, reads(p, false), reads(p, true)]),
      [
        ['/api/v1/namespaces', 1, 1],
        ['/api/v1/services', 1, 1],
        ['/apis/discovery.k8s.io/v1/endpointslices', 1, 1],
      ],
    );
  });

  test('zonal: every worker keeps the endpoints\' zones (worker 0 reads them, the follower converts what it relays)', async () => {
    // A follower without the zones answers NODATA ("NOERROR"); a lookup lost on a loaded machine is asked again.
    let seen: string[] = [];
    await waitFor(async () => {
      seen = await Promise.all(Array.from({ length: 16 }, () => lookup('zone-b.pin._zone.db.shop.svc.cluster.local', port).catch(() => 'no answer')));
      return !seen.includes('no answer') || undefined;
    }, 20_000).catch(() => undefined);
    assert.deepEqual([...new Set(seen)], ['NOERROR A 10.244.2.5']);
  });

  test('a Service added through the API is answered by every worker', async () => {
    api.add('/api/v1/services', { metadata: { name: 'web', namespace: 'shop' }, spec: { clusterIP: '10.96.50.1', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
    await waitFor(async () => (await lookup('web.shop.svc.cluster.local', port).catch(() => '')) === 'NOERROR A 10.96.50.1', 20_000);
    // Every lookup from here on has a fresh source port: either worker may take it.
    await waitFor(async () => {
      const seen = await Promise.all(Array.from({ length: 16 }, () => lookup('web.shop.svc.cluster.local', port).catch(() => 'no answer')));
      return seen.every((s) => s === 'NOERROR A 10.96.50.1');
    }, 20_000);
  });

  test('a follower killed with SIGKILL comes back with the whole state from the parent, without reading the API', async () => {
    const lists = api.requests.filter((r) => !r.watch).length;
    const [, follower] = childrenOf(kdns.child.pid as number) as [number, number];
    process.kill(follower, 'SIGKILL');
    await waitFor(() => childrenOf(kdns.child.pid as number).length === 2 && !childrenOf(kdns.child.pid as number).includes(follower), 20_000);
    await waitFor(async () => {
      const seen = await Promise.all(Array.from({ length: 16 }, () => lookup('web.shop.svc.cluster.local', port).catch(() => 'no answer')));
      return seen.every((s) => s === 'NOERROR A 10.96.50.1');
    }, 20_000);
    assert.equal(api.requests.filter((r) => !r.watch).length, lists);
  });
});
