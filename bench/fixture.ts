// The bench's data: one made-up cluster, written both as Kubernetes manifests (what kdns's
// kubernetes plugin reads) and as the zone a Kubernetes DNS server answers for it (what the
// peers load), plus the query files of the three workloads and the forwarding upstream's zone.
//
//   node --import tsx bench/fixture.ts --out DIR [--services 10000] [--namespaces 100]
//        [--pods 0] [--auth-queries 100000] [--fwd-names 1000] [--fwd-repeat 20]
//        [--miss-names 2000000] [--seed 1]
//
// Deterministic: the same options write the same bytes. The files (DIR/...):
//   cluster/*.json        Namespaces, Services, EndpointSlices (and Pods with --pods) as
//                         `kind: List` files, as `kubectl get -o json` writes them
//   cluster.local.zone    every record kdns answers for those objects, one per line
//                         ("owner ttl IN type rdata", absolute names), after a SOA and an NS
//   example.test.zone     the upstream's zone: the fwd names and the miss wildcard
//   queries-auth.txt      dnsperf input: 80% A of Services, 10% AAAA of Services (NODATA),
//                         10% names that do not exist (NXDOMAIN), shuffled
//   queries-fwd.txt       the fwd names, each --fwd-repeat times, shuffled (cache hits once warm)
//   warm-fwd.txt          each fwd name once: the pass that fills a cache
//   queries-miss.txt      --miss-names names under the wildcard, none twice (every one a miss)
//   warm-miss.txt         other names under the wildcard, for the warm-up
//   meta.json             the options, counts, and each workload's probe and checks
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Bumped when the files change shape, so a runner regenerates an older fixture. */
export const FIXTURE_VERSION = 1;
export const CLUSTER_ZONE = 'cluster.local';
export const UPSTREAM_ZONE = 'example.test';
/** The auth zone's TTL: kdns's kubernetes plugin's default. */
export const CLUSTER_TTL = 5;
const UPSTREAM_TTL = 3600;
/** The miss wildcard's owner and address (198.18.0.0/15 is the benchmarking range, RFC 2544). */
const MISS_SUFFIX = `miss.${UPSTREAM_ZONE}`;
const MISS_ADDRESS = '198.19.0.1';

export interface FixtureOptions {
  services: number;
  namespaces: number;
  pods: number;
  authQueries: number;
  fwdNames: number;
  fwdRepeat: number;
  missNames: number;
  seed: number;
}

export const DEFAULT_FIXTURE: FixtureOptions = {
  services: 10000,
  namespaces: 100,
  pods: 0,
  authQueries: 100000,
  fwdNames: 1000,
  fwdRepeat: 20,
  missNames: 2000000,
  seed: 1,
};

const LIMITS: Record<keyof FixtureOptions, [number, number]> = {
  services: [2, 500000],
  namespaces: [2, 5000],
  pods: [0, 1000000],
  authQueries: [10, 10000000],
  fwdNames: [2, 1000000],
  fwdRepeat: [1, 1000],
  missNames: [10, 50000000],
  seed: [0, 2 ** 31],
};

export interface Port {
  name: string; // '' for an unnamed port (no SRV record)
  port: number;
  protocol: 'TCP' | 'UDP';
}
export interface Endpoint {
  ip: string;
  hostname: string; // '' when the endpoint has none (its DNS label is then the dashed IP)
}
export interface Service {
  name: string;
  namespace: string;
  clusterIP: string | null; // null: headless
  ports: Port[];
  endpoints: Endpoint[]; // only headless Services get endpoints: their A records come from them
}
export interface Cluster {
  namespaces: string[];
  services: Service[];
}
/** A record as the zone file has it: absolute owner, type, rdata in zone-file text. */
export interface ZoneRecord {
  owner: string;
  type: 'A' | 'SRV';
  data: string;
}
export interface Check {
  name: string;
  type: 'A' | 'AAAA' | 'SRV';
  rcode: 'NOERROR' | 'NXDOMAIN';
  answers: number;
}
export interface Probe {
  name: string;
  type: 'A';
  /** The address the answer must hold; '' accepts any answer with an A record. */
  address: string;
}
export interface FixtureMeta {
  version: number;
  options: FixtureOptions;
  services: number;
  headless: number;
  namespaces: string[];
  records: number;
  probes: Record<'auth' | 'fwd' | 'miss', Probe>;
  checks: Record<'auth' | 'fwd' | 'miss', Check[]>;
}

/** A small, fast, seeded generator (xorshift32): the fixture must not depend on Math.random. */
export function seededRandom(seed: number): () => number {
  let x = (seed ^ 0x9e3779b9) >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

function pick<T>(items: readonly T[], rnd: () => number): T {
  return items[Math.floor(rnd() * items.length)] as T;
}

/** Fisher–Yates, in place, with the seeded generator. */
export function shuffle<T>(items: T[], rnd: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

export function ipv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}
function ipv4Number(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

// Words for names that look like a real cluster's; the counts are what matter to the bench.
const AREAS = ['shop', 'pay', 'ledger', 'search', 'media', 'mail', 'maps', 'auth', 'feeds', 'chat', 'ads', 'risk', 'tax', 'fleet', 'crm', 'docs', 'iot', 'video', 'games', 'hr'];
const STAGES = ['prod', 'stage', 'dev', 'test', 'load', 'edge'];
const PARTS = ['api', 'web', 'worker', 'db', 'cache', 'queue', 'cron', 'gateway', 'proxy', 'store', 'index', 'auth', 'events', 'stream', 'sync', 'admin', 'report', 'notify', 'billing', 'export'];
const ROLES = ['svc', 'server', 'backend', 'frontend', 'primary', 'replica', 'reader', 'writer', 'broker', 'agent', 'relay', 'hub'];
const NAMED_PORTS: readonly Port[] = [
  { name: 'http', port: 80, protocol: 'TCP' },
  { name: 'https', port: 443, protocol: 'TCP' },
  { name: 'grpc', port: 50051, protocol: 'TCP' },
  { name: 'metrics', port: 9090, protocol: 'TCP' },
  { name: 'syslog', port: 514, protocol: 'UDP' },
];
/** Outside names a pod looks up; with ndots:5 they are first tried under its search list. */
const OUTSIDE = ['www.example.com', 'api.example.net', 'cdn.example.org', 'login.example.com', 'objects.example.net'];

function namespaceNames(count: number): string[] {
  const out = ['default', 'kube-system'];
  for (let i = 0; out.length < count; i++) {
    const area = AREAS[i % AREAS.length] as string;
    const stage = STAGES[Math.floor(i / AREAS.length) % STAGES.length] as string;
    const round = Math.floor(i / (AREAS.length * STAGES.length));
    out.push(round === 0 ? `${area}-${stage}` : `${area}-${stage}-${round}`);
  }
  return out;
}

/**
 * The cluster: the two Services every cluster has, then Services with made-up names spread over
 * the namespaces. One in ten is headless with 3 ready endpoints (half of them with StatefulSet
 * hostnames); three in ten have named ports (SRV records), the rest one unnamed port.
 */
export function buildCluster(o: Pick<FixtureOptions, 'services' | 'namespaces' | 'seed'>): Cluster {
  const rnd = seededRandom(o.seed);
  const namespaces = namespaceNames(o.namespaces);
  const services: Service[] = [
    { name: 'kubernetes', namespace: 'default', clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP' }], endpoints: [] },
    {
      name: 'kube-dns',
      namespace: 'kube-system',
      clusterIP: '10.96.0.10',
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP' },
        { name: 'dns-tcp', port: 53, protocol: 'TCP' },
        { name: 'metrics', port: 9153, protocol: 'TCP' },
      ],
      endpoints: [],
    },
  ];
  const taken = new Set(services.map((s) => `${s.namespace}/${s.name}`));
  // ClusterIPs count up from 10.96.1.0 (past the two above); pod addresses from 10.244.0.1.
  let nextClusterIP = ipv4Number('10.96.1.0');
  let nextPodIP = ipv4Number('10.244.0.1');
  const skipNetworkAndBroadcast = (n: number): number => ((n & 255) === 0 || (n & 255) === 255 ? n + ((n & 255) === 0 ? 1 : 2) : n);
  while (services.length < o.services) {
    const namespace = pick(namespaces, rnd);
    const base = `${pick(PARTS, rnd)}-${pick(ROLES, rnd)}`;
    let name = base;
    for (let k = 2; taken.has(`${namespace}/${name}`); k++) name = `${base}-${k}`;
    taken.add(`${namespace}/${name}`);
    let ports: Port[];
    if (rnd() < 0.3) {
      const first = Math.floor(rnd() * NAMED_PORTS.length);
      ports = [{ ...(NAMED_PORTS[first] as Port) }];
      if (rnd() < 0.4) ports.push({ ...(NAMED_PORTS[(first + 1) % NAMED_PORTS.length] as Port) });
    } else {
      ports = [{ name: '', port: 8000 + Math.floor(rnd() * 100), protocol: 'TCP' }];
    }
    if (rnd() < 0.1) {
      const stateful = rnd() < 0.5;
      const endpoints: Endpoint[] = [];
      for (let e = 0; e < 3; e++) {
        nextPodIP = skipNetworkAndBroadcast(nextPodIP);
        endpoints.push({ ip: ipv4(nextPodIP++), hostname: stateful ? `${name}-${e}` : '' });
      }
      services.push({ name, namespace, clusterIP: null, ports, endpoints });
    } else {
      nextClusterIP = skipNetworkAndBroadcast(nextClusterIP);
      services.push({ name, namespace, clusterIP: ipv4(nextClusterIP++), ports, endpoints: [] });
    }
  }
  return { namespaces, services };
}

export function serviceName(s: Service): string {
  return `${s.name}.${s.namespace}.svc.${CLUSTER_ZONE}`;
}

/** The DNS label of a headless endpoint: its hostname, else its address with dashes. */
export function endpointLabel(e: Endpoint): string {
  return e.hostname !== '' ? e.hostname : e.ip.replaceAll('.', '-');
}

/**
 * The records of the Kubernetes DNS specification (1.1.0) for the cluster, with the SRV weights
 * CoreDNS (and kdns) give: each of n records of a name gets 100/n, at least 1.
 */
export function clusterRecords(cluster: Cluster): ZoneRecord[] {
  const out: ZoneRecord[] = [];
  for (const s of cluster.services) {
    const fqdn = `${serviceName(s)}.`;
    const named = s.ports.filter((p) => p.name !== '');
    if (s.clusterIP !== null) {
      out.push({ owner: fqdn, type: 'A', data: s.clusterIP });
      for (const p of named) out.push({ owner: `_${p.name}._${p.protocol.toLowerCase()}.${fqdn}`, type: 'SRV', data: `0 100 ${p.port} ${fqdn}` });
      continue;
    }
    for (const e of s.endpoints) out.push({ owner: fqdn, type: 'A', data: e.ip });
    for (const e of s.endpoints) out.push({ owner: `${endpointLabel(e)}.${fqdn}`, type: 'A', data: e.ip });
    const weight = Math.max(1, Math.floor(100 / s.endpoints.length));
    for (const p of named) {
      for (const e of s.endpoints) {
        out.push({ owner: `_${p.name}._${p.protocol.toLowerCase()}.${fqdn}`, type: 'SRV', data: `0 ${weight} ${p.port} ${endpointLabel(e)}.${fqdn}` });
      }
    }
  }
  return out;
}

/** A zone file: SOA and NS on one line each, then one record per line. */
export function zoneText(origin: string, ttl: number, apex: string[], records: readonly ZoneRecord[]): string {
  const lines = [
    `; written by bench/fixture.ts`,
    `$ORIGIN ${origin}.`,
    `$TTL ${ttl}`,
    `${origin}. ${ttl} IN SOA ns.dns.${origin}. hostmaster.${origin}. 1 7200 1800 86400 ${ttl}`,
    `${origin}. ${ttl} IN NS ns.dns.${origin}.`,
    ...apex,
    ...records.map((r) => `${r.owner} ${ttl} IN ${r.type} ${r.data}`),
  ];
  return `${lines.join('\n')}\n`;
}

export interface ZoneLine {
  owner: string;
  ttl: number;
  type: string;
  data: string;
}

/** The records of a zone file as zoneText writes them, SOA and NS included (comments and `$` lines not). */
export function readZoneRecords(text: string): ZoneLine[] {
  const out: ZoneLine[] = [];
  text.split('\n').forEach((line, i) => {
    if (line === '' || line.startsWith(';') || line.startsWith('$')) return;
    const f = line.split(/\s+/);
    if (f.length < 5 || f[2] !== 'IN' || !/^\d+$/.test(f[1] as string)) throw new Error(`zone line ${i + 1}: not "owner ttl IN type data": ${line}`);
    out.push({ owner: f[0] as string, ttl: Number(f[1]), type: f[3] as string, data: f.slice(4).join(' ') });
  });
  return out;
}

/** Every name that exists in the zone, with the names between it and the apex (empty non-terminals). */
function existingNames(records: readonly ZoneRecord[]): Set<string> {
  const names = new Set<string>();
  for (const r of records) {
    let n = r.owner.slice(0, -1);
    while (n !== '' && !names.has(n)) {
      names.add(n);
      const dot = n.indexOf('.');
      n = dot < 0 ? '' : n.slice(dot + 1);
    }
  }
  return names;
}

/**
 * The auth queries: 80% A and 10% AAAA of Service names (the AAAA ones are NODATA: the cluster
 * is IPv4), 10% names that exist nowhere — a Service a namespace does not have, and the names a
 * pod's resolver tries first under ndots:5 for a Service's full name or an outside name.
 */
export function authQueries(cluster: Cluster, records: readonly ZoneRecord[], count: number, seed: number): string[] {
  const rnd = seededRandom(seed ^ 0x51ed);
  const names = cluster.services.map(serviceName);
  const exists = existingNames(records);
  const a = Math.round(count * 0.8);
  const aaaa = Math.round(count * 0.1);
  const out: string[] = [];
  for (let i = 0; i < a; i++) out.push(`${pick(names, rnd)} A`);
  for (let i = 0; i < aaaa; i++) out.push(`${pick(names, rnd)} AAAA`);
  while (out.length < count) {
    const ns = pick(cluster.namespaces, rnd);
    const r = rnd();
    let q: string;
    if (r < 0.4) q = `${pick(PARTS, rnd)}-${pick(ROLES, rnd)}-x${Math.floor(rnd() * 1e6).toString(36)}.${ns}.svc.${CLUSTER_ZONE}`;
    else if (r < 0.8) q = `${pick(names, rnd)}.${pick([`${ns}.svc.${CLUSTER_ZONE}`, `svc.${CLUSTER_ZONE}`, CLUSTER_ZONE], rnd)}`;
    else q = `${pick(OUTSIDE, rnd)}.${ns}.svc.${CLUSTER_ZONE}`;
    if (exists.has(q)) continue;
    out.push(`${q} ${rnd() < 0.5 ? 'A' : 'AAAA'}`);
  }
  return shuffle(out, rnd);
}

export function fwdNames(count: number): Array<{ name: string; address: string }> {
  const base = ipv4Number('198.18.0.1');
  return Array.from({ length: count }, (_, i) => ({
    name: `${PARTS[i % PARTS.length]}-${ROLES[Math.floor(i / PARTS.length) % ROLES.length]}-${i}.${UPSTREAM_ZONE}`,
    address: ipv4(base + i),
  }));
}

export function upstreamZone(names: ReadonlyArray<{ name: string; address: string }>): string {
  return zoneText(
    UPSTREAM_ZONE,
    UPSTREAM_TTL,
    [`ns.dns.${UPSTREAM_ZONE}. ${UPSTREAM_TTL} IN A 127.0.0.1`, `*.${MISS_SUFFIX}. ${UPSTREAM_TTL} IN A ${MISS_ADDRESS}`],
    names.map((n) => ({ owner: `${n.name}.`, type: 'A', data: n.address })),
  );
}

export function fwdQueries(names: ReadonlyArray<{ name: string }>, repeat: number, seed: number): string[] {
  const out: string[] = [];
  for (let r = 0; r < repeat; r++) for (const n of names) out.push(`${n.name} A`);
  return shuffle(out, seededRandom(seed ^ 0xf0d));
}

/** Pods as the API serves them, trimmed to the fields every real pod has. */
export function podLists(cluster: Cluster, count: number, perFile: number): Array<{ apiVersion: 'v1'; kind: 'List'; items: unknown[] }> {
  const lists: Array<{ apiVersion: 'v1'; kind: 'List'; items: unknown[] }> = [];
  // 10.245.0.0 up: past the endpoints' addresses; a /24 per node of up to 250 pods.
  const base = ipv4Number('10.245.0.0');
  for (let start = 0; start < count; start += perFile) {
    const items: unknown[] = [];
    for (let i = start; i < Math.min(count, start + perFile); i++) {
      const namespace = cluster.namespaces[i % cluster.namespaces.length] as string;
      const node = Math.floor(i / 250);
      const ip = ipv4(base + node * 256 + 1 + (i % 250));
      const app = `app-${Math.floor(i / 4) % 4000}`;
      const replicaSet = `${app}-${(Math.floor(i / 4) * 7919).toString(36)}`;
      items.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${replicaSet}-${((i * 2246822519) >>> 0).toString(36).slice(0, 5)}`,
          namespace,
          uid: `b0000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
          labels: { app, 'pod-template-hash': replicaSet.slice(app.length + 1) },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: replicaSet, uid: `c0000000-0000-4000-8000-${Math.floor(i / 4).toString(16).padStart(12, '0')}`, controller: true }],
        },
        spec: {
          nodeName: `node-${node}`,
          dnsPolicy: 'ClusterFirst',
          containers: [{ name: 'main', image: `registry.example/${app}:1.0`, ports: [{ containerPort: 8080, protocol: 'TCP' }] }],
        },
        status: { phase: 'Running', hostIP: ipv4(ipv4Number('192.168.0.0') + node), podIP: ip, podIPs: [{ ip }] },
      });
    }
    lists.push({ apiVersion: 'v1', kind: 'List', items });
  }
  return lists;
}

function list(items: unknown[]): string {
  return `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items })}\n`;
}

export function clusterManifests(cluster: Cluster): Record<string, string> {
  const headless = cluster.services.filter((s) => s.clusterIP === null);
  return {
    '00-namespaces.json': list(cluster.namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }))),
    '10-services.json': list(
      cluster.services.map((s) => ({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: s.name, namespace: s.namespace },
        spec: {
          type: 'ClusterIP',
          clusterIP: s.clusterIP ?? 'None',
          ports: s.ports.map((p) => (p.name === '' ? { port: p.port, protocol: p.protocol } : { name: p.name, port: p.port, protocol: p.protocol })),
        },
      })),
    ),
    '20-endpointslices.json': list(
      headless.map((s) => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${s.name}-ep1`, namespace: s.namespace, labels: { 'kubernetes.io/service-name': s.name } },
        addressType: 'IPv4',
        endpoints: s.endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: true }, ...(e.hostname !== '' ? { hostname: e.hostname } : {}) })),
        ports: s.ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })),
      })),
    ),
  };
}

export function fixtureMeta(o: FixtureOptions, cluster: Cluster, records: readonly ZoneRecord[], fwd: ReadonlyArray<{ name: string; address: string }>): FixtureMeta {
  const headless = cluster.services.filter((s) => s.clusterIP === null);
  const firstHeadless = headless[0];
  const second = fwd[1 % fwd.length] as { name: string };
  return {
    version: FIXTURE_VERSION,
    options: o,
    services: cluster.services.length,
    headless: headless.length,
    namespaces: cluster.namespaces,
    records: records.length,
    probes: {
      auth: { name: `kubernetes.default.svc.${CLUSTER_ZONE}`, type: 'A', address: '10.96.0.1' },
      fwd: { name: (fwd[0] as { name: string }).name, type: 'A', address: (fwd[0] as { address: string }).address },
      miss: { name: `probe.${MISS_SUFFIX}`, type: 'A', address: MISS_ADDRESS },
    },
    checks: {
      auth: [
        { name: `kubernetes.default.svc.${CLUSTER_ZONE}`, type: 'A', rcode: 'NOERROR', answers: 1 },
        { name: `kubernetes.default.svc.${CLUSTER_ZONE}`, type: 'AAAA', rcode: 'NOERROR', answers: 0 },
        { name: `not-a-service.default.svc.${CLUSTER_ZONE}`, type: 'A', rcode: 'NXDOMAIN', answers: 0 },
        { name: `_https._tcp.kubernetes.default.svc.${CLUSTER_ZONE}`, type: 'SRV', rcode: 'NOERROR', answers: 1 },
        ...(firstHeadless ? [{ name: serviceName(firstHeadless), type: 'A' as const, rcode: 'NOERROR' as const, answers: firstHeadless.endpoints.length }] : []),
      ],
      fwd: [{ name: second.name, type: 'A', rcode: 'NOERROR', answers: 1 }],
      miss: [{ name: `check.${MISS_SUFFIX}`, type: 'A', rcode: 'NOERROR', answers: 1 }],
    },
  };
}

/** Writes lines in chunks: the miss file has millions of them. */
function writeLines(path: string, count: number, line: (i: number) => string): void {
  const fd = openSync(path, 'w');
  try {
    const chunk: string[] = [];
    for (let i = 0; i < count; i++) {
      chunk.push(line(i));
      if (chunk.length === 65536) {
        writeSync(fd, `${chunk.join('\n')}\n`);
        chunk.length = 0;
      }
    }
    if (chunk.length > 0) writeSync(fd, `${chunk.join('\n')}\n`);
  } finally {
    closeSync(fd);
  }
}

/** Writes the whole fixture into `out` (its cluster/ folder replaced), meta.json last. */
export function writeFixture(out: string, o: FixtureOptions): FixtureMeta {
  const cluster = buildCluster(o);
  const records = clusterRecords(cluster);
  const fwd = fwdNames(o.fwdNames);
  mkdirSync(out, { recursive: true });
  rmSync(join(out, 'meta.json'), { force: true });
  rmSync(join(out, 'cluster'), { recursive: true, force: true });
  mkdirSync(join(out, 'cluster'));
  const write = (name: string, text: string): void => writeFileSync(join(out, name), text);
  for (const [name, text] of Object.entries(clusterManifests(cluster))) write(join('cluster', name), text);
  podLists(cluster, o.pods, 10000).forEach((l, i) => write(join('cluster', `30-pods-${String(i).padStart(3, '0')}.json`), `${JSON.stringify(l)}\n`));
  write(`${CLUSTER_ZONE}.zone`, zoneText(CLUSTER_ZONE, CLUSTER_TTL, [`ns.dns.${CLUSTER_ZONE}. ${CLUSTER_TTL} IN A 10.96.0.10`], records));
  write(`${UPSTREAM_ZONE}.zone`, upstreamZone(fwd));
  const auth = authQueries(cluster, records, o.authQueries, o.seed);
  writeLines(join(out, 'queries-auth.txt'), auth.length, (i) => auth[i] as string);
  const fq = fwdQueries(fwd, o.fwdRepeat, o.seed);
  writeLines(join(out, 'queries-fwd.txt'), fq.length, (i) => fq[i] as string);
  writeLines(join(out, 'warm-fwd.txt'), fwd.length, (i) => `${(fwd[i] as { name: string }).name} A`);
  writeLines(join(out, 'queries-miss.txt'), o.missNames, (i) => `m${i}.${MISS_SUFFIX} A`);
  writeLines(join(out, 'warm-miss.txt'), Math.max(10, Math.floor(o.missNames / 10)), (i) => `w${i}.${MISS_SUFFIX} A`);
  const meta = fixtureMeta(o, cluster, records, fwd);
  write('meta.json', `${JSON.stringify(meta, null, 2)}\n`);
  return meta;
}

/** The fixture's meta.json, or undefined when there is none (or it is not a fixture's). */
export function readMeta(dir: string): FixtureMeta | undefined {
  try {
    const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as FixtureMeta;
    return typeof meta.version === 'number' ? meta : undefined;
  } catch {
    return undefined;
  }
}

/** True when `dir` holds a complete fixture of this version written with these options. */
export function fixtureMatches(dir: string, o: FixtureOptions): boolean {
  const meta = readMeta(dir);
  return meta !== undefined && meta.version === FIXTURE_VERSION && JSON.stringify(meta.options) === JSON.stringify(o);
}

const FLAGS: Record<string, keyof FixtureOptions> = {
  '--services': 'services',
  '--namespaces': 'namespaces',
  '--pods': 'pods',
  '--auth-queries': 'authQueries',
  '--fwd-names': 'fwdNames',
  '--fwd-repeat': 'fwdRepeat',
  '--miss-names': 'missNames',
  '--seed': 'seed',
};

/** Command-line flags → options and the output folder; errors name the flag. */
export function parseFixtureArgs(argv: readonly string[]): { out: string; options: FixtureOptions } {
  const options = { ...DEFAULT_FIXTURE };
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag}: missing value`);
    i++;
    if (flag === '--out') {
      out = resolve(value);
      continue;
    }
    const key = FLAGS[flag];
    if (key === undefined) throw new Error(`${flag}: unknown flag (flags: --out ${Object.keys(FLAGS).join(' ')})`);
    const [min, max] = LIMITS[key];
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new Error(`${flag}: "${value}" is not a whole number in ${min}..${max}`);
    options[key] = Number(value);
  }
  if (out === undefined) throw new Error('--out DIR is required');
  if (options.namespaces > options.services) throw new Error(`--namespaces: ${options.namespaces} is more than --services ${options.services}`);
  return { out, options };
}

/** Writes the fixture unless `dir` already has this one; says which on stderr. */
export function ensureFixture(dir: string, o: FixtureOptions): FixtureMeta {
  if (fixtureMatches(dir, o)) return readMeta(dir) as FixtureMeta;
  process.stderr.write(`bench: writing the fixture (${o.services} Services${o.pods > 0 ? `, ${o.pods} Pods` : ''}) to ${dir}\n`);
  return writeFixture(dir, o);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    const { out, options } = parseFixtureArgs(process.argv.slice(2));
    const meta = ensureFixture(out, options);
    process.stderr.write(`fixture: ${meta.services} Services (${meta.headless} headless) in ${meta.namespaces.length} namespaces, ${meta.records} records -> ${out}\n`);
  } catch (e) {
    process.stderr.write(`fixture: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
}
