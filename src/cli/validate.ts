// STUB: replaced by the issue that builds `kdns validate`.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('validate')
    .description('(not yet implemented)')
    .action(() => {
      console.error('kdns validate: not yet implemented');
      process.exit(1);
    });
}
