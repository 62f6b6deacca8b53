// Whether this `kdns` process serves itself or becomes the parent of a worker that does
// (src/supervisor/): the node cache always does, where the native socket is built, since a
// node without DNS is an outage for every pod on it; `kdns serve` when KDNS_SUPERVISE=1
// (CoreDNS's place usually has replicas behind a Service to fail over to), and whenever a
// Corefile's `multisocket` asks for more than one worker. KDNS_SUPERVISE=0 turns it off everywhere.

import { fileURLToPath } from 'node:url';
import { nativeUdp } from '../lib/native/udp.js';
import { workersFor, type ListenSlot } from '../supervisor/plan.js';
import { supervise } from '../supervisor/parent.js';
import { isWorker } from '../supervisor/worker.js';
import type { Logger } from '../server/log.js';

let invocation: readonly string[] = [];

/** main() records its argv here, for a worker to run the same command. */
export function rememberInvocation(argv: readonly string[]): void {
  invocation = [...argv];
}

const fromSource = import.meta.url.endsWith('.ts');
const WORKER_ENTRY = fileURLToPath(new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url));

/** KDNS_SUPERVISE's answer for a command whose default is `byDefault`. */
export function supervisionWanted(value: string | undefined, byDefault: boolean): boolean {
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return byDefault;
}

/**
 * Becomes the parent of the workers serving `slots()` when supervision is wanted and possible
 * (not already a worker), or needed: a `multisocket` count above 1 starts that many workers.
 * Without the native socket the parent holds no sockets (each worker binds its own, SO_REUSEPORT,
 * and they close with it), so one worker alone is then served without a parent. True: this
 * process is now the parent and the caller must not serve.
 */
export function becomeParent(opts: { byDefault: boolean; slots: () => ListenSlot[]; freebind: boolean; log: Logger }): boolean {
  if (isWorker()) return false;
  let slots: ListenSlot[] = [];
  try {
    slots = opts.slots();
  } catch {
    // A configuration the worker will refuse with its line: hold nothing, let it say so.
  }
  const workers = workersFor(slots);
  const setting = process.env['KDNS_SUPERVISE'];
  if (!supervisionWanted(setting, opts.byDefault || workers > 1)) {
    if (workers > 1) opts.log.warn(`kdns: multisocket ${workers} needs worker processes, which KDNS_SUPERVISE=${setting ?? ''} turns off: serving from this one process`);
    return false;
  }
  const addon = nativeUdp();
  if (!addon && workers <= 1) return false;
  supervise({ argv: invocation, workerEntry: WORKER_ENTRY, slots, workers, freebind: opts.freebind, addon: addon ?? undefined, log: opts.log });
  return true;
}
