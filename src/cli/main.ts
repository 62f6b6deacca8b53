// The `kdns` command. Each subcommand lives in its own file and exports `register(program)`.
// Only the module of the subcommand being run is loaded: `kdns serve` should not pay (in start
// time and memory) for the operator's or the pod tools' dependencies.
import { Command, CommanderError } from 'commander';
import { createRequire } from 'node:module';
import { EXIT_USAGE } from './exit.js';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as { version: string };

type Register = (program: Command) => void;

/** Subcommands in the order `kdns --help` lists them. */
const SUBCOMMANDS: ReadonlyArray<readonly [string, () => Promise<{ register: Register }>]> = [
  ['serve', () => import('./serve.js')],
  ['corefile', () => import('./check.js')],
  ['nodecache', () => import('./nodecache.js')],
  ['resolvconf', () => import('./resolvconf.js')],
  ['validate', () => import('./validate.js')],
  ['explain', () => import('./explain.js')],
  ['operator', () => import('./operator.js')],
  ['node-resolver', () => import('./node-resolver.js')],
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

export async function main(argv: string[]): Promise<void> {
  const first = argv[2];
  const known = SUBCOMMANDS.some(([name]) => name === first);
  const program = await buildProgram(known ? first : undefined);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; every other commander error is a usage error.
      process.exit(err.exitCode === 0 ? 0 : EXIT_USAGE);
    }
    throw err;
  }
}
