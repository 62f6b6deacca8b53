// Name oracles for the query model: who answers what. A zone-map oracle with the realclient
// recorder's semantics (so tests can compare the model with real resolvers), a list of names
// that exist, an autopath oracle for ClusterFirstWithAutopath names, and a way to combine them.
// The cluster's own answers come from the kubernetes plugin (`kdns explain --cluster` wires its
// resolver in as one more oracle; poddns itself does not depend on plugins).

import { AUTOPATH_SUFFIX } from './compute.js';
import type { NameOracle, Outcome, QType } from './queries.js';

export const nothingExists: NameOracle = () => 'nxdomain';

function normalize(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** Records per name; a name in the map exists even without records of a type (NODATA). */
export class RecordTable {
  private readonly names = new Map<string, { A: number; AAAA: number }>();

  add(name: string, type: QType | null): void {
    const key = normalize(name);
    const entry = this.names.get(key) ?? { A: 0, AAAA: 0 };
    if (type !== null) entry[type]++;
    this.names.set(key, entry);
  }

  lookup(name: string, type: QType): Outcome {
    const entry = this.names.get(normalize(name));
    if (entry === undefined) return 'nxdomain';
    return entry[type] > 0 ? 'answer' : 'nodata';
  }

  oracle(): NameOracle {
    return (name, type) => this.lookup(name, type);
  }
}

/** A zone map in the realclient recorder's format. */
export type ZoneMap = Record<string, { A?: string[]; AAAA?: string[]; CNAME?: string; rcode?: string | number }>;

/**
 * Answers as the realclient recorder does: a listed name exists (NODATA without records of the
 * type), a CNAME is followed inside the map, anything else is NXDOMAIN. A forced rcode other
 * than NXDOMAIN (SERVFAIL…) is outside what the model follows, so it is refused here.
 */
export function zoneMapOracle(zone: ZoneMap): NameOracle {
  const entries = new Map(Object.entries(zone).map(([k, v]) => [normalize(k), v] as const));
  for (const [name, e] of entries) {
    if (e.rcode !== undefined && String(e.rcode).toUpperCase() !== 'NXDOMAIN' && e.rcode !== 3) {
      throw new Error(`zone map: ${name}: rcode ${String(e.rcode)} is not modelled`);
    }
  }
  return (name, type) => {
    let key = normalize(name);
    for (let hops = 0; hops < 16; hops++) {
      const e = entries.get(key);
      if (e === undefined) return 'nxdomain';
      if (e.rcode !== undefined) return 'nxdomain';
      if (e.CNAME === undefined) return (e[type] ?? []).length > 0 ? 'answer' : 'nodata';
      key = normalize(e.CNAME);
    }
    return 'nodata';
  };
}

/** Names that answer both A and AAAA wherever they are asked (`--answer` in `kdns explain`). */
export function namesOracle(names: readonly string[]): NameOracle {
  const table = new RecordTable();
  for (const n of names) {
    table.add(n, 'A');
    table.add(n, 'AAAA');
  }
  return table.oracle();
}

/** The first oracle that knows the name (anything but NXDOMAIN) decides. */
export function firstKnown(...oracles: NameOracle[]): NameOracle {
  return (name, type) => {
    let outcome: Outcome = 'nxdomain';
    for (const o of oracles) {
      outcome = o(name, type);
      if (outcome !== 'nxdomain') return outcome;
    }
    return outcome;
  };
}

/**
 * What an autopath server is assumed to answer for `NAME.search.<ns>.<zone>.ap.k8s.io`: the
 * first of NAME.<ns>.svc.<zone>, NAME.svc.<zone>, NAME.<zone>, NAME that is not NXDOMAIN (as
 * CoreDNS's autopath walks a pod's ClusterFirst search list). Other names go to `inner`.
 */
export function autopathOracle(inner: NameOracle, zone: string): NameOracle {
  const z = normalize(zone);
  const marker = `.search.`;
  const tail = `.${z}.${AUTOPATH_SUFFIX}`;
  return (name, type) => {
    const n = normalize(name);
    const at = n.lastIndexOf(marker);
    if (at <= 0 || !n.endsWith(tail)) return inner(name, type);
    const ns = n.slice(at + marker.length, n.length - tail.length);
    if (ns === '' || ns.includes('.')) return inner(name, type);
    const target = n.slice(0, at);
    for (const candidate of [`${target}.${ns}.svc.${z}`, `${target}.svc.${z}`, `${target}.${z}`, target]) {
      const outcome = inner(candidate, type);
      if (outcome !== 'nxdomain') return outcome;
    }
    return 'nxdomain';
  };
}
