import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RRType } from '../dns/types.js';
import { testRequest } from '../testutil/request.js';

interface MetadataCase {
  what: string;
  /** Set on the original request before derive(). */
  before: Record<string, string>;
  /** Set on the derived request afterwards. */
  after: Record<string, string>;
  original: Record<string, string>;
  derived: Record<string, string>;
}

const cases: MetadataCase[] = [
  { what: 'none set: neither has any', before: {}, after: {}, original: {}, derived: {} },
  { what: 'set before: the derived request starts with a copy', before: { 'kubernetes/namespace': 'demo' }, after: {}, original: { 'kubernetes/namespace': 'demo' }, derived: { 'kubernetes/namespace': 'demo' } },
  {
    what: 'set on the derived one: the original does not see it',
    before: { a: '1' },
    after: { a: '2', b: '3' },
    original: { a: '1' },
    derived: { a: '2', b: '3' },
  },
];

for (const c of cases) {
  test(`DnsRequest metadata: ${c.what}`, () => {
    const req = testRequest('web.demo.svc.cluster.local.', RRType.A);
    for (const [k, v] of Object.entries(c.before)) req.metadata.set(k, v);
    const sub = req.derive('web.demo.svc.cluster.local.', RRType.AAAA);
    for (const [k, v] of Object.entries(c.after)) sub.metadata.set(k, v);
    assert.deepEqual(Object.fromEntries(req.metadata), c.original);
    assert.deepEqual(Object.fromEntries(sub.metadata), c.derived);
  });
}
