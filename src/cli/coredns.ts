// `kdns coredns ARGS`: kdns taking the CoreDNS binary's command line (coremain's flags, Go flag
// syntax), so a CoreDNS Deployment runs kdns by changing only its image: `-conf FILE`,
// `-dns.port N` (or `-p N`), `-pidfile FILE`, `-quiet`, `-plugins`, `-version`. The bare
// `kdns -conf …` form and a binary named `coredns` come here too (see main.ts, docs/dropin.md).
import type { Command } from 'commander';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import { CorefileError } from '../lib/corefile/ast.js';
import { createLogger, type Logger } from '../server/log.js';
import { udpNote } from '../server/udpnote.js';
import { PLUGIN_ORDER } from '../server/order.js';
import type { KdnsServer } from '../server/server.js';
import { PLUGINS } from '../plugins/registry.js';
import { EXIT_INVALID, EXIT_USAGE } from './exit.js';
import { GoFlagError, boolFlag, goFlagUsage, parseGoFlags, stringFlag, type GoFlagSet, type GoFlagsParsed } from './goflags.js';
import { handleSignals } from './serve.js';
import { becomeParent } from './supervise.js';
import { corefileSlots, corefileTextSlots } from './slots.js';
import type { ListenSlot } from '../supervisor/plan.js';
import { reportServing } from '../supervisor/worker.js';

const require = createRequire(import.meta.url);

/** coremain's flags: what every CoreDNS-based binary (node-cache included) accepts. */
export const COREDNS_FLAGS: GoFlagSet = {
  conf: { kind: 'string', usage: 'Corefile to load (default "Corefile")' },
  'dns.port': { kind: 'string', usage: 'Default port', default: '53' },
  p: { kind: 'string', usage: 'Default port', default: '53' },
  pidfile: { kind: 'string', usage: 'Path to write pid file' },
  plugins: { kind: 'bool', usage: 'List installed plugins' },
  quiet: { kind: 'bool', usage: 'Quiet mode (no initialization output)' },
  version: { kind: 'bool', usage: 'Show version' },
};

/** A command-line mistake, reported the way Go's flag package does: message, usage, exit 2. */
export function goUsageExit(binary: string, set: GoFlagSet, message?: string): never {
  process.stderr.write(`${message ? `${message}\n` : ''}Usage of ${binary}:\n${goFlagUsage(set)}`);
  process.exit(message ? EXIT_USAGE : 0);
}

/** Parses `args` against `set`, exiting as Go would on -h or a bad flag. */
export function parseOrExit(binary: string, args: readonly string[], set: GoFlagSet): GoFlagsParsed {
  let parsed: GoFlagsParsed;
  try {
    parsed = parseGoFlags(args, set);
  } catch (e) {
    if (e instanceof GoFlagError) goUsageExit(binary, set, e.message);
    throw e;
  }
  if (parsed.help) goUsageExit(binary, set);
  return parsed;
}

/** -dns.port or -p (the later wins in Go; they share one variable). */
export function dnsPort(p: GoFlagsParsed): number {
  const given = [...p.values.keys()].filter((k) => k === 'dns.port' || k === 'p').at(-1);
  const text = given === undefined ? '53' : String(p.values.get(given));
  const port = Number(text);
  if (!/^[0-9]+$/.test(text) || port > 65535) {
    console.error(`invalid port specified - "${text}" (-${given ?? 'dns.port'})`);
    process.exit(EXIT_USAGE);
  }
  return port;
}

function kdnsVersion(): string {
  return (require('../../package.json') as { version: string }).version;
}

/** -version: the name and version, then platform and runtime, in CoreDNS's two-line shape. */
export function versionText(): string {
  return `kdns-${kdnsVersion()}\n${process.platform}/${process.arch}, node ${process.version}\n`;
}

/** -plugins: the plugins this build has, in the layout `coredns -plugins` prints. */
export function pluginsText(): string {
  const plugins = PLUGIN_ORDER.filter((p) => PLUGINS.has(p));
  const lines = ['Server types:', '  dns', '', 'Caddyfile loaders:', '  flag', '  default', '', 'Other plugins:', ...plugins.sort().map((p) => `  dns.${p}`), ''];
  return lines.join('\n');
}

/** The Corefile when -conf is not given: ./Corefile, else CoreDNS's own default (whoami and log on every name). */
export function corefileSource(conf: string, port: number): { path: string; text?: string } {
  if (conf === 'stdin') return { path: resolve('stdin'), text: readFileSync(0, 'utf8') };
  if (conf !== '') return { path: conf };
  if (existsSync('Corefile')) return { path: resolve('Corefile') };
  return { path: resolve('Corefile'), text: `.:${port} {\n    whoami\n    log\n}\n` };
}

/** Writes -pidfile once serving, and removes it when the process exits (as CoreDNS does). */
export function writePidfile(path: string): void {
  if (path === '') return;
  writeFileSync(path, `${process.pid}\n`);
  process.on('exit', () => rmSync(path, { force: true }));
}

export function logListening(server: KdnsServer, log: Logger, what: string): void {
  for (const l of server.listening()) {
    if (l.transport === 'udp') log.info(`${what} listening on ${l.address === '' ? '*' : l.address}:${l.port} (udp+tcp${udpNote(l.via)})`);
  }
}

/** Runs kdns as the CoreDNS binary would run with `args`. */
export async function runCoreDNS(args: readonly string[], binary = 'coredns'): Promise<void> {
  const p = parseOrExit(binary, args, COREDNS_FLAGS);
  if (p.rest.length > 0) {
    console.error(`extra command line arguments: [${p.rest.join(' ')}]`);
    process.exit(EXIT_INVALID);
  }
  if (boolFlag(p, COREDNS_FLAGS, 'version')) {
    process.stdout.write(versionText());
    return;
  }
  if (boolFlag(p, COREDNS_FLAGS, 'plugins')) {
    process.stdout.write(pluginsText());
    return;
  }
  const port = dnsPort(p);
  const conf = stringFlag(p, COREDNS_FLAGS, 'conf');
  if (conf !== '' && conf !== 'stdin' && !existsSync(conf)) {
    console.error(`open ${conf}: no such file or directory`);
    process.exit(EXIT_INVALID);
  }
  const source = corefileSource(conf, port);
  const log = createLogger();
  const slots = (): ListenSlot[] => (source.text !== undefined ? corefileTextSlots(source.text, source.path, port) : corefileSlots(source.path, port));
  if (becomeParent({ byDefault: false, slots, freebind: false, log })) return;
  let server: KdnsServer;
  try {
    // Loaded here: a parent (becomeParent) never serves and stays small without it.
    const { startServer } = await import('../server/server.js');
    server = await startServer({ corefilePath: source.path, ...(source.text !== undefined ? { corefileText: source.text } : {}), options: { defaultPort: port }, log });
  } catch (e) {
    console.error(e instanceof CorefileError ? e.message : `kdns: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(EXIT_INVALID);
  }
  handleSignals(server);
  reportServing();
  writePidfile(stringFlag(p, COREDNS_FLAGS, 'pidfile'));
  if (!boolFlag(p, COREDNS_FLAGS, 'quiet')) {
    logListening(server, log, 'kdns');
    process.stdout.write(versionText());
  }
}

export function register(program: Command): void {
  program
    .command('coredns')
    .description("Run as the CoreDNS binary: its flags (-conf, -dns.port, -pidfile, -quiet, -plugins, -version) in Go's syntax")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[args...]', 'CoreDNS flags, e.g. -conf /etc/coredns/Corefile')
    .action(async (args: string[]) => runCoreDNS(args));
}
