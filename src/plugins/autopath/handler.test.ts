// The autopath handler against a scripted rest-of-chain: which candidates it asks, in what
// order and with what EDNS, and what it answers for each outcome (found, NODATA, NXDOMAIN,
// failures skipped, option or not, classic mode by resolv.conf or by pod).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import * as rr from '../../lib/dns/rr.js';
import { RCode, RRType, type Edns, type Message } from '../../lib/dns/types.js';
import { testRequest } from '../../../test/util/request.js';
import { createLogger } from '../../server/log.js';
import { PluginError } from '../../server/plugin.js';
import { Reply, errorReply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { PodInfo } from '../../lib/cluster/records.js';
import { encodeSearchPaths } from '../pkg/searchoption.js';
import type { AutopathConfig } from './config.js';
import { AutopathPlugin, type KubernetesView } from './handler.js';
import { autopathMetrics } from './metrics.js';

const CODE = 65534;

/** What the rest of the chain says for a name: records, NODATA, NXDOMAIN (SOA ttl), a failure. */
type Outcome = { a: string } | 'nodata' | { nx: number } | 'servfail' | 'refused' | 'throw' | 'nothing';

interface Asked {
  name: string;
  options: number[];
}

function query(name: string, qtype: number = RRType.A, edns?: Edns, client = '127.0.0.1'): DnsRequest {
  return testRequest(name, qtype, { id: 4242, client: { remoteAddress: client }, ...(edns ? { edns } : {}) });
}

function zoneSoa(name: string, ttl: number): ReturnType<typeof rr.soa> {
  return rr.soa(name, ttl, { mname: 'ns.', rname: 'h.', serial: 1, refresh: 1, retry: 1, expire: 1, minimum: ttl });
}

/** A rest-of-chain that answers from `world` and notes every question. Unlisted names are NXDOMAIN (ttl 5). */
function chain(world: Record<string, Outcome>): { next: (r: DnsRequest) => Promise<Reply | undefined>; asked: Asked[] } {
  const asked: Asked[] = [];
  const next = async (r: DnsRequest): Promise<Reply | undefined> => {
    asked.push({ name: r.qname, options: r.edns?.options.map((o) => o.code) ?? [] });
    const o = world[r.name] ?? { nx: 5 };
    if (o === 'throw') throw new Error('boom');
    if (o === 'nothing') return undefined;
    if (o === 'servfail') return errorReply(r, RCode.SERVFAIL, new PluginError('forward', RCode.SERVFAIL, 'no upstream'));
    if (o === 'refused') return Reply.of(responseFor(r, RCode.REFUSED));
    if (o === 'nodata') return Reply.of({ ...responseFor(r), authority: [zoneSoa('test.', 30)] });
    if ('nx' in o) return Reply.of({ ...responseFor(r, RCode.NXDOMAIN), authority: [zoneSoa('test.', o.nx)] });
    return Reply.of({ ...responseFor(r, RCode.NOERROR, true), answers: [rr.a(r.qname, 60, o.a)] });
  };
  return { next, asked };
}

const AP_CONFIG: AutopathConfig = { zones: ['.'], source: { kind: 'file', path: '/x', search: [] }, hostSearch: ['corp.test.'], optionCode: CODE };

function plugin(config: AutopathConfig = AP_CONFIG, kubernetes?: KubernetesView): { p: AutopathPlugin; registry: Registry } {
  const registry = new Registry();
  const p = new AutopathPlugin(config, {
    metrics: autopathMetrics(registry, 'dns://:53'),
    log: createLogger(() => undefined),
    findKubernetes: () => kubernetes,
    configError: (m) => new Error(m),
  });
  p.start();
  return { p, registry };
}

/** The reply as "RCODE | answer lines | authority lines" for one readable comparison. */
function shape(reply: Reply | undefined): string {
  if (!reply) return 'no reply';
  const m = reply.view();
  const line = (r: Message['answers'][number]): string => `${r.name} ${r.ttl} ${rr.typeName(r.type)} ${rr.rdataToString(r)}`;
  return [rr.rcodeName(m.rcode), ...m.answers.map(line), ...m.authority.map(line)].join(' | ');
}

const AP = 'api.search.ns1.cluster.local.ap.k8s.io.';
const SOA_NX = (ttl: number): string => `ap.k8s.io. ${ttl} SOA ns.dns.ap.k8s.io. hostmaster.ap.k8s.io.`;

describe('ap.k8s.io names', () => {
  const cases: Array<{ name: string; qname?: string; world: Record<string, Outcome>; edns?: Edns; asked: string[]; reply: string }> = [
    {
      name: 'the pod\'s own namespace answers first',
      world: { 'api.ns1.svc.cluster.local.': { a: '10.96.1.10' } },
      asked: ['api.ns1.svc.cluster.local.'],
      reply: `NOERROR | ${AP} 60 CNAME api.ns1.svc.cluster.local. | api.ns1.svc.cluster.local. 60 A 10.96.1.10`,
    },
    {
      name: 'svc.ns found under svc.<zone>',
      qname: 'db.otherns.search.ns1.cluster.local.ap.k8s.io.',
      world: { 'db.otherns.svc.cluster.local.': { a: '10.96.2.20' } },
      asked: ['db.otherns.ns1.svc.cluster.local.', 'db.otherns.svc.cluster.local.'],
      reply: 'NOERROR | db.otherns.search.ns1.cluster.local.ap.k8s.io. 60 CNAME db.otherns.svc.cluster.local. | db.otherns.svc.cluster.local. 60 A 10.96.2.20',
    },
    {
      name: 'an external name: every search path, then the name itself',
      qname: 'www.Example.test.search.ns1.cluster.local.ap.k8s.io.',
      world: { 'www.example.test.': { a: '192.0.2.80' } },
      asked: ['www.Example.test.ns1.svc.cluster.local.', 'www.Example.test.svc.cluster.local.', 'www.Example.test.cluster.local.', 'www.Example.test.corp.test.', 'www.Example.test.'],
      reply: 'NOERROR | www.Example.test.search.ns1.cluster.local.ap.k8s.io. 60 CNAME www.Example.test. | www.Example.test. 60 A 192.0.2.80',
    },
    {
      name: 'NODATA is a name that exists: CNAME and the denial\'s SOA',
      world: { 'api.ns1.svc.cluster.local.': 'nodata' },
      asked: ['api.ns1.svc.cluster.local.'],
      reply: `NOERROR | ${AP} 30 CNAME api.ns1.svc.cluster.local. | test. 30 SOA ns. h. 1 1 1 1 30`,
    },
    {
      name: 'a SERVFAIL candidate is skipped',
      world: { 'api.ns1.svc.cluster.local.': 'servfail', 'api.svc.cluster.local.': { a: '10.0.0.2' } },
      asked: ['api.ns1.svc.cluster.local.', 'api.svc.cluster.local.'],
      reply: `NOERROR | ${AP} 60 CNAME api.svc.cluster.local. | api.svc.cluster.local. 60 A 10.0.0.2`,
    },
    {
      name: 'REFUSED, a throw and no reply are skipped too',
      world: { 'api.ns1.svc.cluster.local.': 'refused', 'api.svc.cluster.local.': 'throw', 'api.cluster.local.': 'nothing', 'api.corp.test.': { a: '192.0.2.7' } },
      asked: ['api.ns1.svc.cluster.local.', 'api.svc.cluster.local.', 'api.cluster.local.', 'api.corp.test.'],
      reply: `NOERROR | ${AP} 60 CNAME api.corp.test. | api.corp.test. 60 A 192.0.2.7`,
    },
    {
      name: 'nothing exists: NXDOMAIN with the smallest negative TTL seen',
      world: { 'api.corp.test.': { nx: 3 }, 'api.': { nx: 900 } },
      asked: ['api.ns1.svc.cluster.local.', 'api.svc.cluster.local.', 'api.cluster.local.', 'api.corp.test.', 'api.'],
      reply: `NXDOMAIN | ${SOA_NX(3)}`,
    },
    {
      name: 'the name itself fails but others said NXDOMAIN: NXDOMAIN (the client asks the name next and sees the failure)',
      world: { 'api.': 'servfail' },
      asked: ['api.ns1.svc.cluster.local.', 'api.svc.cluster.local.', 'api.cluster.local.', 'api.corp.test.', 'api.'],
      reply: `NXDOMAIN | ${SOA_NX(5)}`,
    },
    {
      name: 'every candidate fails: SERVFAIL',
      world: { 'api.ns1.svc.cluster.local.': 'servfail', 'api.svc.cluster.local.': 'servfail', 'api.cluster.local.': 'servfail', 'api.corp.test.': 'servfail', 'api.': 'servfail' },
      asked: ['api.ns1.svc.cluster.local.', 'api.svc.cluster.local.', 'api.cluster.local.', 'api.corp.test.', 'api.'],
      reply: 'SERVFAIL',
    },
    {
      name: 'the option gives the paths (and is not passed on)',
      edns: { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [{ code: CODE, data: encodeSearchPaths(['lab.test', 'corp.test']) }, { code: 10, data: new Uint8Array(8) }] },
      world: { 'api.corp.test.': { a: '192.0.2.7' } },
      asked: ['api.lab.test.', 'api.corp.test.'],
      reply: `NOERROR | ${AP} 60 CNAME api.corp.test. | api.corp.test. 60 A 192.0.2.7`,
    },
    {
      name: 'an empty option: only the name itself',
      edns: { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [{ code: CODE, data: new Uint8Array(0) }] },
      world: { 'api.': { a: '192.0.2.1' } },
      asked: ['api.'],
      reply: `NOERROR | ${AP} 60 CNAME api. | api. 60 A 192.0.2.1`,
    },
    {
      name: 'a bad option is ignored: paths from the name',
      edns: { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [{ code: CODE, data: new Uint8Array([0xff]) }] },
      world: { 'api.ns1.svc.cluster.local.': { a: '10.96.1.10' } },
      asked: ['api.ns1.svc.cluster.local.'],
      reply: `NOERROR | ${AP} 60 CNAME api.ns1.svc.cluster.local. | api.ns1.svc.cluster.local. 60 A 10.96.1.10`,
    },
    {
      name: 'not a search name under ap.k8s.io: NXDOMAIN without asking anyone',
      qname: 'whatever.ap.k8s.io.',
      world: {},
      asked: [],
      reply: `NXDOMAIN | ${SOA_NX(5)}`,
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { p } = plugin();
      const { next, asked } = chain(c.world);
      const reply = await p.serve(query(c.qname ?? AP, RRType.A, c.edns), next);
      assert.deepEqual(
        asked.map((a) => a.name),
        c.asked,
      );
      for (const a of asked) assert.ok(!a.options.includes(CODE), `${a.name} was asked with the search-path option`);
      assert.equal(shape(reply).replace(/ \d+ 7200 1800 86400 (\d+)$/, ''), c.reply.replace(/ \d+ 7200 1800 86400 (\d+)$/, ''));
    });
  }

  test('the question is echoed as asked, the reply keeps the query ID', async () => {
    const { p } = plugin();
    const { next } = chain({ 'api.ns1.svc.cluster.local.': { a: '10.96.1.10' } });
    const reply = await p.serve(query('API.search.NS1.cluster.local.ap.k8s.io.'), next);
    const m = reply?.view();
    assert.deepEqual(m?.questions, [{ name: 'API.search.NS1.cluster.local.ap.k8s.io.', type: RRType.A, class: 1 }]);
    assert.equal(m?.id, 4242);
    assert.equal(m?.answers[0]?.name, 'API.search.NS1.cluster.local.ap.k8s.io.');
  });

  test('metrics: successes, and candidates per expanded query', async () => {
    const { p, registry } = plugin();
    const { next } = chain({ 'api.svc.cluster.local.': { a: '10.0.0.2' } });
    await p.serve(query(AP), next); // 2 candidates, found
    await p.serve(query('zzz.search.ns1.cluster.local.ap.k8s.io.'), next); // 5 candidates, none
    const text = await registry.metrics();
    assert.match(text, /^coredns_autopath_success_total\{server="dns:\/\/:53"\} 1$/m);
    assert.match(text, /^kdns_autopath_candidates_tried_sum\{server="dns:\/\/:53"\} 7$/m);
    assert.match(text, /^kdns_autopath_candidates_tried_count\{server="dns:\/\/:53"\} 2$/m);
  });
});

describe('other names', () => {
  test('a search-path option on any other name is removed before the query goes on', async () => {
    const { p } = plugin();
    const { next, asked } = chain({ 'www.example.test.': { a: '192.0.2.80' } });
    const edns: Edns = { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [{ code: CODE, data: encodeSearchPaths(['a.test']) }, { code: 10, data: new Uint8Array(8) }] };
    const reply = await p.serve(query('www.example.test.', RRType.A, edns), next);
    assert.deepEqual(asked, [{ name: 'www.example.test.', options: [10] }]);
    assert.equal(shape(reply), 'NOERROR | www.example.test. 60 A 192.0.2.80');
  });
});

describe('classic autopath (CoreDNS)', () => {
  const FILE: AutopathConfig = { zones: ['.'], source: { kind: 'file', path: '/x', search: ['ns1.svc.cluster.local.', 'svc.cluster.local.', 'cluster.local.'] }, hostSearch: [], optionCode: CODE };
  const cases: Array<{ name: string; qname: string; world: Record<string, Outcome>; asked: string[]; reply: string; config?: AutopathConfig }> = [
    {
      name: 'a query under the first search path is expanded',
      qname: 'db.otherns.ns1.svc.cluster.local.',
      world: { 'db.otherns.svc.cluster.local.': { a: '10.96.2.20' } },
      asked: ['db.otherns.ns1.svc.cluster.local.', 'db.otherns.svc.cluster.local.'],
      reply: 'NOERROR | db.otherns.ns1.svc.cluster.local. 60 CNAME db.otherns.svc.cluster.local. | db.otherns.svc.cluster.local. 60 A 10.96.2.20',
    },
    {
      name: 'the name as asked exists: its own reply, no CNAME',
      qname: 'api.ns1.svc.cluster.local.',
      world: { 'api.ns1.svc.cluster.local.': { a: '10.96.1.10' } },
      asked: ['api.ns1.svc.cluster.local.'],
      reply: 'NOERROR | api.ns1.svc.cluster.local. 60 A 10.96.1.10',
    },
    {
      name: 'nothing found: the reply to the query as asked (the client searches on)',
      qname: 'zzz.ns1.svc.cluster.local.',
      world: { 'zzz.ns1.svc.cluster.local.': { nx: 7 } },
      asked: ['zzz.ns1.svc.cluster.local.', 'zzz.svc.cluster.local.', 'zzz.cluster.local.', 'zzz.'],
      reply: 'NXDOMAIN | test. 7 SOA ns. h. 1 1 1 1 7',
    },
    { name: 'a name outside the first search path passes', qname: 'www.example.test.', world: { 'www.example.test.': { a: '192.0.2.80' } }, asked: ['www.example.test.'], reply: 'NOERROR | www.example.test. 60 A 192.0.2.80' },
    {
      name: 'a name outside ZONES passes',
      qname: 'db.otherns.ns1.svc.cluster.local.',
      config: { ...FILE, zones: ['example.test.'] },
      world: {},
      asked: ['db.otherns.ns1.svc.cluster.local.'],
      reply: 'NXDOMAIN | test. 5 SOA ns. h. 1 1 1 1 5',
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { p } = plugin(c.config ?? FILE);
      const { next, asked } = chain(c.world);
      const reply = await p.serve(query(c.qname), next);
      assert.deepEqual(
        asked.map((a) => a.name),
        c.asked,
      );
      assert.equal(shape(reply), c.reply);
    });
  }

  const pod = (ip: string, namespace: string, phase: PodInfo['phase'] = 'Running'): PodInfo => ({ name: 'p', namespace, ips: [ip], phase, terminating: false, labels: undefined, version: undefined, owner: undefined });
  const k8s = (podMode: string): KubernetesView => ({
    config: { zones: ['cluster.local.'], podMode },
    source: { store: { podsByIP: (ip: string) => [pod('10.244.0.5', 'ns1'), pod('10.244.0.6', 'ns2', 'Succeeded')].filter((p) => p.ips.includes(ip)) } },
  });
  const K8S: AutopathConfig = { zones: ['.'], source: { kind: 'kubernetes' }, hostSearch: ['corp.test.'], optionCode: CODE };
  const podCases: Array<{ name: string; client: string; podMode: string; asked: string[] }> = [
    { name: 'a running pod gets its namespace\'s search list', client: '10.244.0.5', podMode: 'verified', asked: ['x.ns1.svc.cluster.local.', 'x.svc.cluster.local.', 'x.cluster.local.', 'x.corp.test.', 'x.'] },
    { name: 'a pod that is not running is not used', client: '10.244.0.6', podMode: 'verified', asked: ['x.ns1.svc.cluster.local.'] },
    { name: 'an unknown client passes', client: '10.9.9.9', podMode: 'verified', asked: ['x.ns1.svc.cluster.local.'] },
    { name: 'without pods verified nothing is expanded', client: '10.244.0.5', podMode: 'insecure', asked: ['x.ns1.svc.cluster.local.'] },
  ];
  for (const c of podCases) {
    test(`@kubernetes: ${c.name}`, async () => {
      const { p } = plugin(K8S, k8s(c.podMode));
      const { next, asked } = chain({});
      const req = query('x.ns1.svc.cluster.local.', RRType.A, undefined, c.client);
      await p.serve(req, next);
      assert.deepEqual(
        asked.map((a) => a.name),
        c.asked,
      );
    });
  }
  test('@kubernetes without a kubernetes plugin fails at start', () => {
    const p = new AutopathPlugin(K8S, { metrics: autopathMetrics(new Registry(), 's'), log: createLogger(() => undefined), findKubernetes: () => undefined, configError: (m) => new Error(m) });
    assert.throws(() => p.start(), { message: 'autopath @kubernetes: this server block has no kubernetes plugin' });
  });
});
