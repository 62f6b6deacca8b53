// `workloads` setup: read the block; the accounting (and so every count) lives as long as the
// process, so a reload keeps counting. The pod index is the block's kubernetes plugin's, or,
// in a block without one (a node-local cache), a pods-only source of its own.

import { duplicateProperty, expectArgs, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { fqdn, lowerName } from '../../lib/dns/name.js';
import type { SetupFn } from '../../server/plugin.js';
import { apiSource, checkManifestsDirectory, instanceKey, namedSource, readSourceProperty, SourceRegistry, type SourceNeeds, type SourceProperties, type SourceSpec } from '../kubernetes/index.js';
import { endpointFor } from '../pkg/endpoint.js';
import { parseHttpAddress, type HttpAddress } from '../pkg/httpaddress.js';
import { Accounting, type AccountingOptions, type PodIndex } from './accounting.js';
import { WorkloadsPlugin } from './handler.js';
import { OwnPods } from './pods.js';
import { registerWorkloadMetrics } from './metrics.js';
import { PAGE_HTML } from './page.js';
import { buildReport } from './report.js';

/** Path of the JSON report (`kdns top` reads it). */
export const REPORT_PATH = '/api/workloads';

export const DEFAULT_MAX_SERIES = 50;
const TICK_MS = 10_000;

/** Where the JSON endpoint and the page listen: loopback, next to prometheus's 9153. */
export const DEFAULT_ADDRESS = 'localhost:9155';
/** The window `kdns top` and the page report rates over. */
const REPORT_WINDOW_MS = 60_000;

export interface WorkloadsConfig {
  address: HttpAddress;
  maxSeries: number;
  hostSearch: string[];
  /** Where the plugin reads pods itself (a block without kubernetes); undefined: the kubernetes plugin's. */
  source?: SourceSpec;
  /** The first source property, for errors. */
  sourceAt?: Directive;
  /** Only the pods of this node (`node NAME`). */
  nodeName?: string;
}

/** A node's name: a lowercase RFC 1123 subdomain, as the API server checks it. */
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Properties that may appear once. */
const ONCE = new Set(['endpoint', 'tls', 'kubeconfig', 'manifests', 'incluster', 'node']);

/**
 * `workloads [ADDRESS] { max_workloads N; search DOMAIN...; SOURCE; node NAME }`, SOURCE one of
 * `incluster`, `endpoint URL` (with `tls CERT KEY CA`), `kubeconfig PATH [CONTEXT]`,
 * `manifests DIR`. Relative paths resolve against the Corefile's folder.
 */
export function parseWorkloads(d: Directive, corefilePath: string = d.file): WorkloadsConfig {
  if (d.args.length > 1) throw CorefileError.at(d, `workloads takes at most one address, got ${d.args.length} arguments`);
  const address = parseHttpAddress(d.args[0] ?? DEFAULT_ADDRESS);
  if (typeof address === 'string') throw CorefileError.at(d, `workloads: ${address}`);
  const config: WorkloadsConfig = { address, maxSeries: DEFAULT_MAX_SERIES, hostSearch: [] };
  const props: SourceProperties = { lines: new Map() };
  const seen = new Map<string, Directive>();
  for (const prop of d.block ?? []) {
    if (ONCE.has(prop.name)) {
      if (seen.has(prop.name)) duplicateProperty(prop, 'workloads');
      seen.set(prop.name, prop);
    }
    if (readSourceProperty(prop, corefilePath, props)) continue;
    switch (prop.name) {
      case 'max_workloads': {
        const [text] = expectArgs(prop, 1, 1);
        const n = Number(text);
        if (!Number.isInteger(n) || n < 0 || n > 10_000) throw CorefileError.at(prop, `max_workloads: "${text}" is not a whole number from 0 to 10000`);
        config.maxSeries = n;
        break;
      }
      case 'search':
        config.hostSearch = expectArgs(prop, 1).map((s) => lowerName(fqdn(s)));
        break;
      case 'incluster':
        expectArgs(prop, 0, 0);
        break;
      case 'node': {
        const [name] = expectArgs(prop, 1, 1) as [string];
        if (name === '') throw CorefileError.at(prop, 'node: the name is empty (an unset environment variable? In a DaemonSet, set NODE_NAME from the field spec.nodeName)');
        if (name.length > 253 || !NODE_NAME.test(name)) throw CorefileError.at(prop, `node: "${name}" is not a node name (a lowercase RFC 1123 subdomain)`);
        config.nodeName = name;
        break;
      }
      default:
        unknownProperty(prop, 'workloads');
    }
  }
  readSource(config, props, seen);
  return config;
}

/** The pods source the properties name, checked: one source, tls only with endpoint, node only with a source. */
function readSource(config: WorkloadsConfig, props: SourceProperties, seen: Map<string, Directive>): void {
  let source = namedSource(props);
  const incluster = seen.get('incluster');
  if (incluster) {
    if (source !== undefined) {
      const other = ['manifests', 'endpoint', 'kubeconfig'].find((n) => seen.has(n)) as string;
      throw CorefileError.at(seen.get(other) as Directive, `${other} cannot be combined with incluster (one source per block)`);
    }
    source = apiSource(props);
  }
  const tls = seen.get('tls');
  if (tls && props.endpoint === undefined) throw CorefileError.at(tls, 'tls goes with endpoint (kubeconfig and incluster carry their own credentials)');
  const node = seen.get('node');
  if (node && source === undefined) throw CorefileError.at(node, 'node needs a source of pods: incluster, endpoint, kubeconfig or manifests');
  if (source === undefined) return;
  config.source = source;
  config.sourceAt = ['incluster', 'endpoint', 'kubeconfig', 'manifests', 'tls'].map((n) => seen.get(n)).filter((p): p is Directive => p !== undefined).sort((a, b) => a.line - b.line)[0];
}

interface KubernetesLike {
  readonly config: { readonly zones: readonly string[]; readonly podMode: string };
  readonly source: { readonly store: PodIndex };
}

/** Per Corefile: the cluster zone a block named, for blocks that name none (`.`, reverse zones, ap.k8s.io). */
const ZONE_KEY = 'workloads|zone';

/**
 * The zone of the pods' search lists among a block's zones: not `.`, a reverse zone, or the
 * autopath zone ap.k8s.io (a node cache has a block for each, beside the cluster zone's).
 */
function clusterZoneOf(zones: readonly string[]): string | undefined {
  return zones.find((z) => z !== '.' && !z.endsWith('in-addr.arpa.') && !z.endsWith('ip6.arpa.') && z !== 'ap.k8s.io.' && !z.endsWith('.ap.k8s.io.'));
}

export const setup: SetupFn = (ctx) => {
  const d = ctx.directive;
  const config = parseWorkloads(d, ctx.corefilePath);
  if (config.source !== undefined) {
    const at = config.sourceAt ?? d;
    if (ctx.block.plugins.includes('kubernetes')) {
      throw CorefileError.at(at, `workloads: ${at.name} is for a block without kubernetes; this block's kubernetes plugin already knows its pods (use "pods verified" there)`);
    }
    checkManifestsDirectory(config.source, at, 'workloads');
  }
  // Blocks of one Corefile share the accounting: a block without a cluster zone of its own keeps
  // the one an earlier block named, whatever order they come in.
  const named = clusterZoneOf(ctx.block.zones);
  if (named !== undefined) ctx.instance.set(ZONE_KEY, named);
  const zone = named ?? (ctx.instance.get(ZONE_KEY) as string | undefined) ?? 'cluster.local.';
  const options: AccountingOptions = { maxSeries: config.maxSeries, zone, hostSearch: config.hostSearch };
  // One accounting and one clock for the process: blocks and reloads share them.
  const acc = ctx.shared.singleton('workloads|accounting', () => {
    const created = new Accounting(options, Date.now());
    setInterval(() => created.advance(Date.now()), TICK_MS).unref();
    return created;
  });
  acc.configure(options);
  registerWorkloadMetrics(ctx.shared.metrics, acc);
  const kubernetesKey = instanceKey(ctx.block.file, ctx.block.line);
  const own = config.source === undefined ? undefined : new OwnPods(SourceRegistry.of(ctx.shared), config.source, ownNeeds(config), ctx.shared.log.plugin('workloads'));
  let pods: PodIndex | undefined;
  let release: (() => Promise<void>) | undefined;
  return new WorkloadsPlugin(
    acc,
    own ? () => own.index : () => pods,
    async () => {
      if (own) {
        await own.start();
      } else {
        const k = ctx.instance.get(kubernetesKey) as KubernetesLike | undefined;
        if (k && k.config.podMode !== 'verified') {
          throw CorefileError.at(d, 'workloads needs "pods verified" in the kubernetes block to know which pod has which IP');
        }
        pods = k?.source.store;
      }
      const endpoint = endpointFor(ctx.shared, config.address);
      const releaseReport = await endpoint.claim(
        REPORT_PATH,
        (_req, res) => {
          res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify(buildReport(acc, REPORT_WINDOW_MS)));
        },
        'workloads',
      );
      const releasePage = await endpoint.claim(
        '/',
        (_req, res) => {
          res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(PAGE_HTML);
        },
        'workloads',
      );
      release = async () => {
        await releaseReport();
        await releasePage();
      };
    },
    async () => {
      await release?.();
      await own?.stop();
    },
  );
};

/** What a block's own source watches: pods only, of one node when `node` says so. */
function ownNeeds(config: WorkloadsConfig): SourceNeeds {
  return { pods: true, endpoints: false, multicluster: false, podsOnly: true, ...(config.nodeName !== undefined ? { nodeName: config.nodeName } : {}) };
}
