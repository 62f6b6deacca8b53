// `kdns serve`: the DNS server, configured by a CoreDNS-compatible Corefile.
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CorefileError } from '../corefile/ast.js';
import { startServer, type KdnsServer } from '../server/server.js';
import { createLogger } from '../server/log.js';
import { UDP_ENV_HELP, udpNote } from '../server/listeners.js';
import { EXIT_INVALID, EXIT_USAGE } from './exit.js';

const DEMO_COREFILE = fileURLToPath(new URL('../../examples/Corefile', import.meta.url));

interface ServeFlags {
  conf?: string;
  cluster?: string;
  dnsPort: string;
}

/** ./Corefile when there is one, else the demo Corefile shipped in examples/. */
export function defaultCorefile(): string {
  return existsSync('Corefile') ? 'Corefile' : DEMO_COREFILE;
}

/** Wires SIGTERM/SIGINT to a graceful (lameduck) shutdown and SIGUSR1 to a reload, as CoreDNS. */
export function handleSignals(server: KdnsServer): void {
  let exiting = false;
  const stop = (signal: string): void => {
    if (exiting) return;
    exiting = true;
    server.log.info(`SIG${signal} received, shutting down`);
    server.shutdown().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('TERM'));
  process.on('SIGINT', () => stop('INT'));
  process.on('SIGUSR1', () => {
    server.log.info('SIGUSR1 received, reloading');
    void server.reload();
  });
}

export function register(program: Command): void {
  program
    .command('serve')
    .description('Serve DNS as configured by a Corefile (CoreDNS syntax)')
    .addHelpText('after', UDP_ENV_HELP)
    .option('-c, --conf <file>', 'Corefile to load (default: ./Corefile, else the demo examples/Corefile)')
    .option('--cluster <dir>', 'directory of Kubernetes manifests for every kubernetes block that names no source')
    .option('--dns-port <port>', 'port for server blocks whose keys name none (CoreDNS -dns.port)', '53')
    .action(async (flags: ServeFlags) => {
      const port = Number(flags.dnsPort);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        console.error(`kdns serve: --dns-port: invalid port "${flags.dnsPort}"`);
        process.exit(EXIT_USAGE);
      }
      const corefilePath = flags.conf ?? defaultCorefile();
      if (!existsSync(corefilePath)) {
        console.error(`kdns serve: ${corefilePath}: no such file`);
        process.exit(EXIT_INVALID);
      }
      const log = createLogger();
      try {
        const server = await startServer({ corefilePath, options: { defaultPort: port, clusterDir: flags.cluster }, log });
        handleSignals(server);
        server.guardProcess();
        for (const l of server.listening()) {
          if (l.transport === 'udp') log.info(`kdns listening on ${l.address === '' ? '*' : l.address}:${l.port} (udp+tcp${udpNote(l.via)})`);
        }
      } catch (e) {
        if (e instanceof CorefileError) {
          console.error(e.message);
          process.exit(EXIT_INVALID);
        }
        console.error(`kdns serve: ${e instanceof Error ? e.message : String(e)}`);
        process.exit(EXIT_INVALID);
      }
    });
}
