// Query classes other than IN, as CoreDNS treats them: a server with neither `chaos` nor
// `forward` in any of its blocks REFUSES them before routing; otherwise they reach the plugins,
// and kubernetes and hosts answer them from their (IN) data. Never SERVFAIL, which resolvers
// count against the server. Real dig, a real named behind forward.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dig } from '../../test/util/dig.js';
import { DEMO_CLUSTER_PLUGINS } from '../../test/util/fuzz.js';
import { freePort } from '../../test/util/net.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { exampleZone, missing, namedUpstream, rootZone, type NamedUpstream } from '../../test/util/upstream.js';

const skip = missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils');
const CLUSTER_PLUGINS = `${DEMO_CLUSTER_PLUGINS}\n    cache 30`;

/** Each class asked: how dig's -c takes it, and how dig prints it. */
const CLASSES: Array<{ arg: string; shown: string }> = [
  { arg: 'CH', shown: 'CH' },
  { arg: 'HS', shown: 'HS' },
  { arg: 'CLASS254', shown: 'NONE' },
  { arg: 'ANY', shown: 'ANY' },
];

describe('query classes other than IN', { skip }, () => {
  let named: NamedUpstream;
  let withForward: TestServer;
  let clusterOnly: TestServer;

  before(async () => {
    named = namedUpstream({ zones: { 'example.test': exampleZone(), '': rootZone() }, port: await freePort() });
    await named.start();
    withForward = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n${CLUSTER_PLUGINS}\n    forward . 127.0.0.1:${named.port}\n}\n`);
    clusterOnly = await startTestServer(`.:{PORT} {\n    bind 127.0.0.1\n${CLUSTER_PLUGINS}\n}\n`);
  });
  after(async () => {
    await withForward?.stop();
    await clusterOnly?.stop();
    await named?.dispose();
  });

  const answered: Array<{ what: string; name: string; type: string; status: string; answer: string[] }> = [
    { what: 'a kubernetes service', name: 'web.demo.svc.cluster.local', type: 'A', status: 'NOERROR', answer: ['web.demo.svc.cluster.local. IN A 10.96.100.10'] },
    { what: 'a kubernetes name that does not exist', name: 'nope.demo.svc.cluster.local', type: 'A', status: 'NXDOMAIN', answer: [] },
    { what: 'a hosts name', name: 'x.example.org', type: 'A', status: 'NOERROR', answer: ['x.example.org. IN A 10.9.9.9'] },
  ];
  for (const { arg: klass, shown } of CLASSES) {
    for (const c of answered) {
      it(`beside forward, ${klass} for ${c.what} is answered from the cluster's data, authoritatively`, async () => {
        // Twice: the second comes from the answers kubernetes keeps encoded (and from cache).
        for (let round = 0; round < 2; round++) {
          const r = await dig(c.name, c.type, { port: withForward.port, args: ['-c', klass] });
          assert.equal(r.status, c.status, r.raw);
          assert.ok(r.flags.includes('aa'), `aa in ${r.flags.join(' ')}`);
          assert.deepEqual(
            r.answer.map((a) => `${a.name} ${a.class} ${a.type} ${a.data}`),
            c.answer,
          );
          assert.match(r.raw, new RegExp(`^;${c.name.replaceAll('.', '\\.')}\\.\\s+${shown}\\s+${c.type}$`, 'm'), 'question echoed with its class');
        }
      });
    }
    it(`without chaos or forward in the server, ${klass} is REFUSED`, async () => {
      const r = await dig('web.demo.svc.cluster.local', 'A', { port: clusterOnly.port, args: ['-c', klass] });
      assert.equal(r.status, 'REFUSED', r.raw);
    });
  }

  it('IN is unchanged next to them', async () => {
    for (const s of [withForward, clusterOnly]) {
      const r = await dig('web.demo.svc.cluster.local', 'A', { port: s.port });
      assert.equal(r.status, 'NOERROR', r.raw);
      assert.deepEqual(r.answer.map((a) => a.data), ['10.96.100.10']);
    }
  });
});
