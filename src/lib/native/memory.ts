// The loader of memory.c (built into build/kdns_memory.node beside the UDP socket), and the
// schedule a long-running kdns gives memory back on: the node binary's pages it mapped at start
// and no longer runs, and the free memory in malloc's arenas. Both are plain system calls off
// the query path; without the addon (another OS, no compiler) kdns simply holds more.

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
  /** When the binary's pages are dropped, in ms after the start: start-up is over by then. */
  dropAtMs: readonly number[];
  /** And from the last of those on, this often (pages of code run once since then). */
  dropEveryMs: number;
  /** How often malloc's arenas are trimmed. */
  trimEveryMs: number;
}

/**
 * After start-up (loading a large cluster takes tens of seconds), then every ten minutes: a
 * drop costs the pages still in use a minor fault each to come back (tens of milliseconds of
 * CPU in all). A trim every 10 s keeps what a burst of compiling left in the arenas from
 * lingering; it costs well under a millisecond.
 */
export const DEFAULT_SCHEDULE: ReleaseSchedule = { dropAtMs: [15_000, 60_000], dropEveryMs: 600_000, trimEveryMs: 10_000 };

/**
 * Gives memory back on `schedule` for as long as the process runs (the timers never keep it
 * alive). Returns a function that stops it; a no-op without the addon.
 */
export function releaseMemoryPeriodically(schedule: ReleaseSchedule = DEFAULT_SCHEDULE, addon: NativeMemory | null = nativeMemory()): () => void {
  if (!addon) return () => {};
  const timers: NodeJS.Timeout[] = [];
  const unref = (t: NodeJS.Timeout): void => {
    t.unref();
    timers.push(t);
  };
  for (const at of schedule.dropAtMs) unref(setTimeout(() => addon.dropBinaryPages(), at));
  const last = Math.max(0, ...schedule.dropAtMs);
  unref(setTimeout(() => unref(setInterval(() => addon.dropBinaryPages(), schedule.dropEveryMs)), last));
  unref(setInterval(() => addon.trimMalloc(), schedule.trimEveryMs));
  return () => {
    for (const t of timers) clearTimeout(t);
  };
}
