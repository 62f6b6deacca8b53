// Test support: Knot Resolver (kresd 5, Debian's knot-resolver package) as a DNS-over-HTTPS
// server on loopback (its `doh2` endpoint: HTTP/2 only, /dns-query), passing every query to a
// local upstream as a stub. A real DoH peer that is not kdns, for forward's https:// upstreams.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KresdDoh {
  port: number;
  /** Everything kresd wrote, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** kresd's configuration: DoH on 127.0.0.1:`port` with the given certificate, every query to `upstreamPort` on 127.0.0.1. */
export function kresdDohConfig(dir: string, port: number, upstreamPort: number): string {
  return [
    'net.ipv6 = false',
    `net.tls('${join(dir, 'cert.pem')}', '${join(dir, 'key.pem')}')`,
    `net.listen('127.0.0.1', ${port}, { kind = 'doh2' })`,
    `cache.open(10 * MB, 'lmdb://${join(dir, 'cache')}')`,
    // No DNSSEC: the upstream's test zones are unsigned.
    "trust_anchors.remove('.')",
    `policy.add(policy.all(policy.STUB({'127.0.0.1@${upstreamPort}'})))`,
    '',
  ].join('\n');
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** Starts kresd and resolves once its DoH port accepts connections. */
export async function startKresdDoh(opts: { port: number; upstreamPort: number; certPem: string; keyPem: string }, timeoutMs = 10_000): Promise<KresdDoh> {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-kresd-'));
  writeFileSync(join(dir, 'cert.pem'), opts.certPem);
  writeFileSync(join(dir, 'key.pem'), opts.keyPem);
  writeFileSync(join(dir, 'kresd.conf'), kresdDohConfig(dir, opts.port, opts.upstreamPort));
  // -n: no interactive console on stdin; the last argument is its working folder.
  const child: ChildProcess = spawn('kresd', ['-n', '-c', join(dir, 'kresd.conf'), dir], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const until = Date.now() + timeoutMs;
  while (!(await accepts(opts.port))) {
    if (child.exitCode !== null || Date.now() > until) {
      await stop();
      throw new Error(`kresd did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port: opts.port, output: () => out, stop };
}
