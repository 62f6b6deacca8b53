// The parent's pure parts: which addresses it holds, which node options a worker gets, how long
// it waits before the next worker, its exit code, and the worker's reading of what it was handed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { corefileListenSlots, corefileWorkers, localIPSlots, workersFor, type ListenSlot } from './plan.js';
import { cgroupQuota, usableCpus } from '../plugins/pkg/multisocket.js';
import { exitCodeOf, restartDelayMs, workerExecArgv } from './parent.js';
import { parseInherited } from '../server/inherited.js';
import { supervisionWanted } from '../cli/supervise.js';

const interfaces = { eth0: [{ address: '10.0.0.5', netmask: '255.255.255.0', family: 'IPv4' as const, mac: '00:00:00:00:00:00', internal: false, cidr: '10.0.0.5/24' }] };

describe('corefileListenSlots', () => {
  const cases: Array<{ name: string; corefile: string; slots: ListenSlot[] }> = [
    { name: 'a block without bind: every address on its port', corefile: '.:1053 {\n  whoami\n}\n', slots: [{ address: '', port: 1053, workers: 1 }] },
    { name: 'no port in the key: the default port', corefile: '. {\n  whoami\n}\n', slots: [{ address: '', port: 53, workers: 1 }] },
    { name: 'bind addresses', corefile: '.:53 {\n  bind 127.0.0.1 ::1\n  whoami\n}\n', slots: [{ address: '127.0.0.1', port: 53, workers: 1 }, { address: '::1', port: 53, workers: 1 }] },
    { name: 'bind an interface: its addresses', corefile: '.:53 {\n  bind eth0\n}\n', slots: [{ address: '10.0.0.5', port: 53, workers: 1 }] },
    { name: 'bind with except', corefile: '.:53 {\n  bind 127.0.0.1 127.0.0.2 {\n    except 127.0.0.2\n  }\n}\n', slots: [{ address: '127.0.0.1', port: 53, workers: 1 }] },
    { name: 'two blocks on one address and port: one slot', corefile: 'a.example:53 {\n  whoami\n}\nb.example:53 {\n  whoami\n}\n', slots: [{ address: '', port: 53, workers: 1 }] },
    { name: 'tls:// and https:// blocks are left to the worker', corefile: 'tls://.:853 {\n  whoami\n}\nhttps://.:443 {\n  whoami\n}\n.:53 {\n  whoami\n}\n', slots: [{ address: '', port: 53, workers: 1 }] },
    { name: 'dns:// spelled out', corefile: 'dns://.:5300 {\n  whoami\n}\n', slots: [{ address: '', port: 5300, workers: 1 }] },
    { name: 'port 0 is left to the worker', corefile: '.:0 {\n  whoami\n}\n', slots: [] },
    { name: 'multisocket 3: three workers', corefile: '.:53 {\n  multisocket 3\n  whoami\n}\n', slots: [{ address: '', port: 53, workers: 3 }] },
    { name: 'multisocket without a number: the usable CPUs', corefile: '.:53 {\n  multisocket\n}\n', slots: [{ address: '', port: 53, workers: 4 }] },
    {
      name: 'blocks sharing a slot: the larger count',
      corefile: 'a.example:53 {\n  whoami\n}\nb.example:53 {\n  multisocket 2\n}\n.:54 {\n  whoami\n}\n',
      slots: [
        { address: '', port: 53, workers: 2 },
        { address: '', port: 54, workers: 1 },
      ],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(corefileListenSlots(c.corefile, { file: 'Corefile', baseDir: '/', defaultPort: 53, interfaces, cpus: 4 }), c.slots);
    });
  }
  test('multisocket 0 throws its line', () => {
    assert.throws(() => corefileListenSlots('.:53 {\n  multisocket 0\n}\n', { file: 'Corefile', baseDir: '/', defaultPort: 53, interfaces, cpus: 4 }), /Corefile:2/);
  });
  test('a bad Corefile throws its line', () => {
    assert.throws(() => corefileListenSlots('.:53 {\n  bind\n}\n', { file: 'Corefile', baseDir: '/', defaultPort: 53, interfaces, cpus: 4 }), /Corefile:2/);
  });
});

describe('localIPSlots', () => {
  const cases: Array<{ ips: string[]; slots: ListenSlot[] }> = [
    { ips: ['169.254.20.10'], slots: [{ address: '169.254.20.10', port: 53, workers: 1 }] },
    { ips: ['169.254.20.10', 'fd00::10', '169.254.20.10'], slots: [{ address: '169.254.20.10', port: 53, workers: 1 }, { address: 'fd00::10', port: 53, workers: 1 }] },
    { ips: ['not-an-ip'], slots: [] },
  ];
  for (const c of cases) test(c.ips.join(','), () => assert.deepEqual(localIPSlots(c.ips, 53), c.slots));
});

describe('workerExecArgv: the node options a worker gets', () => {
  const cases: Array<{ execArgv: string[]; worker: string[] }> = [
    { execArgv: ['--max-semi-space-size=1', '--v8-pool-size=1'], worker: ['--max-semi-space-size=1', '--v8-pool-size=1'] },
    { execArgv: ['--import', 'tsx', '-e', 'import("x")'], worker: ['--import', 'tsx'] },
    { execArgv: ['--eval', 'code', '--input-type=module'], worker: [] },
    { execArgv: ['--eval=code', '-p', 'x', '--expose-gc'], worker: ['--expose-gc'] },
  ];
  for (const c of cases) test(c.execArgv.join(' '), () => assert.deepEqual(workerExecArgv(c.execArgv), c.worker));
});

describe('restartDelayMs: quick ends in a row → wait', () => {
  const cases: Array<[number, number]> = [
    [0, 0],
    [1, 0],
    [2, 100],
    [3, 200],
    [6, 1600],
    [8, 5000],
    [30, 5000],
  ];
  for (const [ends, ms] of cases) test(`${ends} → ${ms} ms`, () => assert.equal(restartDelayMs(ends), ms));
});

describe('exitCodeOf: the worker end as the parent exit code', () => {
  const cases: Array<{ code: number | null; signal: NodeJS.Signals | null; exit: number }> = [
    { code: 0, signal: null, exit: 0 },
    { code: 1, signal: null, exit: 1 },
    { code: null, signal: 'SIGTERM', exit: 143 },
    { code: null, signal: 'SIGKILL', exit: 137 },
    { code: null, signal: null, exit: 1 },
  ];
  for (const c of cases) test(`${String(c.code)} ${String(c.signal)} → ${c.exit}`, () => assert.equal(exitCodeOf(c.code, c.signal), c.exit));
});

describe('parseInherited: KDNS_LISTEN_FDS as the worker reads it', () => {
  const cases: Array<{ name: string; text: string | undefined; count: number }> = [
    { name: 'unset', text: undefined, count: 0 },
    { name: 'not JSON', text: 'udp:3', count: 0 },
    { name: 'not a list', text: '{"kind":"udp"}', count: 0 },
    { name: 'two good entries', text: '[{"kind":"udp","address":"","port":53,"fd":4},{"kind":"tcp","address":"","port":53,"fd":5}]', count: 2 },
    { name: 'stdio descriptors and unknown kinds dropped', text: '[{"kind":"udp","address":"","port":53,"fd":1},{"kind":"sctp","address":"","port":53,"fd":6}]', count: 0 },
  ];
  for (const c of cases) test(c.name, () => assert.equal(parseInherited(c.text).length, c.count));
});

describe('supervisionWanted: KDNS_SUPERVISE', () => {
  const cases: Array<{ value: string | undefined; byDefault: boolean; wanted: boolean }> = [
    { value: undefined, byDefault: true, wanted: true },
    { value: undefined, byDefault: false, wanted: false },
    { value: '1', byDefault: false, wanted: true },
    { value: 'true', byDefault: false, wanted: true },
    { value: '0', byDefault: true, wanted: false },
    { value: 'false', byDefault: true, wanted: false },
    { value: 'maybe', byDefault: true, wanted: true },
  ];
  for (const c of cases) test(`${String(c.value)} (default ${c.byDefault})`, () => assert.equal(supervisionWanted(c.value, c.byDefault), c.wanted));
});

describe('workersFor and corefileWorkers: the most workers any slot or block asks for', () => {
  test('no slots: one worker', () => assert.equal(workersFor([]), 1));
  test('slots of 1, 3 and none given: 3', () => assert.equal(workersFor([{ address: '', port: 53, workers: 1 }, { address: '', port: 54, workers: 3 }, { address: 'x', port: 55 }]), 3));
  test('a node-cache Corefile with multisocket 2 in one block: 2', () => {
    assert.equal(corefileWorkers('cluster.local:53 {\n  bind 169.254.20.10\n  multisocket 2\n}\n.:53 {\n  bind 169.254.20.10\n}\n', { file: 'Corefile', baseDir: '/', cpus: 8 }), 2);
  });
  test('a Corefile without multisocket: 1', () => assert.equal(corefileWorkers('.:53 {\n  whoami\n}\n', { file: 'Corefile', baseDir: '/', cpus: 8 }), 1));
});

describe('usableCpus: the CPUs, lowered to the cgroup quota rounded up', () => {
  const files = (entries: Record<string, string>) => (path: string) => entries[path];
  const cases: Array<{ name: string; files: Record<string, string>; cpus: number; usable: number }> = [
    { name: 'cgroup v2 without a quota', files: { '/sys/fs/cgroup/cpu.max': 'max 100000\n' }, cpus: 8, usable: 8 },
    { name: 'cgroup v2, limits.cpu 2', files: { '/sys/fs/cgroup/cpu.max': '200000 100000\n' }, cpus: 8, usable: 2 },
    { name: 'cgroup v2, limits.cpu 1500m: rounded up', files: { '/sys/fs/cgroup/cpu.max': '150000 100000\n' }, cpus: 8, usable: 2 },
    { name: 'cgroup v2, limits.cpu 100m: at least one', files: { '/sys/fs/cgroup/cpu.max': '10000 100000\n' }, cpus: 8, usable: 1 },
    { name: 'a quota above the CPUs: the CPUs', files: { '/sys/fs/cgroup/cpu.max': '1600000 100000\n' }, cpus: 4, usable: 4 },
    { name: 'cgroup v1, quota 300000 per 100000', files: { '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '300000\n', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' }, cpus: 8, usable: 3 },
    { name: 'cgroup v1 without a quota (-1)', files: { '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' }, cpus: 8, usable: 8 },
    { name: 'no cgroup files', files: {}, cpus: 6, usable: 6 },
  ];
  for (const c of cases) test(c.name, () => assert.equal(usableCpus(files(c.files), c.cpus), c.usable));
  test('cgroupQuota reads a fraction', () => assert.equal(cgroupQuota(files({ '/sys/fs/cgroup/cpu.max': '50000 100000' })), 0.5));
});
