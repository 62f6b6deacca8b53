import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalIP } from './keys.js';

const ipCases: Array<[string, string | undefined]> = [
  ['10.0.0.1', '10.0.0.1'],
  ['FD00:0:0::1', 'fd00::1'],
  ['fd00:0010:0096:0000:0000:0000:0000:0020', 'fd00:10:96::20'],
  ['::ffff:10.0.0.1', '::ffff:10.0.0.1'],
  ['10.0.0', undefined],
  ['None', undefined],
  ['', undefined],
];
for (const [text, want] of ipCases) {
  test(`canonicalIP(${JSON.stringify(text)}) = ${want}`, () => assert.equal(canonicalIP(text), want));
}
