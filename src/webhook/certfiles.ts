// Serving certificates from files: tls.crt and tls.key of a Secret mounted as a volume (issued by
// cert-manager, or by anyone). The kubelet updates such a volume atomically: it writes the new
// files into a fresh directory and swaps the `..data` symlink the visible names point through,
// so a read never sees half a file, but the certificate and the key are two reads and a swap can
// fall between them. Hence: poll, and take new contents only when two reads in a row agree and
// the key matches the certificate. Anything else (a file missing, garbage, a key of another
// certificate) keeps the last good pair in service and is logged once per distinct problem.

import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { CertSource, TlsMaterial } from './certs.js';

export interface FileCertSourceOptions {
  certFile: string;
  keyFile: string;
  /** CAs that signed the certificate (a cert-manager Secret's ca.crt), reported as caBundlePem; missing or not given: none. */
  caFile?: string;
  /** How often the files are read; default 2 s (the kubelet refreshes Secret volumes within about a minute). */
  pollMs?: number;
  log: (line: string) => void;
}

interface Snapshot {
  cert: string;
  key: string;
  ca: string;
}

const sameSnapshot = (a: Snapshot, b: Snapshot): boolean => a.cert === b.cert && a.key === b.key && a.ca === b.ca;

async function readText(path: string, field: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`${field} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** The CA file's text; none there is no CA (a Secret from a public issuer may carry no ca.crt). */
async function readCaText(path: string | undefined): Promise<string> {
  if (path === undefined) return '';
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new Error(`CA file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

async function readSnapshot(o: FileCertSourceOptions): Promise<Snapshot> {
  // Read together, but a problem is reported in a fixed order (certificate, key, CA): with both
  // files gone, whichever read failed first would otherwise name a different file each poll, and
  // a problem is logged once only while its text stays the same.
  const [cert, key, ca] = await Promise.allSettled([readText(o.certFile, 'certificate'), readText(o.keyFile, 'key'), readCaText(o.caFile)]);
  for (const r of [cert, key, ca]) if (r.status === 'rejected') throw r.reason;
  return { cert: (cert as PromiseFulfilledResult<string>).value, key: (key as PromiseFulfilledResult<string>).value, ca: (ca as PromiseFulfilledResult<string>).value };
}

/** The material a snapshot holds, or throws naming the file and what is wrong with it. */
export function materialOf(s: Snapshot, o: Pick<FileCertSourceOptions, 'certFile' | 'keyFile' | 'caFile'>): TlsMaterial {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(s.cert);
  } catch (e) {
    throw new Error(`certificate ${o.certFile}: not a PEM certificate (${(e as Error).message})`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(s.key);
  } catch (e) {
    throw new Error(`key ${o.keyFile}: not a PEM private key (${(e as Error).message})`);
  }
  if (!leaf.checkPrivateKey(key)) throw new Error(`key ${o.keyFile}: does not match the certificate in ${o.certFile}`);
  if (o.caFile !== undefined && s.ca.trim() !== '') {
    try {
      new X509Certificate(s.ca);
    } catch (e) {
      throw new Error(`CA file ${o.caFile}: not a PEM certificate (${(e as Error).message})`);
    }
  }
  try {
    // What the server will do with it: a chain or key that OpenSSL refuses is refused here.
    createSecureContext({ cert: s.cert, key: s.key });
  } catch (e) {
    throw new Error(`certificate ${o.certFile} with key ${o.keyFile}: ${(e as Error).message}`);
  }
  return { certPem: s.cert, keyPem: s.key, caBundlePem: s.ca, notAfter: new Date(leaf.validTo) };
}

class FileSource implements CertSource {
  private readonly listeners: Array<(m: TlsMaterial) => void> = [];
  private lastProblem: string | undefined;
  private readonly timer: NodeJS.Timeout;
  private polling: Promise<void> = Promise.resolve();

  constructor(
    private readonly o: FileCertSourceOptions,
    private snapshot: Snapshot,
    private material: TlsMaterial,
  ) {
    this.timer = setInterval(() => {
      this.polling = this.polling.then(() => this.poll());
    }, o.pollMs ?? 2000);
  }

  current(): TlsMaterial {
    return this.material;
  }

  onChange(listener: (m: TlsMaterial) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
  }

  private problem(line: string | undefined): void {
    if (line !== undefined && line !== this.lastProblem) this.o.log(`webhook certificates: ${line}; still serving the certificate valid until ${this.material.notAfter.toISOString()}`);
    this.lastProblem = line;
  }

  private async poll(): Promise<void> {
    let first: Snapshot;
    let second: Snapshot;
    try {
      first = await readSnapshot(this.o);
      if (sameSnapshot(first, this.snapshot)) return this.problem(undefined);
      // Changed: read again, so a swap between the certificate and the key is not taken for a mismatch.
      second = await readSnapshot(this.o);
    } catch (e) {
      return this.problem((e as Error).message);
    }
    if (!sameSnapshot(first, second)) return; // being replaced right now: the next poll reads it whole
    let material: TlsMaterial;
    try {
      material = materialOf(second, this.o);
    } catch (e) {
      return this.problem((e as Error).message);
    }
    this.snapshot = second;
    this.material = material;
    this.problem(undefined);
    this.o.log(`webhook certificates: loaded a new certificate from ${this.o.certFile}, valid until ${material.notAfter.toISOString()}`);
    for (const l of this.listeners) {
      try {
        l(material);
      } catch (e) {
        this.o.log(`webhook certificates: a listener failed on the new certificate: ${(e as Error).message}`);
      }
    }
  }
}

/** Starts serving from the files; rejects, naming the file, when they are unusable at start. */
export async function startFileCertSource(o: FileCertSourceOptions): Promise<CertSource> {
  if (o.pollMs !== undefined && !(o.pollMs > 0)) throw new Error(`pollMs: must be a positive number of milliseconds (got ${o.pollMs})`);
  const snapshot = await readSnapshot(o);
  return new FileSource(o, snapshot, materialOf(snapshot, o));
}
