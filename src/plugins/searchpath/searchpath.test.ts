// searchpath in a running kdns (the node cache's ap.k8s.io block), forwarding to a capture
// upstream: what the cluster DNS receives for each kind of query, asked with the real dig.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { startCapture, type CaptureServer } from '../../../test/util/capture.js';

function optionHex(text: string): string {
  return Buffer.from(text).toString('hex');
}

describe('searchpath end to end', () => {
  let capture: CaptureServer;
  let s: TestServer;
  before(async () => {
    capture = await startCapture();
    s = await startTestServer(
      `ap.k8s.io:{PORT} other.test:{PORT} {
    bind 127.0.0.1
    searchpath node-resolv.conf
    forward . 127.0.0.1:${capture.port} {
        force_tcp
    }
}
`,
      { files: { 'node-resolv.conf': 'nameserver 192.0.2.53\nsearch lab.test corp.test cluster.local\n' } },
    );
  });
  after(async () => {
    await s?.stop();
    await capture?.close();
  });

  const cases: Array<{ name: string; qname: string; args?: string[]; sent: string }> = [
    {
      name: 'a pod\'s search name gets its ClusterFirst list, node paths after the cluster ones (no repeats)',
      qname: 'api.search.ns1.cluster.local.ap.k8s.io',
      sent: 'tcp api.search.ns1.cluster.local.ap.k8s.io. 65534=ns1.svc.cluster.local,svc.cluster.local,cluster.local,lab.test,corp.test',
    },
    {
      name: 'without EDNS from the client too',
      qname: 'www.example.test.search.web.k8s.ap.k8s.io',
      args: ['+noedns'],
      sent: 'tcp www.example.test.search.web.k8s.ap.k8s.io. 65534=web.svc.k8s,svc.k8s,k8s,lab.test,corp.test,cluster.local',
    },
    {
      name: 'an option the client sent is replaced, its other options kept',
      qname: 'api.search.ns2.cluster.local.ap.k8s.io',
      args: [`+ednsopt=65534:${optionHex('evil.test')}`, `+ednsopt=65000:${optionHex('keep')}`],
      sent: 'tcp api.search.ns2.cluster.local.ap.k8s.io. 65000=keep 65534=ns2.svc.cluster.local,svc.cluster.local,cluster.local,lab.test,corp.test',
    },
    { name: 'a name under ap.k8s.io that is no search name goes on as is', qname: 'foo.ap.k8s.io', sent: 'tcp foo.ap.k8s.io.' },
    { name: 'another name: the client\'s option is removed', qname: 'x.other.test', args: [`+ednsopt=65534:${optionHex('evil.test')}`], sent: 'tcp x.other.test.' },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      capture.queries.length = 0;
      await dig(c.qname, 'A', { port: s.port, args: c.args ?? [] });
      assert.deepEqual(
        capture.queries.map((q) => [q.transport, q.name, ...q.options.map(([code, text]) => `${code}=${text}`)].join(' ')),
        [c.sent],
      );
    });
  }
});
