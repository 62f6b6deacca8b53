import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesLabels, parseLabelSelector } from './labels.js';

const cases: Array<{ selector: string; labels: Record<string, string> | undefined; matches: boolean }> = [
  { selector: '', labels: undefined, matches: true },
  { selector: 'app=web', labels: { app: 'web' }, matches: true },
  { selector: 'app==web', labels: { app: 'web', tier: 'x' }, matches: true },
  { selector: 'app=web', labels: { app: 'db' }, matches: false },
  { selector: 'app=web', labels: undefined, matches: false },
  { selector: 'app!=web', labels: { app: 'db' }, matches: true },
  { selector: 'app!=web', labels: undefined, matches: true },
  { selector: 'app!=web', labels: { app: 'web' }, matches: false },
  { selector: 'env in (prod, staging)', labels: { env: 'staging' }, matches: true },
  { selector: 'env in (prod,staging)', labels: { env: 'dev' }, matches: false },
  { selector: 'env notin (prod)', labels: { env: 'dev' }, matches: true },
  { selector: 'env notin (prod)', labels: {}, matches: true },
  { selector: 'env notin (prod)', labels: { env: 'prod' }, matches: false },
  { selector: 'canary', labels: { canary: '' }, matches: true },
  { selector: 'canary', labels: {}, matches: false },
  { selector: '!canary', labels: {}, matches: true },
  { selector: '!canary', labels: { canary: 'true' }, matches: false },
  { selector: 'app=web, env in (a,b), !canary', labels: { app: 'web', env: 'b' }, matches: true },
  { selector: 'app.kubernetes.io/name=cart', labels: { 'app.kubernetes.io/name': 'cart' }, matches: true },
  { selector: 'toString', labels: {}, matches: false },
];

for (const c of cases) {
  test(`selector "${c.selector}" on ${JSON.stringify(c.labels)} → ${c.matches}`, () => {
    assert.equal(matchesLabels(parseLabelSelector(c.selector), c.labels), c.matches);
  });
}

const bad: Array<[string, string]> = [
  ['app=', ''], // an empty value is allowed: see below
  ['=web', 'invalid label key "=web"'],
  ['app=we b', 'invalid label value "we b"'],
  ['a,,b', 'empty requirement'],
  ['-app=x', 'invalid label key "-app"'],
];

for (const [text, message] of bad) {
  test(`selector "${text}" ${message ? 'is rejected' : 'is accepted'}`, () => {
    if (message === '') {
      assert.deepEqual(parseLabelSelector(text).requirements, [{ key: 'app', operator: 'in', values: [''] }]);
      return;
    }
    assert.throws(() => parseLabelSelector(text), { message: `invalid label selector ${JSON.stringify(text)}: ${message}` });
  });
}
