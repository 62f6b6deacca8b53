// `kdns node-cache ARGS`: kdns taking the node-cache binary's command line (NodeLocal DNSCache,
// kubernetes-sigs/node-local-dns cmd/node-cache): CoreDNS's flags plus -localip, -upstreamsvc, -setupinterface,
// -setupiptables, … in Go's syntax, so the stock nodelocaldns.yaml DaemonSet runs kdns by
// changing only its image. `kdns -localip …` and a binary named `node-cache` come here too.
import { becomeParent } from './supervise.js';
import { localIPSlots, type ListenSlot } from '../supervisor/plan.js';
import { corefileFileWorkers, interfaceOfFirstWorker } from './slots.js';
import { workerIndex } from '../server/siblings.js';
import { reportServing } from '../supervisor/worker.js';
import type { Command } from 'commander';
import { createLogger, type Logger } from '../server/log.js';
import { trapSignals } from './signals.js';
import type { NodeCacheApp, NodeCacheAppParams } from '../nodecache/app.js';
import { DEFAULT_KUBE_DNS_DIR } from '../nodecache/flags.js';
import { FlagError, nodeCacheParams, serviceHostEnv } from '../nodecache/flags.js';
import { existsSync } from 'node:fs';
import { EXIT_INVALID, EXIT_USAGE } from './exit.js';
import { COREDNS_FLAGS, dnsPort, logListening, parseOrExit, pluginsText, versionText, writePidfile } from './coredns.js';
import { NODE_CACHE_OWN_FLAGS } from './dropin-flags.js';
import { boolFlag, stringFlag, type GoFlagSet } from './goflags.js';

export const NODE_CACHE_FLAGS: GoFlagSet = { ...COREDNS_FLAGS, ...NODE_CACHE_OWN_FLAGS };

export { parseSyncInterval } from '../nodecache/flags.js';

function fatal(message: string, code = EXIT_INVALID): never {
  console.error(`Error parsing flags - ${message}, Exiting`);
  process.exit(code);
}

/** The flags → what the app needs; a bad value ends the process naming the flag, as node-cache does. */
export function appParams(args: readonly string[]): { params: NodeCacheAppParams; pidfile: string; quiet: boolean } | 'version' | 'plugins' {
  const f = NODE_CACHE_FLAGS;
  const p = parseOrExit('node-cache', args, f);
  if (p.rest.length > 0) fatal(`extra command line arguments: [${p.rest.join(' ')}]`, EXIT_USAGE);
  if (boolFlag(p, f, 'version')) return 'version';
  if (boolFlag(p, f, 'plugins')) return 'plugins';
  let params: NodeCacheAppParams;
  try {
    params = nodeCacheParams(
      {
        localip: stringFlag(p, f, 'localip'),
        upstreamsvc: stringFlag(p, f, 'upstreamsvc'),
        basecorefile: stringFlag(p, f, 'basecorefile'),
        conf: stringFlag(p, f, 'conf'),
        corefile: stringFlag(p, f, 'corefile'),
        kubednscm: stringFlag(p, f, 'kubednscm'),
        setupinterface: boolFlag(p, f, 'setupinterface'),
        interfacename: stringFlag(p, f, 'interfacename'),
        setupiptables: boolFlag(p, f, 'setupiptables'),
        skipteardown: boolFlag(p, f, 'skipteardown'),
        'health-port': stringFlag(p, f, 'health-port'),
        syncinterval: stringFlag(p, f, 'syncinterval'),
        'metrics-listen-address': stringFlag(p, f, 'metrics-listen-address'),
        'prometheus-listen-address': stringFlag(p, f, 'prometheus-listen-address'),
        reloadwithsignal: boolFlag(p, f, 'reloadwithsignal'),
      },
      { port: dnsPort(p), env: process.env, defaultKubeDnsDir: existsSync(DEFAULT_KUBE_DNS_DIR) ? DEFAULT_KUBE_DNS_DIR : undefined },
    );
  } catch (e) {
    fatal(e instanceof FlagError ? e.message : String(e));
  }
  if (params.clusterDNS === undefined) {
    const svc = stringFlag(p, f, 'upstreamsvc');
    const env = serviceHostEnv(svc);
    console.error(`[WARNING] Unable to lookup IP address of Upstream service ${svc}, env ${env} "${process.env[env] ?? ''}"`);
  }
  return {
    params,
    pidfile: stringFlag(p, f, 'pidfile'),
    quiet: boolFlag(p, f, 'quiet'),
  };
}

/**
 * CoreDNS's signals (signals.ts), as every kdns server: SIGTERM/SIGINT stop and tear down
 * (unless -skipteardown); SIGUSR1/SIGUSR2 re-render the template and reload; SIGHUP and the
 * like are logged and ignored.
 */
function handleSignals(app: NodeCacheApp, log: Logger): void {
  trapSignals({
    log: (line) => log.info(line),
    shutdown: () => app.shutdown(),
    reload: () => app.syncConfig().then(() => app.server?.reload()),
  });
}

/**
 * With `multisocket`, the first worker sets up and tears down the interface and the iptables
 * rules; the others serve through them (the parent holds their sockets on the address before
 * it exists) and leave them alone.
 */
function siblingParams(params: NodeCacheAppParams): NodeCacheAppParams {
  return workerIndex() === 0 ? params : { ...params, setupInterface: false, setupIptables: false, skipTeardown: true };
}

/** Runs kdns as the node-cache binary would run with `args`. */
export async function runNodeCache(args: readonly string[]): Promise<void> {
  const parsed = appParams(args);
  if (parsed === 'version' || parsed === 'plugins') {
    process.stdout.write(parsed === 'version' ? versionText() : pluginsText());
    return;
  }
  const log = createLogger();
  // The cache's sockets outlive a crashed or OOM-killed worker (src/supervisor/).
  const slots = (): ListenSlot[] => localIPSlots(parsed.params.localIPs, parsed.params.port, corefileFileWorkers(parsed.params.baseCorefile));
  if (becomeParent({ byDefault: true, slots, freebind: true, log })) return;
  // Loaded here: a parent (becomeParent) never serves and stays small without it.
  const { NodeCacheApp } = await import('../nodecache/app.js');
  if (parsed.params.setupInterface) await interfaceOfFirstWorker(parsed.params.localIPs, log);
  const app = new NodeCacheApp(siblingParams(parsed.params), log);
  try {
    await app.start();
  } catch (e) {
    console.error(`kdns node-cache: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(EXIT_INVALID);
  }
  handleSignals(app, log);
  reportServing();
  writePidfile(parsed.pidfile);
  if (!parsed.quiet && app.server) logListening(app.server, log, 'kdns node-cache');
}

export function register(program: Command): void {
  program
    .command('node-cache')
    .description("Run as NodeLocal DNSCache's node-cache binary: its flags (-localip, -conf, -upstreamsvc, -setupiptables, …) in Go's syntax")
    .helpOption(false)
    .argument('[args...]', 'node-cache flags, e.g. -localip 169.254.20.10 -conf /etc/Corefile')
    .action(async (args: string[]) => runNodeCache(args));
}
