// `kdns resolvconf`: the resolv.conf the kubelet (and the container runtime) would give a pod.
// Also home of the plumbing `kdns validate` and `kdns explain` share: I/O that tests can capture,
// reading a manifest, the kubelet-like flags.

import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { formatFieldError } from '../lib/cluster/field.js';
import { computePodDNS } from '../poddns/compute.js';
import type { NodeDNSSettings, PodDNSResult } from '../poddns/compute.js';
import { parseFeatureGates } from '../poddns/featuregates.js';
import type { FeatureGates } from '../poddns/featuregates.js';
import { parseInputObjects } from '../poddns/input.js';
import type { InputObject } from '../poddns/input.js';
import { parseHostResolvConf, renderResolvConf } from '../poddns/resolvconf.js';
import type { ResolvConf } from '../poddns/resolvconf.js';
import { effectivePodSpec } from '../poddns/podrequest.js';
import type { PodDNSRequest } from '../poddns/podrequest.js';
import { podDNSRequestOf, validatePodSource } from '../poddns/validate.js';
import { kubeletIPString } from '../poddns/kubeletip.js';
import { isPodBearingKind, readPodSpec } from '../poddns/workload.js';
import type { PodSpecSource } from '../poddns/workload.js';
import { CliError, EXIT_INVALID, EXIT_OK, EXIT_USAGE } from './exit.js';

/** Where a subcommand writes and reads; the process by default, a recorder in tests. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  readStdin(): Promise<string>;
  setExitCode(code: number): void;
}

export const processIO: CliIO = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks).toString('utf8');
  },
  setExitCode: (code) => {
    process.exitCode = code;
  },
};

/**
 * Runs an action and turns its outcome into an exit code: a CliError prints its message, any
 * other throw is a bug and is shown as one (exit 1) rather than a stack trace.
 */
export async function runAction(io: CliIO, name: string, action: () => Promise<number>): Promise<void> {
  let code: number;
  try {
    code = await action();
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`kdns ${name}: ${err.message}\n`);
      code = err.exitCode;
    } else {
      io.err(`kdns ${name}: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      code = EXIT_INVALID;
    }
  }
  io.setExitCode(code);
}

/** A file's text, `-` meaning standard input. An unreadable file is invalid input (exit 1). */
export async function readInputText(path: string, io: CliIO): Promise<string> {
  if (path === '-') return io.readStdin();
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT_INVALID);
  }
}

export async function readInputObjects(path: string, io: CliIO): Promise<InputObject[]> {
  const text = await readInputText(path, io);
  const parsed = parseInputObjects(text, path === '-' ? '<stdin>' : path);
  if (parsed.errors.length > 0) throw new CliError(parsed.errors.join('\n'), EXIT_INVALID);
  return parsed.objects;
}

/** The flags `kdns resolvconf` and `kdns explain` share, named as the kubelet's. */
export interface PodDNSFlags {
  filename: string;
  hostResolvConf: string;
  clusterDns?: string;
  clusterDomain: string;
  nodeIp?: string;
  nodecacheIp?: string;
  featureGates?: string;
}

export function addPodDNSOptions(cmd: Command): Command {
  return cmd
    .requiredOption('-f, --filename <FILE>', 'a Pod or an object with a pod template (Deployment, Job, CronJob, …); - reads stdin')
    .option('--host-resolv-conf <PATH>', 'the node\'s resolv.conf, as the kubelet\'s --resolv-conf; "" means none', '/etc/resolv.conf')
    .option('--cluster-dns <IP[,IP...]>', 'the cluster DNS service address(es), as the kubelet\'s --cluster-dns (default: none)')
    .option('--cluster-domain <DOMAIN>', 'the cluster domain', 'cluster.local')
    .option('--node-ip <IP[,IP]>', 'the node\'s address(es); used only without a host resolv.conf')
    .option('--nodecache-ip <IP>', 'the node-local cache address ClusterFirstWithAutopath pods use')
    .option('--feature-gates <K=V,...>', 'feature gates: RelaxedDNSSearchValidation (default false)');
}

export function addOutputOption(cmd: Command): Command {
  return cmd.addOption(new Option('-o, --output <FORMAT>', 'output format').choices(['text', 'json']).default('text'));
}

/**
 * Addresses as the kubelet reads and writes them: parsed as Go's ParseIPSloppy does (IPv4 octets
 * may have leading zeros; no zone), written as Go's net.IP String() (`fd00::a`, `10.96.0.10`).
 */
function ipList(flag: string, text: string, max: number): string[] {
  const ips = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const canonical = ips.map((ip) => {
    const c = kubeletIPString(ip);
    if (c === undefined) throw new CliError(`${flag}: ${JSON.stringify(ip)} is not an IP address`, EXIT_USAGE);
    return c;
  });
  if (ips.length > max) throw new CliError(`${flag}: at most ${max} addresses`, EXIT_USAGE);
  return canonical;
}

export function parseGatesFlag(text: string | undefined): FeatureGates {
  const parsed = parseFeatureGates(text ?? '');
  if (!parsed.ok) throw new CliError(`--feature-gates: ${parsed.error}`, EXIT_USAGE);
  return parsed.gates;
}

/** The node's side: flags checked (a bad flag is a usage error) and the host file read and parsed. */
export async function nodeSettings(flags: PodDNSFlags): Promise<NodeDNSSettings> {
  const clusterDNS = ipList('--cluster-dns', flags.clusterDns ?? '', Number.MAX_SAFE_INTEGER);
  const nodeIPs = ipList('--node-ip', flags.nodeIp ?? '', 2);
  const nodecache = flags.nodecacheIp === undefined ? [] : ipList('--nodecache-ip', flags.nodecacheIp, 1);
  const domain = flags.clusterDomain.endsWith('.') ? flags.clusterDomain.slice(0, -1) : flags.clusterDomain;
  return {
    host: await readHostFile(flags.hostResolvConf),
    clusterDNS,
    clusterDomain: domain,
    nodeIPs,
    ...(nodecache[0] !== undefined ? { nodecacheIP: nodecache[0] } : {}),
  };
}

/** The kubelet refuses to create the sandbox when the host file cannot be read or parsed; so do we. */
async function readHostFile(path: string): Promise<ResolvConf | null> {
  if (path === '') return null;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(`--host-resolv-conf: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT_INVALID);
  }
  const parsed = parseHostResolvConf(text);
  if (parsed.errors.length > 0) {
    throw new CliError(parsed.errors.map((e) => (e.line > 0 ? `${path}:${e.line}: ${e.message}` : `${path}: ${e.message}`)).join('\n'), EXIT_INVALID);
  }
  return parsed.config;
}

/** `Deployment/web`, the prefix of every line about an object. */
export function objectLabel(kind: string, name: string): string {
  return `${kind}/${name === '' ? '<unnamed>' : name}`;
}

/** A pod ready for the kubelet's computation: its spec says the policy it asked kdns for. */
export interface LoadedPod extends PodSpecSource {
  /** What the pod asked of kdns and where (annotation, literal dnsPolicy); `spec` already carries it. */
  request: PodDNSRequest;
}

/**
 * The one pod spec a resolvconf/explain input holds, defaulted and validated as the API server
 * would before any kubelet sees it: an invalid pod never gets a resolv.conf. A policy asked
 * through the dns.kdns.io annotations is read exactly as the literal dnsPolicy (the webhook
 * makes the two the same pod), so `spec` is the one kdns's computation takes.
 */
export async function loadValidPod(filename: string, gates: FeatureGates, clusterDomain: string, io: CliIO): Promise<LoadedPod> {
  const objects = await readInputObjects(filename, io);
  const sources = objects.map((o) => readPodSpec(o.object)).filter((s): s is PodSpecSource => s !== undefined);
  if (sources.length === 0) {
    const kinds = objects.map((o) => String(o.object['kind'])).filter((k) => !isPodBearingKind(k));
    const found = kinds.length > 0 ? ` (found: ${[...new Set(kinds)].join(', ')})` : '';
    throw new CliError(`${filename}: no Pod or object with a pod template${found}`, EXIT_INVALID);
  }
  if (sources.length > 1) {
    throw new CliError(`${filename}: holds ${sources.length} objects with pod specs (${sources.map((s) => objectLabel(s.kind, s.name)).join(', ')}); give one`, EXIT_INVALID);
  }
  const source = sources[0]!;
  const errors = validatePodSource(source, undefined, { relaxedDNSSearchGate: gates.RelaxedDNSSearchValidation, clusterDomain });
  if (errors.length > 0) {
    const label = objectLabel(source.kind, source.name);
    throw new CliError(`invalid pod spec:\n${errors.map((e) => `${label}: ${formatFieldError(e)}`).join('\n')}`, EXIT_INVALID);
  }
  const request = podDNSRequestOf(source, { relaxedSearch: gates.RelaxedDNSSearchValidation, clusterDomain });
  return { ...source, spec: effectivePodSpec(request, source.spec), request };
}

export function podDNSFor(source: PodSpecSource, node: NodeDNSSettings): PodDNSResult {
  return computePodDNS({ spec: source.spec, namespace: source.namespace }, node);
}

interface ResolvconfOptions extends PodDNSFlags {
  output: 'text' | 'json';
}

async function resolvconf(opts: ResolvconfOptions, io: CliIO): Promise<number> {
  const gates = parseGatesFlag(opts.featureGates);
  const node = await nodeSettings(opts);
  const source = await loadValidPod(opts.filename, gates, node.clusterDomain, io);
  const { config, warnings } = podDNSFor(source, node);
  if (opts.output === 'json') {
    io.out(`${JSON.stringify({ ...config, warnings }, null, 2)}\n`);
  } else {
    for (const w of warnings) io.err(`warning: ${w}\n`);
    io.out(renderResolvConf(config));
  }
  return EXIT_OK;
}

export function register(program: Command, io: CliIO = processIO): void {
  const cmd = program
    .command('resolvconf')
    .description("print the resolv.conf a pod gets: the kubelet's computation for its dnsPolicy (or the dns.kdns.io/policy annotation), dnsConfig and Custom's parameters")
    .addHelpText(
      'after',
      `
Examples:
  kdns resolvconf -f pod.yaml --cluster-dns 10.96.0.10
  kdns resolvconf -f deploy.yaml --cluster-dns 10.96.0.10 --host-resolv-conf node-resolv.conf -o json
  kubectl get pod web -o yaml | kdns resolvconf -f - --cluster-dns 10.96.0.10 --host-resolv-conf ""`,
    );
  addOutputOption(addPodDNSOptions(cmd)).action(async (opts: ResolvconfOptions) => runAction(io, 'resolvconf', () => resolvconf(opts, io)));
}
