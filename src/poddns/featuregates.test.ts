import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFeatureGates } from './featuregates.js';
import type { FeatureGateParse } from './featuregates.js';

const cases: Array<{ name: string; text: string; want: FeatureGateParse }> = [
  { name: 'empty: defaults (relaxed search off)', text: '', want: { ok: true, gates: { RelaxedDNSSearchValidation: false } } },
  { name: 'a gate turned on', text: 'RelaxedDNSSearchValidation=true', want: { ok: true, gates: { RelaxedDNSSearchValidation: true } } },
  { name: "Go's bool spellings", text: 'RelaxedDNSSearchValidation=T', want: { ok: true, gates: { RelaxedDNSSearchValidation: true } } },
  { name: 'the last setting wins, spaces and empty items ignored', text: ' RelaxedDNSSearchValidation=true, ,RelaxedDNSSearchValidation=0 ', want: { ok: true, gates: { RelaxedDNSSearchValidation: false } } },
  { name: 'an unknown gate', text: 'Foo=true', want: { ok: false, error: 'unrecognized feature gate: Foo (known: RelaxedDNSSearchValidation)' } },
  { name: 'a value that is not a bool', text: 'RelaxedDNSSearchValidation=on', want: { ok: false, error: 'invalid value of RelaxedDNSSearchValidation=on, must be true or false' } },
  { name: 'no value', text: 'RelaxedDNSSearchValidation', want: { ok: false, error: 'missing bool value for RelaxedDNSSearchValidation' } },
];

for (const c of cases) {
  test(`feature gates: ${c.name}`, () => assert.deepEqual(parseFeatureGates(c.text), c.want));
}
