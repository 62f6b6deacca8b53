// `kdns serve`: the DNS server, configured by a CoreDNS-compatible Corefile.
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CorefileError } from '../lib/corefile/ast.js';
import type { KdnsServer } from '../server/server.js';
import { createLogger } from '../server/log.js';
import { UDP_ENV_HELP, udpNote } from '../server/udpnote.js';
import { EXIT_INVALID, EXIT_USAGE } from './exit.js';
import { trapSignals } from './signals.js';
import { becomeParent } from './supervise.js';
import { corefileSlots } from './slots.js';
import { reportServing } from '../supervisor/worker.js';

const DEMO_COREFILE = fileURLToPath(new URL('../../examples/Corefile', import.meta.url));

interface ServeFlags {
  conf?: string;
  cluster?: string;
  dnsPort: string;
  check?: boolean;
}

/** CoreDNS's single-dash spellings of serve's options, which commander would read as `-c onf`. */
const GO_STYLE: Readonly<Record<string, string>> = { conf: '--conf', 'dns.port': '--dns-port', 'dns-port': '--dns-port', cluster: '--cluster' };

/**
 * `kdns serve`'s arguments with `-conf FILE`, `-dns.port N` (and `-cluster DIR`, `-x=V`) in
 * their `--` form, so a CoreDNS user's habit works after the subcommand too. Only those names:
 * anything else stays for commander to parse or refuse.
 */
export function serveArgs(args: readonly string[]): string[] {
  return args.map((a) => {
    const m = /^-([a-z.-]+)(=.*)?$/.exec(a);
    const long = m ? GO_STYLE[m[1] as string] : undefined;
    return long ? `${long}${m?.[2] ?? ''}` : a;
  });
}

/** ./Corefile when there is one, else the demo Corefile shipped in examples/. */
export function defaultCorefile(): string {
  return existsSync('Corefile') ? 'Corefile' : DEMO_COREFILE;
}

/** CoreDNS's signals (see signals.ts): SIGTERM/SIGINT lameduck and stop, SIGUSR1 reloads, … */
export function handleSignals(server: KdnsServer): void {
  trapSignals({ log: (line) => server.log.info(line), shutdown: () => server.shutdown(), reload: () => server.reload() });
}

export function register(program: Command): void {
  program
    .command('serve')
    .description('Serve DNS as configured by a Corefile (CoreDNS syntax)')
    .addHelpText('after', UDP_ENV_HELP)
    .option('-c, --conf <file>', 'Corefile to load (default: ./Corefile, else the demo examples/Corefile)')
    .option('--cluster <dir>', 'directory of Kubernetes manifests for every kubernetes block that names no source')
    .option('--dns-port <port>', 'port for server blocks whose keys name none (CoreDNS -dns.port)', '53')
    .option('--check', 'load and set up every server block without listening, then exit 0 (valid) or 1 (file:line of the error)')
    .addHelpText('after', "\nCoreDNS's spellings -conf FILE and -dns.port N are accepted too.")
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
      if (flags.check) await (await import('./check.js')).runCheck(corefilePath, { defaultPort: port, clusterDir: flags.cluster });
      const log = createLogger();
      if (becomeParent({ byDefault: false, slots: () => corefileSlots(corefilePath, port), freebind: false, log })) return;
      try {
        // Loaded here, not above: a parent (becomeParent) never serves and stays small without it.
        const { startServer } = await import('../server/server.js');
        const server = await startServer({ corefilePath, options: { defaultPort: port, clusterDir: flags.cluster }, log });
        handleSignals(server);
        server.guardProcess();
        for (const l of server.listening()) {
          if (l.transport === 'udp') log.info(`kdns listening on ${l.address === '' ? '*' : l.address}:${l.port} (udp+tcp${udpNote(l.via)})`);
        }
        reportServing();
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
