// `workloads` setup: read the block; the accounting (and so every count) lives as long as the
// process, so a reload keeps counting; the pod index is the block's kubernetes plugin's.

import { expectArgs, unknownProperty } from '../../corefile/args.js';
import { CorefileError, type Directive } from '../../corefile/ast.js';
import { fqdn, lowerName } from '../../dns/name.js';
import type { SetupFn } from '../../server/plugin.js';
import { endpointFor, parseHttpAddress, type HttpAddress } from '../health/endpoint.js';
import { instanceKey } from '../kubernetes/setup.js';
import { Accounting, type AccountingOptions, type PodIndex } from './accounting.js';
import { WorkloadsPlugin } from './handler.js';
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
}

/** `workloads [ADDRESS] { max_workloads N; search DOMAIN... }` */
export function parseWorkloads(d: Directive): WorkloadsConfig {
  if (d.args.length > 1) throw CorefileError.at(d, `workloads takes at most one address, got ${d.args.length} arguments`);
  const address = parseHttpAddress(d.args[0] ?? DEFAULT_ADDRESS);
  if (typeof address === 'string') throw CorefileError.at(d, `workloads: ${address}`);
  const config: WorkloadsConfig = { address, maxSeries: DEFAULT_MAX_SERIES, hostSearch: [] };
  for (const prop of d.block ?? []) {
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
      default:
        unknownProperty(prop, 'workloads');
    }
  }
  return config;
}

interface KubernetesLike {
  readonly config: { readonly zones: readonly string[]; readonly podMode: string };
  readonly source: { readonly store: PodIndex };
}

export const setup: SetupFn = (ctx) => {
  const d = ctx.directive;
  const config = parseWorkloads(d);
  const zone = ctx.block.zones.find((z) => z !== '.') ?? 'cluster.local.';
  const options: AccountingOptions = { maxSeries: config.maxSeries, zone, hostSearch: config.hostSearch };
  // One accounting and one clock for the process: blocks and reloads share them.
  const acc = ctx.shared.singleton('workloads|accounting', () => {
    const created = new Accounting(options);
    setInterval(() => created.advance(Date.now()), TICK_MS).unref();
    return created;
  });
  acc.configure(options);
  registerWorkloadMetrics(ctx.shared.metrics, acc);
  const kubernetesKey = instanceKey(ctx.block.file, ctx.block.line);
  let pods: PodIndex | undefined;
  let release: (() => Promise<void>) | undefined;
  return new WorkloadsPlugin(
    acc,
    () => pods,
    async () => {
      const k = ctx.instance.get(kubernetesKey) as KubernetesLike | undefined;
      if (k && k.config.podMode !== 'verified') {
        throw CorefileError.at(d, 'workloads needs "pods verified" in the kubernetes block to know which pod has which IP');
      }
      pods = k?.source.store;
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
    () => release?.(),
  );
};
