import { argPosition, blockProperties } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { typeFromName } from '../../lib/dns/rr.js';
import { counter } from '../../server/metrics.js';
import type { SetupFn } from '../../server/plugin.js';
import { serverLabel } from '../pkg/metrics.js';
import { parseSubnet, type Subnet } from '../pkg/subnet.js';
import { zoneArgs } from '../pkg/zones.js';
import { AclPlugin, type AclAction, type AclPolicy, type AclRule } from './handler.js';

const ACTIONS: readonly string[] = ['allow', 'block', 'filter', 'drop'];

/** One `ACTION [type QTYPE...] [net SOURCE...]` line. */
function parsePolicy(line: Directive): AclPolicy {
  if (!ACTIONS.includes(line.name)) throw CorefileError.at(line, `unknown acl action "${line.name}" (expected allow, block, filter or drop)`);
  const policy: AclPolicy = { action: line.name as AclAction };
  let i = 0;
  while (i < line.args.length) {
    const section = line.args[i] as string;
    if (section !== 'type' && section !== 'net') throw CorefileError.at(argPosition(line, i), `unexpected "${section}" in acl rule (expected type or net)`);
    const start = ++i;
    while (i < line.args.length && line.args[i] !== 'type' && line.args[i] !== 'net') i++;
    if (i === start) throw CorefileError.at(argPosition(line, start - 1), `acl ${section} needs at least one value`);
    const values = line.args.slice(start, i);
    if (section === 'type') {
      if (values.includes('*')) continue;
      const types = new Set<number>(policy.types ?? []);
      values.forEach((v, k) => {
        const t = typeFromName(v);
        if (t === undefined) throw CorefileError.at(argPosition(line, start + k), `unknown query type "${v}" in acl rule`);
        types.add(t);
      });
      policy.types = types;
    } else {
      if (values.includes('*')) continue;
      const nets: Subnet[] = [...(policy.nets ?? [])];
      values.forEach((v, k) => {
        const s = parseSubnet(v);
        if (!s) throw CorefileError.at(argPosition(line, start + k), `invalid network "${v}" in acl rule (expected an address or CIDR)`);
        nets.push(s);
      });
      policy.nets = nets;
    }
  }
  return policy;
}

/** `acl [ZONES...] { ACTION [type QTYPE...] [net SOURCE...] ... }` → one rule. */
export function parseAcl(d: Directive, blockZones: readonly string[]): AclRule {
  const zones = d.args.length > 0 ? zoneArgs(d, d.args) : [...blockZones];
  const policies: AclPolicy[] = [];
  for (const line of blockProperties(d, 'acl', () => undefined)) policies.push(parsePolicy(line));
  if (policies.length === 0) throw CorefileError.at(d, 'acl needs a block with at least one rule ("block type ANY")');
  return { zones, policies };
}

export const setup: SetupFn = (ctx) => {
  const rule = parseAcl(ctx.directive, ctx.block.zones);
  // Several acl lines in a block are one list of rules, tried in order, as in CoreDNS.
  const key = `acl@${ctx.block.file}:${ctx.block.line}`;
  const first = ctx.instance.get(key) as AclPlugin | undefined;
  if (first) {
    first.rules.push(rule);
    return { name: 'acl' };
  }
  const reg = ctx.shared.metrics;
  const plugin = new AclPlugin(
    [rule],
    {
      blocked: counter(reg, 'coredns_acl_blocked_requests_total', 'Counter of DNS requests being blocked.', ['server', 'zone', 'view']),
      filtered: counter(reg, 'coredns_acl_filtered_requests_total', 'Counter of DNS requests being filtered.', ['server', 'zone', 'view']),
      dropped: counter(reg, 'coredns_acl_dropped_requests_total', 'Counter of DNS requests being dropped.', ['server', 'zone', 'view']),
      allowed: counter(reg, 'coredns_acl_allowed_requests_total', 'Counter of DNS requests being allowed.', ['server', 'view']),
    },
    serverLabel(ctx.block.settings.listenAddresses[0] ?? '', ctx.block.port),
  );
  ctx.instance.set(key, plugin);
  return plugin;
};
