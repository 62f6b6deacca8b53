// node-cache's iptables rules through the real iptables, inside a network namespace this test
// creates: what iptables-save shows after ensure(), that ensure() is idempotent and puts back a
// rule someone deleted, and that remove() takes every copy away.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NetNs, netnsMissing } from '../../test/util/netns.js';
import { IptablesRules, nodeCacheRules, type CommandRunner } from './iptables.js';
import { expectedSave, nodeLocalRules } from '../../test/util/iptables.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsMissing('iptables');
const skip = reason && !IN_CI ? reason : false;

describe('nodeCacheRules', () => {
  test('twelve rules per address: NOTRACK in raw, ACCEPT in filter, DNS port both ways and the health port', () => {
    const rules = nodeCacheRules(['169.254.20.10'], 53, 8080);
    assert.equal(rules.length, 12);
    assert.deepEqual(rules[0], { table: 'raw', chain: 'PREROUTING', args: ['-p', 'tcp', '-d', '169.254.20.10', '--dport', '53', '-j', 'NOTRACK', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: skip conntrack'] });
    assert.deepEqual(rules[3], { table: 'filter', chain: 'INPUT', args: ['-p', 'udp', '-d', '169.254.20.10', '--dport', '53', '-j', 'ACCEPT', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: allow DNS traffic'] });
    assert.deepEqual(rules[11], { table: 'raw', chain: 'OUTPUT', args: ['-p', 'tcp', '-s', '169.254.20.10', '--sport', '8080', '-j', 'NOTRACK', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: skip conntrack'] });
  });

  test('IPv6 addresses go through ip6tables', async () => {
    const seen: string[] = [];
    const run: CommandRunner = async (cmd) => {
      seen.push(cmd);
      return { code: 0, stderr: '' };
    };
    await IptablesRules.forAddresses(['fd00::10'], 53, 8080, run).ensure();
    assert.deepEqual([...new Set(seen)], ['ip6tables']);
  });

  test('a held xtables lock is told apart from other failures', async () => {
    const run: CommandRunner = async (_cmd, args) => (args.includes('-C') ? { code: 4, stderr: 'Another app is currently holding the xtables lock. Perhaps you want to use the -w option?' } : { code: 0, stderr: '' });
    const { failures } = await IptablesRules.forAddresses(['169.254.20.10'], 53, 8080, run).ensure();
    assert.equal(failures.length, 12);
    assert.ok(failures.every((f) => f.locked));
  });
});

describe('IptablesRules with the real iptables in a network namespace', { skip }, () => {
  let ns: NetNs;
  const save = (): string[] => nodeLocalRules(ns.must(['iptables-save']));
  const inNs: CommandRunner = async (cmd, args) => {
    const r = ns.run([cmd, ...args]);
    return { code: r.status ?? 1, stderr: r.stderr };
  };

  before(() => {
    ns = NetNs.create('ipt');
  });
  after(() => ns?.delete());

  test('ensure installs every rule, once; remove takes them all away', async () => {
    const ips = ['169.254.20.10', '10.96.0.10'];
    const rules = IptablesRules.forAddresses(ips, 53, 8080, inNs);
    const first = await rules.ensure();
    assert.deepEqual(first.failures, []);
    assert.equal(first.added.length, 24);
    assert.deepEqual(save(), expectedSave(ips));
    const second = await rules.ensure();
    assert.deepEqual([second.added.length, second.failures], [0, []]);
    assert.deepEqual(save(), expectedSave(ips));
    assert.deepEqual(await rules.remove(), []);
    assert.deepEqual(save(), ['*raw', '*filter']);
  });

  test('a rule deleted by someone else is put back; a rule added twice is removed twice', async () => {
    const rules = IptablesRules.forAddresses(['169.254.20.10'], 53, 8080, inNs);
    await rules.ensure();
    ns.must(['iptables', '-t', 'filter', '-D', 'INPUT', '-p', 'udp', '-d', '169.254.20.10', '--dport', '53', '-j', 'ACCEPT', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: allow DNS traffic']);
    const again = await rules.ensure();
    assert.deepEqual(again.added.map((r) => `${r.table} ${r.chain} ${r.args.slice(0, 6).join(' ')}`), ['filter INPUT -p udp -d 169.254.20.10 --dport 53']);
    ns.must(['iptables', '-t', 'raw', '-I', 'PREROUTING', '-p', 'tcp', '-d', '169.254.20.10', '--dport', '53', '-j', 'NOTRACK', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: skip conntrack']);
    assert.deepEqual(await rules.remove(), []);
    assert.deepEqual(save(), ['*raw', '*filter']);
  });
});
