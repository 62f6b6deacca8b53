// node-cache's iptables rules through the real iptables and ip6tables, inside a network namespace
// this test creates: what iptables-save and ip6tables-save show after ensure() (dual-stack: each
// family's rules with its own tool), that ensure() is idempotent and puts back a rule someone
// deleted, and that remove() takes every copy away.
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
    assert.deepEqual(rules[0], { family: 'ipv4', table: 'raw', chain: 'PREROUTING', args: ['-p', 'tcp', '-d', '169.254.20.10', '--dport', '53', '-j', 'NOTRACK', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: skip conntrack'] });
    assert.deepEqual(rules[3], { family: 'ipv4', table: 'filter', chain: 'INPUT', args: ['-p', 'udp', '-d', '169.254.20.10', '--dport', '53', '-j', 'ACCEPT', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: allow DNS traffic'] });
    assert.deepEqual(rules[11], { family: 'ipv4', table: 'raw', chain: 'OUTPUT', args: ['-p', 'tcp', '-s', '169.254.20.10', '--sport', '8080', '-j', 'NOTRACK', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: skip conntrack'] });
  });

  test('an IPv6 address gets the same rules, for ip6tables', () => {
    const rules = nodeCacheRules(['fd00::10'], 53, 8080);
    assert.equal(rules.length, 12);
    assert.deepEqual(rules[0], { family: 'ipv6', table: 'raw', chain: 'PREROUTING', args: ['-p', 'tcp', '-d', 'fd00::10', '--dport', '53', '-j', 'NOTRACK', '-m', 'comment', '--comment', 'NodeLocal DNS Cache: skip conntrack'] });
  });

  /** Which tool each -I, -D went to, and for which address, with a runner that records and succeeds (-C: no such rule). */
  async function toolsUsed(ips: string[], op: 'ensure' | 'remove'): Promise<string[]> {
    const seen = new Set<string>();
    const run: CommandRunner = async (cmd, args) => {
      const address = args[args.indexOf(args.includes('-d') ? '-d' : '-s') + 1];
      if (!args.includes('-C')) seen.add(`${cmd} ${address}`);
      // -D once succeeds, then -C says the rule is gone; ensure()'s -C says it is missing.
      return { code: args.includes('-C') ? 1 : 0, stderr: '' };
    };
    const rules = IptablesRules.forAddresses(ips, 53, 8080, run);
    if (op === 'ensure') await rules.ensure();
    else await rules.remove();
    return [...seen];
  }
  const tools: Array<[string, string[], 'ensure' | 'remove', string[]]> = [
    ['IPv4 only: iptables', ['169.254.20.10'], 'ensure', ['iptables 169.254.20.10']],
    ['IPv6 only: ip6tables', ['fd00::10'], 'ensure', ['ip6tables fd00::10']],
    ['dual-stack: each address with its family\'s tool', ['169.254.20.10', 'fd00::10', '10.96.0.10', 'fd00:10:96::a'], 'ensure', ['iptables 169.254.20.10', 'ip6tables fd00::10', 'iptables 10.96.0.10', 'ip6tables fd00:10:96::a']],
    ['dual-stack teardown: both tools', ['169.254.20.10', 'fd00::10'], 'remove', ['iptables 169.254.20.10', 'ip6tables fd00::10']],
  ];
  for (const [name, ips, op, want] of tools) test(name, async () => assert.deepEqual(await toolsUsed(ips, op), want));

  test('a failure of an IPv6 rule says ip6tables', async () => {
    const run: CommandRunner = async (cmd, args) => (cmd === 'ip6tables' && args.includes('-C') ? { code: 127, stderr: 'ip6tables: command not found (install iptables)' } : { code: 0, stderr: '' });
    const { failures } = await IptablesRules.forAddresses(['169.254.20.10', 'fd00::10'], 53, 8080, run).ensure();
    assert.equal(failures.length, 12);
    assert.equal(failures[0]?.message, '(ip6tables) -t raw PREROUTING -p tcp -d fd00::10 --dport 53 -j NOTRACK -m comment --comment NodeLocal DNS Cache: skip conntrack: ip6tables: command not found (install iptables)');
  });

  test('a held xtables lock is told apart from other failures', async () => {
    const run: CommandRunner = async (_cmd, args) => (args.includes('-C') ? { code: 4, stderr: 'Another app is currently holding the xtables lock. Perhaps you want to use the -w option?' } : { code: 0, stderr: '' });
    const { failures } = await IptablesRules.forAddresses(['169.254.20.10'], 53, 8080, run).ensure();
    assert.equal(failures.length, 12);
    assert.ok(failures.every((f) => f.locked));
  });
});

describe('IptablesRules with the real iptables and ip6tables in a network namespace', { skip }, () => {
  let ns: NetNs;
  const save = (): string[] => nodeLocalRules(ns.must(['iptables-save']));
  const save6 = (): string[] => nodeLocalRules(ns.must(['ip6tables-save']));
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

  test('dual-stack: IPv4 rules in iptables, IPv6 rules in ip6tables; remove takes both away', async () => {
    const rules = IptablesRules.forAddresses(['169.254.20.10', 'fd00::10'], 53, 8080, inNs);
    const first = await rules.ensure();
    assert.deepEqual([first.added.length, first.failures], [24, []]);
    assert.deepEqual(save(), expectedSave(['169.254.20.10']));
    assert.deepEqual(save6(), expectedSave(['fd00::10']));
    assert.deepEqual(await rules.remove(), []);
    assert.deepEqual([save(), save6()], [['*raw', '*filter'], ['*raw', '*filter']]);
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
