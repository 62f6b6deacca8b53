// Name oracles for the query model: who answers what. A cluster oracle built from the typed
// objects of src/cluster (services, headless endpoints, pods), a zone-map oracle with the
// realclient recorder's semantics (so tests can compare the model with real resolvers), an
// autopath oracle for ClusterFirstWithAutopath names, and ways to combine them.
//
// The cluster oracle is a minimal stand-in for the kubernetes plugin's answers (that plugin is
// built by another issue): enough to say which of a pod's queries find a name.

import { isIP } from 'node:net';
import type { ClusterObject, EndpointSlice, Endpoints, Pod, Service } from '../cluster/types.js';
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

  /** Every proper ancestor of `name` that is still inside `zone` exists too (empty non-terminals). */
  addWithAncestors(name: string, type: QType | null, zone: string): void {
    this.add(name, type);
    const z = normalize(zone);
    let n = normalize(name);
    while (n !== z && n.includes('.')) {
      n = n.slice(n.indexOf('.') + 1);
      if (n !== z && !n.endsWith(`.${z}`)) break;
      this.add(n, null);
    }
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

function ipType(ip: string): QType | null {
  const family = isIP(ip);
  return family === 4 ? 'A' : family === 6 ? 'AAAA' : null;
}

function isHeadless(svc: Service): boolean {
  return svc.spec.clusterIP === 'None';
}

/** `10.1.2.3` → `10-1-2-3`, `2001:db8::1` → `2001-db8--1`: the pod A/AAAA record label. */
export function podIPLabel(ip: string): string {
  return ip.replace(/[.:]/g, '-');
}

/**
 * The names a cluster serves under `zone`: `svc.ns.svc.zone` (cluster IPs, or the ready
 * endpoints of a headless service, or the ExternalName alias, counted as an answer for both
 * types), `host.svc.ns.svc.zone` for named headless endpoints, and `a-b-c-d.ns.pod.zone` for
 * pods that exist (like the kubernetes plugin's `pods verified`). Ancestors answer NODATA.
 */
export function clusterRecords(objects: readonly ClusterObject[], zone: string): RecordTable {
  const table = new RecordTable();
  const add = (name: string, type: QType | null): void => table.addWithAncestors(name, type, zone);
  table.add(zone, null);
  const services = objects.filter((o): o is Service => o.kind === 'Service');
  const slices = objects.filter((o): o is EndpointSlice => o.kind === 'EndpointSlice');
  const legacy = objects.filter((o): o is Endpoints => o.kind === 'Endpoints');
  for (const svc of services) {
    const ns = svc.metadata.namespace ?? 'default';
    const base = `${svc.metadata.name}.${ns}.svc.${zone}`;
    add(base, null);
    if (svc.spec.type === 'ExternalName') {
      add(base, 'A');
      add(base, 'AAAA');
    } else if (isHeadless(svc)) {
      for (const ep of headlessEndpoints(svc, slices, legacy)) {
        const type = ipType(ep.ip);
        if (type === null) continue;
        add(base, type);
        if (ep.hostname) add(`${ep.hostname}.${base}`, type);
      }
    } else {
      const ips = svc.spec.clusterIPs ?? (svc.spec.clusterIP ? [svc.spec.clusterIP] : []);
      for (const ip of ips) {
        const type = ipType(ip);
        if (type !== null) add(base, type);
      }
    }
  }
  for (const pod of objects.filter((o): o is Pod => o.kind === 'Pod')) {
    const ns = pod.metadata.namespace ?? 'default';
    const ips = pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : []);
    for (const ip of ips) {
      const type = ipType(ip);
      if (type !== null) add(`${podIPLabel(ip)}.${ns}.pod.${zone}`, type);
    }
  }
  return table;
}

interface EndpointAddress {
  ip: string;
  hostname?: string;
}

function headlessEndpoints(svc: Service, slices: readonly EndpointSlice[], legacy: readonly Endpoints[]): EndpointAddress[] {
  const ns = svc.metadata.namespace ?? 'default';
  const includeNotReady = svc.spec.publishNotReadyAddresses === true;
  const own = slices.filter((s) => (s.metadata.namespace ?? 'default') === ns && s.metadata.labels?.['kubernetes.io/service-name'] === svc.metadata.name);
  if (own.length > 0) {
    return own.flatMap((s) =>
      (s.endpoints ?? [])
        .filter((ep) => includeNotReady || ep.conditions?.ready !== false)
        .flatMap((ep) => ep.addresses.map((ip) => (ep.hostname ? { ip, hostname: ep.hostname } : { ip }))),
    );
  }
  const eps = legacy.find((e) => (e.metadata.namespace ?? 'default') === ns && e.metadata.name === svc.metadata.name);
  return (eps?.subsets ?? []).flatMap((subset) =>
    [...(subset.addresses ?? []), ...(includeNotReady ? (subset.notReadyAddresses ?? []) : [])].map((a) => (a.hostname ? { ip: a.ip, hostname: a.hostname } : { ip: a.ip })),
  );
}

export function clusterOracle(objects: readonly ClusterObject[], zone: string): NameOracle {
  return clusterRecords(objects, zone).oracle();
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
