// The pure parts of autopath: splitting ap.k8s.io names, the candidate list, resolv.conf search
// lines and the EDNS0 option's bytes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { candidateNames, clusterSearchPaths, parseApName, searchFromResolvConf, type ApName } from './apnames.js';
import { decodeSearchPaths, encodeSearchPaths, withOption, withoutOption } from './searchoption.js';

describe('parseApName', () => {
  const cases: Array<{ name: string; qname: string; known?: string[]; want: ApName | undefined }> = [
    { name: 'a short name', qname: 'api.search.ns1.cluster.local.ap.k8s.io.', want: { base: 'api', namespace: 'ns1', zone: 'cluster.local.' } },
    { name: 'a dotted name keeps its case', qname: 'WWW.Example.test.search.ns1.cluster.local.ap.k8s.io.', want: { base: 'WWW.Example.test', namespace: 'ns1', zone: 'cluster.local.' } },
    { name: 'suffix and namespace in any case', qname: 'api.SEARCH.Ns1.Cluster.Local.AP.K8S.IO.', want: { base: 'api', namespace: 'ns1', zone: 'cluster.local.' } },
    { name: 'a name with a "search" label of its own', qname: 'a.search.b.search.ns1.cluster.local.ap.k8s.io.', want: { base: 'a.search.b', namespace: 'ns1', zone: 'cluster.local.' } },
    { name: 'a one-label zone', qname: 'api.search.ns1.k8s.ap.k8s.io.', want: { base: 'api', namespace: 'ns1', zone: 'k8s.' } },
    { name: 'no cluster domain (kubelet --cluster-domain "")', qname: 'api.search.ns1.ap.k8s.io.', want: { base: 'api', namespace: 'ns1', zone: '' } },
    {
      name: 'a known zone with a "search" label anchors the split',
      qname: 'api.search.ns1.search.example.ap.k8s.io.',
      known: ['search.example.'],
      want: { base: 'api', namespace: 'ns1', zone: 'search.example.' },
    },
    {
      name: 'the same name without the known zone splits at the rightmost "search"',
      qname: 'api.search.ns1.search.example.ap.k8s.io.',
      want: { base: 'api.search.ns1', namespace: 'example', zone: '' },
    },
    { name: 'a known zone that does not fit falls back', qname: 'api.search.ns1.other.zone.ap.k8s.io.', known: ['cluster.local.'], want: { base: 'api', namespace: 'ns1', zone: 'other.zone.' } },
    { name: 'no base', qname: 'search.ns1.cluster.local.ap.k8s.io.', want: undefined },
    { name: 'no namespace', qname: 'api.search.ap.k8s.io.', want: undefined },
    { name: 'no search label', qname: 'api.ns1.cluster.local.ap.k8s.io.', want: undefined },
    { name: 'the zone apex', qname: 'ap.k8s.io.', want: undefined },
    { name: 'not under ap.k8s.io', qname: 'api.search.ns1.cluster.local.', want: undefined },
    { name: 'a look-alike suffix', qname: 'api.search.ns1.cluster.local.xap.k8s.io.', want: undefined },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(parseApName(c.qname, c.known), c.want));
  }
});

describe('candidateNames', () => {
  const cases: Array<{ name: string; base: string; paths: string[]; want: string[] }> = [
    {
      name: 'ClusterFirst order, host paths, then the name itself',
      base: 'api',
      paths: [...clusterSearchPaths('ns1', 'cluster.local.'), 'corp.test.'],
      want: ['api.ns1.svc.cluster.local.', 'api.svc.cluster.local.', 'api.cluster.local.', 'api.corp.test.', 'api.'],
    },
    { name: 'no search paths: only the name', base: 'www.example.test', paths: [], want: ['www.example.test.'] },
    { name: 'a repeated path is asked once', base: 'x', paths: ['a.test.', 'A.test.', 'b.test.'], want: ['x.a.test.', 'x.b.test.', 'x.'] },
    { name: 'a path under ap.k8s.io is never a candidate', base: 'x', paths: ['search.ns1.cluster.local.ap.k8s.io.', 'a.test.'], want: ['x.a.test.', 'x.'] },
    { name: 'a name that is already under ap.k8s.io is not asked as is', base: 'x.ap.k8s.io', paths: ['a.test.'], want: ['x.ap.k8s.io.a.test.'] },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(candidateNames(c.base, c.paths), c.want));
  }
  test('no cluster zone: no cluster paths', () => assert.deepEqual(clusterSearchPaths('ns1', ''), []));
});

describe('searchFromResolvConf', () => {
  const cases: Array<{ name: string; text: string; want: string[] }> = [
    { name: 'search line', text: 'nameserver 10.0.0.1\nsearch corp.test lab.test\n', want: ['corp.test.', 'lab.test.'] },
    { name: 'the last search or domain line wins', text: 'search a.test\ndomain b.test\n', want: ['b.test.'] },
    { name: 'domain then search', text: 'domain b.test\nsearch a.test c.test\n', want: ['a.test.', 'c.test.'] },
    { name: 'comments, trailing dots, root and case', text: '# search no.test\nsearch Corp.Test. . lab.test ; x.test\n', want: ['corp.test.', 'lab.test.'] },
    { name: 'no search line', text: 'nameserver 10.0.0.1\n', want: [] },
    { name: 'invalid names are dropped', text: 'search ok.test bad..name\n', want: ['ok.test.'] },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(searchFromResolvConf(c.text), c.want));
  }
});

describe('the search-path option', () => {
  test('encodes as a comma-separated list without trailing dots', () => {
    assert.equal(Buffer.from(encodeSearchPaths(['ns1.svc.cluster.local.', 'svc.cluster.local.', 'corp.test.'])).toString(), 'ns1.svc.cluster.local,svc.cluster.local,corp.test');
  });
  const cases: Array<{ name: string; text: string; want: string[] | { error: string } }> = [
    { name: 'a plain list', text: 'ns1.svc.cluster.local,svc.cluster.local', want: ['ns1.svc.cluster.local.', 'svc.cluster.local.'] },
    { name: 'trimmed, absolute, lower-cased, repeats and empties dropped', text: ' A.test. ,,b.test, a.test ,.', want: ['a.test.', 'b.test.'] },
    { name: 'empty: no search paths', text: '', want: [] },
    { name: 'a bad name rejects the option', text: 'ok.test,bad..test', want: { error: '"bad..test" is not a domain name' } },
    { name: 'binary rejects the option', text: 'ok.test\u0001', want: { error: 'byte 0x01 is not printable ASCII' } },
    { name: 'more than 32 paths rejects the option', text: Array.from({ length: 33 }, (_, i) => `d${i}.test`).join(','), want: { error: '33 search paths (at most 32)' } },
  ];
  for (const c of cases) {
    test(`decode: ${c.name}`, () => assert.deepEqual(decodeSearchPaths(new Uint8Array(Buffer.from(c.text, 'latin1'))), c.want));
  }
  test('withOption replaces an option of the same code and keeps the others', () => {
    const edns = { udpSize: 4096, version: 0, do: true, zFlags: 0, options: [{ code: 10, data: new Uint8Array([1]) }, { code: 65534, data: new Uint8Array([2]) }] };
    const out = withOption(edns, 65534, new Uint8Array([3]));
    assert.deepEqual(out.options.map((o) => [o.code, [...o.data]]), [[10, [1]], [65534, [3]]]);
    assert.equal(out.udpSize, 4096);
    assert.equal(out.do, true);
  });
  test('withOption makes an OPT for a client without EDNS', () => {
    const out = withOption(undefined, 65534, new Uint8Array([3]));
    assert.deepEqual({ ...out, options: out.options.length }, { udpSize: 1232, version: 0, do: false, zFlags: 0, options: 1 });
  });
  test('withoutOption drops only that code', () => {
    const edns = { udpSize: 1232, version: 0, do: false, zFlags: 0, options: [{ code: 10, data: new Uint8Array([1]) }, { code: 65534, data: new Uint8Array([2]) }] };
    assert.deepEqual(withoutOption(edns, 65534)?.options.map((o) => o.code), [10]);
    assert.equal(withoutOption(undefined, 65534), undefined);
  });
});
