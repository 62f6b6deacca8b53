import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { directiveIn } from '../../../test/util/corefile.js';
import { COMBINED_FORMAT, COMMON_FORMAT } from './format.js';
import { parseLog } from './setup.js';

/** The first directive of `. { <text> }`; the directive sits on line 2 of "Corefile". */
/** Rules without the compiled parts, easy to compare. */
function shown(text: string) {
  return parseLog(directiveIn(text)).map((r) => ({ scope: r.scope, format: r.format, classes: [...r.classes].sort(), minDurationMs: r.minDurationMs }));
}

describe('log setup: valid lines give these rules', () => {
  const cases: Array<{ name: string; corefile: string; want: ReturnType<typeof shown> }> = [
    { name: 'bare log: everything, common format', corefile: 'log', want: [{ scope: '.', format: COMMON_FORMAT, classes: ['all'], minDurationMs: 0 }] },
    { name: 'one name', corefile: 'log Example.ORG', want: [{ scope: 'example.org.', format: COMMON_FORMAT, classes: ['all'], minDurationMs: 0 }] },
    {
      name: 'several names without a format',
      corefile: 'log a.org b.org',
      want: [
        { scope: 'a.org.', format: COMMON_FORMAT, classes: ['all'], minDurationMs: 0 },
        { scope: 'b.org.', format: COMMON_FORMAT, classes: ['all'], minDurationMs: 0 },
      ],
    },
    { name: '{combined} shortcut', corefile: 'log . {combined}', want: [{ scope: '.', format: COMBINED_FORMAT, classes: ['all'], minDurationMs: 0 }] },
    { name: '{common} shortcut', corefile: 'log . {common}', want: [{ scope: '.', format: COMMON_FORMAT, classes: ['all'], minDurationMs: 0 }] },
    { name: 'custom format', corefile: 'log . "{proto} Request: {name} {type} {>id}"', want: [{ scope: '.', format: '{proto} Request: {name} {type} {>id}', classes: ['all'], minDurationMs: 0 }] },
    {
      name: 'classes on two lines add up',
      corefile: 'log example.org {\n class denial\n class success\n}',
      want: [{ scope: 'example.org.', format: COMMON_FORMAT, classes: ['denial', 'success'], minDurationMs: 0 }],
    },
    { name: 'several classes on one line', corefile: 'log . {\n class denial error\n}', want: [{ scope: '.', format: COMMON_FORMAT, classes: ['denial', 'error'], minDurationMs: 0 }] },
    { name: 'minDuration with a value', corefile: 'log {\n class error\n minDuration 1s\n}', want: [{ scope: '.', format: COMMON_FORMAT, classes: ['error'], minDurationMs: 1000 }] },
    { name: 'minDuration alone means 100ms', corefile: 'log {\n class error\n minDuration\n}', want: [{ scope: '.', format: COMMON_FORMAT, classes: ['error'], minDurationMs: 100 }] },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(shown(c.corefile), c.want));
});

describe('log setup: invalid lines give errors naming the line', () => {
  const cases: Array<{ name: string; corefile: string; error: string }> = [
    { name: 'unknown class', corefile: 'log {\n class denials\n}', error: 'Corefile:3: unknown response class "denials" in log block (expected all, success, denial, error)' },
    { name: 'class without values', corefile: 'log {\n class\n}', error: 'Corefile:3: wrong argument count for "class": expected at least 1, got 0' },
    { name: 'unknown property', corefile: 'log {\n clas denial\n}', error: 'Corefile:3: unknown property "clas" in log block' },
    { name: 'bad minDuration', corefile: 'log {\n minDuration fast\n}', error: 'Corefile:3: invalid duration for minDuration: "fast" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { name: 'two minDuration values', corefile: 'log {\n minDuration 1s 2s\n}', error: 'Corefile:3: wrong argument count for "minDuration": expected at most 1, got 2' },
  ];
  for (const c of cases) test(c.name, () => assert.throws(() => parseLog(directiveIn(c.corefile)), { message: c.error }));
});
