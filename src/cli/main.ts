// The `kdns` command. Each subcommand lives in its own file and exports `register(program)`.
// Only the module of the subcommand being run is loaded: `kdns serve` should not pay (in start
// time and memory) for the operator's or the pod tools' dependencies.
import { Command, CommanderError } from 'commander';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { EXIT_USAGE } from './exit.js';
import { NODE_CACHE_ONLY_FLAGS } from './dropin-flags.js';
import { rememberInvocation } from './supervise.js';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as { version: string };

type Register = (program: Command) => void;

/**
 * When kdns stands in for the CoreDNS or node-cache binary, which of the two, and where its
 * arguments start. An image whose entrypoint is kdns gets a stock manifest's `args:` as they
 * are: flags in Go's syntax with no subcommand. The node-cache binary always needs -localip,
 * and its other own flags are named nowhere in CoreDNS's, so one of them means node-cache;
 * any other single-dash start means CoreDNS. A binary (link) named `coredns` or `node-cache`,
 * or the explicit `kdns coredns …` / `kdns node-cache …`, says it outright.
 */
export function dropInMode(argv: readonly string[]): { mode: 'coredns' | 'node-cache'; argsFrom: number } | undefined {
  const invokedAs = basename(argv[1] ?? '');
  if (invokedAs === 'coredns' || invokedAs === 'node-cache') return { mode: invokedAs, argsFrom: 2 };
  const first = argv[2];
  if (first === 'coredns' || first === 'node-cache') return { mode: first, argsFrom: 3 };
  if (first === undefined || !/^-[^-]/.test(first) || first === '-V' || first === '-h') return undefined;
  const names = argv.slice(2).flatMap((a) => {
    const m = /^--?([^=]+)/.exec(a);
    return m ? [m[1] as string] : [];
  });
  return { mode: names.some((n) => NODE_CACHE_ONLY_FLAGS.has(n)) ? 'node-cache' : 'coredns', argsFrom: 2 };
}

/** Subcommands in the order `kdns --help` lists them. */
const SUBCOMMANDS: ReadonlyArray<readonly [string, () => Promise<{ register: Register }>]> = [
  ['serve', () => import('./serve.js')],
  ['corefile', () => import('./check.js')],
  ['nodecache', () => import('./nodecache.js')],
  ['resolvconf', () => import('./resolvconf.js')],
  ['validate', () => import('./validate.js')],
  ['explain', () => import('./explain.js')],
  ['top', () => import('./top.js')],
  ['operator', () => import('./operator.js')],
  ['webhook', () => import('./webhook.js')],
  ['node-resolver', () => import('./node-resolver.js')],
  ['coredns', () => import('./coredns.js')],
  ['node-cache', () => import('./node-cache.js')],
];

function baseProgram(): Command {
  return new Command('kdns')
    .description('Cluster DNS for Kubernetes: server, node-local cache, pod DNS tools and DNS operator')
    .version(pkg.version, '-V, --version')
    .showHelpAfterError()
    .exitOverride();
}

/** The program with every subcommand registered, or only `only` when it names one. */
export async function buildProgram(only?: string): Promise<Command> {
  const program = baseProgram();
  const chosen = SUBCOMMANDS.filter(([name]) => only === undefined || name === only);
  for (const [, load] of chosen.length > 0 ? chosen : SUBCOMMANDS) (await load()).register(program);
  return program;
}

/** Commands that run until stopped, which hand back memory they no longer use (lib/native/memory.ts). */
const LONG_RUNNING: ReadonlySet<string> = new Set(['serve', 'nodecache', 'operator', 'webhook', 'node-resolver', 'coredns', 'node-cache']);

/**
 * V8 settings a long-running kdns sets on itself, so that they hold however node was started.
 * `--no-allocation-site-pretenuring`: V8 allocates the objects of a code site straight into the
 * old generation once most of them outlived a young collection. A query's objects outlive one
 * while the query waits for an upstream (the misses of a cache still filling), and V8 then
 * kept allocating them in the old generation for every later query, answered in microseconds:
 * in about half the node cache's bench runs its old generation filled with that garbage at
 * 15 MiB/s, up to 70 MiB before each full collection (docs/memory.md).
 */
const RUNTIME_V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

export async function main(argv: string[]): Promise<void> {
  rememberInvocation(argv);
  const dropin = dropInMode(argv);
  const longRunning = dropin !== undefined || LONG_RUNNING.has(argv[2] ?? '');
  if (longRunning) {
    for (const flag of RUNTIME_V8_FLAGS) setFlagsFromString(flag);
    void import('../lib/native/memory.js').then((m) => m.releaseMemoryPeriodically());
  }
  if (dropin) {
    // Go flag syntax (-conf, -localip…), which commander does not speak: straight to the mode.
    const args = argv.slice(dropin.argsFrom);
    if (dropin.mode === 'coredns') await (await import('./coredns.js')).runCoreDNS(args);
    else await (await import('./node-cache.js')).runNodeCache(args);
    return;
  }
  const first = argv[2];
  const known = SUBCOMMANDS.some(([name]) => name === first);
  const program = await buildProgram(known ? first : undefined);
  // `kdns serve -conf FILE`, as a CoreDNS user types it.
  const args = first === 'serve' ? [...argv.slice(0, 3), ...(await import('./serve.js')).serveArgs(argv.slice(3))] : argv;
  try {
    await program.parseAsync(args);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; every other commander error is a usage error.
      process.exit(err.exitCode === 0 ? 0 : EXIT_USAGE);
    }
    throw err;
  }
}
