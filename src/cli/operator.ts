// STUB: replaced by the issue that builds `kdns operator`.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('operator')
    .description('(not yet implemented)')
    .action(() => {
      console.error('kdns operator: not yet implemented');
      process.exit(1);
    });
}
