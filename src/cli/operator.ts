// `kdns operator`: render the objects for a DNS resource (pure, for review and CI), print the CRD,
// or run the reconcile loop against a manifest directory or a Kubernetes API server.
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { formatFieldError } from '../lib/cluster/field.js';
import { describeLeftOut } from '../operator/config.js';
import { dnsCRDYaml } from '../operator/crd.js';
import { InputError, readCurrentDir, readDNSFile, readNodesFile } from '../operator/io.js';
import { render } from '../operator/render.js';
import type { RenderOptions } from '../operator/render.js';
import { DEFAULT_IMAGE, DEFAULT_NAMESPACE, DEFAULT_SERVICE_CIDR, DEFAULT_NODE_RESOLVER_SERVICES } from '../operator/render.js';
import { tenthAddress } from '../operator/objects.js';
import { DEFAULT_PORTS } from '../operator/corefile.js';
import { DirectoryBackend, watchDirectory } from '../operator/dirbackend.js';
import { OperatorLog } from '../operator/log.js';
import { Reconciler, runReconcileLoop } from '../operator/reconcile.js';
import type { Backend } from '../operator/reconcile.js';
import { parseGoDurationSeconds } from '../operator/addresses.js';
import { DEFAULT_CLUSTER_DOMAIN } from '../operator/validate.js';
import { guardProcess } from '../server/guard.js';
import { CliError, EXIT_INVALID, EXIT_OK, EXIT_USAGE } from './exit.js';
import { runUntilSignalled } from './signals.js';

interface CommonFlags {
  dnsPort: string;
  healthPort: string;
  readyPort: string;
  metricsPort: string;
  namespace: string;
  image: string;
  clusterDomain: string;
  serviceCidr?: string;
  nodeResolverServices: string;
}

interface RenderFlags extends CommonFlags {
  file: string;
  nodes?: string;
  current?: string;
  output: string;
}

function port(text: string, flag: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 65535) throw new CliError(`${flag}: invalid port "${text}"`, EXIT_USAGE);
  return n;
}

/**
 * Render options from the flags. Without --service-cidr, an API server allocates the Service's
 * address (`allocate`), while a directory and `render`, having no allocator, use the 10th of
 * 10.96.0.0/12.
 */
export function renderOptionsFrom(flags: CommonFlags, allocate = false): RenderOptions {
  const ports = { dns: port(flags.dnsPort, '--dns-port'), health: port(flags.healthPort, '--health-port'), ready: port(flags.readyPort, '--ready-port'), metrics: port(flags.metricsPort, '--metrics-port') };
  if (flags.serviceCidr !== undefined) {
    try {
      tenthAddress(flags.serviceCidr);
    } catch (e) {
      throw new CliError(`--service-cidr: ${(e as Error).message}`, EXIT_USAGE);
    }
  }
  return {
    ports,
    namespace: flags.namespace,
    image: flags.image,
    clusterDomain: flags.clusterDomain.replace(/\.$/, ''),
    ...(flags.serviceCidr !== undefined ? { serviceCIDR: flags.serviceCidr } : allocate ? { allocateServiceIP: true } : { serviceCIDR: DEFAULT_SERVICE_CIDR }),
    nodeResolverServices: flags.nodeResolverServices.split(',').map((s) => s.trim()).filter(Boolean),
  };
}

const SERVICE_CIDR_HELP =
  'service network: the DNS Service gets its 10th address, as on OpenShift (default: against an API server, ' +
  `the address the Service already has, else one the API server allocates; with --cluster and for render, ${DEFAULT_SERVICE_CIDR})`;

export function addCommonOptions(cmd: Command): Command {
  return cmd
    .option('--namespace <ns>', 'namespace of the DNS objects', DEFAULT_NAMESPACE)
    .option('--image <image>', 'image that runs kdns serve and kdns node-resolver', DEFAULT_IMAGE)
    .option('--cluster-domain <domain>', 'the cluster domain', DEFAULT_CLUSTER_DOMAIN)
    .option('--service-cidr <cidr>', SERVICE_CIDR_HELP)
    .option('--node-resolver-services <names>', 'comma-separated services node-resolver writes into /etc/hosts', DEFAULT_NODE_RESOLVER_SERVICES.join(','))
    .option('--dns-port <port>', 'port the DNS pods serve on (the Service maps 53 to it)', String(DEFAULT_PORTS.dns))
    .option('--health-port <port>', 'health (liveness) port', String(DEFAULT_PORTS.health))
    .option('--ready-port <port>', 'ready (readiness) port', String(DEFAULT_PORTS.ready))
    .option('--metrics-port <port>', 'prometheus metrics port', String(DEFAULT_PORTS.metrics));
}

/** Runs an action, turning InputError/CliError into one stderr line and an exit code. */
async function guarded(name: string, action: () => Promise<number>): Promise<void> {
  let code: number;
  try {
    code = await action();
  } catch (e) {
    if (e instanceof InputError) {
      console.error(`kdns operator ${name}: ${e.message}`);
      code = EXIT_INVALID;
    } else if (e instanceof CliError) {
      console.error(`kdns operator ${name}: ${e.message}`);
      code = e.exitCode;
    } else throw e;
  }
  process.exitCode = code;
}

async function renderAction(flags: RenderFlags): Promise<number> {
  if (flags.output !== 'yaml' && flags.output !== 'json') throw new CliError(`-o: unsupported format "${flags.output}" (yaml or json)`, EXIT_USAGE);
  const options = renderOptionsFrom(flags);
  const dns = await readDNSFile(flags.file);
  const nodes = flags.nodes === undefined ? undefined : await readNodesFile(flags.nodes);
  const current = flags.current === undefined ? undefined : await readCurrentDir(flags.current);
  const result = render({ dns, ...(nodes ? { nodes } : {}), ...(current ? { current } : {}), options, now: new Date() });
  if (!result.ok) {
    for (const e of result.errors) console.error(`${flags.file}: ${formatFieldError(e)}`);
    return EXIT_INVALID;
  }
  const list = { apiVersion: 'v1', kind: 'List', items: [...result.objects, result.dns] };
  process.stdout.write(flags.output === 'json' ? `${JSON.stringify(list, null, 2)}\n` : stringify(list, { lineWidth: 0, aliasDuplicateObjects: false }));
  for (const note of result.notes) console.error(`kdns operator render: ${note}`);
  for (const l of result.leftOut) console.error(`${flags.file}: ${describeLeftOut(l)}`);
  if (result.placementRefused !== undefined) console.error(`${flags.file}: spec.nodePlacement: refused: ${result.placementRefused}; the current placement is kept`);
  // The objects are still printed (the rest of the spec applies), but a script must notice.
  return result.leftOut.length > 0 || result.placementRefused !== undefined ? EXIT_INVALID : EXIT_OK;
}

interface RunFlags extends CommonFlags {
  cluster?: string;
  kubeconfig?: string;
  context?: string;
  inCluster?: boolean;
  resync: string;
  reloadInterval?: string;
  once?: boolean;
  createDefault: boolean;
}

function durationMs(text: string, flag: string): number {
  const seconds = parseGoDurationSeconds(text);
  if (seconds === undefined || seconds <= 0) throw new CliError(`${flag}: invalid duration "${text}" (e.g. 10s, 1m)`, EXIT_USAGE);
  return seconds * 1000;
}

const log = (line: string): void => {
  console.error(`${new Date().toISOString()} operator: ${line}`);
};
/** `run`'s log, whose level follows spec.operatorLogLevel from the first pass on. */
const operatorLog = new OperatorLog(log);

interface Chosen {
  backend: Backend;
  changes: (signal: AbortSignal) => AsyncIterable<void>;
  /** Against an API server: creates DNS "default" when there is none. */
  ensureDefault?: (signal: AbortSignal) => Promise<unknown>;
}

async function backendFor(flags: RunFlags): Promise<Chosen> {
  const chosen = [flags.cluster !== undefined, flags.kubeconfig !== undefined, flags.inCluster === true].filter(Boolean).length;
  if (chosen !== 1) throw new CliError('give exactly one of --cluster DIR, --kubeconfig PATH or --in-cluster', EXIT_USAGE);
  if (flags.cluster !== undefined) {
    const dir = flags.cluster;
    return { backend: new DirectoryBackend(dir), changes: (signal) => watchDirectory(dir, signal) };
  }
  const { ApiBackend, watchApi } = await import('../operator/apibackend.js');
  const api = await ApiBackend.connect({
    ...(flags.kubeconfig !== undefined ? { kubeconfig: flags.kubeconfig } : {}),
    ...(flags.context !== undefined ? { context: flags.context } : {}),
    namespace: flags.namespace,
    log,
    trace: operatorLog.trace,
  });
  return { backend: api, changes: (signal) => watchApi(api, signal), ensureDefault: (signal) => api.ensureDefaultDNS(signal) };
}

async function runAction(flags: RunFlags): Promise<number> {
  const render = renderOptionsFrom(flags, flags.cluster === undefined);
  const resyncMs = durationMs(flags.resync, '--resync');
  if (flags.reloadInterval !== undefined) {
    if (durationMs(flags.reloadInterval, '--reload-interval') < 2000) throw new CliError('--reload-interval: at least 2s (reload\'s minimum)', EXIT_USAGE);
    render.reloadInterval = flags.reloadInterval;
  }
  const { backend, changes, ensureDefault } = await backendFor(flags);
  const reconciler = new Reconciler(backend, { render, log, operatorLog });
  guardProcess(log);
  let code = EXIT_OK;
  // Signals are CoreDNS's from the start: creating the default DNS resource may wait on the CRD
  // for a while, and a SIGHUP then must not end the operator either.
  await runUntilSignalled(log, async (signal) => {
    if (ensureDefault && flags.createDefault) await ensureDefault(signal);
    if (signal.aborted) return;
    if (flags.once) {
      const outcome = await reconciler.pass();
      code = outcome.kind === 'applied' || outcome.kind === 'unmanaged' ? EXIT_OK : EXIT_INVALID;
      return;
    }
    log(`reconciling from ${backend.name} (resync every ${flags.resync})`);
    await runReconcileLoop(reconciler, { changes: changes(signal), resyncMs, signal }, log);
  });
  return code;
}

export function register(program: Command): void {
  const operator = program.command('operator').description('The DNS operator: DNS resource → Corefile, DaemonSets, Service, status');

  addCommonOptions(
    operator
      .command('render')
      .description('Print the objects a DNS resource turns into (pure: reads files, writes stdout)')
      .requiredOption('-f, --file <DNS.yaml>', 'the DNS resource')
      .option('--nodes <NODES.yaml>', 'the cluster\'s Nodes (a List); checks that the placement can schedule somewhere')
      .option('--current <DIR>', 'the objects applied now: the kept placement comes from here, and the status')
      .option('-o, --output <format>', 'yaml or json', 'yaml'),
  ).action((flags: RenderFlags) => guarded('render', () => renderAction(flags)));

  addCommonOptions(
    operator
      .command('run')
      .description('Reconcile: watch the DNS resource and Nodes, write the objects and the status')
      .option('--cluster <DIR>', 'a manifest directory (kdns serve --cluster): objects go to DIR/generated/')
      .option('--kubeconfig <PATH>', 'a Kubernetes API server, through this kubeconfig (server-side apply)')
      .option('--context <NAME>', 'kubeconfig context')
      .option('--in-cluster', 'the Kubernetes API server of the cluster this pod runs in')
      .option('--resync <duration>', 'a full pass at least this often', '30s')
      .option('--reload-interval <duration>', "how often the DNS pods' reload checks the Corefile (default: reload's 30s)")
      .option('--once', 'one pass, then exit (0 applied, 1 rejected or nothing to do)')
      .option('--no-create-default', 'against an API server: do not create the DNS resource "default" (empty spec) when there is none'),
  ).action((flags: RunFlags) => guarded('run', () => runAction(flags)));

  operator
    .command('crd')
    .description('Print the CustomResourceDefinition of the DNS resource (deploy/operator/crd-dns.yaml)')
    .action(() => {
      process.stdout.write(dnsCRDYaml());
    });
}
