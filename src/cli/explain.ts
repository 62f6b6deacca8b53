// STUB: replaced by the issue that builds `kdns explain`.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('explain')
    .description('(not yet implemented)')
    .action(() => {
      console.error('kdns explain: not yet implemented');
      process.exit(1);
    });
}
