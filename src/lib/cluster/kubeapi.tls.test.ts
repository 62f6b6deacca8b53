// The watch request kdns makes itself, over TLS as in a cluster: the API server's CA verified,
// and the credentials of each form sent (a client certificate, a bearer token), both through a
// kubeconfig (client-node) and through kdns's own access for `endpoint` and in-cluster.
// The API server here is a real HTTPS server with certificates from openssl, answering one watch.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { makeTestCerts, type TestCerts } from '../../../test/util/certs.js';
import { endpointAccess, inClusterAccess, loadKubeConfig, watchApi, watchStream, type ApiAccess, type KubeApiSpec } from './kubeapi.js';

const hasOpenssl = ((): boolean => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const skip = !hasOpenssl && process.env['CI'] !== 'true' ? 'needs openssl (Debian package openssl)' : false;

interface Seen {
  authorization: string | undefined;
  clientCertCN: string | undefined;
  url: string;
}

describe('watch over TLS', { skip }, () => {
  let certs: TestCerts;
  let server: Server;
  let base: string;
  const seen: Seen[] = [];

  before(async () => {
    certs = makeTestCerts();
    server = createServer(
      { cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey), ca: readFileSync(certs.ca), requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        const cn = peer.subject?.CN;
        seen.push({ authorization: req.headers.authorization, clientCertCN: typeof cn === 'string' ? cn : undefined, url: req.url ?? '' });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        // Two events, the second split across writes as a stream may deliver it, then the end of the watch.
        res.write('{"type":"ADDED","object":{"metadata":{"name":"web","resourceVersion":"7"}}}\n{"type":"BOOK');
        setTimeout(() => res.end('MARK","object":{"metadata":{"resourceVersion":"8"}}}\n'), 20);
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server?.close());

  const tokenKubeconfig = (): string => {
    const file = join(certs.dir, 'kubeconfig');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: base, 'certificate-authority': certs.ca } }],
        users: [{ name: 'u', user: { token: 'sa-token' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    return file;
  };

  const cases: Array<{ what: string; spec: () => KubeApiSpec; want: Omit<Seen, 'url'> }> = [
    {
      what: 'endpoint with tls cert key ca (the Corefile form): the client certificate',
      spec: () => ({ endpoint: base, tls: { cert: certs.clientCert, key: certs.clientKey, ca: certs.ca }, resyncMs: 0 }),
      want: { authorization: undefined, clientCertCN: 'client' },
    },
    {
      what: 'a kubeconfig with a CA and a token: the bearer token',
      spec: () => ({ kubeconfig: { path: tokenKubeconfig() }, resyncMs: 0 }),
      want: { authorization: 'Bearer sa-token', clientCertCN: undefined },
    },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const kc = await loadKubeConfig(c.spec());
      const events: Array<[string, unknown]> = [];
      seen.length = 0;
      const client = await import('@kubernetes/client-node');
      await watchStream(client, kc, '/api/v1/services', { resourceVersion: '5', allowWatchBookmarks: true }, 5000, (type, obj) => events.push([type, obj]), {
        onController: () => {},
        stopped: () => false,
      });
      assert.deepEqual(events, [
        ['ADDED', { metadata: { name: 'web', resourceVersion: '7' } }],
        ['BOOKMARK', { metadata: { resourceVersion: '8' } }],
      ]);
      assert.deepEqual(seen, [{ ...c.want, url: '/api/v1/services?watch=true&resourceVersion=5&allowWatchBookmarks=true' }]);
    });
  }

  test('a server certificate the kubeconfig CA did not sign is refused', async () => {
    const other = makeTestCerts();
    const kc = await loadKubeConfig({ endpoint: base, tls: { cert: other.clientCert, key: other.clientKey, ca: other.ca }, resyncMs: 0 });
    const client = await import('@kubernetes/client-node');
    await assert.rejects(
      watchStream(client, kc, '/api/v1/services', {}, 5000, () => {}, { onController: () => {}, stopped: () => false }),
      /^Error: watch \/api\/v1\/services: .*(self.signed|unable to verify|certificate)/i,
    );
  });
  /** A service account folder as the kubelet mounts it: the cluster's CA and a token. */
  const serviceAccount = (token: string): string => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-sa-'));
    copyFileSync(certs.ca, join(dir, 'ca.crt'));
    writeFileSync(join(dir, 'token'), `${token}\n`);
    return dir;
  };
  const inCluster = (dir: string): ApiAccess => inClusterAccess({ KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: base.split(':')[2] }, dir);
  const watchOnce = (access: ApiAccess): Promise<void> =>
    watchApi(access, '/api/v1/services', { resourceVersion: '5' }, 5000, () => {}, { onController: () => {}, stopped: () => false });

  const ownCases: Array<{ what: string; access: () => ApiAccess; want: Omit<Seen, 'url'> }> = [
    {
      what: "kdns's own access, endpoint with tls cert key ca: the client certificate",
      access: () => endpointAccess(base, { cert: certs.clientCert, key: certs.clientKey, ca: certs.ca }),
      want: { authorization: undefined, clientCertCN: 'client' },
    },
    {
      what: "kdns's own access, in-cluster: the service account's token, the server verified with its CA",
      access: () => inCluster(serviceAccount('sa-token-1')),
      want: { authorization: 'Bearer sa-token-1', clientCertCN: undefined },
    },
  ];
  for (const c of ownCases) {
    test(c.what, async () => {
      seen.length = 0;
      await watchOnce(c.access());
      assert.deepEqual(seen, [{ ...c.want, url: '/api/v1/services?watch=true&resourceVersion=5' }]);
    });
  }

  test("kdns's own access, in-cluster: a token the kubelet replaced is sent from the next request on", async () => {
    const dir = serviceAccount('before');
    const access = inCluster(dir);
    seen.length = 0;
    await watchOnce(access);
    writeFileSync(join(dir, 'token'), 'after\n');
    await watchOnce(access);
    assert.deepEqual(
      seen.map((s) => s.authorization),
      ['Bearer before', 'Bearer after'],
    );
  });

  test("kdns's own access: a server certificate the endpoint's CA did not sign is refused", async () => {
    const other = makeTestCerts();
    await assert.rejects(watchOnce(endpointAccess(base, { cert: other.clientCert, key: other.clientKey, ca: other.ca })), /^Error: watch \/api\/v1\/services: .*(self.signed|unable to verify|certificate)/i);
  });
});
