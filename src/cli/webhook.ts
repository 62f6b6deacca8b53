// `kdns webhook`: the mutating admission webhook that gives pods kdns's two DNS policies on a
// stock API server (see src/webhook/README.md). Flags and the config file give the cluster's
// DNS settings; certificates come from a Secret kdns manages, or from mounted files.
import type { Command } from 'commander';
import { readFileSync, statSync } from 'node:fs';
import { loadKubeConfig } from '../lib/cluster/kubeapi.js';
import type { AdmissionSettings } from '../poddns/admission.js';
import { guardProcess } from '../server/guard.js';
import { startFileCertSource, startSecretCertSource } from '../webhook/certs.js';
import type { CertSource } from '../webhook/certs.js';
import { parseSettingsFile, resolveSettings } from '../webhook/settings.js';
import type { SettingsFlags } from '../webhook/settings.js';
import { startWebhookServer } from '../webhook/server.js';
import { CliError, EXIT_INVALID, EXIT_USAGE } from './exit.js';
import { runUntilSignalled } from './signals.js';

interface WebhookFlags {
  config?: string;
  listen: string;
  health: string;
  metrics: string;
  namespace?: string;
  service: string;
  tlsSecret: string;
  webhookConfiguration: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  kubeconfig?: string;
  clusterDomain?: string;
  clusterDns?: string;
  nodecacheIp?: string;
  nodeSearch?: string;
  configPollSeconds: string;
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** `:9443` → all addresses, port 9443; `127.0.0.1:0` → loopback, any port. */
export function parseHostPort(text: string, flag: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text);
  const port = Number(m?.[3]);
  if (m === null || port > 65535) throw new CliError(`${flag}: want [HOST]:PORT, got "${text}"`, EXIT_USAGE);
  return { host: m[1] ?? m[2] ?? '', port };
}

function list(text: string | undefined): string[] | undefined {
  return text === undefined ? undefined : text.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function flagSettings(f: WebhookFlags): SettingsFlags {
  const clusterDNS = list(f.clusterDns);
  const nodeSearches = list(f.nodeSearch);
  return {
    ...(f.clusterDomain !== undefined ? { clusterDomain: f.clusterDomain } : {}),
    ...(clusterDNS !== undefined ? { clusterDNS } : {}),
    ...(f.nodecacheIp !== undefined ? { nodeCacheIP: f.nodecacheIp } : {}),
    ...(nodeSearches !== undefined ? { nodeSearches } : {}),
  };
}

/** The settings of the file (if any) under the flags; errors name the file and the field. */
function loadSettings(f: WebhookFlags): { settings?: AdmissionSettings; errors: string[] } {
  let file = {};
  if (f.config !== undefined) {
    let text: string;
    try {
      text = readFileSync(f.config, 'utf8');
    } catch (e) {
      return { errors: [`${f.config}: ${(e as Error).message}`] };
    }
    const parsed = parseSettingsFile(text);
    if (parsed.errors.length > 0) return { errors: parsed.errors.map((e) => `${f.config}: ${e}`) };
    file = parsed.values;
  }
  const r = resolveSettings(file, flagSettings(f));
  return { ...r, errors: r.errors.map((e) => (f.config !== undefined ? `${f.config} (with flags): ${e}` : `flags: ${e}`)) };
}

function namespaceOf(f: WebhookFlags): string {
  if (f.namespace !== undefined) return f.namespace;
  if (process.env['POD_NAMESPACE']) return process.env['POD_NAMESPACE'];
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
  } catch {
    throw new CliError('--namespace: not given, POD_NAMESPACE is unset and no service account namespace file exists', EXIT_USAGE);
  }
}

/** The names the API server uses for the Service (`<svc>.<ns>.svc`) and the shorter ones in-cluster clients use. */
export function serviceDNSNames(service: string, namespace: string): string[] {
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}

async function certSource(f: WebhookFlags, namespace: string, log: (l: string) => void): Promise<CertSource> {
  if ((f.tlsCertFile === undefined) !== (f.tlsKeyFile === undefined)) throw new CliError('--tls-cert-file and --tls-key-file go together', EXIT_USAGE);
  if (f.tlsCertFile !== undefined && f.tlsKeyFile !== undefined) return startFileCertSource({ certFile: f.tlsCertFile, keyFile: f.tlsKeyFile, log });
  const kubeConfig = await loadKubeConfig({ resyncMs: 0, ...(f.kubeconfig !== undefined ? { kubeconfig: { path: f.kubeconfig } } : {}) });
  return startSecretCertSource({
    kubeConfig,
    namespace,
    secretName: f.tlsSecret,
    webhookConfigurationName: f.webhookConfiguration,
    dnsNames: serviceDNSNames(f.service, namespace),
    log,
  });
}

/** Re-reads the config file when it changes (a ConfigMap mount is swapped under a symlink); a bad file keeps the last good settings. */
function watchSettings(f: WebhookFlags, initial: AdmissionSettings, log: (l: string) => void, signal: AbortSignal): () => AdmissionSettings {
  let current = initial;
  if (f.config === undefined) return () => current;
  const path = f.config;
  const stamp = (): string => {
    try {
      const s = statSync(path);
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      return 'missing';
    }
  };
  let last = stamp();
  const timer = setInterval(() => {
    const now = stamp();
    if (now === last) return;
    last = now;
    const r = loadSettings(f);
    if (r.settings === undefined) return log(`webhook: config not reloaded, the last good one stays: ${r.errors.join('; ')}`);
    current = r.settings;
    log(`webhook: config reloaded from ${path}`);
  }, Number(f.configPollSeconds) * 1000);
  signal.addEventListener('abort', () => clearInterval(timer));
  return () => current;
}

async function run(f: WebhookFlags): Promise<void> {
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  if (!/^\d+(\.\d+)?$/.test(f.configPollSeconds) || Number(f.configPollSeconds) <= 0) throw new CliError(`--config-poll-seconds: want a positive number, got "${f.configPollSeconds}"`, EXIT_USAGE);
  const listen = parseHostPort(f.listen, '--listen');
  const probes = parseHostPort(f.health, '--health');
  const metricsAt = parseHostPort(f.metrics, '--metrics');
  const initial = loadSettings(f);
  if (initial.settings === undefined) throw new CliError(initial.errors.join('\n'), EXIT_INVALID);
  const namespace = namespaceOf(f);
  // From here on nothing a request or the API server does may end the process.
  guardProcess(log);
  await runUntilSignalled(log, async (signal) => {
    const certs = await certSource(f, namespace, log);
    const settings = watchSettings(f, initial.settings as AdmissionSettings, log, signal);
    const server = await startWebhookServer({
      ...listen,
      probes,
      metricsAt,
      certs,
      settings,
      protectedNamespaces: new Set(['kube-system', namespace]),
      log,
    });
    log(`webhook: serving admission on ${listen.host || '*'}:${server.port} (/mutate, /mutate/namespace/<policy>), probes on :${server.probesPort ?? '-'}, metrics on :${server.metricsPort ?? '-'}`);
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    await server.close();
    await certs.close();
  });
}

export function register(program: Command): void {
  program
    .command('webhook')
    .description('mutating admission webhook: gives pods ClusterFirstWithAutopath and Custom DNS on a stock API server (dnsPolicy None + dnsConfig)')
    .option('--config <file>', 'settings file (clusterDomain, clusterDNS, nodeCacheIP, nodeSearches); re-read when it changes')
    .option('--listen <[host]:port>', 'HTTPS address of the admission endpoint', ':9443')
    .option('--health <[host]:port>', 'plain HTTP /health (liveness) and /ready (readiness)', ':8080')
    .option('--metrics <[host]:port>', 'plain HTTP /metrics (Prometheus)', ':9153')
    .option('--namespace <ns>', "the webhook's own namespace (default: $POD_NAMESPACE, else the service account's); its pods are never changed")
    .option('--service <name>', 'the Service the API server calls; the certificate names it', 'kdns-webhook')
    .option('--tls-secret <name>', 'Secret (in --namespace) holding the CA and serving certificate kdns creates and rotates', 'kdns-webhook-tls')
    .option('--webhook-configuration <name>', 'MutatingWebhookConfiguration whose caBundle kdns keeps current', 'kdns-webhook')
    .option('--tls-cert-file <file>', 'serve this certificate instead (cert-manager); reloaded when it changes; caBundle is left alone')
    .option('--tls-key-file <file>', 'the key of --tls-cert-file')
    .option('--kubeconfig <file>', 'kubeconfig (default: in-cluster)')
    .option('--cluster-domain <domain>', 'the kubelets\' --cluster-domain (overrides the file; default cluster.local)')
    .option('--cluster-dns <ip,...>', 'the kubelets\' --cluster-dns (overrides the file)')
    .option('--nodecache-ip <ip>', 'the node-local cache address autopath pods ask first (overrides the file)')
    .option('--node-search <domain,...>', 'what $(HOST) stands for in Custom search lists: the nodes\' search paths (overrides the file)')
    .option('--config-poll-seconds <s>', 'how often the config file is checked for changes', '5')
    .addHelpText(
      'after',
      `
A pod asks with the annotation dns.kdns.io/policy (ClusterFirstWithAutopath or Custom, with
dns.kdns.io/search and dns.kdns.io/options for Custom), with the Namespace label
dns.kdns.io/policy, or with the literal spec.dnsPolicy on a bare Pod. It is admitted with
dnsPolicy None and the dnsConfig \`kdns resolvconf\` computes for the policy it asked for.

Example (settings as flags, certificate from cert-manager):
  kdns webhook --cluster-dns 10.96.0.10 --nodecache-ip 169.254.20.10 \\
    --tls-cert-file /tls/tls.crt --tls-key-file /tls/tls.key`,
    )
    .action(async (flags: WebhookFlags) => {
      try {
        await run(flags);
      } catch (e) {
        if (!(e instanceof CliError)) throw e;
        process.stderr.write(`${e.message}\n`);
        process.exitCode = e.exitCode;
      }
    });
}
