// Which server block a query goes to: the longest zone that holds the name and has a block
// willing to take it (a view may refuse), else the next zone up, as CoreDNS routes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { routeQuery, ZoneRoutes, type LoadedBlock } from './config.js';
import type { DnsRequest } from './request.js';

/** A block named `id`, with a view that takes only names `takes` accepts (none: takes all). */
function block(id: string, takes?: (name: string) => boolean): LoadedBlock {
  const view = takes ? { matches: (req: DnsRequest) => takes(req.query.name) } : undefined;
  return { id, info: { settings: { view } } } as unknown as LoadedBlock;
}

const zones = new Map<string, LoadedBlock[]>([
  ['.', [block('root')]],
  ['cluster.local.', [block('cluster')]],
  ['svc.cluster.local.', [block('svc-view', (n) => n.startsWith('only.'))]],
  ['example.org.', [block('example-view', (n) => n.startsWith('a.')), block('example')]],
  ['b\\.c.example.org.', [block('escaped')]],
  ['in-addr.arpa.', [block('reverse')]],
  // the same length as cluster.local. (14): the suffix is compared, not only its length
  ['cluster.other.', [block('other')]],
]);
const routes = new ZoneRoutes(zones);

const cases: { name: string; qname: string; want: { block: string; zone: string } | undefined; routes?: ZoneRoutes }[] = [
  { name: 'a name in a zone', qname: 'web.demo.svc.cluster.local.', want: { block: 'cluster', zone: 'cluster.local.' } },
  { name: 'a view that takes the name, in the longest zone', qname: 'only.demo.svc.cluster.local.', want: { block: 'svc-view', zone: 'svc.cluster.local.' } },
  { name: 'the zone apex itself', qname: 'cluster.local.', want: { block: 'cluster', zone: 'cluster.local.' } },
  { name: 'a zone of the same length as another', qname: 'x.cluster.other.', want: { block: 'other', zone: 'cluster.other.' } },
  { name: 'the first block whose view matches', qname: 'a.example.org.', want: { block: 'example-view', zone: 'example.org.' } },
  { name: 'the next block of the zone when a view refuses', qname: 'z.example.org.', want: { block: 'example', zone: 'example.org.' } },
  { name: 'an escaped dot belongs to its label', qname: 'x.b\\.c.example.org.', want: { block: 'escaped', zone: 'b\\.c.example.org.' } },
  { name: 'not the escaped zone for a name split at its dot', qname: 'x.c.example.org.', want: { block: 'example', zone: 'example.org.' } },
  { name: 'a suffix that is not at a label start is no zone', qname: 'xcluster.local.', want: { block: 'root', zone: '.' } },
  { name: 'a name under no zone but the root', qname: 'www.example.com.', want: { block: 'root', zone: '.' } },
  { name: 'the root itself', qname: '.', want: { block: 'root', zone: '.' } },
  { name: 'reverse names', qname: '10.0.96.10.in-addr.arpa.', want: { block: 'reverse', zone: 'in-addr.arpa.' } },
  {
    name: 'no root zone: a name under no zone goes nowhere',
    qname: 'www.example.com.',
    want: undefined,
    routes: new ZoneRoutes(new Map([['cluster.local.', [block('cluster')]]])),
  },
  {
    name: 'no root zone: a view refusing in the only zone leaves nothing',
    qname: 'x.svc.cluster.local.',
    want: undefined,
    routes: new ZoneRoutes(new Map([['svc.cluster.local.', [block('svc-view', () => false)]]])),
  },
];

for (const c of cases) {
  test(`routeQuery: ${c.name}`, () => {
    const req = { query: { name: c.qname }, zone: '' } as unknown as DnsRequest;
    const got = routeQuery(c.routes ?? routes, req) as (LoadedBlock & { id: string }) | undefined;
    assert.deepEqual(got === undefined ? undefined : { block: got.id, zone: req.zone }, c.want);
  });
}
