// `kdns nodecache`: the node-local DNS cache (NodeLocal DNSCache's role), with the ap.k8s.io
// search-path option for ClusterFirstWithAutopath pods. Flags render the shipped Corefile;
// `--conf` runs a Corefile of your own instead.
import { becomeParent } from './supervise.js';
import { corefileFileWorkers, interfaceOfFirstWorker } from './slots.js';
import { workerIndex } from '../server/siblings.js';
import { localIPSlots } from '../supervisor/plan.js';
import { reportServing } from '../supervisor/worker.js';
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { CorefileError } from '../lib/corefile/ast.js';
import { createLogger } from '../server/log.js';
import { UDP_ENV_HELP, udpNote } from '../server/udpnote.js';
import { startNodeCache, type NodeCache, type NodeCacheConfig } from '../nodecache/agent.js';
import { DEFAULT_INTERFACE, DEFAULT_LOCAL_IP, renderNodeCacheCorefile, type NodeCacheSettings } from '../nodecache/corefile.js';
import { FlagError, settingsFromFlags, type NodecacheFlags } from '../nodecache/flags.js';
import { setupInterface, type InterfaceHandle } from '../nodecache/iface.js';
import { CliError, EXIT_INVALID, EXIT_USAGE } from './exit.js';
import { trapSignals } from './signals.js';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter((s) => s !== '')];
}

/**
 * CoreDNS's signals (see signals.ts); the interface made by --setup-interface goes down on every
 * way out, an immediate quit included. SIGUSR1 reloads a --conf Corefile; the shipped
 * configuration comes from flags, which a reload cannot change.
 */
function handleSignals(cache: NodeCache, iface: InterfaceHandle | undefined, reloadable: boolean): void {
  trapSignals({
    log: (line) => cache.server.log.info(line),
    shutdown: () => cache.shutdown(),
    cleanup: async () => iface?.teardown(),
    ...(reloadable ? { reload: () => cache.server.reload() } : {}),
  });
}

async function run(f: NodecacheFlags): Promise<void> {
  let config: NodeCacheConfig;
  let addresses: string[];
  if (f.conf !== undefined) {
    if (!existsSync(f.conf)) throw new CliError(`${f.conf}: no such file`, EXIT_INVALID);
    config = { kind: 'file', path: f.conf };
    addresses = f.localIp.split(',').map((s) => s.trim()).filter((s) => s !== '');
  } else {
    let settings: NodeCacheSettings;
    try {
      settings = settingsFromFlags(f);
    } catch (e) {
      if (e instanceof FlagError) throw new CliError(e.message, EXIT_USAGE);
      throw e;
    }
    if (f.printCorefile) {
      process.stdout.write(renderNodeCacheCorefile(settings));
      return;
    }
    config = { kind: 'rendered', settings };
    addresses = settings.localIPs;
  }
  const log = createLogger();
  // As node-cache's command line: the sockets outlive a crashed or OOM-killed worker (src/supervisor/).
  const workers = config.kind === 'file' ? corefileFileWorkers(config.path) : 1;
  if (becomeParent({ byDefault: true, slots: () => localIPSlots(addresses, Number(f.port), workers), freebind: true, log })) return;
  let iface: InterfaceHandle | undefined;
  // With `multisocket`, the first worker makes the interface and removes it; the others serve through it.
  if (f.setupInterface) await interfaceOfFirstWorker(addresses, log);
  if (f.setupInterface && workerIndex() === 0) {
    iface = await setupInterface(f.interface, addresses);
    const note = iface.kind === 'bridge' ? ' (a bridge without ports: this kernel has no dummy driver)' : '';
    log.info(`${iface.created ? 'created' : 'using'} interface ${iface.name}${note} with ${addresses.join(', ')}`);
  }
  let cache: NodeCache;
  try {
    cache = await startNodeCache(config, log);
  } catch (e) {
    await iface?.teardown();
    throw e;
  }
  handleSignals(cache, iface, config.kind === 'file');
  cache.server.guardProcess();
  for (const l of cache.server.listening()) {
    if (l.transport === 'udp') log.info(`kdns nodecache listening on ${l.address === '' ? '*' : l.address}:${l.port} (udp+tcp${udpNote(l.via)})`);
  }
  reportServing();
}

export function register(program: Command): void {
  program
    .command('nodecache')
    .description('Run the node-local DNS cache (NodeLocal DNSCache\'s role, plus ap.k8s.io autopath search paths)')
    .addHelpText('after', UDP_ENV_HELP)
    .option('-c, --conf <file>', 'run this Corefile instead of the shipped configuration (the flags below then only set up the interface)')
    .option('--local-ip <IP[,IP]>', 'addresses to listen on (NodeLocal: the link-local address, optionally the kube-dns IP)', DEFAULT_LOCAL_IP)
    .option('--port <port>', 'DNS port', '53')
    .option('--cluster-dns <IP[:PORT]>', 'the cluster DNS service: cluster, reverse and ap.k8s.io names are forwarded there over TCP')
    .option('--cluster-domain <domain>', 'the cluster domain', 'cluster.local')
    .option('--upstream <ADDR|FILE>', 'where other names go: addresses or a resolv.conf (repeatable; default /etc/resolv.conf)', collect)
    .option('--resolv-conf <file>', "the node's resolv.conf, whose search paths complete each pod's search list", '/etc/resolv.conf')
    .option('--health <host:port>', '/health address (default <first local IP>:8080)')
    .option('--metrics <host:port>', '/metrics address (default <first local IP>:9253)')
    .option('--edns-option <code>', 'EDNS0 option code carrying the search paths (65001-65534)', '65534')
    .option('--setup-interface', 'create a dummy interface holding the local addresses, and remove it on exit')
    .option('--interface <name>', 'name of that interface', DEFAULT_INTERFACE)
    .option('--print-corefile', 'print the Corefile these flags give, and exit')
    .action(async (f: NodecacheFlags) => {
      try {
        await run(f);
      } catch (e) {
        if (e instanceof CliError) {
          console.error(`kdns nodecache: ${e.message}`);
          process.exit(e.exitCode);
        }
        if (e instanceof CorefileError) {
          console.error(e.message);
          process.exit(EXIT_INVALID);
        }
        console.error(`kdns nodecache: ${e instanceof Error ? e.message : String(e)}`);
        process.exit(EXIT_INVALID);
      }
    });
}
