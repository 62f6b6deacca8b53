import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOptions } from './options.js';

describe('bench options', () => {
  it('takes every default from an empty environment', () => {
    const o = parseOptions({});
    assert.equal(o.DURATION, 15);
    assert.equal(o.REPS, 1);
    assert.deepEqual(o.WORKLOADS, ['auth', 'fwd', 'miss']);
    assert.deepEqual(o.PEERS, ['minimal', 'dnsmasq', 'unbound', 'kresd', 'named']);
    assert.deepEqual(o.KDNS_COREFILES, ['plain', 'stock']);
    assert.deepEqual(o.NODES, []);
    assert.deepEqual(o.KDNS_NODE_FLAGS, ['--max-semi-space-size=1', '--v8-pool-size=1']);
    assert.equal(o.PEER_THREADS, 1);
    assert.equal(o.KDNS_WORKERS, 1);
    assert.equal(o.UNBOUND_THREADS, undefined);
    assert.equal(o.RATE, undefined);
    assert.equal(o.SERVER_CPUS, '0');
    assert.equal(o.LOAD_CPUS, '1');
  });

  const cases: Array<{ name: string; env: Record<string, string>; check: (o: ReturnType<typeof parseOptions>) => void }> = [
    { name: 'a number', env: { DURATION: '2' }, check: (o) => assert.equal(o.DURATION, 2) },
    { name: 'a subset, spaces or commas, repeats dropped, order kept', env: { PEERS: 'named,unbound  named' }, check: (o) => assert.deepEqual(o.PEERS, ['named', 'unbound']) },
    { name: 'an empty subset where allowed', env: { PEERS: '' }, check: (o) => assert.deepEqual(o.PEERS, []) },
    { name: 'several node binaries', env: { NODES: '/usr/bin/node /opt/node26/bin/node' }, check: (o) => assert.deepEqual(o.NODES, ['/usr/bin/node', '/opt/node26/bin/node']) },
    { name: 'a peer thread count of its own', env: { PEER_THREADS: '2', KRESD_INSTANCES: '3' }, check: (o) => assert.deepEqual([o.PEER_THREADS, o.KRESD_INSTANCES, o.NAMED_THREADS], [2, 3, undefined]) },
    { name: 'a kdns worker count', env: { KDNS_WORKERS: '2' }, check: (o) => assert.equal(o.KDNS_WORKERS, 2) },
    { name: 'a rate', env: { RATE: '5000' }, check: (o) => assert.equal(o.RATE, 5000) },
    { name: 'a CPU list', env: { SERVER_CPUS: '0,2-3' }, check: (o) => assert.equal(o.SERVER_CPUS, '0,2-3') },
    { name: 'no kdns at all', env: { KDNS_COREFILES: '' }, check: (o) => assert.deepEqual(o.KDNS_COREFILES, []) },
  ];
  for (const c of cases) it(`reads ${c.name}`, () => c.check(parseOptions(c.env)));

  const bad: Array<{ env: Record<string, string>; message: string }> = [
    { env: { DURATION: 'ten' }, message: 'DURATION: "ten" is not a whole number' },
    { env: { DURATION: '0' }, message: 'DURATION: 0 is outside 1..3600' },
    { env: { WORKLOADS: 'auth nxdomain' }, message: 'WORKLOADS: "nxdomain" is not one of: auth fwd miss' },
    { env: { WORKLOADS: '' }, message: 'WORKLOADS: is empty' },
    { env: { PEERS: 'coredns' }, message: 'PEERS: "coredns" is not one of: minimal dnsmasq unbound kresd named' },
    { env: { PEER_THREADS: '65' }, message: 'PEER_THREADS: 65 is outside 1..64' },
    { env: { KDNS_WORKERS: '0' }, message: 'KDNS_WORKERS: 0 is outside 1..64' },
    { env: { KDNS_WORKERS: 'two' }, message: 'KDNS_WORKERS: "two" is not a whole number' },
    { env: { SERVER_CPUS: 'first' }, message: 'SERVER_CPUS: "first" is not a CPU list such as 0 or 0,1 or 0-1' },
    { env: { NETNS: 'yes' }, message: 'NETNS: "yes" is not one of: auto on off' },
  ];
  for (const b of bad) {
    it(`refuses ${JSON.stringify(b.env)}, naming the variable`, () => {
      assert.throws(() => parseOptions(b.env), { message: b.message });
    });
  }

  it('reports every bad variable at once', () => {
    assert.throws(() => parseOptions({ REPS: 'x', PORT: '70000' }), { message: 'REPS: "x" is not a whole number\nPORT: 70000 is outside 1..65535' });
  });
});
