// STUB: replaced by the issue that builds `kdns serve`.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('serve')
    .description('(not yet implemented)')
    .action(() => {
      console.error('kdns serve: not yet implemented');
      process.exit(1);
    });
}
