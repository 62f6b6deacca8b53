// Checking a Corefile without serving it: `kdns serve --check` and `kdns corefile check`.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { CorefileError } from '../lib/corefile/ast.js';
import { checkCorefile, describeListens } from '../server/check.js';
import { createLogger } from '../server/log.js';
import { EXIT_INVALID } from './exit.js';

/** Sets up every block of the Corefile, prints the verdict, and exits 0 (valid) or 1. */
export async function runCheck(corefilePath: string, options: { defaultPort: number; clusterDir?: string }): Promise<never> {
  let text: string;
  try {
    text = readFileSync(corefilePath, 'utf8');
  } catch (e) {
    console.error(`kdns: ${corefilePath}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(e)}`);
    process.exit(EXIT_INVALID);
  }
  // Setup warnings go to stderr as they would at start; info lines are left out.
  const log = createLogger((level, line) => {
    if (level === 'WARNING' || level === 'ERROR') process.stderr.write(`[${level}] ${line}\n`);
  });
  try {
    const r = await checkCorefile(corefilePath, text, options, log);
    console.log(`${corefilePath}: OK, ${r.blocks} server block${r.blocks === 1 ? '' : 's'}; would listen on ${describeListens(r.listens)}`);
    process.exit(0);
  } catch (e) {
    console.error(e instanceof CorefileError ? e.message : `${corefilePath}: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(EXIT_INVALID);
  }
}

/** `kdns corefile check [FILE]`. */
export function register(program: Command): void {
  const corefile = program.command('corefile').description('Work with Corefiles without serving them');
  corefile
    .command('check')
    .description('Load and set up every server block of a Corefile without listening; exit 0 when it would start, 1 with file:line when not')
    .argument('[file]', 'Corefile to check (default ./Corefile)')
    .option('-c, --conf <file>', 'Corefile to check (as kdns serve --conf)')
    .option('--cluster <dir>', 'as kdns serve --cluster')
    .option('--dns-port <port>', 'as kdns serve --dns-port', '53')
    .action(async (file: string | undefined, flags: { conf?: string; cluster?: string; dnsPort: string }) => {
      await runCheck(file ?? flags.conf ?? 'Corefile', { defaultPort: Number(flags.dnsPort), clusterDir: flags.cluster });
    });
}
