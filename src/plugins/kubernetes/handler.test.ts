// The handler without sockets: requests built from wire bytes, replies decoded. Covers what the
// dig table cannot see: which replies come from the pre-encoded cache, that a store change drops
// exactly the stale ones, the upstream path of ExternalName answers (with TC), and before-sync.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage } from '../../lib/dns/codec.js';
import { rrToString } from '../../lib/dns/rr.js';
import { RRType, type Message } from '../../lib/dns/types.js';
import { createLogger } from '../../server/log.js';
import { finalizeReply } from '../../server/finalize.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { Next } from '../../server/plugin.js';
import { ClusterStore } from '../../lib/cluster/store.js';
import type { ClusterObject } from '../../lib/cluster/types.js';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { parseKubernetes } from './config.js';
import { KubernetesPlugin, MAX_KEPT_NAME_ERRORS } from './handler.js';
import type { SourceHandle } from './sources.js';
import { testRequest } from '../../../test/util/request.js';

function request(name: string, type: number, id = 4242): DnsRequest {
  return testRequest(name, type, { id });
}

const objects: ClusterObject[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'demo' }, spec: { clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80 }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'demo' }, spec: { type: 'ExternalName', externalName: 'www.example.com' } },
];

function plugin(opts = '', synced = true): { p: KubernetesPlugin; store: ClusterStore } {
  const store = new ClusterStore();
  for (const o of objects) store.upsert(o);
  if (synced) store.markSynced();
  const d = parseCorefile(`cluster.local {\nkubernetes {\n${opts}\n}\n}\n`, { file: 'Corefile', baseDir: '/' })[0]?.directives[0];
  if (!d) throw new Error('no directive');
  const cfg = parseKubernetes(d, ['cluster.local.'], '/Corefile', '/unused');
  const handle: SourceHandle = { store, description: 'test store', start: async () => {}, release: async () => {} };
  return { p: new KubernetesPlugin(cfg, handle, { log: createLogger(() => {}), localIPs: () => ['127.0.0.1'] }), store };
}

const none: Next = () => undefined;

async function ask(p: KubernetesPlugin, req: DnsRequest, next: Next = none): Promise<{ reply: Reply; msg: Message; text: string[] }> {
  const reply = (await p.serve(req, next)) as Reply;
  const msg = decodeMessage(finalizeReply(req, reply));
  const text = [...msg.answers, ...msg.authority, ...msg.additional].map((r) => rrToString(r).replace(/(hostmaster\.\S+) \d+/, '$1 SERIAL'));
  return { reply, msg, text };
}

test('the second query for a name is served from pre-encoded bytes, in its own case and with its own ID', async () => {
  const { p } = plugin();
  const first = await ask(p, request('web.demo.svc.cluster.local.', RRType.A, 1));
  assert.equal(first.reply.wire !== undefined, true);
  assert.equal(p.cachedNames, 1);
  const second = await ask(p, request('WEB.demo.SVC.cluster.local.', RRType.A, 2));
  assert.equal(p.cachedNames, 1);
  assert.equal(second.msg.id, 2);
  assert.deepEqual([second.msg.aa, second.msg.rd, second.msg.qr], [true, true, true]);
  assert.equal(second.msg.questions[0]?.name, 'WEB.demo.SVC.cluster.local.');
  assert.deepEqual(second.text, ['WEB.demo.SVC.cluster.local.\t5\tIN\tA\t10.96.0.10']);
});

test('a service change drops its cached answers and only those', async () => {
  const { p, store } = plugin();
  await ask(p, request('web.demo.svc.cluster.local.', RRType.A));
  await ask(p, request('nope.demo.svc.cluster.local.', RRType.A));
  await ask(p, request('dns-version.cluster.local.', RRType.TXT));
  assert.equal(p.cachedNames, 3);
  store.upsert({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'demo' }, spec: { clusterIP: '10.96.0.11', ports: [{ name: 'http', port: 80 }] } });
  assert.equal(p.cachedNames, 2);
  assert.deepEqual((await ask(p, request('web.demo.svc.cluster.local.', RRType.A))).text, ['web.demo.svc.cluster.local.\t5\tIN\tA\t10.96.0.11']);
  // Creating the missing service drops its cached NXDOMAIN.
  store.upsert({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'nope', namespace: 'demo' }, spec: { clusterIP: '10.96.0.12' } });
  assert.equal((await ask(p, request('nope.demo.svc.cluster.local.', RRType.A))).msg.rcode, 0);
});

test('ExternalName out of zone: the CNAME plus what the next plugin answers, TC passed on', async () => {
  const { p } = plugin();
  const asked: string[] = [];
  const next: Next = (sub) => {
    asked.push(`${sub.qname} ${sub.qtype}`);
    const m = responseFor(sub);
    m.tc = true;
    m.answers.push({ name: sub.qname, type: RRType.A, class: 1, ttl: 60, data: { address: '93.184.215.14' } });
    return Reply.of(m);
  };
  const r = await ask(p, request('ext.demo.svc.cluster.local.', RRType.A), next);
  assert.deepEqual(asked, ['www.example.com. 1']);
  assert.equal(r.msg.tc, true);
  assert.deepEqual(r.text, ['ext.demo.svc.cluster.local.\t5\tIN\tCNAME\twww.example.com.', 'www.example.com.\t60\tIN\tA\t93.184.215.14']);
  assert.equal(p.cachedNames, 0, 'answers that depend on upstream are not kept');
});

test('ExternalName out of zone: a next plugin that throws leaves no CNAME (NODATA)', async () => {
  const { p } = plugin();
  const r = await ask(p, request('ext.demo.svc.cluster.local.', RRType.A), () => {
    throw new Error('upstream down');
  });
  assert.equal(r.msg.rcode, 0);
  assert.deepEqual(r.text, ['cluster.local.\t5\tIN\tSOA\tns.dns.cluster.local. hostmaster.cluster.local. SERIAL 7200 1800 86400 5']);
});

const rows: Array<{ what: string; synced: boolean; name: string; type: number; rcode: number; cached: number }> = [
  { what: 'before sync a missing name is SERVFAIL and not kept', synced: false, name: 'nope.demo.svc.cluster.local.', type: RRType.A, rcode: 2, cached: 0 },
  { what: 'before sync an existing name is answered', synced: false, name: 'web.demo.svc.cluster.local.', type: RRType.A, rcode: 0, cached: 0 },
  { what: 'zone transfers are refused', synced: true, name: 'cluster.local.', type: RRType.AXFR, rcode: 5, cached: 0 },
  { what: 'NS answers are not kept (they follow our own addresses)', synced: true, name: 'cluster.local.', type: RRType.NS, rcode: 0, cached: 0 },
  { what: 'names outside the zones go to the next plugin', synced: true, name: 'example.org.', type: RRType.A, rcode: -1, cached: 0 },
];

for (const row of rows) {
  test(`handler: ${row.what}`, async () => {
    const { p } = plugin('', row.synced);
    const reply = await p.serve(request(row.name, row.type), none);
    assert.equal(reply === undefined ? -1 : reply.rcode, row.rcode);
    assert.equal(p.cachedNames, row.cached);
  });
}

const keptRows: Array<{ what: string; opts: string; name: string; type: number; kept: { min: number; max: number } | undefined }> = [
  { what: 'an answer carries its TTL for a cache in front', opts: '', name: 'web.demo.svc.cluster.local.', type: RRType.A, kept: { min: 5, max: 5 } },
  { what: 'a name error carries its SOA TTL and MINIMUM', opts: 'ttl 30', name: 'nope.demo.svc.cluster.local.', type: RRType.A, kept: { min: 30, max: 30 } },
  { what: 'dns-version carries its own 28800', opts: '', name: 'dns-version.cluster.local.', type: RRType.TXT, kept: { min: 28800, max: 28800 } },
  { what: 'an answer built from upstream data is not kept', opts: '', name: 'ext.demo.svc.cluster.local.', type: RRType.A, kept: undefined },
];

for (const row of keptRows) {
  test(`handler: ${row.what} (Reply.kept), first and later queries alike`, async () => {
    const { p } = plugin(row.opts);
    const first = await p.serve(request(row.name, row.type), none);
    const later = await p.serve(request(row.name, row.type), none);
    assert.deepEqual([first?.kept, later?.kept], [row.kept, row.kept]);
  });
}

test('handler: past MAX_KEPT_NAME_ERRORS, names that do not exist are answered but not kept; names that exist still are', async () => {
  const { p } = plugin();
  for (let i = 0; i < MAX_KEPT_NAME_ERRORS + 50; i++) {
    const r = await p.serve(request(`r${i}.demo.svc.cluster.local.`, RRType.A), none);
    assert.equal(r?.rcode, 3);
  }
  assert.equal(p.cachedNames, MAX_KEPT_NAME_ERRORS);
  await p.serve(request('web.demo.svc.cluster.local.', RRType.A), none);
  assert.equal(p.cachedNames, MAX_KEPT_NAME_ERRORS + 1);
});

test('handler: ready() follows the store', () => {
  const { p, store } = plugin('', false);
  assert.equal(p.ready(), 'test store has not synced yet');
  store.markSynced();
  assert.equal(p.ready(), true);
});

test('handler: answers kept after most of the cache was dropped (arena compaction) are still right', async () => {
  const { p, store } = plugin();
  const svc = (i: number, ip: string): ClusterObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: `s${i}`, namespace: 'demo' }, spec: { clusterIP: ip } });
  // 4,000 answers of ~60 bytes fill four arena chunks; changing 3,000 of the services leaves
  // three quarters of the arena dropped, which compacts it.
  for (let i = 0; i < 4000; i++) store.upsert(svc(i, `10.97.${i >> 8}.${i & 255}`));
  for (let i = 0; i < 4000; i++) await ask(p, request(`s${i}.demo.svc.cluster.local.`, RRType.A));
  assert.equal(p.cachedNames, 4000);
  store.batch(() => {
    for (let i = 0; i < 3000; i++) store.upsert(svc(i, `10.98.${i >> 8}.${i & 255}`));
  });
  assert.equal(p.cachedNames, 1000);
  const rows: Array<[number, string]> = [
    [3000, 's3000.demo.svc.cluster.local.\t5\tIN\tA\t10.97.11.184'],
    [3999, 's3999.demo.svc.cluster.local.\t5\tIN\tA\t10.97.15.159'],
    [0, 's0.demo.svc.cluster.local.\t5\tIN\tA\t10.98.0.0'],
  ];
  for (const [i, want] of rows) {
    // Twice: the second answer comes from the kept bytes.
    for (let n = 0; n < 2; n++) assert.deepEqual((await ask(p, request(`s${i}.demo.svc.cluster.local.`, RRType.A))).text, [want]);
  }
});
