import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertCorefileError, directiveIn } from '../../testutil/corefile.js';
import { parseWorkloads } from './setup.js';

describe('workloads: Corefile', () => {
  const good: Array<{ name: string; body: string; want: { address: string; host: string | undefined; port: number; maxSeries: number; hostSearch: string[] } }> = [
    { name: 'defaults: loopback 9155, 50 series', body: 'workloads', want: { address: 'localhost:9155', host: '127.0.0.1', port: 9155, maxSeries: 50, hostSearch: [] } },
    { name: 'an address', body: 'workloads :9200', want: { address: ':9200', host: undefined, port: 9200, maxSeries: 50, hostSearch: [] } },
    {
      name: 'max_workloads and host search domains',
      body: 'workloads {\n max_workloads 5\n search Corp.Example.com lab.test.\n}',
      want: { address: 'localhost:9155', host: '127.0.0.1', port: 9155, maxSeries: 5, hostSearch: ['corp.example.com.', 'lab.test.'] },
    },
  ];
  for (const c of good) {
    test(c.name, () => {
      const cfg = parseWorkloads(directiveIn(c.body));
      assert.deepEqual({ address: cfg.address.text, host: cfg.address.host, port: cfg.address.port, maxSeries: cfg.maxSeries, hostSearch: cfg.hostSearch }, c.want);
    });
  }

  const bad: Array<{ name: string; body: string; message: string }> = [
    { name: 'two addresses', body: 'workloads :1 :2', message: 'Corefile:2: workloads takes at most one address, got 2 arguments' },
    { name: 'address without port', body: 'workloads localhost', message: 'Corefile:2: workloads: address localhost: missing port in address' },
    { name: 'max_workloads not a number', body: 'workloads {\n max_workloads lots\n}', message: 'Corefile:3: max_workloads: "lots" is not a whole number from 0 to 10000' },
    { name: 'max_workloads too large', body: 'workloads {\n max_workloads 20000\n}', message: 'Corefile:3: max_workloads: "20000" is not a whole number from 0 to 10000' },
    { name: 'unknown option', body: 'workloads {\n max_workload 5\n}', message: 'Corefile:3: unknown property "max_workload" in workloads block' },
  ];
  for (const c of bad) test(c.name, () => assertCorefileError(() => parseWorkloads(directiveIn(c.body)), c.message));
});
