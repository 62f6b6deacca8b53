// The etcd plugin inside a running kdns, asked with the real dig: SkyDNS records written with
// etcdctl to a real etcd started by the test — over plain HTTP, then over TLS with client
// certificates (made by openssl) — plus a key on a lease, a record added while serving, an
// out-of-zone CNAME resolved through `forward` by a real BIND, and SERVFAIL when etcd is gone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dig, type DigRecord } from '../../../test/util/dig.js';
import { startEtcd, type TestEtcd } from '../../../test/util/etcd.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { freePort } from '../../../test/util/net.js';
import { missing, startNamed, type NamedServer } from '../../../test/util/upstream.js';

const line = (r: DigRecord): string => `${r.name} ${r.ttl} ${r.type} ${r.data}`;

async function ask(port: number, name: string, type: string): Promise<string[]> {
  const r = await dig(name, type, { port });
  return [r.status, ...r.answer.map(line).sort(), ...r.additional.map(line).sort()];
}


describe('etcd end to end', { skip: missing('etcd', 'etcd-server') ?? missing('named', 'bind9') }, () => {
  let etcd: TestEtcd;
  let srv: TestServer;
  let named: NamedServer;
  before(async () => {
    named = await startNamed(await freePort(), { 'example.net': 'www 300 IN A 203.0.113.80' });
    etcd = await startEtcd();
    await etcd.put('/skydns/local/skydns/web/x1', '{"host":"10.0.0.1","port":80,"ttl":60}');
    await etcd.put('/skydns/local/skydns/web/x2', '{"host":"10.0.0.2","port":80,"ttl":60}');
    await etcd.put('/skydns/local/skydns/out', '{"host":"www.example.net"}');
    await etcd.put('/skydns/local/skydns/leased', '{"host":"10.0.0.9"}', { leaseSeconds: 40 });
    await etcd.put('/skydns/arpa/in-addr/10/0/0/1', '{"host":"web.skydns.local."}');
    srv = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    etcd skydns.local 10.0.0.0/24 {
        endpoint ${etcd.endpoint}
        min-lease-ttl 5
        max-lease-ttl 20
    }
    forward . 127.0.0.1:${named.port}
}
`);
  });
  after(async () => {
    await srv?.stop();
    await etcd?.stop();
    await named?.stop();
  });

  test('answers', async () => {
    const rows: Array<[string, string, string[]]> = [
      ['web.skydns.local', 'A', ['NOERROR', 'web.skydns.local. 60 A 10.0.0.1', 'web.skydns.local. 60 A 10.0.0.2']],
      ['web.skydns.local', 'SRV', ['NOERROR', 'web.skydns.local. 60 SRV 10 50 80 x1.web.skydns.local.', 'web.skydns.local. 60 SRV 10 50 80 x2.web.skydns.local.', 'x1.web.skydns.local. 60 A 10.0.0.1', 'x2.web.skydns.local. 60 A 10.0.0.2']],
      ['out.skydns.local', 'A', ['NOERROR', 'out.skydns.local. 300 CNAME www.example.net.', 'www.example.net. 300 A 203.0.113.80']],
      // A lease of 40 s, clamped to max-lease-ttl 20.
      ['leased.skydns.local', 'A', ['NOERROR', 'leased.skydns.local. 20 A 10.0.0.9']],
      ['1.0.0.10.in-addr.arpa', 'PTR', ['NOERROR', '1.0.0.10.in-addr.arpa. 300 PTR web.skydns.local.']],
      ['nope.skydns.local', 'A', ['NXDOMAIN']],
      ['web.skydns.local', 'MX', ['NOERROR']],
    ];
    for (const [name, type, want] of rows) assert.deepEqual(await ask(srv.port, name, type), want, `${name} ${type}`);
    const r = await dig('nope.skydns.local', 'A', { port: srv.port });
    assert.ok(r.flags.includes('aa'));
    assert.match(line(r.authority[0] as DigRecord), /^skydns\.local\. 30 SOA ns\.dns\.skydns\.local\. hostmaster\.skydns\.local\. \d+ 7200 1800 86400 30$/);
  });

  test('etcd is read on every query: a key written while serving is answered at once', async () => {
    await etcd.put('/skydns/local/skydns/late', '{"host":"10.0.0.7"}');
    assert.deepEqual(await ask(srv.port, 'late.skydns.local', 'A'), ['NOERROR', 'late.skydns.local. 300 A 10.0.0.7']);
  });

  test('a key that is not SkyDNS JSON is SERVFAIL, not a crash', async () => {
    await etcd.put('/skydns/local/skydns/broken', 'not json');
    assert.deepEqual(await ask(srv.port, 'broken.skydns.local', 'A'), ['SERVFAIL']);
    assert.deepEqual(await ask(srv.port, 'web.skydns.local', 'A'), ['NOERROR', 'web.skydns.local. 60 A 10.0.0.1', 'web.skydns.local. 60 A 10.0.0.2']);
  });
});

describe('etcd end to end over TLS with client certificates', { skip: missing('etcd', 'etcd-server') ?? missing('openssl', 'openssl') }, () => {
  let etcd: TestEtcd;
  let srv: TestServer;
  before(async () => {
    etcd = await startEtcd({ tls: true });
    await etcd.put('/skydns/local/skydns/secure', '{"host":"10.0.1.1"}');
    const c = etcd.certs!;
    srv = await startTestServer(`skydns.local:{PORT} {
    bind 127.0.0.1
    etcd {
        endpoint ${etcd.endpoint}
        tls ${c.clientCert} ${c.clientKey} ${c.ca}
    }
}
noclient.local:{PORT} {
    bind 127.0.0.1
    etcd {
        endpoint ${etcd.endpoint}
        tls ${c.ca}
    }
}
`);
  });
  after(async () => {
    await srv?.stop();
    await etcd?.stop();
  });

  test('with the client certificate the records are read', async () => {
    assert.deepEqual(await ask(srv.port, 'secure.skydns.local', 'A'), ['NOERROR', 'secure.skydns.local. 300 A 10.0.1.1']);
  });

  test('without one etcd refuses the connection and the answer is SERVFAIL', async () => {
    assert.deepEqual(await ask(srv.port, 'secure.noclient.local', 'A'), ['SERVFAIL']);
  });

  test('etcd gone: SERVFAIL, and the server keeps serving', async () => {
    await etcd.stop();
    assert.deepEqual(await ask(srv.port, 'secure.skydns.local', 'A'), ['SERVFAIL']);
  });
});

describe('etcd end to end with credentials', { skip: missing('etcd', 'etcd-server') }, () => {
  let etcd: TestEtcd;
  let srv: TestServer;
  before(async () => {
    etcd = await startEtcd();
    await etcd.put('/skydns/local/skydns/private', '{"host":"10.0.2.1"}');
    await etcd.enableAuth('s3cret');
    srv = await startTestServer(`skydns.local:{PORT} {
    bind 127.0.0.1
    etcd {
        endpoint ${etcd.endpoint}
        credentials root s3cret
    }
}
wrong.local:{PORT} {
    bind 127.0.0.1
    etcd {
        endpoint ${etcd.endpoint}
        credentials root guess
    }
}
anonymous.local:{PORT} {
    bind 127.0.0.1
    etcd {
        endpoint ${etcd.endpoint}
    }
}
`);
  });
  after(async () => {
    await srv?.stop();
    await etcd?.stop();
  });

  test('the right password reads; a wrong one or none is SERVFAIL', async () => {
    assert.deepEqual(await ask(srv.port, 'private.skydns.local', 'A'), ['NOERROR', 'private.skydns.local. 300 A 10.0.2.1']);
    assert.deepEqual(await ask(srv.port, 'private.wrong.local', 'A'), ['SERVFAIL']);
    assert.deepEqual(await ask(srv.port, 'private.anonymous.local', 'A'), ['SERVFAIL']);
  });
});
