// `kdns node-cache ARGS`: kdns taking the node-cache binary's command line (NodeLocal DNSCache,
// kubernetes/dns cmd/node-cache): CoreDNS's flags plus -localip, -upstreamsvc, -setupinterface,
// -setupiptables, … in Go's syntax, so the stock nodelocaldns.yaml DaemonSet runs kdns by
// changing only its image. `kdns -localip …` and a binary named `node-cache` come here too.
import type { Command } from 'commander';
import { isIP } from 'node:net';
import { createLogger, type Logger } from '../server/log.js';
import { trapSignals } from './signals.js';
import { DEFAULT_KUBE_DNS_DIR, NodeCacheApp, type NodeCacheAppParams } from '../nodecache/app.js';
import { PillarError, parseLocalIPs, serviceHostEnv } from '../nodecache/pillars.js';
import { existsSync } from 'node:fs';
import { EXIT_INVALID, EXIT_USAGE } from './exit.js';
import { COREDNS_FLAGS, dnsPort, logListening, parseOrExit, pluginsText, versionText, writePidfile } from './coredns.js';
import { NODE_CACHE_OWN_FLAGS } from './dropin-flags.js';
import { boolFlag, stringFlag, type GoFlagSet } from './goflags.js';

export const NODE_CACHE_FLAGS: GoFlagSet = { ...COREDNS_FLAGS, ...NODE_CACHE_OWN_FLAGS };

/** -syncinterval: node-cache reads a number of seconds; a Go duration (30s, 1m, 1m30s) is taken as written. Zero is refused (a busy loop). */
export function parseSyncInterval(text: string): number | undefined {
  if (/^[0-9]+$/.test(text)) return Number(text) > 0 ? Number(text) * 1000 : undefined;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let ms = 0;
  let rest = text;
  while (rest !== '') {
    const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/.exec(rest);
    if (!m) return undefined;
    ms += Number(m[1]) * (units[m[2] as string] as number);
    rest = rest.slice(m[0].length);
  }
  return ms > 0 ? ms : undefined;
}

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
  let localIPs: string[];
  try {
    localIPs = parseLocalIPs(stringFlag(p, f, 'localip'));
  } catch (e) {
    fatal(e instanceof PillarError ? e.message : String(e));
  }
  const healthPort = stringFlag(p, f, 'health-port');
  if (!/^[0-9]+$/.test(healthPort) || Number(healthPort) > 65535) fatal(`invalid healthcheck port specified - "${healthPort}"`);
  const syncIntervalMs = parseSyncInterval(stringFlag(p, f, 'syncinterval'));
  if (syncIntervalMs === undefined) fatal(`invalid -syncinterval "${stringFlag(p, f, 'syncinterval')}" (seconds, or a duration such as 1m)`);
  const svc = stringFlag(p, f, 'upstreamsvc');
  const env = serviceHostEnv(svc);
  const clusterIP = process.env[env];
  const clusterDNS = clusterIP !== undefined && isIP(clusterIP) !== 0 ? clusterIP : undefined;
  if (clusterDNS === undefined) console.error(`[WARNING] Unable to lookup IP address of Upstream service ${svc}, env ${env} "${clusterIP ?? ''}"`);
  // node-cache always writes to -conf (CoreDNS's flag); -corefile only names the file when -conf is absent.
  const conf = stringFlag(p, f, 'conf');
  const kubednscm = stringFlag(p, f, 'kubednscm');
  return {
    params: {
      localIPs,
      port: dnsPort(p),
      healthPort: Number(healthPort),
      baseCorefile: stringFlag(p, f, 'basecorefile'),
      corefile: conf !== '' ? conf : stringFlag(p, f, 'corefile'),
      kubeDnsDir: kubednscm !== '' ? kubednscm : existsSync(DEFAULT_KUBE_DNS_DIR) ? DEFAULT_KUBE_DNS_DIR : undefined,
      clusterDNS,
      setupInterface: boolFlag(p, f, 'setupinterface'),
      interfaceName: stringFlag(p, f, 'interfacename'),
      setupIptables: boolFlag(p, f, 'setupiptables'),
      skipTeardown: boolFlag(p, f, 'skipteardown'),
      syncIntervalMs,
      metricsListen: stringFlag(p, f, 'metrics-listen-address'),
    },
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

/** Runs kdns as the node-cache binary would run with `args`. */
export async function runNodeCache(args: readonly string[]): Promise<void> {
  const parsed = appParams(args);
  if (parsed === 'version' || parsed === 'plugins') {
    process.stdout.write(parsed === 'version' ? versionText() : pluginsText());
    return;
  }
  const log = createLogger();
  const app = new NodeCacheApp(parsed.params, log);
  try {
    await app.start();
  } catch (e) {
    console.error(`kdns node-cache: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(EXIT_INVALID);
  }
  handleSignals(app, log);
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
