import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countByName, maxOpenFiles, spaceLabel, statusKilobytes } from './process.js';

describe('reading /proc/self/status', () => {
  const status = 'Name:\tnode\nVmPeak:\t 1200 kB\nVmSize:\t 1100 kB\nVmRSS:\t   64 kB\nVmData:\t  512 kB\nThreads:\t7\n';
  const cases: Array<[string, string[], Array<[string, number]>]> = [
    ['the three memory figures, in kB', ['VmRSS', 'VmSize', 'VmData'], [['VmSize', 1100], ['VmRSS', 64], ['VmData', 512]]],
    ['a field that is a prefix of another is matched whole', ['Vm'], []],
    ['a field the file lacks is left out', ['VmSwap'], []],
  ];
  for (const [what, fields, want] of cases) test(what, () => assert.deepEqual([...statusKilobytes(status, fields)], want));
});

describe('the soft limit on open files from /proc/self/limits', () => {
  const header = 'Limit                     Soft Limit           Hard Limit           Units     \n';
  const cases: Array<[string, string, number | undefined]> = [
    ['a number', `${header}Max open files            1048576              1048576              files     \n`, 1048576],
    ['soft below hard', `${header}Max open files            1024                 524288               files     \n`, 1024],
    ['no such line', `${header}Max processes             63704                63704                processes \n`, undefined],
  ];
  for (const [what, text, want] of cases) test(what, () => assert.equal(maxOpenFiles(text), want));
});

describe('heap space labels', () => {
  const cases: Array<[string, string]> = [
    ['old_space', 'old'],
    ['new_large_object_space', 'new_large_object'],
    ['read_only_space', 'read_only'],
    ['no_suffix', 'no_suffix'],
  ];
  for (const [name, want] of cases) test(`${name} → ${want}`, () => assert.equal(spaceLabel(name), want));
});

test('counts by name keep the order names first appear in', () => {
  assert.deepEqual([...countByName(['TCPWRAP', 'Timeout', 'TCPWRAP', 'FSReqCallback'])], [
    ['TCPWRAP', 2],
    ['Timeout', 1],
    ['FSReqCallback', 1],
  ]);
});
