// `prefer CIDR...`: addresses inside the listed subnets go first, in the order the subnets are
// listed; within a subnet (and for the rest) the shuffled order stays.
import { inSubnet, type Subnet } from '../pkg/subnet.js';

/** Index of the first subnet holding the address, or the number of subnets when none does. */
export function preferenceRank(subnets: readonly Subnet[], buf: Uint8Array, off: number, length: number): number {
  for (let i = 0; i < subnets.length; i++) if (inSubnet(subnets[i] as Subnet, buf, off, length)) return i;
  return subnets.length;
}

/** Stable sort of `items` by rank: a permutation that keeps equal ranks in their order. */
export function stableByRank<T>(items: readonly T[], rank: (t: T) => number): T[] {
  return items
    .map((item, i) => ({ item, i, r: rank(item) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.item);
}
