// The iptables rules NodeLocal DNSCache keeps on the node: DNS traffic to and from each local
// address skips connection tracking (raw table, NOTRACK) and is let through (filter table,
// ACCEPT), so a cache on the host network neither fills the conntrack table nor races its
// UDP entries. The rule set is the node-cache binary's, argument for argument, so the rules one
// of them left behind are the rules the other checks and removes. Applied with the real
// `iptables` for IPv4 local addresses and `ip6tables` for IPv6 ones, each address's rules with
// its own family's tool, so a dual-stack node gets both; -w waits for the xtables lock.

import { execFile } from 'node:child_process';
import { isIPv6 } from 'node:net';

export const COMMENT_SKIP_CONNTRACK = 'NodeLocal DNS Cache: skip conntrack';
export const COMMENT_ALLOW_TRAFFIC = 'NodeLocal DNS Cache: allow DNS traffic';

export interface IptablesRule {
  /** Which tool holds the rule: iptables for an IPv4 local address, ip6tables for an IPv6 one. */
  family: 'ipv4' | 'ipv6';
  table: 'raw' | 'filter';
  chain: 'PREROUTING' | 'INPUT' | 'OUTPUT';
  args: string[];
}

/** node-cache's rules for each local address: DNS on `port` both ways, and the health port for the liveness probe. */
export function nodeCacheRules(localIPs: readonly string[], port: number, healthPort: number): IptablesRule[] {
  const rule = (table: IptablesRule['table'], chain: IptablesRule['chain'], proto: string, dir: 'd' | 's', ip: string, p: number): IptablesRule => {
    const notrack = table === 'raw';
    return {
      family: isIPv6(ip) ? 'ipv6' : 'ipv4',
      table,
      chain,
      args: ['-p', proto, `-${dir}`, ip, dir === 'd' ? '--dport' : '--sport', String(p), '-j', notrack ? 'NOTRACK' : 'ACCEPT', '-m', 'comment', '--comment', notrack ? COMMENT_SKIP_CONNTRACK : COMMENT_ALLOW_TRAFFIC],
    };
  };
  return localIPs.flatMap((ip) => [
    // Queries arriving for the cache and its replies leaving it: not tracked, and accepted.
    rule('raw', 'PREROUTING', 'tcp', 'd', ip, port),
    rule('raw', 'PREROUTING', 'udp', 'd', ip, port),
    rule('filter', 'INPUT', 'tcp', 'd', ip, port),
    rule('filter', 'INPUT', 'udp', 'd', ip, port),
    rule('raw', 'OUTPUT', 'tcp', 's', ip, port),
    rule('raw', 'OUTPUT', 'udp', 's', ip, port),
    rule('filter', 'OUTPUT', 'tcp', 's', ip, port),
    rule('filter', 'OUTPUT', 'udp', 's', ip, port),
    // Queries from the node itself (hostNetwork pods).
    rule('raw', 'OUTPUT', 'tcp', 'd', ip, port),
    rule('raw', 'OUTPUT', 'udp', 'd', ip, port),
    // The kubelet's liveness probe of the health plugin.
    rule('raw', 'OUTPUT', 'tcp', 'd', ip, healthPort),
    rule('raw', 'OUTPUT', 'tcp', 's', ip, healthPort),
  ]);
}

export interface CommandResult {
  code: number;
  stderr: string;
}

/** Runs a command; resolves with its exit code (127 when it is not installed). */
export type CommandRunner = (cmd: string, args: readonly string[]) => Promise<CommandResult>;

export const runCommand: CommandRunner = (cmd, args) =>
  new Promise((resolve) => {
    execFile(cmd, [...args], { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve({ code: 0, stderr });
      const e = err as NodeJS.ErrnoException & { code?: string | number };
      if (e.code === 'ENOENT') return resolve({ code: 127, stderr: `${cmd}: command not found (install iptables)` });
      resolve({ code: typeof e.code === 'number' ? e.code : 1, stderr: stderr || e.message });
    });
  });

/** An iptables command that failed; `locked` when another program held the xtables lock. */
export interface IptablesFailure {
  rule: IptablesRule;
  message: string;
  locked: boolean;
}

/** The tool that holds a rule of this family. */
export function iptablesCommand(family: IptablesRule['family']): 'iptables' | 'ip6tables' {
  return family === 'ipv6' ? 'ip6tables' : 'iptables';
}

/** A rule as iptables arguments; an IPv6 one says so, its address alone could be overlooked in a log. */
function describeRule(r: IptablesRule): string {
  return `${r.family === 'ipv6' ? '(ip6tables) ' : ''}-t ${r.table} ${r.chain} ${r.args.join(' ')}`;
}

function failure(rule: IptablesRule, r: CommandResult): IptablesFailure {
  const message = r.stderr.trim();
  return { rule, message: `${describeRule(rule)}: ${message}`, locked: /xtables lock|holding the lock/i.test(message) };
}

/** The rules of a set of local addresses, of one family or both, each checked, added and removed with its family's tool. */
export class IptablesRules {
  constructor(
    readonly rules: readonly IptablesRule[],
    private readonly run: CommandRunner = runCommand,
  ) {}

  static forAddresses(localIPs: readonly string[], port: number, healthPort: number, run?: CommandRunner): IptablesRules {
    return new IptablesRules(nodeCacheRules(localIPs, port, healthPort), run);
  }

  private exec(op: '-C' | '-I' | '-D', r: IptablesRule): Promise<CommandResult> {
    return this.run(iptablesCommand(r.family), ['-w', '-t', r.table, op, r.chain, ...r.args]);
  }

  /** Puts every missing rule first in its chain (node-cache prepends). Returns what it added and what failed. */
  async ensure(): Promise<{ added: IptablesRule[]; failures: IptablesFailure[] }> {
    const added: IptablesRule[] = [];
    const failures: IptablesFailure[] = [];
    for (const r of this.rules) {
      const check = await this.exec('-C', r);
      if (check.code === 0) continue;
      // -C exits 1 for "no such rule"; anything else (2, 4, 127) is a failure of the check itself.
      if (check.code !== 1) {
        failures.push(failure(r, check));
        continue;
      }
      const insert = await this.exec('-I', r);
      if (insert.code === 0) added.push(r);
      else failures.push(failure(r, insert));
    }
    return { added, failures };
  }

  /** Removes every copy of every rule (a rule may have been added twice, by two runs). */
  async remove(): Promise<IptablesFailure[]> {
    const failures: IptablesFailure[] = [];
    for (const r of this.rules) {
      // Bounded: a rule that will not go away is reported, not looped on.
      for (let i = 0; i < 32; i++) {
        const del = await this.exec('-D', r);
        if (del.code === 0) continue;
        const check = await this.exec('-C', r);
        if (check.code !== 1) failures.push(failure(r, del));
        break;
      }
    }
    return failures;
  }
}
