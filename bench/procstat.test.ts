import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { busyPercent, cpuListMembers, cpuShares, parseIdleTicks, parseStat, parseStatusKiB, treeCpuTicks, treeMemoryKiB } from './procstat.js';

describe('procstat', () => {
  it('reads pid, parent and utime+stime from a stat line', () => {
    const line = '4321 (named) S 1 4321 4321 0 -1 4194560 3042 0 0 0 1234 567 0 0 20 0 3 0 9876 1000000 2000 18446744073709551615';
    assert.deepEqual(parseStat(line), { pid: 4321, ppid: 1, cpuTicks: 1801 });
  });

  it('counts fields from the last parenthesis: a command name may hold spaces and parentheses', () => {
    const line = '77 (odd) name (x)) R 12 77 77 0 -1 0 0 0 0 0 300 45 0 0 20 0 1 0 1 1 1';
    assert.deepEqual(parseStat(line), { pid: 77, ppid: 12, cpuTicks: 345 });
  });

  it('refuses a line that is not a stat line', () => {
    assert.throws(() => parseStat('hello'), { message: 'not a /proc/PID/stat line: hello' });
  });

  it('reads VmRSS and VmHWM in KiB, 0 when absent', () => {
    const status = 'Name:\tkdns\nVmHWM:\t  123456 kB\nVmRSS:\t   98765 kB\nThreads:\t7\n';
    assert.deepEqual([parseStatusKiB(status, 'VmRSS'), parseStatusKiB(status, 'VmHWM'), parseStatusKiB('Name:\tx\n', 'VmRSS')], [98765, 123456, 0]);
  });

  it('reads idle + iowait per CPU, not the total line', () => {
    const stat = 'cpu  10 0 10 500 7 0 0 0 0 0\ncpu0 5 0 5 200 3 0 0 0 0 0\ncpu1 5 0 5 300 4 0 0 0 0 0\nintr 1\n';
    assert.deepEqual([...parseIdleTicks(stat)], [[0, 203], [1, 304]]);
  });

  it('expands a taskset CPU list', () => {
    assert.deepEqual(cpuListMembers('0,2-4'), [0, 2, 3, 4]);
  });

  it('computes how busy CPUs were from their idle time', () => {
    const before = { idle: new Map([[0, 1000], [1, 1000]]), atMs: 0 };
    const after = { idle: new Map([[0, 1050], [1, 1200]]), atMs: 2000 }; // CPU 0 idle 0.5 s of 2, CPU 1 idle 2 s of 2
    assert.deepEqual([busyPercent(before, after, [0]), busyPercent(before, after, [1]), busyPercent(before, after, [0, 1])], [75, 0, 37.5]);
  });

  const shares: Array<{ name: string; before: Array<[number, number]>; after: Array<[number, number]>; want: number[] }> = [
    { name: 'two workers and an idle parent, largest first', before: [[10, 100], [11, 50], [12, 60]], after: [[10, 102], [11, 150], [12, 358]], want: [74.5, 25, 0.5] },
    { name: 'a process started between the readings counts from 0', before: [[10, 100]], after: [[10, 150], [13, 50]], want: [50, 50] },
    { name: 'a process that ended is left out', before: [[10, 100], [11, 500]], after: [[10, 200]], want: [100] },
    { name: 'no CPU used: no shares', before: [[10, 100]], after: [[10, 100]], want: [] },
  ];
  for (const c of shares) {
    it(`splits CPU time by process: ${c.name}`, () => {
      assert.deepEqual(cpuShares(new Map(c.before), new Map(c.after)), c.want);
    });
  }

  it('reads this process\'s own CPU time and memory', () => {
    let x = 0;
    for (let i = 0; i < 3e7; i++) x += i; // some CPU time to count
    assert.ok(x > 0);
    assert.ok(treeCpuTicks([process.pid]) > 0);
    const rss = treeMemoryKiB([process.pid], 'VmRSS');
    assert.ok(rss > 10 * 1024 && rss <= treeMemoryKiB([process.pid], 'VmHWM'), `RSS ${rss} KiB`);
  });
});
