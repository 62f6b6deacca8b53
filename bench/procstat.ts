// What /proc says about the servers under test: CPU time, memory, and how busy each core was.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, in clock ticks (USER_HZ, 100 per second on Linux). */
  cpuTicks: number;
}

/** Linux's USER_HZ: the unit of /proc's CPU times, 100 on every architecture Node runs on. */
export const TICKS_PER_SECOND = 100;

/**
 * One line of /proc/PID/stat. The command name (field 2) is in parentheses and may itself hold
 * spaces and parentheses, so the fields are counted from the last ')'.
 */
export function parseStat(line: string): ProcStat {
  const close = line.lastIndexOf(')');
  if (close < 0) throw new Error(`not a /proc/PID/stat line: ${line.slice(0, 80)}`);
  const pid = Number(line.slice(0, line.indexOf(' ')));
  // After ')': state(3) ppid(4) … utime(14) stime(15): index 0 here is field 3.
  const f = line.slice(close + 2).split(' ');
  const ppid = Number(f[1]);
  const utime = Number(f[11]);
  const stime = Number(f[12]);
  if (![pid, ppid, utime, stime].every(Number.isFinite)) throw new Error(`unreadable /proc/PID/stat line: ${line.slice(0, 80)}`);
  return { pid, ppid, cpuTicks: utime + stime };
}

/** A kB field of /proc/PID/status (VmRSS, VmHWM), in KiB; 0 when absent. */
export function parseStatusKiB(status: string, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return m ? Number(m[1]) : 0;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The processes started as `roots` and every live descendant (a server that forks is one server). */
export function processTree(roots: readonly number[]): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = readStat(Number(entry));
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s.pid]);
  }
  const out: number[] = [];
  const visit = (pid: number): void => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) visit(c);
  };
  for (const r of roots) visit(r);
  return out;
}

/** CPU ticks used so far by each of the processes and their descendants, by PID. */
export function treeCpuTicksByPid(roots: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of processTree(roots)) {
    const s = readStat(pid);
    if (s) out.set(pid, s.cpuTicks);
  }
  return out;
}

/** CPU ticks used so far by the processes and their descendants. */
export function treeCpuTicks(roots: readonly number[]): number {
  return [...treeCpuTicksByPid(roots).values()].reduce((sum, t) => sum + t, 0);
}

/**
 * Each process's share of the CPU time the tree used between two readings, in %, largest
 * first: whether a server of several processes spread its work over them (a process that
 * started meanwhile counts from 0, one that ended is left out).
 */
export function cpuShares(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number[] {
  const used = [...after].map(([pid, ticks]) => Math.max(0, ticks - (before.get(pid) ?? 0)));
  const total = used.reduce((sum, t) => sum + t, 0);
  return total > 0 ? used.map((t) => (100 * t) / total).sort((a, b) => b - a) : [];
}

/** VmRSS (or VmHWM, the peak) summed over the processes and their descendants, KiB. */
export function treeMemoryKiB(roots: readonly number[], field: 'VmRSS' | 'VmHWM'): number {
  let sum = 0;
  for (const pid of processTree(roots)) {
    try {
      sum += parseStatusKiB(readFileSync(`/proc/${pid}/status`, 'utf8'), field);
    } catch {
      // gone since the tree was read
    }
  }
  return sum;
}

/** Idle ticks (idle + iowait) of each CPU, from /proc/stat's cpuN lines. */
export function parseIdleTicks(procStat: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of procStat.split('\n')) {
    const m = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const f = (m[2] as string).split(/\s+/).map(Number);
    out.set(Number(m[1]), (f[3] ?? 0) + (f[4] ?? 0));
  }
  return out;
}

/** The CPU numbers of a taskset list ("0", "0,2", "1-3"). */
export function cpuListMembers(list: string): number[] {
  const out: number[] = [];
  for (const part of list.split(',')) {
    const [from, to] = part.split('-').map(Number) as [number, number | undefined];
    for (let c = from; c <= (to ?? from); c++) out.push(c);
  }
  return out;
}

export interface CoreSample {
  idle: Map<number, number>;
  atMs: number;
}

export function sampleCores(): CoreSample {
  return { idle: parseIdleTicks(readFileSync('/proc/stat', 'utf8')), atMs: performance.now() };
}

/**
 * How busy the listed CPUs were between two samples, in percent of their time (averaged over
 * them). Only idle time is read: the kernel measures it exactly, while its user/system split
 * is sampled at ticks.
 */
export function busyPercent(before: CoreSample, after: CoreSample, cpus: readonly number[]): number {
  const seconds = (after.atMs - before.atMs) / 1000;
  if (seconds <= 0 || cpus.length === 0) return 0;
  let idle = 0;
  for (const c of cpus) idle += ((after.idle.get(c) ?? 0) - (before.idle.get(c) ?? 0)) / TICKS_PER_SECOND;
  return Math.max(0, Math.min(100, 100 * (1 - idle / (seconds * cpus.length))));
}
