// Starts a kdns server in the test process on a free loopback port.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TcpLimits, UdpTransport } from '../../src/server/listeners.js';
import { createLogger, type Level } from '../../src/server/log.js';
import { startServer, type KdnsServer } from '../../src/server/server.js';
import { freePort } from './net.js';

export interface TestServer {
  server: KdnsServer;
  port: number;
  /** Path of the Corefile written for this server (edit it, then server.reload()). */
  corefilePath: string;
  dir: string;
  /** Log lines the server wrote, as "[LEVEL] text". */
  logs: string[];
  stop(): Promise<void>;
}

/**
 * Writes `corefile` (with every `{PORT}` replaced by a free port) into a temp dir and starts a
 * server on it. The Corefile usually starts `.:{PORT} { bind 127.0.0.1 ... }`.
 */
export async function startTestServer(corefile: string, opts: { clusterDir?: string; files?: Record<string, string>; udpTransport?: UdpTransport; port?: number; tcpLimits?: Partial<TcpLimits> } = {}): Promise<TestServer> {
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'kdns-test-'));
  for (const [name, text] of Object.entries(opts.files ?? {})) writeFileSync(join(dir, name), text);
  const corefilePath = join(dir, 'Corefile');
  writeFileSync(corefilePath, corefile.replaceAll('{PORT}', String(port)));
  const logs: string[] = [];
  const log = createLogger((level: Level, line: string) => {
    logs.push(`[${level}] ${line}`);
  });
  const server = await startServer({ corefilePath, options: { defaultPort: port, clusterDir: opts.clusterDir }, log, udpTransport: opts.udpTransport, tcpLimits: opts.tcpLimits });
  return { server, port, corefilePath, dir, logs, stop: () => server.stop() };
}
