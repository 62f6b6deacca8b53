// The node cache with `multisocket 2` in its ConfigMap's Corefile, as node-cache's command line
// runs it in a network namespace standing for the node: a parent and two workers on the same
// link-local address; the first worker makes the interface and the iptables rules and the second
// serves through them; on SIGTERM the workers do not take each other for a successor, so the
// first tears both down as node-cache does.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parseDig } from '../util/dig.js';
import { expectedSave, nodeLocalRules } from '../util/iptables.js';
import { kdnsCommand } from '../util/kdns.js';
import { waitFor } from '../util/net.js';
import { NetNs, netnsMissing, type Proc } from '../util/netns.js';
import { namedIn, scratchDir } from '../util/pod.js';
import { exampleZone } from '../util/upstream.js';
import { alive, childrenOf } from '../util/workers.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsMissing('named', 'iptables', 'dig');
const skip = reason && !IN_CI ? reason : false;

const LOCAL_IP = '169.254.20.10';
const UPSTREAM_SVC_IP = '10.96.0.12';

const TEMPLATE = `.:53 {
    errors
    multisocket 2
    cache 30
    bind __PILLAR__LOCAL__DNS__
    forward . __PILLAR__CLUSTER__DNS__
    health ${LOCAL_IP}:8080
}
`;

describe('node cache with multisocket 2', { skip }, () => {
  let ns: NetNs;
  let named: Proc;
  let cache: Proc;

  before(async () => {
    ns = NetNs.create('ncms');
    ns.addDummy('cluster0', [`${UPSTREAM_SVC_IP}/32`]);
    named = await namedIn(ns, UPSTREAM_SVC_IP, { 'example.test': exampleZone() });
    const dir = scratchDir('ncms');
    writeFileSync(join(dir, 'Corefile.base'), TEMPLATE);
    const args = ['node-cache', '-localip', LOCAL_IP, '-conf', join(dir, 'Corefile'), '-basecorefile', join(dir, 'Corefile.base'), '-upstreamsvc', 'kube-dns-upstream'];
    cache = ns.spawn([process.execPath, ...kdnsCommand(args)], { env: { ...process.env, KUBE_DNS_UPSTREAM_SERVICE_HOST: UPSTREAM_SVC_IP } });
    await waitFor(() => cache.output().split(`listening on ${LOCAL_IP}:53`).length === 3 || cache.child.exitCode !== null, 30_000, 50);
    assert.equal(cache.child.exitCode, null, cache.output());
  });
  after(async () => {
    await cache?.stop();
    await named?.stop();
    ns?.delete();
  });

  const rules = (): string[] => nodeLocalRules(ns.must(['iptables-save']));
  const interfacePresent = (): boolean => ns.run(['ip', 'link', 'show', 'nodelocaldns']).status === 0;

  test('a parent and two workers; the interface and the rules made once', async () => {
    assert.equal(childrenOf(cache.child.pid as number).length, 2);
    await waitFor(() => rules().length === 14, 10_000, 100);
    assert.deepEqual(rules(), expectedSave([LOCAL_IP]));
    assert.equal(interfacePresent(), true);
    assert.equal(cache.output().match(/Added interface - nodelocaldns/g)?.length, 1, cache.output());
  });

  test('lookups from many source ports are all answered', async () => {
    const replies = await Promise.all(Array.from({ length: 16 }, () => Promise.resolve(ns.run(['dig', '+time=2', '+tries=1', `@${LOCAL_IP}`, 'www.example.test', 'A']))));
    for (const r of replies) assert.equal(parseDig(r.stdout).status, 'NOERROR', r.stdout);
  });

  test('a sibling that ended first, its sockets still in the parent\'s hands, is no successor either', async () => {
    const parent = cache.child.pid as number;
    const [first, second] = childrenOf(parent) as [number, number];
    const before = cache.output().length;
    process.kill(parent, 'SIGSTOP');
    try {
      process.kill(second, 'SIGTERM');
      await waitFor(() => !alive(second), 20_000, 50);
      process.kill(first, 'SIGTERM');
      await waitFor(() => !alive(first), 20_000, 50);
      const said = cache.output().slice(before);
      assert.match(said, /Tearing down/);
      assert.doesNotMatch(said, /Leaving interface/);
    } finally {
      process.kill(parent, 'SIGCONT');
    }
    // The parent starts both again (they ended while serving); the first puts interface and rules back.
    await waitFor(() => childrenOf(parent).filter(alive).length === 2 && interfacePresent() && rules().length === 14, 30_000, 100);
    await waitFor(() => cache.output().split(`listening on ${LOCAL_IP}:53`).length === 5, 30_000, 50);
  });

  test('SIGTERM: no worker takes its sibling for a successor; the interface and the rules are removed, exit code 0', async () => {
    assert.equal(await cache.stop(), 0, cache.output());
    assert.match(cache.output(), /Tearing down/);
    assert.doesNotMatch(cache.output(), /Leaving interface/);
    assert.equal(interfacePresent(), false);
    assert.deepEqual(rules(), ['*raw', '*filter']);
  });
});
