// kdns in the node-cache binary's place: the NodeLocal DNSCache DaemonSet's container, with its
// flags, run by `kdns node-cache` (see src/cli/node-cache.ts and docs/dropin.md). It
//   1. renders the Corefile from the node-local-dns ConfigMap's template (Corefile.base) and
//      the kube-dns ConfigMap, filling the __PILLAR__ placeholders (pillars.ts), into -conf;
//   2. creates the dummy interface holding the local addresses (-setupinterface);
//   3. starts the kdns server on the rendered Corefile;
//   4. installs the NOTRACK/ACCEPT iptables rules (-setupiptables) once the server listens,
//      and checks them and the interface again every -syncinterval;
//   5. re-renders and reloads when either ConfigMap changes (a failed render keeps the
//      running Corefile and counts coredns_nodecache_setup_errors_total{errortype="configmap"});
//   6. on SIGTERM/SIGINT stops, then removes rules and interface unless -skipteardown — or
//      unless another process already serves the same addresses (the next pod of a rolling
//      update, successor.ts): then it hands its queries over and leaves both to that one.

import { existsSync, readdirSync, readFileSync, statSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { endpointFor } from '../plugins/pkg/endpoint.js';
import { parseHttpAddress } from '../plugins/pkg/httpaddress.js';
import type { Logger } from '../server/log.js';
import { Counter } from '../server/promclient.js';
import { counter } from '../server/metrics.js';
import { answerPodScrapes, podMetrics } from '../server/metricsum.js';
import { startServer, type KdnsServer } from '../server/server.js';
import type { GroupShareOf } from '../server/steer.js';
import { interfaceExists, removeInterface, setupInterface, type InterfaceHandle } from './iface.js';
import { IptablesRules } from './iptables.js';
import { successorServing, tcpGroupShare } from './successor.js';
import { workerCount } from '../server/siblings.js';
import { EMPTY_KUBE_DNS_CONFIG, parseKubeDnsConfig, renderTemplate, type KubeDnsConfig } from './pillars.js';

/** How often node-cache re-reads the ConfigMap directories; kdns also watches them for changes. */
export const CONFIG_SYNC_MS = 10_000;

export const SETUP_ERROR_TYPES = ['iptables', 'iptables_lock', 'interface_add', 'interface_check', 'configmap'] as const;
export type SetupErrorType = (typeof SETUP_ERROR_TYPES)[number];

export interface NodeCacheAppParams {
  localIPs: string[];
  port: number;
  healthPort: number;
  baseCorefile: string;
  /** Where the rendered Corefile is written and loaded from (-conf). */
  corefile: string;
  /** The kube-dns ConfigMap's directory, when there is one. */
  kubeDnsDir: string | undefined;
  /** The upstream Service's ClusterIP (from its _SERVICE_HOST variable), when known. */
  clusterDNS: string | undefined;
  setupInterface: boolean;
  interfaceName: string;
  setupIptables: boolean;
  skipTeardown: boolean;
  syncIntervalMs: number;
  /** host:port for a /metrics of its own (node-cache's -metrics-listen-address). */
  metricsListen: string;
  /** What the template's __PROMETHEUS__ENDPOINT__ becomes (node-cache's -prometheus-listen-address). */
  prometheusListen: string;
}

/** The setup-errors counter node-cache exports, every errortype present from the start. */
export function setupErrorsCounter(): Counter<'errortype'> {
  const c = new Counter({
    name: 'coredns_nodecache_setup_errors_total',
    help: 'The number of errors during periodic network setup for node-cache',
    labelNames: ['errortype'] as const,
    registers: [],
  });
  for (const t of SETUP_ERROR_TYPES) c.inc({ errortype: t }, 0);
  return c;
}

/** The files of a ConfigMap directory (no subdirectories, no hidden entries such as ..data), by name. */
function readConfigDir(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isFile()) files.set(name, readFileSync(path, 'utf8'));
  }
  return files;
}

export class NodeCacheApp {
  readonly setupErrors = setupErrorsCounter();
  server?: KdnsServer;
  private iface?: InterfaceHandle;
  private readonly iptables: IptablesRules;
  private lastRendered = '';
  private kubeDns: KubeDnsConfig = EMPTY_KUBE_DNS_CONFIG;
  private kubeDnsRaw = '';
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly watchers: FSWatcher[] = [];
  private releaseMetrics?: () => Promise<void>;
  private syncing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    readonly params: NodeCacheAppParams,
    private readonly log: Logger,
  ) {
    this.iptables = IptablesRules.forAddresses(params.localIPs, params.port, params.healthPort);
  }

  private fail(type: SetupErrorType, message: string): void {
    this.setupErrors.inc({ errortype: type });
    this.log.error(message);
  }

  /**
   * Re-reads the kube-dns ConfigMap when its files changed. One that is not valid is counted
   * (errortype "configmap") once per change and the last good one (at first: none) stays.
   */
  private refreshKubeDns(): void {
    const dir = this.params.kubeDnsDir;
    if (dir === undefined || !existsSync(dir)) return;
    let files: Map<string, string>;
    try {
      files = readConfigDir(dir);
    } catch (e) {
      this.fail('configmap', `reading ${dir}: ${(e as Error).message}`);
      return;
    }
    const raw = JSON.stringify([...files]);
    if (raw === this.kubeDnsRaw) return;
    this.kubeDnsRaw = raw;
    try {
      this.kubeDns = parseKubeDnsConfig(files);
    } catch (e) {
      this.fail('configmap', `Invalid config in ${dir}: ${(e as Error).message}`);
    }
  }

  /** Renders the Corefile from the template and the kube-dns ConfigMap; throws (PillarError, fs errors) when the template cannot be. */
  render(): string {
    const p = this.params;
    this.refreshKubeDns();
    const template = readFileSync(p.baseCorefile, 'utf8');
    return renderTemplate(template, { localIPs: p.localIPs, port: p.port, clusterDNS: p.clusterDNS, kubeDns: this.kubeDns, prometheusEndpoint: p.prometheusListen });
  }

  /** Renders and writes -conf; false (and the configmap error counted) when the ConfigMaps cannot be rendered. */
  private writeCorefile(): boolean {
    let text: string;
    try {
      text = this.render();
    } catch (e) {
      this.fail('configmap', `rendering ${this.params.baseCorefile}: ${(e as Error).message}`);
      return false;
    }
    if (text === this.lastRendered) return false;
    try {
      writeFileSync(this.params.corefile, text);
    } catch (e) {
      this.fail('configmap', `writing ${this.params.corefile}: ${(e as Error).message}`);
      return false;
    }
    this.lastRendered = text;
    this.log.info(`Updated Corefile with ${Object.keys(this.kubeDns.stubDomains).length} custom stubdomains and upstream servers ${this.kubeDns.upstreamNameservers.join(' ') || '/etc/resolv.conf'}`);
    return true;
  }

  /** Steps 1-4; throws when the Corefile cannot be rendered or the server cannot start (nothing left behind). */
  async start(): Promise<void> {
    const p = this.params;
    let template: string;
    try {
      template = this.render();
    } catch (e) {
      throw new Error(`${p.baseCorefile}: ${(e as Error).message}`);
    }
    writeFileSync(p.corefile, template);
    this.lastRendered = template;
    if (p.setupInterface) await this.ensureInterface();
    try {
      this.server = await startServer({ corefilePath: p.corefile, options: { defaultPort: p.port }, log: this.log });
    } catch (e) {
      if (!p.skipTeardown) await this.iface?.teardown();
      throw e;
    }
    this.server.shared.metrics.registerMetric(this.setupErrors);
    // Exported from the start, as node-cache (CoreDNS's reload plugin registers it at init) does.
    counter(this.server.shared.metrics, 'coredns_reload_failed_total', 'Counter of the number of failed reload attempts.');
    await this.serveMetrics(this.server);
    if (p.setupIptables) await this.ensureIptables();
    this.timers.push(setInterval(() => void this.periodic(), p.syncIntervalMs).unref());
    this.watchConfig();
  }

  /** -metrics-listen-address: the server's whole registry, setup errors included, as node-cache's default registry is. */
  private async serveMetrics(server: KdnsServer): Promise<void> {
    const registry = server.shared.metrics;
    const address = parseHttpAddress(this.params.metricsListen);
    if (typeof address === 'string') {
      this.log.error(`Failed to start metrics handler: ${address}`);
      return;
    }
    const scrape = (): Promise<string> => registry.metrics();
    answerPodScrapes(scrape);
    try {
      this.releaseMetrics = await endpointFor(server.shared, address).claim(
        '/metrics',
        async (_req, res) => {
          res.writeHead(200, { 'Content-Type': registry.contentType }).end(await podMetrics(scrape));
        },
        'node-cache -metrics-listen-address',
      );
    } catch (e) {
      this.log.error(`Failed to start metrics handler: ${(e as Error).message}`);
    }
  }

  private async ensureInterface(): Promise<void> {
    const p = this.params;
    try {
      if (this.iface && (await interfaceExists(p.interfaceName))) return;
    } catch (e) {
      this.fail('interface_check', `Error checking dummy device ${p.interfaceName} - ${(e as Error).message}`);
      return;
    }
    try {
      this.iface = await setupInterface(p.interfaceName, p.localIPs);
      if (this.iface.created) this.log.info(`Added interface - ${p.interfaceName}`);
    } catch (e) {
      this.fail('interface_add', `Failed to add non-existent interface ${p.interfaceName}: ${(e as Error).message}`);
    }
  }

  private async ensureIptables(): Promise<void> {
    const { added, failures } = await this.iptables.ensure();
    for (const r of added) this.log.info(`Added back nodelocaldns rule - -t ${r.table} ${r.chain} ${r.args.join(' ')}`);
    for (const f of failures) this.fail(f.locked ? 'iptables_lock' : 'iptables', `Error checking/adding iptables rule ${f.message}`);
  }

  private periodic(): Promise<void> {
    this.syncing = this.syncing.then(async () => {
      if (this.stopped) return;
      if (this.params.setupIptables) await this.ensureIptables();
      if (this.params.setupInterface) await this.ensureInterface();
      // Serving alone now (a predecessor of a rolling update has left): drop the program its
      // hand-over left on the TCP listeners' groups (src/server/steer.ts).
      if (!successorServing(this.params.localIPs, this.params.port, workerCount() > 1)) this.server?.forgetSteering();
    });
    return this.syncing;
  }

  /** Re-render on a ConfigMap change: watched (kubelet swaps a ConfigMap's ..data link), and re-read every 10 s anyway. */
  private watchConfig(): void {
    const dirs = [dirname(this.params.baseCorefile), ...(this.params.kubeDnsDir !== undefined ? [this.params.kubeDnsDir] : [])];
    for (const dir of dirs) {
      try {
        const w = watch(dir, () => void this.syncConfig());
        w.on('error', () => undefined);
        this.watchers.push(w);
      } catch {
        // No such directory (the kube-dns ConfigMap is optional): the periodic re-read covers it.
      }
    }
    this.timers.push(setInterval(() => void this.syncConfig(), CONFIG_SYNC_MS).unref());
  }

  /** Re-renders; a changed Corefile is written and the server reloaded (a bad one keeps the old serving). */
  syncConfig(): Promise<void> {
    this.syncing = this.syncing.then(async () => {
      if (this.stopped || !this.server) return;
      if (!this.writeCorefile()) return;
      const ok = await this.server.reload();
      if (!ok) this.log.error(`reloading ${basename(this.params.corefile)} failed; the previous configuration keeps serving`);
    });
    return this.syncing;
  }

  /**
   * Step 6: stop serving, then (unless -skipteardown) remove the iptables rules and the
   * interface. With a successor on the same addresses, the sockets stop taking queries and
   * answer those they hold, and the interface and rules stay for the successor.
   */
  async shutdown(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    for (const w of this.watchers) w.close();
    await this.syncing.catch(() => undefined);
    const p = this.params;
    const withSiblings = workerCount() > 1;
    const successor = successorServing(p.localIPs, p.port, withSiblings);
    if (successor) this.log.info(`Another process serves ${p.localIPs.join(', ')} port ${p.port}: handing queries over to it`);
    // TCP listeners send their new connections to the successor before they close (src/server/steer.ts).
    const shareOf: GroupShareOf = (address, port) => tcpGroupShare(address, port, withSiblings);
    await this.server?.shutdown({ handOver: successor, shareOf }).catch((e: unknown) => this.log.error(`shutdown: ${(e as Error).message}`));
    await this.releaseMetrics?.();
    if (this.params.skipTeardown) return;
    if (successor) {
      this.log.info(`Leaving interface ${p.interfaceName} and the iptables rules to the node cache that serves on`);
      return;
    }
    this.log.info('Tearing down');
    if (this.params.setupIptables) {
      for (const f of await this.iptables.remove()) this.fail(f.locked ? 'iptables_lock' : 'iptables', `Failed deleting iptables rule ${f.message}`);
    }
    if (this.params.setupInterface) {
      // Also when an earlier pod (-skipteardown) made it: node-cache removes the interface by name.
      await removeInterface(this.params.interfaceName).catch((e: unknown) => this.log.error(`removing ${this.params.interfaceName}: ${(e as Error).message}`));
    }
  }
}
