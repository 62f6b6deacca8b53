// STUB: replaced by the issue that builds `kdns nodecache`.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('nodecache')
    .description('(not yet implemented)')
    .action(() => {
      console.error('kdns nodecache: not yet implemented');
      process.exit(1);
    });
}
