// The `kdns` command. Each subcommand lives in its own file and exports `register(program)`.
import { Command, CommanderError } from 'commander';
import { createRequire } from 'node:module';
import { register as registerServe } from './serve.js';
import { register as registerResolvconf } from './resolvconf.js';
import { register as registerValidate } from './validate.js';
import { register as registerExplain } from './explain.js';
import { register as registerOperator } from './operator.js';
import { register as registerNodeResolver } from './node-resolver.js';
import { register as registerNodecache } from './nodecache.js';
import { EXIT_USAGE } from './exit.js';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as { version: string };

export function buildProgram(): Command {
  const program = new Command('kdns')
    .description('Cluster DNS for Kubernetes: server, node-local cache, pod DNS tools and DNS operator')
    .version(pkg.version, '-V, --version')
    .showHelpAfterError()
    .exitOverride();
  registerServe(program);
  registerNodecache(program);
  registerResolvconf(program);
  registerValidate(program);
  registerExplain(program);
  registerOperator(program);
  registerNodeResolver(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
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
