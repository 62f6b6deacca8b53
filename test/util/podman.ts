// Test helpers for running kdns's container images with podman the way the manifests run them
// (test/deploy/images.podman.test.ts): the images scripts/images.sh builds, a manifest
// container's args, env, volumes and securityContext turned into `podman run` flags, a
// process's credentials as the kernel reports them, and the files an image holds.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { readRepoFile, repoRoot } from './deploy.js';

/** Why the image tests cannot run here, or false. */
export function podmanMissing(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (rootful podman, mmdebstrap, network namespaces)';
  const tools: Array<[string, string[], string]> = [
    ['podman', ['--version'], 'podman'],
    ['runc', ['--version'], 'runc'],
    ['mmdebstrap', ['--version'], 'mmdebstrap'],
    ['dig', ['-v'], 'bind9-dnsutils'],
    ['ip', ['-V'], 'iproute2'],
    ['iptables-save', ['--version'], 'iptables'],
  ];
  for (const [bin, args, pkg] of tools) {
    if (spawnSync(bin, args, { stdio: 'ignore' }).error) return `needs ${bin}: apt-get install ${pkg}`;
  }
  return false;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `podman --runtime runc ARGS` (runc: crun fails on the cgroups of CI's machines). */
export function podman(args: readonly string[], timeoutMs = 60_000): RunResult {
  const r = spawnSync('podman', ['--runtime', 'runc', ...args], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? r.error?.message ?? '' };
}

/** podman ARGS, failing with podman's own words when it fails. */
export function podmanMust(args: readonly string[], timeoutMs = 60_000): string {
  const r = podman(args, timeoutMs);
  if (r.status !== 0) throw new Error(`podman ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

export interface BuiltImages {
  /** Short name (kdns, kdns-nodecache) → the local image scripts/images.sh built. */
  images: Record<string, string>;
  /** scripts/images.sh's progress: the time of each step and the images' sizes. */
  log: string;
}

/** Runs scripts/images.sh: builds both images (podman's layer cache makes a second run quick). */
export function buildImages(timeoutMs: number): BuiltImages {
  const r = spawnSync('bash', [join(repoRoot, 'scripts/images.sh')], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`scripts/images.sh: exit ${r.status ?? r.signal}:\n${(r.stderr ?? '').slice(-8000)}`);
  const images: Record<string, string> = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^([\w-]+)=(\S+)$/.exec(line);
    if (m) images[m[1]!] = m[2]!;
  }
  return { images, log: (r.stderr ?? '').split('\n').filter((l) => l.startsWith('images: ')).join('\n') };
}

/** The container limits scripts/images.sh gives too: podman's defaults may pass this machine's hard limits. */
export function ulimitFlags(): string[] {
  const r = spawnSync('sh', ['-c', 'ulimit -Hn; ulimit -Hu'], { encoding: 'utf8' });
  const [nofile, nproc] = r.stdout.trim().split('\n');
  const atMost = (want: number, hard: string | undefined): number => (hard === undefined || hard === 'unlimited' ? want : Math.min(want, Number(hard)));
  const n = atMost(65536, nofile);
  const p = atMost(4096, nproc);
  return ['--ulimit', `nofile=${n}:${n}`, '--ulimit', `nproc=${p}:${p}`];
}

// ---- manifests → podman run ----

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type: string };
}

export interface ManifestContainer {
  name: string;
  image: string;
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  securityContext?: SecurityContext;
}

export interface ManifestVolume {
  name: string;
  configMap?: unknown;
  secret?: unknown;
  hostPath?: unknown;
  emptyDir?: unknown;
}

export interface PodSpecPart {
  securityContext?: SecurityContext;
  containers: ManifestContainer[];
  volumes?: ManifestVolume[];
}

/** The pod template's spec of the `kind` named `name` in a repository YAML file, and its container `container`. */
export function manifestContainer(file: string, kind: string, name: string, container: string): { pod: PodSpecPart; container: ManifestContainer } {
  const docs = parseAllDocuments(readRepoFile(file)).map((d) => d.toJS() as { kind?: string; metadata?: { name?: string }; spec?: { template?: { spec?: PodSpecPart } } });
  const obj = docs.find((d) => d.kind === kind && d.metadata?.name === name);
  const pod = obj?.spec?.template?.spec;
  if (!pod) throw new Error(`${file}: no ${kind} ${name} with a pod template`);
  const c = pod.containers.find((x) => x.name === container);
  if (!c) throw new Error(`${file}: ${kind} ${name} has no container ${container}`);
  return { pod, container: c };
}

export interface PodmanRun {
  /** The container's name in podman. */
  name: string;
  image: string;
  pod: PodSpecPart;
  container: ManifestContainer;
  /** podman's --network: `ns:/run/netns/…` for the pod's network (or the node's, for hostNetwork), or `none`. */
  network: string;
  /** Volume name → the host file or folder that stands for it. */
  volumes: Readonly<Record<string, string>>;
  /** Values of the env entries that take theirs from the pod (fieldRef), and the Service variables the kubelet adds. */
  env?: Readonly<Record<string, string>>;
  /** More bind mounts (inside path → host path, read-only): what stands for the API server, the node's resolv.conf. */
  extraMounts?: Readonly<Record<string, string>>;
  /** Arguments in place of the manifest's (e.g. CoreDNS's own manifests' `-conf …`). */
  args?: readonly string[];
  /** Extra flags before the image: limits and the like. */
  flags?: readonly string[];
}

const SECURITY_KEYS = new Set(['runAsUser', 'runAsGroup', 'runAsNonRoot', 'readOnlyRootFilesystem', 'allowPrivilegeEscalation', 'capabilities', 'seccompProfile']);

/** The securityContext that applies: the container's fields over the pod's, as the kubelet merges them. */
export function effectiveSecurity(pod: PodSpecPart, container: ManifestContainer): SecurityContext {
  const merged: SecurityContext = { ...pod.securityContext, ...container.securityContext };
  const unknown = Object.keys(merged).filter((k) => !SECURITY_KEYS.has(k));
  if (unknown.length > 0) throw new Error(`securityContext: ${unknown.join(', ')} has no podman translation here; add one`);
  return merged;
}

/** The volume types the kubelet always mounts read-only. */
const readOnlyVolume = (v: ManifestVolume | undefined): boolean => v?.configMap !== undefined || v?.secret !== undefined;

/** `podman run` arguments (after `run -d` or `run --rm`) that run `r.container` as its manifest does. */
export function podmanRunArgs(r: PodmanRun): string[] {
  const sec = effectiveSecurity(r.pod, r.container);
  const out = ['--name', r.name, '--network', r.network];
  if (sec.runAsUser !== undefined) out.push('--user', `${sec.runAsUser}:${sec.runAsGroup ?? sec.runAsUser}`);
  // Kubernetes mounts no tmpfs of its own on a read-only root: neither does this.
  if (sec.readOnlyRootFilesystem) out.push('--read-only', '--read-only-tmpfs=false');
  if (sec.allowPrivilegeEscalation === false) out.push('--security-opt', 'no-new-privileges');
  if (sec.seccompProfile && sec.seccompProfile.type !== 'RuntimeDefault') throw new Error(`seccompProfile ${sec.seccompProfile.type}: only RuntimeDefault (podman's default profile) is translated`);
  for (const c of sec.capabilities?.drop ?? []) out.push('--cap-drop', c);
  for (const c of sec.capabilities?.add ?? []) out.push('--cap-add', c);
  for (const e of r.container.env ?? []) {
    const v = e.value ?? r.env?.[e.name];
    if (v === undefined) throw new Error(`env ${e.name}: ${e.valueFrom?.fieldRef ? `from ${e.valueFrom.fieldRef.fieldPath}: ` : ''}give its value`);
    out.push('-e', `${e.name}=${v}`);
  }
  const declared = new Set((r.container.env ?? []).map((e) => e.name));
  for (const [k, v] of Object.entries(r.env ?? {})) if (!declared.has(k)) out.push('-e', `${k}=${v}`);
  for (const m of r.container.volumeMounts ?? []) {
    const host = r.volumes[m.name];
    if (host === undefined) throw new Error(`volumeMounts ${m.name} (${m.mountPath}): give the host path that stands for it`);
    const volume = r.pod.volumes?.find((v) => v.name === m.name);
    const ro = m.readOnly === true || readOnlyVolume(volume);
    out.push('-v', `${host}:${m.mountPath}${ro ? ':ro' : ''}`);
  }
  for (const [inside, host] of Object.entries(r.extraMounts ?? {})) out.push('-v', `${host}:${inside}:ro`);
  out.push(...(r.flags ?? []), r.image, ...(r.args ?? r.container.args ?? []));
  return out;
}

// ---- what the kernel says of a running container ----

/** Capability numbers → names, those the manifests name or drop (capability(7)). */
const CAP_NAMES: Readonly<Record<number, string>> = {
  0: 'CHOWN', 1: 'DAC_OVERRIDE', 2: 'DAC_READ_SEARCH', 3: 'FOWNER', 4: 'FSETID', 5: 'KILL', 6: 'SETGID', 7: 'SETUID', 8: 'SETPCAP',
  10: 'NET_BIND_SERVICE', 12: 'NET_ADMIN', 13: 'NET_RAW', 18: 'SYS_CHROOT', 21: 'SYS_ADMIN', 27: 'MKNOD', 29: 'AUDIT_WRITE', 31: 'SETFCAP',
};

/** The capability names of a /proc/<pid>/status mask (hex), sorted; unnamed bits as CAP_<n>. */
export function capNames(hexMask: string): string[] {
  const mask = BigInt(`0x${hexMask}`);
  const names: string[] = [];
  for (let bit = 0; bit < 64; bit++) if ((mask >> BigInt(bit)) & 1n) names.push(CAP_NAMES[bit] ?? `CAP_${bit}`);
  return names.sort();
}

export interface Credentials {
  uid: number;
  effective: string[];
  bounding: string[];
  ambient: string[];
  noNewPrivs: boolean;
  /** The mount options of the container's root filesystem: "ro" or "rw". */
  root: string;
}

/** The credentials of process `pid` and how its root filesystem is mounted. */
export function credentials(pid: number): Credentials {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): string => {
    const m = new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(status);
    if (!m) throw new Error(`/proc/${pid}/status has no ${name}`);
    return m[1]!;
  };
  // mountinfo: "id parent major:minor root mountpoint options …"; the last mount on / wins.
  const rootMounts = readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n').map((l) => l.split(' ')).filter((f) => f[4] === '/');
  const options = rootMounts.at(-1)?.[5] ?? '';
  return {
    uid: Number(field('Uid').split(/\s+/)[1]),
    effective: capNames(field('CapEff')),
    bounding: capNames(field('CapBnd')),
    ambient: capNames(field('CapAmb')),
    noNewPrivs: field('NoNewPrivs') === '1',
    root: options.split(',')[0] ?? '',
  };
}

// ---- what an image holds ----

/** Every file and folder under `dir` of `image`, as paths relative to the image's root (podman image mount). */
export function imageFiles(image: string, dir: string): string[] {
  const root = podmanMust(['image', 'mount', image]).trim();
  try {
    const out: string[] = [];
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        out.push(relative(root, p));
        if (e.isDirectory()) walk(p);
      }
    };
    walk(join(root, dir));
    return out.sort();
  } finally {
    podman(['image', 'unmount', image]);
  }
}

/**
 * The paths among `paths` that are test code: compiled tests (*.test.js and their .d.ts and
 * maps), folders of tests and their helpers or data (test, tests, testutil, testdata), and the
 * test-only modules (fakeapi, testkit, *bench).
 */
export function testCodeIn(paths: readonly string[]): string[] {
  const dirs = new Set(['test', 'tests', 'testutil', 'testdata', '__tests__']);
  return paths.filter((p) => {
    const parts = p.split('/');
    const base = parts.at(-1) ?? '';
    const stem = base.replace(/\.(d\.ts|js\.map|d\.ts\.map|js|ts|mjs|cjs)$/, '');
    return (
      parts.slice(0, -1).some((d) => dirs.has(d)) ||
      dirs.has(base) ||
      /\.test$/.test(stem) ||
      stem === 'fakeapi' ||
      stem === 'testkit' ||
      /bench$/.test(stem)
    );
  });
}
