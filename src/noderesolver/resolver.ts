// node-resolver: resolves a few cluster services through the cluster DNS and keeps their
// addresses in the node's hosts file, so the node itself (kubelet pulling from the in-cluster
// image registry, say) can reach them without using cluster DNS.
//
// Per service and address family: an answer (addresses, NXDOMAIN or NODATA) is the truth and
// replaces what the file says; no answer (timeout, SERVFAIL, REFUSED) keeps the entries the file
// already has, because a DNS outage must not take names away from the node.

import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { RCode } from '../lib/dns/types.js';
import { lookup } from './dnsclient.js';
import type { AddressType, LookupOptions, Nameserver } from './dnsclient.js';
import { entryLine, parseHosts, withEntries } from './hostsblock.js';
import type { HostEntry } from './hostsblock.js';
import { withLock, writeHostsFile } from './hostsfile.js';
import type { WriteMethod } from './hostsfile.js';

export interface ServiceName {
  /** As given: "image-registry.openshift-image-registry.svc". */
  name: string;
  /** What is asked: "image-registry.openshift-image-registry.svc.cluster.local.". */
  query: string;
  /** Host names written for it: the given name and the fully qualified one. */
  aliases: string[];
}

/** A name ending in "." is absolute; any other is relative to the cluster domain. */
export function serviceName(name: string, clusterDomain: string): ServiceName {
  if (name.endsWith('.')) return { name, query: name, aliases: [name.slice(0, -1)] };
  const fq = clusterDomain === '' ? name : `${name}.${clusterDomain.replace(/\.$/, '')}`;
  return { name, query: `${fq}.`, aliases: fq === name ? [name] : [name, fq] };
}

/** What DNS said about one service and family: addresses (possibly none), or nothing usable. */
export type FamilyAnswer = { ok: true; addresses: string[] } | { ok: false; reason: string };

export interface ServiceAnswer {
  service: ServiceName;
  A: FamilyAnswer;
  AAAA: FamilyAnswer;
}

async function ask(service: ServiceName, type: AddressType, ns: Nameserver, opts: LookupOptions): Promise<FamilyAnswer> {
  try {
    const answer = await lookup(service.query, type, ns, opts);
    if (answer.rcode === RCode.NOERROR || answer.rcode === RCode.NXDOMAIN) return { ok: true, addresses: answer.addresses };
    return { ok: false, reason: `rcode ${rcodeName(answer.rcode)}` };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}

function rcodeName(rcode: number): string {
  return Object.entries(RCode).find(([, v]) => v === rcode)?.[0] ?? String(rcode);
}

/** A, then AAAA, for every service. */
export async function resolveAll(services: readonly ServiceName[], ns: Nameserver, opts: LookupOptions = {}): Promise<ServiceAnswer[]> {
  const out: ServiceAnswer[] = [];
  for (const service of services) {
    const A = await ask(service, 'A', ns, opts);
    const AAAA = await ask(service, 'AAAA', ns, opts);
    out.push({ service, A, AAAA });
  }
  return out;
}

const family = (ip: string): AddressType => (isIP(ip) === 6 ? 'AAAA' : 'A');

/** Numeric order, so the block does not churn when DNS rotates the order of its answers. */
function compareIPs(a: string, b: string): number {
  const key = (ip: string): string =>
    isIP(ip) === 4
      ? ip
          .split('.')
          .map((o) => o.padStart(3, '0'))
          .join('.')
      : ip;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/**
 * The entries the block should hold: fresh addresses where DNS answered, the file's current
 * entries for a service and family where it did not.
 */
export function desiredEntries(answers: readonly ServiceAnswer[], current: readonly HostEntry[]): HostEntry[] {
  const out: HostEntry[] = [];
  for (const { service, A, AAAA } of answers) {
    for (const [type, answer] of [['A', A] as const, ['AAAA', AAAA] as const]) {
      const ips = answer.ok ? [...new Set(answer.addresses)].sort(compareIPs) : current.filter((e) => e.names[0] === service.aliases[0] && family(e.ip) === type).map((e) => e.ip);
      for (const ip of ips) out.push({ ip, names: service.aliases });
    }
  }
  return out;
}

/** "added …" / "removed …" lines between two entry lists. */
export function describeChanges(before: readonly HostEntry[], after: readonly HostEntry[]): string[] {
  const b = new Set(before.map(entryLine));
  const a = new Set(after.map(entryLine));
  return [...[...b].filter((l) => !a.has(l)).map((l) => `removed ${l}`), ...[...a].filter((l) => !b.has(l)).map((l) => `added ${l}`)];
}

export interface SyncOptions {
  services: readonly ServiceName[];
  nameserver: Nameserver;
  hostsFile: string;
  lockFile: string;
  lookup?: LookupOptions;
  log: (line: string) => void;
}

export interface SyncResult {
  /** Lookups that got no usable answer (stale entries kept for them). */
  failures: string[];
  changes: string[];
  /** How the file was written; undefined when nothing changed. */
  wrote?: WriteMethod;
}

/** One pass: ask DNS, then (under the lock) bring the file's block up to date if it differs. */
export async function syncOnce(o: SyncOptions): Promise<SyncResult> {
  const answers = await resolveAll(o.services, o.nameserver, o.lookup);
  const failures: string[] = [];
  for (const a of answers) {
    for (const type of ['A', 'AAAA'] as const) {
      const f = a[type];
      if (!f.ok) failures.push(`${a.service.query} ${type}: ${f.reason}`);
    }
  }
  for (const f of failures) o.log(`lookup failed, keeping the current entries: ${f}`);
  // Read inside the lock: another writer may have changed the file since we last looked.
  return withLock(o.lockFile, async () => {
    const text = await readFile(o.hostsFile, 'utf8');
    const current = parseHosts(text).entries;
    const entries = desiredEntries(answers, current);
    const next = withEntries(text, entries);
    if (next === text) return { failures, changes: [] };
    const changes = describeChanges(current, entries);
    const wrote = await writeHostsFile(o.hostsFile, next);
    for (const c of changes) o.log(`${o.hostsFile}: ${c}`);
    o.log(`${o.hostsFile}: written ${wrote === 'rename' ? 'atomically (temp file + rename)' : 'in place under the lock (rename not possible here), read back and verified'}`);
    return { failures, changes, wrote };
  });
}

export interface RunOptions extends SyncOptions {
  intervalMs: number;
  /** Stops the loop (SIGTERM). */
  signal: AbortSignal;
}

/** Syncs every `intervalMs` until aborted; a failing pass is logged and retried next time. */
export async function runLoop(o: RunOptions): Promise<void> {
  while (!o.signal.aborted) {
    try {
      await syncOnce(o);
    } catch (e) {
      o.log(`sync failed: ${(e as Error).message}`);
    }
    await new Promise<void>((resolve) => {
      // Aborted while the pass ran: an 'abort' listener added now would never fire.
      if (o.signal.aborted) return resolve();
      const timer = setTimeout(resolve, o.intervalMs);
      o.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
