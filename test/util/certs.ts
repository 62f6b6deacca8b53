// Test certificates made with the real openssl: a CA, a server certificate for 127.0.0.1 and
// localhost signed by it, a client certificate signed by it, and a client certificate from
// another CA (one that client_auth verification must refuse).
import { execFileSync } from 'node:child_process';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCerts {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Signed by a CA the server does not know. */
  strangerCert: string;
  strangerKey: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function selfSignedCa(dir: string, name: string): void {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.pem`], dir);
}

function signed(dir: string, name: string, ca: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`], dir);
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.pem`], dir);
}

export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-certs-'));
  selfSignedCa(dir, 'ca');
  selfSignedCa(dir, 'otherca');
  signed(dir, 'server', 'ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  signed(dir, 'client', 'ca', 'extendedKeyUsage=clientAuth\n');
  signed(dir, 'stranger', 'otherca', 'extendedKeyUsage=clientAuth\n');
  const p = (f: string): string => join(dir, f);
  return {
    dir,
    ca: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server.key'),
    clientCert: p('client.pem'),
    clientKey: p('client.key'),
    strangerCert: p('stranger.pem'),
    strangerKey: p('stranger.key'),
  };
}

/** A CA and a serving certificate for `dnsNames` (a webhook Service's names), made with openssl. */
export function makeServingCerts(dnsNames: readonly string[]): { ca: string; cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-certs-'));
  selfSignedCa(dir, 'ca');
  signed(dir, 'server', 'ca', `subjectAltName=${dnsNames.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`);
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') };
}

/**
 * A TLS handshake with an HTTPS server presenting `serving`, from a client trusting only
 * `caBundlePem` and checking `servername`: 'ok', or the client's error code.
 */
export async function tlsHandshake(serving: { certPem: string; keyPem: string }, caBundlePem: string, servername: string): Promise<string> {
  const server = createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string>((resolve) => {
      const req = httpsRequest({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername, ca: caBundlePem, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve('ok'));
      });
      req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      req.end();
    });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}
