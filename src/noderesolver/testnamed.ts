// Test helper: a real BIND `named` on a loopback port, authoritative for the zones given, so
// node-resolver and the operator's forwarding are tested against a real DNS server.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NamedServer {
  port: number;
  dir: string;
  /** Rewrites the zones and restarts named on the same port (a changed answer, as after a Service IP change). */
  restart(zones?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

/** Zone text from records ("www IN A 10.0.0.1" lines), with SOA and NS filled in. */
export function zoneFile(records: string): string {
  return `$TTL 5\n@ IN SOA ns root 1 60 60 600 5\n@ IN NS ns\nns IN A 127.0.0.1\n${records}\n`;
}

function config(dir: string, port: number, zones: Record<string, string>): string {
  const zoneStanzas = Object.keys(zones)
    .map((origin, i) => `zone "${origin}" { type primary; file "${join(dir, `zone${i}.db`)}"; };`)
    .join('\n');
  // `controls {}` keeps named off the rndc port (953), which parallel tests would fight over.
  return `controls { };
options {
  directory "${dir}";
  pid-file none;
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  allow-query { any; };
  dnssec-validation no;
  notify no;
};
${zoneStanzas}
`;
}

function launch(dir: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn('named', ['-g', '-n', '1', '-c', join(dir, 'named.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`named did not start within 10 s:\n${log}`));
    }, 10_000);
    child.stderr?.on('data', (b: Buffer) => {
      log += b.toString();
      if (/all zones loaded[\s\S]* running$/m.test(log)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`named exited (${code}) before it was running:\n${log}`));
    });
    child.on('error', reject);
  });
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Starts named for `zones` (origin → records) on `port` (pick one with testutil's freePort). */
export async function startNamed(port: number, zones: Record<string, string>): Promise<NamedServer> {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-named-'));
  const write = (z: Record<string, string>): void => {
    writeFileSync(join(dir, 'named.conf'), config(dir, port, z));
    Object.values(z).forEach((records, i) => writeFileSync(join(dir, `zone${i}.db`), zoneFile(records)));
  };
  write(zones);
  let child = await launch(dir);
  child.removeAllListeners('exit');
  return {
    port,
    dir,
    async restart(next?: Record<string, string>) {
      await kill(child);
      if (next) write(next);
      child = await launch(dir);
      child.removeAllListeners('exit');
    },
    stop: () => kill(child),
  };
}
