// Network namespaces for tests that run kdns as a pod or a node would: `ip netns add` with a
// unique name, veth pairs between namespaces, dummy interfaces, and processes started inside,
// optionally in a "pod sandbox": a private mount namespace where /etc and /run are overlays
// (writes stay in a scratch directory) and host directories or files are bind-mounted at the
// paths a manifest's volumeMounts give (/etc/coredns, /var/run/secrets/…), so kdns runs with
// the manifest's exact arguments and paths while the host's files stay untouched.
import { spawnCollected } from './proc.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why these tests cannot run here, or false. */
export function netnsMissing(...binaries: string[]): string | false {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, mounts, iptables)';
  for (const [bin, pkg] of [['ip', 'iproute2'], ['unshare', 'util-linux'], ...binaries.map((b) => [b, b])] as Array<[string, string]>) {
    if (spawnSync(bin, bin === 'ip' ? ['-V'] : ['--version'], { stdio: 'ignore' }).error) return `needs ${bin}: apt-get install ${pkg}`;
  }
  return false;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface Proc {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code once the process has ended. */
  done: Promise<number | null>;
  /** SIGTERM, then SIGKILL after 15 s; resolves with the exit code. */
  stop(): Promise<number | null>;
}

let counter = 0;

export class NetNs {
  private constructor(readonly name: string) {}

  /** A fresh namespace with its loopback up. */
  static create(tag: string): NetNs {
    const name = `kdns-${tag}-${process.pid}-${counter++}`;
    must(spawnSync('ip', ['netns', 'add', name], { encoding: 'utf8' }), `ip netns add ${name}`);
    const ns = new NetNs(name);
    ns.must(['ip', 'link', 'set', 'lo', 'up']);
    return ns;
  }

  run(cmd: readonly string[], opts: { timeoutMs?: number } = {}): RunResult {
    const r = spawnSync('ip', ['netns', 'exec', this.name, ...cmd], { encoding: 'utf8', timeout: opts.timeoutMs ?? 30_000 });
    return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  }

  must(cmd: readonly string[]): string {
    return must(this.run(cmd), cmd.join(' '));
  }

  /** A dummy interface holding `addresses` (CIDR), up (a bridge without ports where the kernel has no dummy driver). */
  addDummy(dev: string, addresses: readonly string[]): void {
    if (this.run(['ip', 'link', 'add', dev, 'type', 'dummy']).status !== 0) this.must(['ip', 'link', 'add', dev, 'type', 'bridge']);
    for (const a of addresses) this.must(['ip', 'addr', 'add', a, 'dev', dev]);
    this.must(['ip', 'link', 'set', dev, 'up']);
  }

  /** A veth pair from this namespace to `other`, with `mine` and `theirs` (CIDR) on each end. */
  link(other: NetNs, mine: string, theirs: string): void {
    const a = `v${counter++}a${process.pid % 10000}`;
    const b = `v${counter++}b${process.pid % 10000}`;
    must(spawnSync('ip', ['link', 'add', a, 'netns', this.name, 'type', 'veth', 'peer', 'name', b, 'netns', other.name], { encoding: 'utf8' }), 'ip link add veth');
    this.must(['ip', 'addr', 'add', mine, 'dev', a]);
    other.must(['ip', 'addr', 'add', theirs, 'dev', b]);
    this.must(['ip', 'link', 'set', a, 'up']);
    other.must(['ip', 'link', 'set', b, 'up']);
  }

  /** Starts `cmd` in the namespace, in `sandbox` when given. */
  spawn(cmd: readonly string[], opts: { env?: NodeJS.ProcessEnv; sandbox?: Sandbox } = {}): Proc {
    const inner = opts.sandbox ? opts.sandbox.wrap(cmd) : [...cmd];
    return spawnCollected('ip', ['netns', 'exec', this.name, ...inner], { ...(opts.env ? { env: opts.env } : {}), killAfterMs: 15_000 });
  }

  delete(): void {
    // Processes still inside would keep it alive: kill them first.
    const pids = spawnSync('ip', ['netns', 'pids', this.name], { encoding: 'utf8' }).stdout ?? '';
    for (const pid of pids.split('\n').filter((p) => p !== '')) spawnSync('kill', ['-KILL', pid]);
    spawnSync('ip', ['netns', 'del', this.name]);
  }
}

function must(r: { status: number | null; stdout?: string | null; stderr?: string | null }, what: string): string {
  if (r.status !== 0) throw new Error(`${what}: exit ${r.status}: ${r.stderr ?? ''}`);
  return r.stdout ?? '';
}

/**
 * A pod's view of the file system: /etc and /run overlaid (writes go to `scratch`), and each
 * `binds` entry (path inside → host path, file or directory) mounted over its path. Changes to a
 * bound host directory show inside at once, as a ConfigMap update does in a pod.
 */
/**
 * One bind mount of the sandbox. A missing mount point is made only under /etc and /run, which
 * are overlays on scratch directories; anywhere else it would be made on the host's own
 * filesystem and outlive the test (an empty /usr/sbin/iptables once hid Debian's iptables from
 * a later install), so there a missing mount point stops the sandbox, naming it.
 */
function mountLine(inside: string, host: string, q: (s: string) => string): string {
  // /var/run is /run (a symlink on every Debian-like system), so it is overlaid too.
  const overlaid = ['/etc/', '/run/', '/var/run/'].some((dir) => inside.startsWith(dir));
  const create = overlaid
    ? `if [ -d ${q(host)} ]; then mkdir -p ${q(inside)}; elif [ ! -e ${q(inside)} ]; then mkdir -p "$(dirname ${q(inside)})"; touch ${q(inside)}; fi`
    : `if [ ! -e ${q(inside)} ]; then echo "sandbox: ${inside} does not exist on this host to mount over (install what provides it)" >&2; exit 1; fi`;
  return `${create}; mount --bind ${q(host)} ${q(inside)}`;
}

export class Sandbox {
  readonly scratch: string;

  constructor(readonly binds: Readonly<Record<string, string>>) {
    this.scratch = mkdtempSync(join(tmpdir(), 'kdns-sandbox-'));
    for (const d of ['etc-up', 'etc-work', 'run-up', 'run-work']) mkdirSync(join(this.scratch, d));
  }

  /** What the pod wrote under /etc (e.g. the rendered /etc/Corefile), as seen from the host. */
  etcWritten(path: string): string {
    return join(this.scratch, 'etc-up', path.replace(/^\/etc\//, ''));
  }

  wrap(cmd: readonly string[]): string[] {
    const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
    const s = this.scratch;
    const lines = [
      'set -e',
      `mount -t overlay overlay -o lowerdir=/etc,upperdir=${q(`${s}/etc-up`)},workdir=${q(`${s}/etc-work`)} /etc`,
      `mount -t overlay overlay -o lowerdir=/run,upperdir=${q(`${s}/run-up`)},workdir=${q(`${s}/run-work`)} /run`,
      ...Object.entries(this.binds).map(([inside, host]) => mountLine(inside, host, q)),
      'exec "$@"',
    ];
    return ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', lines.join('\n'), 'sandbox', ...cmd];
  }
}
