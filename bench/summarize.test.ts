import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunContext, RunResult } from './results.js';
import { groupRuns, limit, median, processSharesNote, ratioTable, summarize } from './summarize.js';

const CONTEXT: RunContext = {
  session: '2026-11-27T12:00:00Z',
  kdns: 'abc123 (working tree)',
  nodes: ['v20.20.2'],
  dnsperf: 'dnsperf 2.10.0',
  durationS: 15,
  clients: 4,
  outstanding: 100,
  rate: null,
  serverCpus: '0',
  loadCpus: '1',
  netns: true,
  services: 10000,
  host: '2 × test CPU',
};

function run(server: string, kind: 'kdns' | 'peer', workload: string, qps: number, cpuUs: number, rep = 1): RunResult {
  const completed = qps * 15;
  return {
    context: CONTEXT,
    rep,
    workload,
    server,
    label: server,
    kind,
    threads: 1,
    qps,
    sent: completed,
    completed,
    lost: 0,
    rcodes: { NOERROR: completed * 0.9, NXDOMAIN: completed * 0.1 },
    avgLatencyMs: 0.8,
    maxLatencyMs: 9,
    cpuSeconds: (cpuUs * completed) / 1e6,
    cpuUsPerQuery: cpuUs,
    rssKiB: 65 * 1024,
    hwmKiB: 70 * 1024,
    serverShare: 99,
    serverBusy: 100,
    loadBusy: 80,
    checks: 'ok',
  };
}

describe('bench summary', () => {
  it('takes the median of an odd and of an even count', () => {
    assert.deepEqual([median([3, 1, 2]), median([4, 1, 3, 2])], [2, 2.5]);
  });

  it('divides kdns by each peer of the same workload', () => {
    const rows = groupRuns([run('kdns', 'kdns', 'auth', 120000, 8), run('unbound', 'peer', 'auth', 100000, 10), run('named', 'peer', 'auth', 80000, 12.5)]);
    assert.deepEqual(ratioTable(rows, 'cpuUs'), ['| workload | kdns | ÷ unbound | ÷ named |', '|---|---|---:|---:|', '| auth | kdns | 0.80 | 0.64 |']);
    assert.deepEqual(ratioTable(rows, 'qps'), ['| workload | kdns | ÷ unbound | ÷ named |', '|---|---|---:|---:|', '| auth | kdns | 1.20 | 1.50 |']);
  });

  it('uses the median of the repetitions', () => {
    const rows = groupRuns([run('kdns', 'kdns', 'fwd', 100, 7, 1), run('kdns', 'kdns', 'fwd', 100, 9, 2), run('kdns', 'kdns', 'fwd', 100, 8, 3), run('unbound', 'peer', 'fwd', 100, 4)]);
    assert.deepEqual(ratioTable(rows, 'cpuUs')[2], '| fwd | kdns | 2.00 |');
  });

  it('writes one table row per server with its answers by RCODE and its losses', () => {
    const text = summarize([run('kdns', 'kdns', 'auth', 120000, 8)]);
    assert.ok(
      text.includes('| kdns | 120,000 | 8.0 | 65.0 | 1,800,000 | 1,620,000 (90.0%) | 180,000 (10.0%) | 0 | 0 (0.0%) | 99 | 80 | server | ok |'),
      text,
    );
  });

  it('names a peer\'s threads in its row, and not kdns\'s workers, which its label says', () => {
    const text = summarize([{ ...run('kdns-plain-x2', 'kdns', 'auth', 120000, 8), label: 'kdns ×2', threads: 2 }, { ...run('unbound', 'peer', 'auth', 100000, 10), threads: 2 }, { ...run('kresd', 'peer', 'auth', 90000, 10), threads: 2 }]);
    assert.deepEqual(
      text.split('\n').filter((l) => /^\| (kdns|unbound|kresd)/.test(l)).map((l) => l.split(' | ')[0]),
      ['| kdns ×2', '| unbound (2 threads)', '| kresd (2 processes)'],
    );
  });

  it('notes how a server of several processes spread its CPU time over them, medians of the runs', () => {
    const runs = [[50, 49, 1], [60, 39, 1], [55, 44, 1]].map((shares, i) => ({ ...run('kdns-plain-x2', 'kdns' as const, 'auth', 100000, 10, i + 1), label: 'kdns ×2', threads: 2, processCpuShares: shares }));
    const text = summarize(runs);
    assert.ok(text.includes('| kdns ×2 (CPU by process 55/44/1%) |'), text);
  });

  it('notes nothing for a server of one process', () => {
    const [row] = groupRuns([{ ...run('kdns', 'kdns', 'auth', 100000, 10), processCpuShares: [100] }]);
    assert.equal(processSharesNote(row as NonNullable<typeof row>), undefined);
  });

  it('keeps a peer with 1 and with 2 threads apart when sessions are summarized together', () => {
    const second = { ...CONTEXT, session: '2026-11-27T13:00:00Z' };
    const text = summarize([
      run('kdns', 'kdns', 'auth', 100000, 8),
      run('unbound', 'peer', 'auth', 50000, 10),
      { ...run('kdns-plain-x2', 'kdns', 'auth', 150000, 8.8), label: 'kdns ×2', threads: 2, context: second },
      { ...run('unbound', 'peer', 'auth', 75000, 11), threads: 2, context: second },
    ]);
    assert.ok(text.startsWith('## kdns bench, 2026-11-27T12:00:00Z and 2026-11-27T13:00:00Z\n\nResults of 2 sessions,'), text);
    assert.ok(text.includes('| workload | kdns | ÷ unbound | ÷ unbound (2 threads) |\n|---|---|---:|---:|\n| auth | kdns | 2.00 | 1.33 |\n| auth | kdns ×2 | 3.00 | 2.00 |'), text);
  });

  const limits: Array<{ name: string; serverCpus: string; loadCpus: string; threads: number; serverShare: number; serverBusy: number; loadBusy: number; want: string }> = [
    { name: 'one thread that used its CPU', serverCpus: '0', loadCpus: '1', threads: 1, serverShare: 99, serverBusy: 100, loadBusy: 80, want: 'server' },
    { name: 'dnsperf at its limit, others on the server\'s CPU', serverCpus: '0', loadCpus: '1', threads: 1, serverShare: 60, serverBusy: 100, loadBusy: 98, want: 'dnsperf, others took 40% of its CPU' },
    { name: 'two threads on two CPUs that used one', serverCpus: '0-1', loadCpus: '2', threads: 2, serverShare: 99, serverBusy: 50, loadBusy: 50, want: '–' },
    { name: 'two threads on two CPUs that used both', serverCpus: '0-1', loadCpus: '2', threads: 2, serverShare: 195, serverBusy: 98, loadBusy: 50, want: 'server' },
    { name: 'CPUs shared with dnsperf', serverCpus: '0-1', loadCpus: '0-1', threads: 2, serverShare: 120, serverBusy: 100, loadBusy: 100, want: 'CPUs shared with dnsperf, 100% busy' },
  ];
  for (const c of limits) {
    it(`says what limited a run: ${c.name}`, () => {
      const r = { ...run('unbound', 'peer', 'auth', 100000, 10), threads: c.threads, serverShare: c.serverShare, serverBusy: c.serverBusy, loadBusy: c.loadBusy };
      const [row] = groupRuns([{ ...r, context: { ...CONTEXT, serverCpus: c.serverCpus, loadCpus: c.loadCpus } }]);
      assert.equal(limit(row as NonNullable<typeof row>), c.want);
    });
  }

  it('shows a failed run with its reason, and leaves it out of the ratios', () => {
    const failed: RunResult = { ...run('kresd', 'peer', 'auth', 0, 0), error: 'kresd exited (1) before answering' };
    const text = summarize([run('kdns', 'kdns', 'auth', 120000, 8), failed]);
    assert.ok(text.includes('| kresd | failed: kresd exited (1) before answering |'), text);
    assert.ok(text.includes('| auth | kdns | – |'), text);
  });
});
