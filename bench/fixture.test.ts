import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { authQueries, buildCluster, clusterRecords, fixtureMatches, parseFixtureArgs, podLists, readZoneRecords, serviceName, writeFixture, type Cluster, type FixtureOptions } from './fixture.js';

const SMALL: FixtureOptions = { services: 60, namespaces: 5, pods: 25, authQueries: 400, fwdNames: 10, fwdRepeat: 3, missNames: 50, seed: 7 };

/** Every file under dir, relative path → bytes. */
function files(dir: string, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = join(prefix, e.name);
    if (e.isDirectory()) for (const [k, v] of files(dir, rel)) out.set(k, v);
    else out.set(rel, readFileSync(join(dir, rel), 'utf8'));
  }
  return out;
}

describe('bench fixture', () => {
  it('writes the same bytes for the same options, and says so afterwards', () => {
    const a = mkdtempSync(join(tmpdir(), 'kdns-fixture-a-'));
    const b = mkdtempSync(join(tmpdir(), 'kdns-fixture-b-'));
    try {
      writeFixture(a, SMALL);
      writeFixture(b, SMALL);
      const fa = files(a);
      assert.deepEqual([...fa.keys()].sort(), [
        'cluster.local.zone',
        'cluster/00-namespaces.json',
        'cluster/10-services.json',
        'cluster/20-endpointslices.json',
        'cluster/30-pods-000.json',
        'example.test.zone',
        'meta.json',
        'queries-auth.txt',
        'queries-fwd.txt',
        'queries-miss.txt',
        'warm-fwd.txt',
        'warm-miss.txt',
      ]);
      assert.deepEqual(files(b), fa);
      assert.equal(fixtureMatches(a, SMALL), true);
      assert.equal(fixtureMatches(a, { ...SMALL, services: 61 }), false);
    } finally {
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  });

  it('makes the default cluster: 10,000 Services in 100 namespaces, a tenth headless', () => {
    const c = buildCluster({ services: 10000, namespaces: 100, seed: 1 });
    assert.equal(c.services.length, 10000);
    assert.equal(c.namespaces.length, 100);
    assert.equal(c.services.filter((s) => s.clusterIP === null).length, 1012);
    assert.equal(new Set(c.services.map(serviceName)).size, 10000);
    assert.deepEqual(c.services.slice(0, 2).map(serviceName), ['kubernetes.default.svc.cluster.local', 'kube-dns.kube-system.svc.cluster.local']);
    assert.equal(new Set(c.services.filter((s) => s.clusterIP !== null).map((s) => s.clusterIP)).size, 10000 - 1012);
  });

  it('derives the records kdns answers: A and SRV of a ClusterIP, A per endpoint and per endpoint name of a headless Service', () => {
    const cluster: Cluster = {
      namespaces: ['ns'],
      services: [
        { name: 'web', namespace: 'ns', clusterIP: '10.96.1.1', ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: '', port: 81, protocol: 'TCP' }], endpoints: [] },
        {
          name: 'db',
          namespace: 'ns',
          clusterIP: null,
          ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
          endpoints: [{ ip: '10.244.0.1', hostname: 'db-0' }, { ip: '10.244.0.2', hostname: '' }, { ip: '10.244.0.3', hostname: 'db-2' }],
        },
      ],
    };
    assert.deepEqual(clusterRecords(cluster), [
      { owner: 'web.ns.svc.cluster.local.', type: 'A', data: '10.96.1.1' },
      { owner: '_http._tcp.web.ns.svc.cluster.local.', type: 'SRV', data: '0 100 80 web.ns.svc.cluster.local.' },
      { owner: 'db.ns.svc.cluster.local.', type: 'A', data: '10.244.0.1' },
      { owner: 'db.ns.svc.cluster.local.', type: 'A', data: '10.244.0.2' },
      { owner: 'db.ns.svc.cluster.local.', type: 'A', data: '10.244.0.3' },
      { owner: 'db-0.db.ns.svc.cluster.local.', type: 'A', data: '10.244.0.1' },
      { owner: '10-244-0-2.db.ns.svc.cluster.local.', type: 'A', data: '10.244.0.2' },
      { owner: 'db-2.db.ns.svc.cluster.local.', type: 'A', data: '10.244.0.3' },
      { owner: '_pg._tcp.db.ns.svc.cluster.local.', type: 'SRV', data: '0 33 5432 db-0.db.ns.svc.cluster.local.' },
      { owner: '_pg._tcp.db.ns.svc.cluster.local.', type: 'SRV', data: '0 33 5432 10-244-0-2.db.ns.svc.cluster.local.' },
      { owner: '_pg._tcp.db.ns.svc.cluster.local.', type: 'SRV', data: '0 33 5432 db-2.db.ns.svc.cluster.local.' },
    ]);
  });

  it('mixes the auth queries 80% A of Services, 10% AAAA of Services, 10% names that do not exist', () => {
    const cluster = buildCluster({ services: 500, namespaces: 10, seed: 3 });
    const records = clusterRecords(cluster);
    const services = new Set(cluster.services.map(serviceName));
    const owners = new Set(records.map((r) => r.owner.slice(0, -1)));
    const lines = authQueries(cluster, records, 1000, 3).map((l) => l.split(' ') as [string, string]);
    const kinds = { A: 0, AAAA: 0, none: 0 };
    for (const [name, type] of lines) {
      if (!services.has(name)) {
        assert.equal(owners.has(name), false, `${name} was meant not to exist`);
        kinds.none++;
      } else kinds[type as 'A' | 'AAAA']++;
    }
    assert.deepEqual(kinds, { A: 800, AAAA: 100, none: 100 });
  });

  it('spreads Pods over the namespaces, 10,000 a file, each with its own address', () => {
    const cluster = buildCluster({ services: 20, namespaces: 4, seed: 1 });
    const lists = podLists(cluster, 25000, 10000);
    assert.deepEqual(lists.map((l) => l.items.length), [10000, 10000, 5000]);
    const pods = lists.flatMap((l) => l.items) as Array<{ metadata: { namespace: string }; status: { podIP: string } }>;
    assert.equal(new Set(pods.map((p) => p.status.podIP)).size, 25000);
    assert.deepEqual([...new Set(pods.map((p) => p.metadata.namespace))].sort(), [...cluster.namespaces].sort());
  });

  it('reads a zone back, SOA included, and names a line it cannot read', () => {
    assert.deepEqual(readZoneRecords('; c\n$TTL 5\nx. 5 IN SOA a. b. 1 2 3 4 5\nweb.x. 5 IN A 10.0.0.1\n'), [
      { owner: 'x.', ttl: 5, type: 'SOA', data: 'a. b. 1 2 3 4 5' },
      { owner: 'web.x.', ttl: 5, type: 'A', data: '10.0.0.1' },
    ]);
    assert.throws(() => readZoneRecords('x. 5 IN A 1.2.3.4\nweb.x. A 10.0.0.1\n'), { message: 'zone line 2: not "owner ttl IN type data": web.x. A 10.0.0.1' });
  });

  const badArgs: Array<[string[], string]> = [
    [['--services', '100'], '--out DIR is required'],
    [['--out', '/tmp/x', '--services', 'many'], '--services: "many" is not a whole number in 2..500000'],
    [['--out', '/tmp/x', '--nodes', '3'], '--nodes: unknown flag (flags: --out --services --namespaces --pods --auth-queries --fwd-names --fwd-repeat --miss-names --seed)'],
    [['--out'], '--out: missing value'],
    [['--out', '/tmp/x', '--services', '10', '--namespaces', '20'], '--namespaces: 20 is more than --services 10'],
  ];
  for (const [argv, message] of badArgs) it(`refuses ${argv.join(' ')}`, () => assert.throws(() => parseFixtureArgs(argv), { message }));

  it('reads its flags', () => {
    assert.deepEqual(parseFixtureArgs(['--out', '/tmp/fx', '--services', '100000', '--pods', '150000']), {
      out: '/tmp/fx',
      options: { services: 100000, namespaces: 100, pods: 150000, authQueries: 100000, fwdNames: 1000, fwdRepeat: 20, missNames: 2000000, seed: 1 },
    });
  });
});
