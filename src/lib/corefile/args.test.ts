import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Directive, Position } from './ast.js';
import {
  argPosition,
  blockProperties,
  duplicateProperty,
  expectArgs,
  formatDuration,
  invalidArg,
  noBlockAllowed,
  parseDuration,
  parseIntArg,
  unknownProperty,
  type DurationOptions,
} from './args.js';

const AT: Position = { file: 'Corefile', line: 4 };

function dir(name: string, args: string[], extra: Partial<Directive> = {}): Directive {
  return { file: 'Corefile', line: 4, name, args, argLines: args.map(() => 4), ...extra };
}

const durations: Array<{ text: string; opts?: DurationOptions; want: number }> = [
  { text: '0', want: 0 },
  { text: '500ms', want: 500 },
  { text: '5s', want: 5000 },
  { text: '1m30s', want: 90_000 },
  { text: '1h', want: 3_600_000 },
  { text: '1.5s', want: 1500 },
  { text: '.5s', want: 500 },
  { text: '1h2m3s4ms', want: 3_723_004 },
  { text: '250us', want: 0.25 },
  { text: '250\u00b5s', want: 0.25 },
  { text: '250\u03bcs', want: 0.25 },
  { text: '1000000ns', want: 1 },
  { text: '+2s', want: 2000 },
  { text: '30', opts: { bareSeconds: true }, want: 30_000 },
  { text: '-1s', opts: { minMs: -5000 }, want: -1000 },
];

describe('parseDuration', () => {
  for (const c of durations) {
    it(`${c.text}${c.opts?.bareSeconds ? ' (bare seconds)' : ''}`, () => {
      assert.equal(parseDuration(c.text, AT, 'lameduck', c.opts), c.want);
    });
  }

  const bad: Array<{ text: string; opts?: DurationOptions; want: string }> = [
    { text: '30', want: 'Corefile:4: invalid duration for lameduck: "30" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { text: '5x', want: 'Corefile:4: invalid duration for lameduck: "5x" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { text: '1m30', want: 'Corefile:4: invalid duration for lameduck: "1m30" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { text: '', want: 'Corefile:4: invalid duration for lameduck: "" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { text: '.s', want: 'Corefile:4: invalid duration for lameduck: ".s" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { text: 's', want: 'Corefile:4: invalid duration for lameduck: "s" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    {
      text: '1.5',
      opts: { bareSeconds: true },
      want: 'Corefile:4: invalid duration for lameduck: "1.5" (expected seconds or a Go duration such as 500ms, 5s or 1m30s)',
    },
    { text: '-1s', want: 'Corefile:4: lameduck must be at least 0s, got -1s' },
    { text: '500ms', opts: { minMs: 1000 }, want: 'Corefile:4: lameduck must be at least 1s, got 500ms' },
    { text: '2h', opts: { maxMs: 90_000 }, want: 'Corefile:4: lameduck must be at most 1m30s, got 2h' },
  ];
  for (const c of bad) {
    it(`rejects ${JSON.stringify(c.text)}${c.opts ? ` with ${JSON.stringify(c.opts)}` : ''}`, () => {
      assert.throws(() => parseDuration(c.text, AT, 'lameduck', c.opts), { name: 'CorefileError', message: c.want });
    });
  }
});

describe('formatDuration', () => {
  const cases: Array<[number, string]> = [
    [0, '0s'],
    [0.25, '250µs'],
    [500, '500ms'],
    [5000, '5s'],
    [1500, '1.5s'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
    [3_723_004, '1h2m3.004s'],
    [-2000, '-2s'],
  ];
  for (const [ms, want] of cases) {
    it(`${ms}ms → ${want}`, () => {
      assert.equal(formatDuration(ms), want);
    });
  }
});

describe('parseIntArg', () => {
  const good: Array<{ text: string; min?: number; max?: number; want: number }> = [
    { text: '0', want: 0 },
    { text: '1000', min: 1, want: 1000 },
    { text: '+5', want: 5 },
    { text: '-5', want: -5 },
    { text: '65535', min: 0, max: 65535, want: 65535 },
  ];
  for (const c of good) {
    it(c.text, () => {
      assert.equal(parseIntArg(c.text, AT, { what: 'max_concurrent', min: c.min, max: c.max }), c.want);
    });
  }

  const bad: Array<{ text: string; min?: number; max?: number; want: string }> = [
    { text: 'ten', want: 'Corefile:4: invalid max_concurrent: "ten" is not an integer' },
    { text: '1.5', want: 'Corefile:4: invalid max_concurrent: "1.5" is not an integer' },
    { text: '', want: 'Corefile:4: invalid max_concurrent: "" is not an integer' },
    { text: '99999999999999999999', want: 'Corefile:4: invalid max_concurrent: "99999999999999999999" is not an integer' },
    { text: '0', min: 1, max: 10, want: 'Corefile:4: max_concurrent must be between 1 and 10, got 0' },
    { text: '0', min: 1, want: 'Corefile:4: max_concurrent must be at least 1, got 0' },
    { text: '11', max: 10, want: 'Corefile:4: max_concurrent must be at most 10, got 11' },
  ];
  for (const c of bad) {
    it(`rejects ${JSON.stringify(c.text)} (min ${c.min}, max ${c.max})`, () => {
      assert.throws(() => parseIntArg(c.text, AT, { what: 'max_concurrent', min: c.min, max: c.max }), { name: 'CorefileError', message: c.want });
    });
  }
});

describe('expectArgs', () => {
  const good: Array<{ name: string; args: string[]; min: number; max?: number }> = [
    { name: 'at least one, given two', args: ['a', 'b'], min: 1 },
    { name: 'at most two, given none', args: [], min: 0, max: 2 },
    { name: 'exactly one', args: ['a'], min: 1, max: 1 },
  ];
  for (const c of good) {
    it(c.name, () => {
      assert.deepEqual(expectArgs(dir('cache', c.args), c.min, c.max), c.args);
    });
  }

  const bad: Array<{ name: string; args: string[]; min: number; max?: number; want: string }> = [
    { name: 'too many for at most', args: ['1', '2', '3'], min: 0, max: 2, want: 'Corefile:4: wrong argument count for "cache": expected at most 2, got 3' },
    { name: 'too few for at least', args: [], min: 1, want: 'Corefile:4: wrong argument count for "cache": expected at least 1, got 0' },
    { name: 'too few for a range', args: [], min: 1, max: 3, want: 'Corefile:4: wrong argument count for "cache": expected at least 1, got 0' },
    { name: 'not exactly one', args: ['a', 'b'], min: 1, max: 1, want: 'Corefile:4: wrong argument count for "cache": expected 1, got 2' },
    { name: 'none allowed', args: ['a'], min: 0, max: 0, want: 'Corefile:4: wrong argument count for "cache": expected no arguments, got 1' },
  ];
  for (const c of bad) {
    it(c.name, () => {
      assert.throws(() => expectArgs(dir('cache', c.args), c.min, c.max), { name: 'CorefileError', message: c.want });
    });
  }
});

describe('property and argument errors', () => {
  const cases: Array<{ name: string; run: () => unknown; want: string }> = [
    {
      name: 'unknownProperty',
      run: () => unknownProperty({ ...dir('polcy', ['random']), line: 12 }, 'forward'),
      want: 'Corefile:12: unknown property "polcy" in forward block',
    },
    {
      name: 'duplicateProperty',
      run: () => duplicateProperty(dir('policy', ['random']), 'forward'),
      want: 'Corefile:4: duplicate property "policy" in forward block',
    },
    {
      name: 'noBlockAllowed with a block',
      run: () => noBlockAllowed(dir('errors', [], { block: [] })),
      want: 'Corefile:4: "errors" does not take a block',
    },
    {
      name: 'invalidArg points at the line of the argument',
      run: () => invalidArg(dir('forward', ['.', 'udp://x'], { argLines: [4, 5] }), 'udp://x', 'unknown protocol'),
      want: 'Corefile:5: invalid argument "udp://x" for "forward": unknown protocol',
    },
    {
      name: 'invalidArg of a value not among the args points at the directive',
      run: () => invalidArg(dir('forward', ['.']), 'derived', 'bad'),
      want: 'Corefile:4: invalid argument "derived" for "forward": bad',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.throws(c.run, { name: 'CorefileError', message: c.want });
    });
  }

  it('noBlockAllowed passes a directive without a block', () => {
    assert.equal(noBlockAllowed(dir('errors', [])), undefined);
  });

  it('argPosition falls back to the directive line', () => {
    assert.deepEqual(
      [0, 1, 2].map((i) => argPosition(dir('x', ['a', 'b'], { argLines: [4, 6] }), i)),
      [{ file: 'Corefile', line: 4 }, { file: 'Corefile', line: 6 }, { file: 'Corefile', line: 4 }],
    );
  });
});

describe('blockProperties', () => {
  const at = (line: number, name: string, args: string[] = [], extra: Partial<Directive> = {}): Directive => ({ ...dir(name, args, extra), line });
  const walk = (block: Directive[], key?: (p: Directive) => string | undefined): string[] =>
    [...blockProperties(dir('cache', [], { block }), 'cache', key)].map((p) => `${p.line} ${p.name}`);
  const perType = (p: Directive): string | undefined => (p.name.includes('.') ? undefined : `${p.name} ${p.args[0] ?? ''}`);
  const cases: Array<{ name: string; block: Directive[]; key?: (p: Directive) => string | undefined; want?: string[]; error?: string }> = [
    { name: 'every line, in order', block: [at(5, 'success', ['1']), at(6, 'denial', ['1']), at(7, 'typo')], want: ['5 success', '6 denial', '7 typo'] },
    { name: 'no block: nothing', block: [], want: [] },
    { name: 'a property twice', block: [at(5, 'success'), at(6, 'success')], error: 'Corefile:6: duplicate property "success" in cache block' },
    { name: 'a property with a block', block: [at(5, 'success', [], { block: [] })], error: 'Corefile:5: "success" does not take a block' },
    { name: 'key: same name, other key', block: [at(5, 'disable', ['success']), at(6, 'disable', ['denial'])], key: perType, want: ['5 disable', '6 disable'] },
    { name: 'key: same key twice', block: [at(5, 'disable', ['success']), at(6, 'disable', ['success'])], key: perType, error: 'Corefile:6: duplicate property "disable" in cache block' },
    { name: 'no key: unchecked', block: [at(5, '10.0.0.1', [], { block: [] }), at(6, '10.0.0.1')], key: perType, want: ['5 10.0.0.1', '6 10.0.0.1'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      if (c.error) assert.throws(() => walk(c.block, c.key), { name: 'CorefileError', message: c.error });
      else assert.deepEqual(walk(c.block, c.key), c.want);
    });
  }
});
