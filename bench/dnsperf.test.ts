import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dnsperfArgs, parseDnsperf } from './dnsperf.js';

// dnsperf 2.10.0's report, as printed after a run.
const REPORT = `DNS Performance Testing Tool
Version 2.10.0

[Status] Command line: dnsperf -s 127.0.0.1 -p 5391 -d /tmp/q.txt -l 15 -c 4 -q 100
[Status] Sending queries (to 127.0.0.1:5391)
[Status] Testing complete (time limit)

Statistics:

  Queries sent:         1815321
  Queries completed:    1815221 (99.99%)
  Queries lost:         100 (0.01%)

  Response codes:       NOERROR 1633711 (90.00%), NXDOMAIN 181500 (10.00%), SERVFAIL 10 (0.00%)
  Average packet size:  request 59, response 112
  Run time (s):         15.000153
  Queries per second:   121013.165931

  Average Latency (s):  0.000813 (min 0.000021, max 0.011392)
  Latency StdDev (s):   0.000402
`;

describe('dnsperf', () => {
  it('reads the figures of its report', () => {
    assert.deepEqual(parseDnsperf(REPORT), {
      sent: 1815321,
      completed: 1815221,
      lost: 100,
      qps: 121013.165931,
      runTime: 15.000153,
      avgLatencyMs: 0.813,
      maxLatencyMs: 11.392,
      rcodes: { NOERROR: 1633711, NXDOMAIN: 181500, SERVFAIL: 10 },
    });
  });

  it('reads a report with no answers (no response codes line)', () => {
    const r = parseDnsperf(REPORT.replace(/^\s*Response codes:.*\n/m, '').replace('Queries completed:    1815221 (99.99%)', 'Queries completed:    0 (0.00%)'));
    assert.deepEqual([r.completed, r.rcodes], [0, {}]);
  });

  it('names the line it cannot find', () => {
    assert.throws(() => parseDnsperf('dnsperf: could not open file'), { message: 'dnsperf\'s report has no "Queries sent" line' });
  });

  it('builds a timed run with a rate', () => {
    assert.deepEqual(dnsperfArgs({ port: 5300, file: 'q.txt', seconds: 15, clients: 4, outstanding: 100, threads: 1, timeout: 2, rate: 5000 }), [
      '-s', '127.0.0.1', '-p', '5300', '-d', 'q.txt', '-c', '4', '-q', '100', '-T', '1', '-t', '2', '-l', '15', '-Q', '5000', '-O', 'suppress=timeouts,unexpected,congestion,sockready',
    ]);
  });

  it('builds one pass through a file', () => {
    assert.deepEqual(dnsperfArgs({ port: 53, file: 'w.txt', passes: 1, clients: 1, outstanding: 20, threads: 1, timeout: 2 }), [
      '-s', '127.0.0.1', '-p', '53', '-d', 'w.txt', '-c', '1', '-q', '20', '-T', '1', '-t', '2', '-n', '1', '-O', 'suppress=timeouts,unexpected,congestion,sockready',
    ]);
  });
});
