// The worker's side of src/supervisor/parent.ts.

import { releaseUnusedInherited, takenInherited } from '../server/inherited.js';
import { nativeUdp } from '../lib/native/udp.js';
import { WORKER_ENV, type WorkerMessage } from './protocol.js';

/** True in a process a kdns parent started to serve for it. */
export function isWorker(): boolean {
  return process.env[WORKER_ENV] === '1' && typeof process.send === 'function';
}

/**
 * Opens the sockets this worker was handed to queries, tells the parent it serves (so its end
 * is a crash to recover from) and which handed sockets went unused, and makes the parent's
 * going away a SIGTERM to itself (the command's own graceful stop, cleanup included): a worker
 * outlives no parent. The IPC channel does not keep the worker alive by itself.
 */
export function reportServing(): void {
  if (!isWorker()) return;
  // The parent bound them dormant (a UDP socket takes no queries until opened): open them now
  // that this worker answers. A TCP socket listens since it was adopted.
  const addon = nativeUdp();
  for (const l of takenInherited()) if (l.kind === 'udp') addon?.openListener(l.fd);
  const unused = releaseUnusedInherited().map(({ kind, address, port }) => ({ kind, address, port }));
  const message: WorkerMessage = { type: 'serving', unused };
  process.send?.(message);
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  process.channel?.unref();
}
