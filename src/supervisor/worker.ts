// The worker's side of src/supervisor/parent.ts.

import { releaseUnusedInherited } from '../server/inherited.js';
import { WORKER_ENV, type WorkerMessage } from './protocol.js';

/** True in a process a kdns parent started to serve for it. */
export function isWorker(): boolean {
  return process.env[WORKER_ENV] === '1' && typeof process.send === 'function';
}

/**
 * Tells the parent this worker serves, so that its end is a crash to recover from (the handed
 * sockets were opened as its server listened), and which handed sockets went unused, and makes the parent's
 * going away a SIGTERM to itself (the command's own graceful stop, cleanup included): a worker
 * outlives no parent. The IPC channel does not keep the worker alive by itself.
 */
export function reportServing(): void {
  if (!isWorker()) return;
  const unused = releaseUnusedInherited().map(({ kind, address, port }) => ({ kind, address, port }));
  const message: WorkerMessage = { type: 'serving', unused };
  process.send?.(message);
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  process.channel?.unref();
}
