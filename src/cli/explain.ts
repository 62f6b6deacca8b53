// `kdns explain`: the queries glibc or musl send for one name from a pod, and which one answers.

import { Option } from 'commander';
import type { Command } from 'commander';
import { loadManifestDir } from '../lib/cluster/manifestfiles.js';
import { formatManifestError } from '../lib/cluster/manifesttext.js';
import { ClusterStore } from '../lib/cluster/store.js';
import type { ClusterObject } from '../lib/cluster/types.js';
import { fqdn, isSubdomain, lowerName } from '../lib/dns/name.js';
import { RRType } from '../lib/dns/types.js';
import { DEFAULT_TTL } from '../plugins/kubernetes/config.js';
import type { KubernetesConfig } from '../plugins/kubernetes/config.js';
import { Resolver } from '../plugins/kubernetes/resolve.js';
import { comparedPolicies, explainPolicy, explanationJSON, formatComparison, formatPolicy, policyAnnotationAdvice } from '../poddns/explain.js';
import type { ExplainRequest } from '../poddns/explain.js';
import { NAMESPACE_POLICY_LABEL, POLICY_ANNOTATION } from '../poddns/annotations.js';
import { autopathOracle, firstKnown, namesOracle, nothingExists } from '../poddns/oracle.js';
import type { PodDNSRequest } from '../poddns/podrequest.js';
import { LIBCS } from '../poddns/queries.js';
import type { Family, Libc, NameOracle } from '../poddns/queries.js';
import { CliError, EXIT_INVALID, EXIT_OK } from './exit.js';
import { addOutputOption, addPodDNSOptions, loadValidPod, nodeSettings, parseGatesFlag, processIO, runAction } from './resolvconf.js';
import type { CliIO, PodDNSFlags } from './resolvconf.js';

interface ExplainOptions extends PodDNSFlags {
  libc?: Libc;
  cluster?: string;
  answer?: string;
  compare?: boolean;
  family: Family;
  output: 'text' | 'json';
}

async function loadCluster(dir: string): Promise<ClusterObject[]> {
  let results;
  try {
    results = await loadManifestDir(dir);
  } catch (err) {
    throw new CliError(`--cluster: cannot read ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT_INVALID);
  }
  const errors = results.flatMap((r) => r.errors);
  if (errors.length > 0) throw new CliError(errors.map(formatManifestError).join('\n'), EXIT_INVALID);
  return results.flatMap((r) => r.objects);
}

/**
 * The cluster's answers as the kubernetes plugin gives them (defaults: pods verified, endpoint
 * names from hostnames), read from a directory of manifests. Names outside the zone are not the
 * plugin's: NXDOMAIN here, so `--answer` can speak for them. An ExternalName alias ends where
 * its target does, which `external` decides.
 */
export function kubernetesOracle(objects: readonly ClusterObject[], clusterDomain: string, dir: string, external: NameOracle = nothingExists): NameOracle {
  const zone = lowerName(fqdn(clusterDomain));
  const store = new ClusterStore();
  store.batch(() => {
    for (const o of objects) store.upsert(o);
  });
  store.markSynced();
  const config: KubernetesConfig = {
    zones: [zone],
    primaryZone: zone,
    ttl: DEFAULT_TTL,
    podMode: 'verified',
    endpointPodNames: false,
    noEndpoints: false,
    ignoreEmptyService: false,
    source: { kind: 'directory', dir },
    startupTimeoutMs: 0,
  };
  const resolver = new Resolver(store, config, () => []);
  return (name, type) => {
    const qname = lowerName(fqdn(name));
    if (!isSubdomain(qname, zone)) return 'nxdomain';
    const r = resolver.resolve(qname, type === 'A' ? RRType.A : RRType.AAAA, zone);
    if (r.nameError) return 'nxdomain';
    const target = r.needs[0];
    if (target !== undefined) return external(target.name, type);
    return r.answers.length > 0 ? 'answer' : 'nodata';
  };
}

async function explain(name: string, opts: ExplainOptions, io: CliIO): Promise<number> {
  const gates = parseGatesFlag(opts.featureGates);
  const node = await nodeSettings(opts);
  const source = await loadValidPod(opts.filename, gates, node.clusterDomain, io);
  const outside = namesOracle((opts.answer ?? '').split(',').map((s) => s.trim()).filter((s) => s !== ''));
  const known = [...(opts.cluster !== undefined ? [kubernetesOracle(await loadCluster(opts.cluster), node.clusterDomain, opts.cluster, outside)] : []), outside];
  const req: ExplainRequest = {
    spec: source.spec,
    namespace: source.namespace,
    node,
    name,
    libcs: opts.libc !== undefined ? [opts.libc] : LIBCS,
    oracle: autopathOracle(known.length > 0 ? firstKnown(...known) : nothingExists, node.clusterDomain),
    family: opts.family,
  };
  const policies = opts.compare === true ? comparedPolicies(source.spec) : [source.spec.dnsPolicy ?? 'ClusterFirst'];
  const list = policies.map((p) => explainPolicy(req, p));
  const advice = opts.compare === true ? policyAnnotationAdvice(policies, source.spec, source.metadataPath.toString()) : [];
  if (opts.output === 'json') {
    io.out(`${JSON.stringify(explanationJSON(name, list, advice), null, 2)}\n`);
    return EXIT_OK;
  }
  const header = `${source.kind}/${source.name} in namespace ${source.namespace}, looking up ${JSON.stringify(name)}`;
  const asked = askedLine(source.request, source.metadataPath.toString());
  const hint = opts.cluster === undefined ? '\n(no --cluster: every name not given with --answer counts as NXDOMAIN)' : '';
  const body = opts.compare === true ? formatComparison(list, advice) : formatPolicy(list[0]!);
  io.out(`${header}${asked}${hint}\n\n${body}\n`);
  return EXIT_OK;
}

/** Where the pod's kdns policy comes from, when it asked for one. */
function askedLine(request: PodDNSRequest, metadataPath: string): string {
  if (request.policy === undefined) return '';
  if (request.mutatedFrom !== undefined) return `\n(rewritten by the kdns webhook from ${request.mutatedFrom}: dnsPolicy None and its dnsConfig)`;
  switch (request.source) {
    case 'annotation':
      return `\n(${request.policy} from the annotation ${metadataPath}.annotations[${POLICY_ANNOTATION}])`;
    case 'spec':
      return `\n(${request.policy} from the literal dnsPolicy: only a bare Pod with the kdns webhook gets it; kdns validate shows the annotation form)`;
    default:
      return `\n(${request.policy} from the namespace label ${NAMESPACE_POLICY_LABEL})`;
  }
}

export function register(program: Command, io: CliIO = processIO): void {
  const cmd = program
    .command('explain')
    .description('show the DNS queries glibc and musl send from a pod for one name, and which one answers')
    .argument('<NAME>', 'the name the application looks up (as given to getaddrinfo)')
    .addOption(new Option('--libc <LIBC>', 'only this resolver library (default: both)').choices(['glibc', 'musl']))
    .option('--cluster <DIR>', 'a directory of manifests (Services, EndpointSlices, Pods): names exist as the kubernetes plugin answers them')
    .option('--answer <NAME[,NAME...]>', 'names that exist outside the cluster (answer A and AAAA)')
    .option('--compare', 'show ClusterFirst, Custom (when the pod has Custom parameters) and ClusterFirstWithAutopath side by side, and the annotations that ask for each')
    .addOption(new Option('--family <FAMILY>', 'getaddrinfo ai_family').choices(['unspec', 'inet', 'inet6']).default('unspec'))
    .addHelpText(
      'after',
      `
Examples:
  kdns explain -f pod.yaml --cluster-dns 10.96.0.10 kubernetes.default
  kdns explain -f deploy.yaml --cluster-dns 10.96.0.10 --cluster ./cluster --libc musl api.example.com --answer api.example.com
  kdns explain -f pod.yaml --cluster-dns 10.96.0.10 --nodecache-ip 169.254.20.10 --compare api.example.com --answer api.example.com`,
    );
  addOutputOption(addPodDNSOptions(cmd)).action(async (name: string, opts: ExplainOptions) => runAction(io, 'explain', () => explain(name, opts, io)));
}
