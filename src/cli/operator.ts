// `kdns operator`: render the objects for a DNS resource (pure, for review and CI), print the CRD,
// or run the reconcile loop against a manifest directory or a Kubernetes API server.
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { formatFieldError } from '../cluster/field.js';
import { describeLeftOut } from '../operator/config.js';
import { dnsCRDYaml } from '../operator/crd.js';
import { InputError, readCurrentDir, readDNSFile, readNodesFile } from '../operator/io.js';
import { render } from '../operator/render.js';
import type { RenderOptions } from '../operator/render.js';
import { DEFAULT_IMAGE, DEFAULT_NAMESPACE, DEFAULT_SERVICE_CIDR, DEFAULT_NODE_RESOLVER_SERVICES } from '../operator/render.js';
import { tenthAddress } from '../operator/objects.js';
import { DEFAULT_CLUSTER_DOMAIN } from '../operator/validate.js';
import { CliError, EXIT_INVALID, EXIT_OK, EXIT_USAGE } from './exit.js';

interface CommonFlags {
  namespace: string;
  image: string;
  clusterDomain: string;
  serviceCidr: string;
  nodeResolverServices: string;
}

interface RenderFlags extends CommonFlags {
  file: string;
  nodes?: string;
  current?: string;
  output: string;
}

export function renderOptionsFrom(flags: CommonFlags): RenderOptions {
  try {
    tenthAddress(flags.serviceCidr);
  } catch (e) {
    throw new CliError(`--service-cidr: ${(e as Error).message}`, EXIT_USAGE);
  }
  return {
    namespace: flags.namespace,
    image: flags.image,
    clusterDomain: flags.clusterDomain.replace(/\.$/, ''),
    serviceCIDR: flags.serviceCidr,
    nodeResolverServices: flags.nodeResolverServices.split(',').map((s) => s.trim()).filter(Boolean),
  };
}

export function addCommonOptions(cmd: Command): Command {
  return cmd
    .option('--namespace <ns>', 'namespace of the DNS objects', DEFAULT_NAMESPACE)
    .option('--image <image>', 'image that runs kdns serve and kdns node-resolver', DEFAULT_IMAGE)
    .option('--cluster-domain <domain>', 'the cluster domain', DEFAULT_CLUSTER_DOMAIN)
    .option('--service-cidr <cidr>', 'service network; the DNS Service gets its 10th address', DEFAULT_SERVICE_CIDR)
    .option('--node-resolver-services <names>', 'comma-separated services node-resolver writes into /etc/hosts', DEFAULT_NODE_RESOLVER_SERVICES.join(','));
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

  operator
    .command('crd')
    .description('Print the CustomResourceDefinition of the DNS resource (deploy/01-crd-dns.yaml)')
    .action(() => {
      process.stdout.write(dnsCRDYaml());
    });
}
