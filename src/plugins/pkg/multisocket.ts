// `multisocket [NUM_SOCKETS]`: how many workers serve a server block, each with its own
// SO_REUSEPORT UDP and TCP sockets on the block's addresses. CoreDNS opens that many servers in
// one Go process; a Node process answers on one thread, so kdns starts that many worker
// processes under one parent (src/supervisor/). Read both by the plugin and by the parent, which
// works out its workers before loading any plugin.

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { argPosition, expectArgs, noBlockAllowed, parseIntArg } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';

/** CoreDNS's limit. */
export const MAX_SOCKETS = 1024;

/** The block's NUM_SOCKETS; `cpus` when the directive gives none (CoreDNS: GOMAXPROCS). */
export function parseMultisocket(d: Directive, cpus: number): number {
  noBlockAllowed(d);
  const [arg] = expectArgs(d, 0, 1);
  if (arg === undefined) return cpus;
  return parseIntArg(arg, argPosition(d, 0), { what: 'NUM_SOCKETS', min: 1, max: MAX_SOCKETS });
}

/**
 * The CPUs a container may use, as Go 1.25's GOMAXPROCS default counts them: the CPUs this
 * process may run on, lowered to the cgroup's CPU quota rounded up (cgroup v2 `cpu.max`, or v1
 * `cpu.cfs_quota_us` / `cpu.cfs_period_us`). A pod with `limits.cpu: 2` on a 64-core node gets
 * 2, not 64 workers that the quota would throttle.
 */
export function usableCpus(read: (path: string) => string | undefined = readText, cpus: number = availableParallelism()): number {
  const quota = cgroupQuota(read);
  return quota === undefined ? cpus : Math.max(1, Math.min(cpus, Math.ceil(quota)));
}

/** The cgroup's CPU quota in CPUs, or undefined when there is none. */
export function cgroupQuota(read: (path: string) => string | undefined): number | undefined {
  const v2 = read('/sys/fs/cgroup/cpu.max')?.trim().split(/\s+/);
  if (v2 && v2.length === 2) return ratio(v2[0] as string, v2[1] as string);
  const quota = read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us') ?? read('/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us');
  const period = read('/sys/fs/cgroup/cpu/cpu.cfs_period_us') ?? read('/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us');
  return quota !== undefined && period !== undefined ? ratio(quota.trim(), period.trim()) : undefined;
}

/** "max" or -1 (v1) is no quota. */
function ratio(quota: string, period: string): number | undefined {
  if (quota === 'max' || quota === '-1') return undefined;
  const q = Number(quota);
  const p = Number(period);
  return Number.isFinite(q) && Number.isFinite(p) && q > 0 && p > 0 ? q / p : undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
