import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { autopathName, rewriteQueries } from './autopath.js';

describe('bench autopath', () => {
  it('writes a name as a ClusterFirstWithAutopath pod of the namespace asks it', () => {
    assert.equal(autopathName('api-svc-0.example.test.', 'shop-prod'), 'api-svc-0.example.test.search.shop-prod.cluster.local.ap.k8s.io');
  });

  it('rewrites every name of a dnsperf file and keeps its types', () => {
    assert.equal(rewriteQueries('a.example.test A\nm1.miss.example.test AAAA\n', 'ns1'), 'a.example.test.search.ns1.cluster.local.ap.k8s.io A\nm1.miss.example.test.search.ns1.cluster.local.ap.k8s.io AAAA\n');
  });
});
