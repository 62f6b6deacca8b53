import { argPosition, blockProperties, expectArgs, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import type { SetupFn } from '../../server/plugin.js';
import { parseSubnet, type Subnet } from '../pkg/subnet.js';
import { LoadBalancePlugin } from './handler.js';

function subnets(d: Directive, args: string[], firstIndex: number): Subnet[] {
  if (args.length === 0) throw CorefileError.at(d, 'prefer needs at least one CIDR');
  return args.map((a, k) => {
    const s = parseSubnet(a);
    if (!s) throw CorefileError.at(argPosition(d, firstIndex + k), `invalid CIDR "${a}" for prefer`);
    return s;
  });
}

/**
 * `loadbalance [round_robin] [prefer CIDR...] { prefer CIDR... }`. CoreDNS's `weighted` policy
 * (and its `reload`) is not in kdns: refused with a clear message rather than ignored.
 */
export function parseLoadBalance(d: Directive): Subnet[] {
  const [policy, ...rest] = d.args;
  let prefer: Subnet[] = [];
  if (policy === 'weighted') throw CorefileError.at(argPosition(d, 0), 'the weighted loadbalance policy is not available in kdns (use round_robin, optionally with prefer)');
  if (policy !== undefined && policy !== 'round_robin' && policy !== 'prefer') {
    throw CorefileError.at(argPosition(d, 0), `unknown loadbalance policy "${policy}" (expected round_robin)`);
  }
  const inline = policy === 'prefer' ? d.args : rest;
  if (inline.length > 0) {
    if (inline[0] !== 'prefer') throw CorefileError.at(argPosition(d, d.args.indexOf(inline[0] as string)), `unexpected "${inline[0]}" after round_robin (expected prefer CIDR...)`);
    prefer = subnets(d, inline.slice(1), d.args.length - inline.length + 1);
  }
  for (const prop of blockProperties(d, 'loadbalance')) {
    if (prop.name === 'prefer') prefer = [...prefer, ...subnets(prop, expectArgs(prop, 1), 0)];
    else if (prop.name === 'reload') throw CorefileError.at(prop, 'reload only applies to the weighted policy, which kdns does not have');
    else unknownProperty(prop, 'loadbalance');
  }
  return prefer;
}

export const setup: SetupFn = (ctx) => new LoadBalancePlugin(parseLoadBalance(ctx.directive));
