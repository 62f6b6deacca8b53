import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { substituteEnv } from './env.js';

const env = { A: 'one', B: 'two', SPACED: 'x y', REF: '{$A}' };

const cases: Array<{ name: string; text: string; want: string }> = [
  { name: 'no reference', text: 'plain', want: 'plain' },
  { name: 'unix form', text: '{$A}', want: 'one' },
  { name: 'windows form', text: '{%A%}', want: 'one' },
  { name: 'env. form', text: '{env.B}', want: 'two' },
  { name: 'several in one word', text: '{$A}:{%B%}/{env.A}', want: 'one:two/one' },
  { name: 'unset is empty', text: 'a{$NOPE}b', want: 'ab' },
  { name: 'a value keeps its spaces', text: '{$SPACED}', want: 'x y' },
  { name: 'a value is not expanded again', text: '{$REF}', want: '{$A}' },
  { name: 'empty name is left alone', text: '{$}', want: '{$}' },
  { name: 'unclosed reference is left alone', text: '{$A', want: '{$A' },
  { name: 'windows form needs %}', text: '{%A}', want: '{%A}' },
  { name: 'other placeholders are not environment', text: '{args[0]} {{ .Name }}', want: '{args[0]} {{ .Name }}' },
];

describe('substituteEnv', () => {
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(substituteEnv(c.text, env), c.want);
    });
  }
});
