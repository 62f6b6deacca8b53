// Building SRV answers: the records to each target and the targets' addresses as glue, as
// CoreDNS's backends answer them (plugin.SRV): one SRV record per target and port, glue once
// per target and address, and the weight each record gets when no entry sets one.
// Used by the kubernetes and k8s_external handlers (Services' ports) and by etcd's (SRV and
// MX from SkyDNS entries).

import * as rr from '../../lib/dns/rr.js';
import type { ResourceRecord } from '../../lib/dns/types.js';

/**
 * CoreDNS's SRV weight when no entry sets one: every entry (port-less ones and duplicates
 * included) counts 100 of the total, and each record gets its share of 100, at least 1.
 */
export function srvWeight(entries: number): number {
  return Math.max(1, Math.floor((100 / (100 * entries)) * 100));
}

/** An A or AAAA record of `ip` (canonical text), by its family. */
export function addressRecord(name: string, ttl: number, ip: string): ResourceRecord {
  return ip.includes(':') ? rr.aaaa(name, ttl, ip) : rr.a(name, ttl, ip);
}

/** The records of one SRV (or MX) answer and their glue, each added once. */
export class SrvAnswer {
  readonly records: ResourceRecord[] = [];
  readonly extra: ResourceRecord[] = [];
  private readonly added = new Set<string>();
  private readonly glued = new Set<string>();

  /** Adds `record` unless one with the same `key` was added; without a key it is always added. */
  add(record: ResourceRecord, key?: string): void {
    if (key !== undefined) {
      if (this.added.has(key)) return;
      this.added.add(key);
    }
    this.records.push(record);
  }

  /** The SRV record from `owner` to `target`:`port`, once per target and port. */
  srv(owner: string, ttl: number, priority: number, weight: number, port: number, target: string): void {
    this.add(rr.srv(owner, ttl, priority, weight, port, target), `${target} ${port}`);
  }

  /** True the first time `target` is glued to `host`: the caller then adds its addresses. */
  firstGlue(target: string, host: string): boolean {
    const key = `${target} ${host}`;
    if (this.glued.has(key)) return false;
    this.glued.add(key);
    return true;
  }

  /** The A/AAAA glue of `target` at `ip`, once per target and address. */
  glueAddress(target: string, ttl: number, ip: string): void {
    if (this.firstGlue(target, ip)) this.extra.push(addressRecord(target, ttl, ip));
  }
}
