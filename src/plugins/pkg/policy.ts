// The order in which upstreams are tried for one query, as CoreDNS's forward picks them:
// random (a fresh shuffle per query), round_robin (a rotating start, the rest in configured
// order) and sequential (always configured order). Used by forward, and by loadbalance, which
// shuffles records with the same Fisher-Yates.

export type PolicyName = 'random' | 'round_robin' | 'sequential';

export const POLICY_NAMES: readonly PolicyName[] = ['random', 'round_robin', 'sequential'];

export interface Policy {
  readonly name: PolicyName;
  /** A new array: the order to try `list` in for this query. */
  order<T>(list: readonly T[]): T[];
}

/** Fisher-Yates with an injectable source of [0, 1) numbers. */
export function shuffled<T>(list: readonly T[], random: () => number = Math.random): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = out[i] as T;
    out[i] = out[j] as T;
    out[j] = t;
  }
  return out;
}

export function randomPolicy(random: () => number = Math.random): Policy {
  return { name: 'random', order: (list) => shuffled(list, random) };
}

/**
 * CoreDNS increments its counter before using it, so the first query starts at the second
 * upstream; kdns keeps that so counts at the upstreams match what CoreDNS users see.
 */
export function roundRobinPolicy(): Policy {
  let robin = 0;
  return {
    name: 'round_robin',
    order<T>(list: readonly T[]): T[] {
      if (list.length === 0) return [];
      robin = (robin + 1) >>> 0;
      const i = robin % list.length;
      return [list[i] as T, ...list.slice(0, i), ...list.slice(i + 1)];
    },
  };
}

export function sequentialPolicy(): Policy {
  return { name: 'sequential', order: (list) => [...list] };
}

export function policyByName(name: PolicyName): Policy {
  switch (name) {
    case 'random':
      return randomPolicy();
    case 'round_robin':
      return roundRobinPolicy();
    case 'sequential':
      return sequentialPolicy();
  }
}
