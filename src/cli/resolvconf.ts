// STUB: replaced by the issue that builds `kdns resolvconf`.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('resolvconf')
    .description('(not yet implemented)')
    .action(() => {
      console.error('kdns resolvconf: not yet implemented');
      process.exit(1);
    });
}
