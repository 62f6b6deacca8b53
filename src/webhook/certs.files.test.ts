// The file-backed certificate source on a directory laid out as the kubelet lays out a Secret
// volume: the files live in a timestamped directory, `..data` links to it, and tls.crt/tls.key
// link through `..data`; an update writes a new directory and renames a new `..data` link over
// the old one (one atomic step), then removes the old directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep, waitFor } from '../../test/util/net.js';
import { issueCa, issueServingCert, startFileCertSource, validityFrom } from './certs.js';
import type { CertKeyPem, CertSource, TlsMaterial } from './certs.js';

const DNS_NAMES = ['kdns-webhook.kdns.svc'];
const POLL_MS = 40;

/** A Secret volume: `files` by name, swapped in as the kubelet does. */
class SecretVolume {
  readonly dir = mkdtempSync(join(tmpdir(), 'kdns-secret-volume-'));
  private version = 0;

  constructor(files: Record<string, string | { directory: true }>) {
    this.update(files);
    for (const name of ['tls.crt', 'tls.key', 'ca.crt']) symlinkSync(join('..data', name), join(this.dir, name));
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  update(files: Record<string, string | { directory: true }>): void {
    const versionDir = `..2030_01_01_00_00_00.${String(++this.version).padStart(9, '0')}`;
    mkdirSync(join(this.dir, versionDir));
    for (const [name, content] of Object.entries(files)) {
      if (typeof content === 'string') writeFileSync(join(this.dir, versionDir, name), content);
      else mkdirSync(join(this.dir, versionDir, name));
    }
    let old: string | undefined;
    try {
      old = readlinkSync(join(this.dir, '..data'));
    } catch {
      old = undefined;
    }
    symlinkSync(versionDir, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    if (old !== undefined) rmSync(join(this.dir, old), { recursive: true });
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function pair(ca: CertKeyPem): Promise<CertKeyPem> {
  return issueServingCert(ca, DNS_NAMES, validityFrom(Date.now(), 3600_000));
}

const files = (p: CertKeyPem, ca?: CertKeyPem): Record<string, string> => ({ 'tls.crt': p.certPem, 'tls.key': p.keyPem, ...(ca ? { 'ca.crt': ca.certPem } : {}) });

async function withVolume(initial: Record<string, string>, body: (v: SecretVolume, source: CertSource, logs: string[], changes: TlsMaterial[]) => Promise<void>): Promise<void> {
  const v = new SecretVolume(initial);
  const logs: string[] = [];
  const changes: TlsMaterial[] = [];
  const source = await startFileCertSource({ certFile: v.path('tls.crt'), keyFile: v.path('tls.key'), caFile: v.path('ca.crt'), pollMs: POLL_MS, log: (l) => logs.push(l) });
  source.onChange((m) => changes.push(m));
  try {
    await body(v, source, logs, changes);
  } finally {
    await source.close();
    v.remove();
  }
}

test('a new pair swapped in through ..data is served from the next poll on', async () => {
  const ca = await issueCa('ca', validityFrom(Date.now(), 3600_000));
  const first = await pair(ca);
  const second = await pair(ca);
  await withVolume(files(first, ca), async (v, source, logs, changes) => {
    assert.equal(source.current().certPem, first.certPem);
    assert.equal(source.current().caBundlePem, ca.certPem);
    assert.equal(source.current().notAfter.toISOString(), new Date(new X509Certificate(first.certPem).validTo).toISOString());
    await sleep(3 * POLL_MS);
    assert.equal(changes.length, 0, 'unchanged files are no change');
    v.update(files(second, ca));
    await waitFor(() => changes.length === 1, 3000, 10);
    assert.equal(source.current().certPem, second.certPem);
    assert.equal(source.current().keyPem, second.keyPem);
    assert.equal(changes[0]!.certPem, second.certPem);
    assert.deepEqual(logs, [`webhook certificates: loaded a new certificate from ${v.path('tls.crt')}, valid until ${new Date(new X509Certificate(second.certPem).validTo).toISOString()}`]);
  });
});

test('an unusable update keeps the last good pair in service, logged once, until a good one comes', async () => {
  const ca = await issueCa('ca', validityFrom(Date.now(), 3600_000));
  const good = await pair(ca);
  const other = await pair(ca);
  const recovered = await pair(ca);
  const cases: Array<{ name: string; update: Record<string, string | { directory: true }>; log: (v: SecretVolume) => string }> = [
    { name: 'files gone', update: {}, log: (v) => `certificate ${v.path('tls.crt')}: ENOENT` },
    { name: 'a directory where the certificate was', update: { 'tls.crt': { directory: true }, 'tls.key': good.keyPem }, log: (v) => `certificate ${v.path('tls.crt')}: EISDIR` },
    { name: 'garbage certificate', update: { 'tls.crt': 'garbage', 'tls.key': good.keyPem }, log: (v) => `certificate ${v.path('tls.crt')}: not a PEM certificate (` },
    { name: 'garbage key', update: { 'tls.crt': good.certPem, 'tls.key': 'garbage' }, log: (v) => `key ${v.path('tls.key')}: not a PEM private key (` },
    { name: 'the key of another certificate', update: { 'tls.crt': good.certPem, 'tls.key': other.keyPem }, log: (v) => `key ${v.path('tls.key')}: does not match the certificate in ${v.path('tls.crt')}` },
  ];
  for (const c of cases) {
    await withVolume(files(good), async (v, source, logs, changes) => {
      v.update(c.update);
      await waitFor(() => logs.length > 0, 3000, 10);
      await sleep(4 * POLL_MS);
      assert.equal(logs.length, 1, `${c.name}: logged once:\n${logs.join('\n')}`);
      assert.ok(logs[0]!.startsWith(`webhook certificates: ${c.log(v)}`), `${c.name}: ${logs[0]}`);
      assert.ok(logs[0]!.endsWith(`; still serving the certificate valid until ${new Date(new X509Certificate(good.certPem).validTo).toISOString()}`), `${c.name}: ${logs[0]}`);
      assert.equal(source.current().certPem, good.certPem, c.name);
      assert.equal(changes.length, 0, c.name);
      v.update(files(recovered));
      await waitFor(() => changes.length === 1, 3000, 10);
      assert.equal(source.current().certPem, recovered.certPem, `${c.name}: recovered`);
    });
  }
});

test('unusable files at startup: the start fails naming the file', async () => {
  const ca = await issueCa('ca', validityFrom(Date.now(), 3600_000));
  const good = await pair(ca);
  const other = await pair(ca);
  const cases: Array<{ name: string; files: Record<string, string>; error: (v: SecretVolume) => string }> = [
    { name: 'no key', files: { 'tls.crt': good.certPem }, error: (v) => `key ${v.path('tls.key')}: ENOENT` },
    { name: 'garbage certificate', files: { 'tls.crt': 'garbage', 'tls.key': good.keyPem }, error: (v) => `certificate ${v.path('tls.crt')}: not a PEM certificate (` },
    { name: 'mismatched key', files: { 'tls.crt': good.certPem, 'tls.key': other.keyPem }, error: (v) => `key ${v.path('tls.key')}: does not match the certificate in ${v.path('tls.crt')}` },
  ];
  for (const c of cases) {
    const v = new SecretVolume(c.files);
    try {
      await assert.rejects(startFileCertSource({ certFile: v.path('tls.crt'), keyFile: v.path('tls.key'), log: () => {} }), (e: Error) => e.message.startsWith(c.error(v)), c.name);
    } finally {
      v.remove();
    }
  }
});
