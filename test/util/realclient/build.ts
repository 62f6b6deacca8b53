// Where the rig's files are, whether this machine can run it, and building the two lookup
// clients on demand (build.sh) into the git-ignored build/realclient/.

import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository: this file is test/util/realclient/build.ts. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const sourceDir = fileURLToPath(new URL('./', import.meta.url));
export const buildDir = `${repoRoot}build/realclient`;
/** An empty directory each client mounts its private tmpfs on (in its own mount namespace only). */
export const scratchDir = `${buildDir}/scratch`;
/** The agent as node runs it: from TypeScript through tsx, like every test helper. */
export const agentCommand: readonly string[] = ['--import', 'tsx/esm', fileURLToPath(new URL('./agent.ts', import.meta.url))];

export type Libc = 'glibc' | 'musl';
export const LIBCS: readonly Libc[] = ['glibc', 'musl'];

export function clientBinary(libc: Libc): string {
  return `${buildDir}/lookup-${libc}`;
}

/** Commands the rig runs, with the Debian package that has each. */
const TOOLS: ReadonlyArray<[string, string[], string]> = [
  ['unshare', ['--version'], 'util-linux'],
  ['setpriv', ['--version'], 'util-linux'],
  ['ip', ['-V'], 'iproute2'],
  ['mount', ['--version'], 'mount'],
];

/** Why this machine cannot run real clients in namespaces, or false. Builds nothing. */
export function namespacesUnavailable(): string | false {
  if (process.platform !== 'linux') return 'needs Linux (network and mount namespaces)';
  if (process.getuid?.() !== 0) return 'needs root (network and mount namespaces)';
  for (const [tool, args, pkg] of TOOLS) {
    if (spawnSync(tool, args, { stdio: 'ignore' }).error) return `needs ${tool}: apt-get install ${pkg}`;
  }
  const probe = spawnSync('unshare', ['--net', '--mount', '--', 'true'], { encoding: 'utf8' });
  if (probe.status !== 0) return `cannot create network and mount namespaces here: ${probe.stderr.trim() || `exit ${probe.status}`}`;
  return false;
}

function mtime(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Both binaries exist and are newer than lookup.c. */
function upToDate(): boolean {
  const source = mtime(`${sourceDir}lookup.c`);
  if (source === undefined) return false;
  return LIBCS.every((libc) => (mtime(clientBinary(libc)) ?? -1) >= source);
}

let built: { ok: true } | { ok: false; reason: string } | undefined;

/**
 * Builds lookup-glibc and lookup-musl unless they are up to date; once per process. Returns the
 * reason when it cannot (a missing compiler: what to install). Installs nothing.
 */
export function buildClients(): { ok: true } | { ok: false; reason: string } {
  if (built?.ok) return built;
  mkdirSync(scratchDir, { recursive: true });
  if (upToDate()) return (built = { ok: true });
  const r = spawnSync('sh', [`${sourceDir}build.sh`, buildDir], { encoding: 'utf8', timeout: 120_000 });
  if (r.status === 0 && upToDate()) return (built = { ok: true });
  const why = r.error?.message ?? (r.stderr.trim() || `build.sh exited ${r.status}`);
  return (built = { ok: false, reason: `building the lookup clients failed: ${why}` });
}
