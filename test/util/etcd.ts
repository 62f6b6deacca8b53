// A real etcd (Debian's etcd-server) for the etcd plugin's tests: started on free loopback
// ports in a temporary data directory, optionally with TLS and client certificates made by
// openssl; keys are written with the real etcdctl (etcd-client).
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitFor } from './net.js';

const run = promisify(execFile);

export interface EtcdCerts {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

export interface TestEtcd {
  /** The client URL (http:// or https://). */
  endpoint: string;
  certs?: EtcdCerts;
  put(key: string, value: string, opts?: { leaseSeconds?: number }): Promise<void>;
  del(key: string, prefix?: boolean): Promise<void>;
  /** Creates the root user with this password and turns authentication on. */
  enableAuth(password: string): Promise<void>;
  stop(): Promise<void>;
}

function openssl(args: string[]): void {
  const r = spawnSync('openssl', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA. */
export function makeEtcdCerts(dir: string): EtcdCerts {
  const p = (f: string): string => join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-days', '2', '-subj', '/CN=kdns test CA', '-keyout', p('ca-key.pem'), '-out', p('ca.pem')]);
  // Extensions are given to `x509 -extfile` (-copy_extensions is not in every openssl).
  const sign = (name: string, ext: string): void => {
    openssl(['req', ...ec, '-subj', `/CN=${name}`, '-keyout', p(`${name}-key.pem`), '-out', p(`${name}.csr`)]);
    writeFileSync(p(`${name}.ext`), `${ext}\n`);
    openssl(['x509', '-req', '-in', p(`${name}.csr`), '-CA', p('ca.pem'), '-CAkey', p('ca-key.pem'), '-CAcreateserial', '-days', '2', '-out', p(`${name}.pem`), '-extfile', p(`${name}.ext`)]);
  };
  sign('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost');
  sign('client', 'extendedKeyUsage=clientAuth');
  return { ca: p('ca.pem'), serverCert: p('server.pem'), serverKey: p('server-key.pem'), clientCert: p('client.pem'), clientKey: p('client-key.pem') };
}

/** Starts etcd; with `tls`, clients must present a certificate signed by the test CA. */
export async function startEtcd(opts: { tls?: boolean } = {}): Promise<TestEtcd> {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-etcd-'));
  const certs = opts.tls ? makeEtcdCerts(dir) : undefined;
  const clientPort = await freePort();
  const peerPort = await freePort();
  const scheme = certs ? 'https' : 'http';
  const endpoint = `${scheme}://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name',
    'kdns-test',
    '--data-dir',
    join(dir, 'data'),
    '--listen-client-urls',
    endpoint,
    '--advertise-client-urls',
    endpoint,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    `kdns-test=${peer}`,
    '--log-level',
    'error',
    ...(certs ? ['--cert-file', certs.serverCert, '--key-file', certs.serverKey, '--trusted-ca-file', certs.ca, '--client-cert-auth'] : []),
  ];
  const child: ChildProcess = spawn('etcd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const ctl = (cmd: string[]): Promise<{ stdout: string }> =>
    run('etcdctl', ['--endpoints', endpoint, ...(certs ? ['--cacert', certs.ca, '--cert', certs.clientCert, '--key', certs.clientKey] : []), ...cmd], {
      env: { ...process.env, ETCDCTL_API: '3' },
      timeout: 10_000,
    });
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`etcd exited: ${stderr}`);
        try {
          await ctl(['endpoint', 'health']);
          return true;
        } catch {
          return false;
        }
      },
      20_000,
      100,
    );
  } catch (e) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    endpoint,
    ...(certs ? { certs } : {}),
    async put(key, value, o = {}) {
      if (o.leaseSeconds === undefined) {
        await ctl(['put', key, value]);
        return;
      }
      const grant = await ctl(['lease', 'grant', String(o.leaseSeconds)]);
      const id = /lease ([0-9a-f]+) granted/.exec(grant.stdout)?.[1];
      if (!id) throw new Error(`etcdctl lease grant: ${grant.stdout}`);
      await ctl(['put', '--lease', id, key, value]);
    },
    async enableAuth(password) {
      await ctl(['user', 'add', `root:${password}`]);
      await ctl(['auth', 'enable']);
    },
    async del(key, prefix = false) {
      await ctl(['del', ...(prefix ? ['--prefix'] : []), key]);
    },
    async stop() {
      // Idempotent: a test may stop etcd to see kdns cope, and `after` stops it again.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
