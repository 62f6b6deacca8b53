// The AA bit behind cache, as CoreDNS sets it: a reply the cache stores goes to the client that
// caused it as the plugin made it, and every later hit is authoritative. The case that showed
// it: once kubernetes keeps its maximum of negative answers, NXDOMAINs reach the cache as
// messages to store, and lost AA on the way.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { DnsClient } from '../../lib/dnsclient/client.js';
import { nameToWire } from '../../lib/dns/name.js';
import { buildQuery, headerRcode } from '../../lib/dns/wire.js';
import { dig } from '../../../test/util/dig.js';
import { missing } from '../../../test/util/upstream.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { MAX_KEPT_NAME_ERRORS } from '../kubernetes/index.js';

const CLUSTER = fileURLToPath(new URL('../../../examples/cluster', import.meta.url));
const skip = missing('dig', 'bind9-dnsutils');

/** The stock Corefile's cluster part, with or without cache. */
function corefile(cache: boolean): string {
  return `.:{PORT} {
    bind 127.0.0.1
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        manifests ${CLUSTER}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
${cache ? '    cache 30\n' : ''}}
`;
}

describe('AA on kubernetes answers behind cache', { skip }, () => {
  const servers = new Map<string, TestServer>();

  before(async () => {
    servers.set('cache', await startTestServer(corefile(true)));
    servers.set('no cache', await startTestServer(corefile(false)));
    // Fill kubernetes's store of negative answers past its maximum, as a client asking
    // MAX_KEPT_NAME_ERRORS + 50 names that do not exist does.
    for (const s of servers.values()) {
      const client = new DnsClient({ host: '127.0.0.1', port: s.port });
      try {
        const names = Array.from({ length: MAX_KEPT_NAME_ERRORS + 50 }, (_, i) => `s${i}.demo.svc.cluster.local.`);
        for (let i = 0; i < names.length; i += 200) {
          const replies = await Promise.all(names.slice(i, i + 200).map((n, k) => client.exchange(buildQuery(nameToWire(n), 1, 1, { id: k }), 'udp', 5000)));
          for (const r of replies) assert.equal(headerRcode(r), 3);
        }
      } finally {
        client.close();
      }
    }
  });
  after(async () => {
    await Promise.all([...servers.values()].map((s) => s.stop()));
  });

  const cases: Array<{ what: string; name: string; status: string }> = [
    { what: 'a name that does not exist, past the kept maximum', name: 'new-name-1.demo.svc.cluster.local', status: 'NXDOMAIN' },
    { what: 'a name that does not exist, asked with mixed case', name: 'New-Name-2.Demo.svc.cluster.local', status: 'NXDOMAIN' },
    { what: 'a service', name: 'web.demo.svc.cluster.local', status: 'NOERROR' },
    { what: 'a name under a namespace that does not exist', name: 'web.nowhere.svc.cluster.local', status: 'NXDOMAIN' },
  ];
  for (const setup of ['cache', 'no cache']) {
    for (const c of cases) {
      it(`${setup}: ${c.what} is ${c.status} with aa, the first time and the next`, async () => {
        const s = servers.get(setup) as TestServer;
        for (const round of ['first', 'next']) {
          const r = await dig(c.name, 'A', { port: s.port });
          assert.equal(r.status, c.status, r.raw);
          assert.deepEqual(r.flags, ['qr', 'aa', 'rd'], `${round} reply:\n${r.raw}`);
        }
      });
    }
  }
});
