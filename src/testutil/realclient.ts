// Loads ../shared/realclient (real glibc and musl getaddrinfo in network namespaces), building its
// two clients once when they are missing (no package installs outside CI).

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The parts of the harness's API (plain CommonJS outside this package) that tests use. */
export interface RealClientQuery {
  qname: string | null;
  qtype: string | null;
  server: string;
  rcode: string | null;
}
export interface RealClientResult {
  status: number;
  eai: string | null;
  addresses: string[];
  queries: RealClientQuery[];
  stderr: string;
}
export interface RealClientHarness {
  runClient(opts: { resolvConf: string; name: string; libc: 'glibc' | 'musl'; server: string; source?: string; family?: 'unspec' | 'inet' | 'inet6'; timeoutMs?: number }): Promise<RealClientResult>;
  startRecorder(opts: { zone: Record<string, { A?: string[]; AAAA?: string[] }> }): Promise<{ port: number; close(): Promise<void> }>;
}

const REALCLIENT = new URL('../../../shared/realclient/', import.meta.url);

export async function loadRealClient(): Promise<{ harness?: RealClientHarness; reason: string }> {
  const runClientPath = fileURLToPath(new URL('run-client.js', REALCLIENT));
  if (!existsSync(runClientPath)) return { reason: `realclient harness not found at ${fileURLToPath(REALCLIENT)}` };
  const client = (await import(runClientPath)) as Pick<RealClientHarness, 'runClient'> & { available(): { ok: boolean; reason: string } };
  const recorder = (await import(fileURLToPath(new URL('recorder.js', REALCLIENT)))) as Pick<RealClientHarness, 'startRecorder'>;
  let avail = client.available();
  if (!avail.ok && avail.reason !== 'not root') {
    const env = process.env.CI === 'true' ? process.env : { ...process.env, REALCLIENT_NO_APT: '1' };
    spawnSync('bash', [fileURLToPath(new URL('build.sh', REALCLIENT))], { env, stdio: 'ignore', timeout: 300_000 });
    avail = client.available();
  }
  return avail.ok ? { harness: { runClient: client.runClient, startRecorder: recorder.startRecorder }, reason: '' } : { reason: avail.reason };
}
