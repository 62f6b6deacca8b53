// `kdns node-resolver`: keeps cluster services' addresses in a node's hosts file.
import type { Command } from 'commander';
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Nameserver } from '../noderesolver/dnsclient.js';
import { HostsFileError } from '../noderesolver/hostsblock.js';
import { runLoop, serviceName, syncOnce } from '../noderesolver/resolver.js';
import type { SyncOptions } from '../noderesolver/resolver.js';
import { guardProcess } from '../server/guard.js';
import { CliError, EXIT_INVALID, EXIT_OK, EXIT_USAGE } from './exit.js';

interface Flags {
  services: string;
  nameserver: string;
  hostsFile: string;
  interval: string;
  once?: boolean;
  clusterDomain: string;
  lockFile?: string;
  timeout: string;
}

/** `IP`, `IP:PORT` or `[IPv6]:PORT`; port 53 when absent. */
export function parseNameserver(s: string): Nameserver {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(s);
  const v4port = /^([0-9.]+):(\d+)$/.exec(s);
  const [host, portText] = bracketed ? [bracketed[1]!, bracketed[2]!] : v4port ? [v4port[1]!, v4port[2]!] : [s, '53'];
  const port = Number(portText);
  if (isIP(host) === 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new CliError(`--nameserver: invalid value "${s}": must be IP, IP:PORT or [IPv6]:PORT (port 1-65535)`, EXIT_USAGE);
  }
  return { host, port };
}

/** "60s", "2m", "500ms", or plain seconds. */
export function parseInterval(s: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m?.[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = m ? Number(m[1]) * unit : NaN;
  if (!(ms >= 100)) throw new CliError(`${flag}: invalid duration "${s}": use e.g. 60s, 2m, 500ms (at least 100ms)`, EXIT_USAGE);
  return ms;
}

const SERVICE_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\.?$/;

function parseServices(s: string): string[] {
  const names = s
    .split(/[\s,]+/)
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 0) throw new CliError('--services: at least one service name is needed', EXIT_USAGE);
  for (const n of names) {
    if (!SERVICE_RE.test(n) || n.length > 253) throw new CliError(`--services: invalid name "${n}": must be a lower-case DNS name such as registry.ns.svc`, EXIT_USAGE);
  }
  return names;
}

/** A lock per hosts file, shared by every node-resolver on this machine that writes it. */
function defaultLockFile(hostsFile: string): string {
  return join(tmpdir(), `kdns-node-resolver-${createHash('sha256').update(resolve(hostsFile)).digest('hex').slice(0, 12)}.lock`);
}

const log = (line: string): void => {
  console.error(`${new Date().toISOString()} node-resolver: ${line}`);
};

function syncOptions(flags: Flags): SyncOptions {
  return {
    services: parseServices(flags.services).map((n) => serviceName(n, flags.clusterDomain)),
    nameserver: parseNameserver(flags.nameserver),
    hostsFile: flags.hostsFile,
    lockFile: flags.lockFile ?? defaultLockFile(flags.hostsFile),
    lookup: { timeoutMs: parseInterval(flags.timeout, '--timeout'), attempts: 2 },
    log,
  };
}

async function action(flags: Flags): Promise<number> {
  const opts = syncOptions(flags);
  const intervalMs = parseInterval(flags.interval, '--interval');
  if (flags.once) {
    const r = await syncOnce(opts);
    // A pass that had to keep stale entries did not bring the file up to date.
    return r.failures.length > 0 ? EXIT_INVALID : EXIT_OK;
  }
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  guardProcess(log);
  log(`keeping ${opts.services.map((s) => s.name).join(', ')} in ${opts.hostsFile} every ${flags.interval} via ${flags.nameserver}`);
  await runLoop({ ...opts, intervalMs, signal: stop.signal });
  return EXIT_OK;
}

export function register(program: Command): void {
  program
    .command('node-resolver')
    .description("Keep cluster services' addresses in a node's hosts file, resolved through cluster DNS")
    .requiredOption('--services <names>', 'comma-separated service names, relative to the cluster domain (registry.ns.svc) or absolute (ending in ".")')
    .requiredOption('--nameserver <ip[:port]>', 'the cluster DNS address')
    .requiredOption('--hosts-file <path>', 'the hosts file to keep (/etc/hosts in the DaemonSet)')
    .option('--interval <duration>', 'time between passes', '60s')
    .option('--once', 'one pass, then exit: 0 when every lookup was answered, 1 when stale entries had to be kept')
    .option('--cluster-domain <domain>', 'suffix for relative service names', 'cluster.local')
    .option('--lock-file <path>', 'lock shared by writers of the hosts file (default: one per hosts file under the temp dir)')
    .option('--timeout <duration>', 'per-query timeout', '2s')
    .action(async (flags: Flags) => {
      try {
        process.exitCode = await action(flags);
      } catch (e) {
        if (e instanceof CliError) {
          console.error(`kdns node-resolver: ${e.message}`);
          process.exitCode = e.exitCode;
        } else if (e instanceof HostsFileError) {
          console.error(`kdns node-resolver: ${flags.hostsFile}: ${e.message}`);
          process.exitCode = EXIT_INVALID;
        } else if ((e as NodeJS.ErrnoException).code !== undefined) {
          console.error(`kdns node-resolver: ${(e as Error).message}`);
          process.exitCode = EXIT_INVALID;
        } else throw e;
      }
    });
}
