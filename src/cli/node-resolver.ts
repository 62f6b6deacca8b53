// STUB: replaced by the issue that builds `kdns node-resolver`.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('node-resolver')
    .description('(not yet implemented)')
    .action(() => {
      console.error('kdns node-resolver: not yet implemented');
      process.exit(1);
    });
}
