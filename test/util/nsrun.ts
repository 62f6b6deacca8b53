// Test helper: a bare network namespace held by one process (unshare --net; netns.ts has named
// `ip netns` hosts with veth links), with only `lo` up unless
// the test adds more. Commands join it with nsenter, so the test process itself stays outside;
// addresses like 192.0.2.1 have no route in there, which makes "unreachable" real and safe.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { assertNoPanic, kdnsCommand } from './kdns.js';
import { spawnCollected } from './proc.js';
import { waitFor } from './net.js';

/** Why namespaces cannot be made here, or false when they can. */
export function netnsUnavailable(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  if (spawnSync('unshare', ['--net', 'true']).status !== 0) return 'unshare --net does not work here (util-linux, CAP_SYS_ADMIN)';
  if (spawnSync('ip', ['-V']).status !== 0) return 'needs iproute2: apt-get install iproute2';
  return false;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface NsProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  done: Promise<number | null>;
  /** SIGTERM, then SIGKILL after 5 s; resolves when it is gone. */
  stop(): Promise<void>;
}

export class Netns {
  private constructor(
    private readonly holder: ChildProcess,
    /** /proc/<pid>/ns/net of the process holding the namespace. */
    readonly path: string,
  ) {}

  /**
   * A fresh namespace with `lo` up; `ipv6: false` switches IPv6 off in it, as on an IPv4-only
   * node (IPv6 sockets open, but no address or route: connect fails with EADDRNOTAVAIL).
   */
  static async create(opts: { ipv6?: boolean } = {}): Promise<Netns> {
    // A process that only holds the namespace open; everything else joins it with nsenter.
    const holder = spawn('unshare', ['--net', '--', 'sleep', '3600'], { stdio: 'ignore' });
    const own = readlinkSync('/proc/self/ns/net');
    const path = `/proc/${holder.pid}/ns/net`;
    await waitFor(() => {
      try {
        return readlinkSync(path) !== own;
      } catch {
        return false;
      }
    });
    const ns = new Netns(holder, path);
    ns.must(['ip', 'link', 'set', 'lo', 'up']);
    if (opts.ipv6 === false) {
      ns.must(['sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1']);
      ns.must(['sysctl', '-qw', 'net.ipv6.conf.lo.disable_ipv6=1']);
    }
    return ns;
  }

  /** Runs a command in the namespace to completion. */
  run(cmd: readonly string[]): RunResult {
    const r = spawnSync('nsenter', [`--net=${this.path}`, ...cmd], { encoding: 'utf8', timeout: 20_000 });
    return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  }

  /** Runs a command that must succeed (set-up steps). */
  must(cmd: readonly string[]): string {
    const r = this.run(cmd);
    if (r.status !== 0) throw new Error(`${cmd.join(' ')} in the namespace failed (${r.status}): ${r.stderr}`);
    return r.stdout;
  }

  /** Starts a long-running command in the namespace. */
  start(cmd: readonly string[]): NsProcess {
    // nsenter execs the command, so the child's pid is the command's own.
    const p = spawnCollected('nsenter', [`--net=${this.path}`, ...cmd], { killAfterMs: 5000 });
    return { ...p, stop: () => p.stop().then(() => undefined) };
  }

  /** `kdns args…` in the namespace; stop() fails when its process guard caught an error. */
  kdns(args: readonly string[]): NsProcess {
    const p = this.start([process.execPath, ...kdnsCommand(args)]);
    return { ...p, stop: () => p.stop().then(() => assertNoPanic(p.output())) };
  }

  /** Body of an HTTP GET made from inside the namespace (metrics, health). */
  httpGet(url: string): string {
    return this.must([process.execPath, '-e', `fetch(${JSON.stringify(url)}).then(async (r) => process.stdout.write(await r.text()))`]);
  }

  dispose(): void {
    this.holder.kill('SIGKILL');
  }
}
