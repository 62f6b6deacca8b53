// The model on its own (fast, no root). queries.realclient.test.ts holds it against real libcs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { namesOracle, nothingExists } from './oracle.js';
import { glibcView, muslEncode, muslView, predictLookup } from './queries.js';
import type { Libc, LookupResult } from './queries.js';

const viewCases: Array<{ name: string; text: string; libc: Libc; want: { nameservers: string[]; searches: string[]; ndots: number; attempts: number; timeout: number } }> = [
  {
    name: 'glibc: defaults without options',
    text: 'nameserver 10.0.0.1\n',
    libc: 'glibc',
    want: { nameservers: ['10.0.0.1'], searches: [], ndots: 1, attempts: 2, timeout: 5 },
  },
  {
    name: 'glibc: only the first 3 nameservers, the last search line, ndots capped at 15',
    text: 'nameserver 1.1.1.1\nnameserver 2.2.2.2\nnameserver 3.3.3.3\nnameserver 4.4.4.4\nsearch a b\nsearch c\noptions ndots:20 attempts:3 timeout:1\n',
    libc: 'glibc',
    want: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3'], searches: ['c'], ndots: 15, attempts: 3, timeout: 1 },
  },
  {
    name: 'glibc: ; and # comment lines, a domain line is a one-entry search list',
    text: '; search x\n# search y\ndomain corp.example\nnameserver 10.0.0.1\n',
    libc: 'glibc',
    want: { nameservers: ['10.0.0.1'], searches: ['corp.example'], ndots: 1, attempts: 2, timeout: 5 },
  },
  {
    name: 'musl: no usable nameserver means 127.0.0.1',
    text: 'nameserver dns.example\noptions ndots:3\n',
    libc: 'musl',
    want: { nameservers: ['127.0.0.1'], searches: [], ndots: 3, attempts: 2, timeout: 5 },
  },
  {
    name: 'musl: a search line of 255 characters or more is skipped whole',
    text: `search first.example\nsearch ${'x'.repeat(250)}\nnameserver 10.0.0.1\n`,
    libc: 'musl',
    want: { nameservers: ['10.0.0.1'], searches: ['first.example'], ndots: 1, attempts: 2, timeout: 5 },
  },
];

for (const c of viewCases) {
  test(`view: ${c.name}`, () => {
    const v = c.libc === 'glibc' ? glibcView(c.text) : muslView(c.text);
    assert.deepEqual({ nameservers: v.nameservers, searches: v.searches, ndots: v.ndots, attempts: v.attempts, timeout: v.timeout }, c.want);
  });
}

const encodeCases: Array<{ name: string; input: string; want: ReturnType<typeof muslEncode> }> = [
  { name: 'a plain name', input: 'a.example', want: { kind: 'ok', qname: 'a.example' } },
  { name: 'one trailing dot is stripped', input: 'a.example.', want: { kind: 'ok', qname: 'a.example' } },
  { name: 'two trailing dots go out malformed (musl 1.2.3 with search .)', input: 'api..', want: { kind: 'malformed', qname: 'api.' } },
  { name: 'an empty label inside is refused', input: 'a..example', want: { kind: 'refused' } },
  { name: 'a 64-character label is refused', input: `${'a'.repeat(64)}.example`, want: { kind: 'refused' } },
];

for (const c of encodeCases) {
  test(`musl encoding: ${c.name}`, () => assert.deepEqual(muslEncode(c.input), c.want));
}

const CLUSTER = 'search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n';

const predictCases: Array<{ name: string; text: string; lookup: string; libc: Libc; exists?: string[]; queries: string[]; result: LookupResult }> = [
  {
    name: 'glibc, ndots:5, unknown single label: every search domain then as is',
    text: CLUSTER,
    lookup: 'x',
    libc: 'glibc',
    queries: ['x.ns1.svc.cluster.local A', 'x.ns1.svc.cluster.local AAAA', 'x.svc.cluster.local A', 'x.svc.cluster.local AAAA', 'x.cluster.local A', 'x.cluster.local AAAA', 'x A', 'x AAAA'],
    result: 'nxdomain',
  },
  {
    name: 'glibc stops at the first answer',
    text: CLUSTER,
    lookup: 'x',
    libc: 'glibc',
    exists: ['x.svc.cluster.local'],
    queries: ['x.ns1.svc.cluster.local A', 'x.ns1.svc.cluster.local AAAA', 'x.svc.cluster.local A', 'x.svc.cluster.local AAAA'],
    result: 'resolved',
  },
  {
    name: 'glibc with the root on the search list and dots ≥ ndots asks the name twice and never again as is',
    text: 'search . corp.example\nnameserver 10.0.0.1\n',
    lookup: 'a.b',
    libc: 'glibc',
    queries: ['a.b A', 'a.b AAAA', 'a.b A', 'a.b AAAA', 'a.b.corp.example A', 'a.b.corp.example AAAA'],
    result: 'nxdomain',
  },
  {
    name: 'musl with dots ≥ ndots never searches',
    text: 'search corp.example\nnameserver 10.0.0.1\n',
    lookup: 'a.b',
    libc: 'musl',
    queries: ['a.b A', 'a.b AAAA'],
    result: 'nxdomain',
  },
  {
    name: 'musl rejects several trailing dots without a query',
    text: CLUSTER,
    lookup: 'a..',
    libc: 'musl',
    queries: [],
    result: 'nxdomain',
  },
  {
    name: 'glibc options single-request changes timing, not the queries',
    text: 'nameserver 10.0.0.1\noptions single-request\n',
    lookup: 'a.example',
    libc: 'glibc',
    exists: ['a.example'],
    queries: ['a.example A', 'a.example AAAA'],
    result: 'resolved',
  },
];

for (const c of predictCases) {
  test(`predict: ${c.name}`, () => {
    const p = predictLookup(c.text, c.lookup, c.libc, c.exists ? namesOracle(c.exists) : nothingExists);
    assert.deepEqual(
      p.queries.map((q) => `${q.qname} ${q.qtype}`),
      c.queries,
    );
    assert.equal(p.result, c.result);
  });
}

test('predict: glibc notes that rotate is not followed', () => {
  const p = predictLookup('nameserver 10.0.0.1\nnameserver 10.0.0.2\noptions rotate\n', 'a.example', 'glibc', nothingExists);
  assert.deepEqual(p.view.notes, ['options rotate: glibc starts each query at the next nameserver; the model shows the first']);
});
