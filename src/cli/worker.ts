// A worker process's entry: the command line its parent runs (src/supervisor/parent.ts).
import { WORKER_ARGV_ENV } from '../supervisor/protocol.js';
import { main } from './main.js';

const argv = JSON.parse(process.env[WORKER_ARGV_ENV] ?? '[]') as string[];
main(argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
