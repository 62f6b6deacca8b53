// The loader of memory.c (built into build/kdns_memory.node beside the UDP socket), and the
// schedule a long-running kdns gives memory back on: the node binary's pages it mapped at start
// (or for a burst of compiling) and no longer runs, and the free memory in malloc's arenas.
// Both are plain system calls off the query path; without the addon (another OS, no compiler)
// kdns simply holds more.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export interface NativeMemory {
  /** Unmaps the node binary's read-only, unmodified pages; the resident bytes they had. */
  dropBinaryPages(): number;
  /** malloc_trim(0): true when glibc gave memory back. */
  trimMalloc(): boolean;
}

let loaded: NativeMemory | null | undefined;

/** The addon, or null when it is not built (or not Linux). */
export function nativeMemory(): NativeMemory | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (process.platform !== 'linux') return loaded;
  try {
    const addon = createRequire(import.meta.url)('../../../build/kdns_memory.node') as Partial<NativeMemory>;
    loaded = typeof addon.dropBinaryPages === 'function' && typeof addon.trimMalloc === 'function' ? (addon as NativeMemory) : null;
  } catch {
    loaded = null;
  }
  return loaded;
}

export interface ReleaseSchedule {
  /** When the binary's pages are dropped whatever happened, in ms after the start: start-up and loading the cluster are over by then. */
  dropAtMs: readonly number[];
  /** How often malloc's arenas are trimmed and the binary's resident pages looked at. */
  checkEveryMs: number;
  /**
   * Drop the binary's pages again when they have grown this much since the check after the
   * last drop (the compilers' code a burst of optimising ran, a reload's): measured one check
   * after a drop, so the pages a steady load keeps using are the baseline, not a reason to drop
   * again and again.
   */
  regrowthBytes: number;
  /**
   * A check that finds the process quiet (below `quiet` of a core since the last check) right
   * after a busy one (at least `busy`) drops the binary's pages and trims: what a burst of
   * queries brought in (the compilers' code, the garbage collector's) leaves once the burst is
   * over, whatever the regrowth count says.
   */
  cpuShare: { busy: number; quiet: number };
}

/**
 * Drops once the modules are loaded (3 s: the pages of start-up then leave before a large
 * cluster's loading peak), after start-up and after loading a large cluster (tens of seconds);
 * then when 4 MiB of the binary came back, and when a busy spell (a tenth of a core or more over
 * 2 s) ends (under 2 %: an idle kdns uses well under 1 %). A drop costs the pages still in use a
 * minor fault each to come back (a few milliseconds of CPU in all); a check (a read of
 * /proc/self/status and a trim), well under a millisecond every 2 s.
 */
export const DEFAULT_SCHEDULE: ReleaseSchedule = { dropAtMs: [3_000, 15_000, 60_000], checkEveryMs: 2_000, regrowthBytes: 4 * 1024 * 1024, cpuShare: { busy: 0.1, quiet: 0.02 } };

/** CPU milliseconds this process has used (user and system). */
function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Resident bytes of mapped files (the node binary's pages, mostly), from /proc/self/status. */
export function fileResidentBytes(status: string = readFileSync('/proc/self/status', 'utf8')): number {
  const m = /^RssFile:\s+(\d+) kB$/m.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Gives memory back on `schedule` for as long as the process runs (the timers never keep it
 * alive). Returns a function that stops it; a no-op without the addon.
 */
export function releaseMemoryPeriodically(
  schedule: ReleaseSchedule = DEFAULT_SCHEDULE,
  addon: NativeMemory | null = nativeMemory(),
  fileResident: () => number = fileResidentBytes,
  cpuMs: () => number = processCpuMs,
): () => void {
  if (!addon) return () => {};
  const timers: NodeJS.Timeout[] = [];
  const unref = (t: NodeJS.Timeout): void => {
    t.unref();
    timers.push(t);
  };
  /** The binary's resident bytes one check after the last drop; undefined until that check. */
  let baseline: number | undefined;
  const drop = (): void => {
    addon.dropBinaryPages();
    baseline = undefined;
  };
  let lastCpu = cpuMs();
  let busy = false;
  for (const at of schedule.dropAtMs) unref(setTimeout(drop, at));
  unref(
    setInterval(() => {
      const cpu = cpuMs();
      const share = (cpu - lastCpu) / schedule.checkEveryMs;
      lastCpu = cpu;
      const burstOver = busy && share < schedule.cpuShare.quiet;
      if (share >= schedule.cpuShare.busy) busy = true;
      else if (burstOver) busy = false;
      addon.trimMalloc();
      const now = fileResident();
      if (burstOver || (baseline !== undefined && now - baseline >= schedule.regrowthBytes)) drop();
      else if (baseline === undefined) baseline = now;
    }, schedule.checkEveryMs),
  );
  return () => {
    for (const t of timers) clearTimeout(t);
  };
}
