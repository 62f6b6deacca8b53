// The plain-DNS addresses of a Corefile file or text, for a parent to hold (src/supervisor/plan.ts).
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { dirname, resolve } from 'node:path';
import { usableCpus } from '../plugins/pkg/multisocket.js';
import { workerIndex } from '../server/siblings.js';
import { corefileListenSlots, corefileWorkers, type ListenSlot } from '../supervisor/plan.js';

export function corefileTextSlots(text: string, path: string, defaultPort: number): ListenSlot[] {
  return corefileListenSlots(text, { file: path, baseDir: dirname(resolve(path)), defaultPort, interfaces: networkInterfaces(), cpus: usableCpus() });
}

export function corefileSlots(path: string, defaultPort: number): ListenSlot[] {
  return corefileTextSlots(readFileSync(path, 'utf8'), path, defaultPort);
}

/** The node cache's worker count: its Corefile's largest `multisocket` (1 when it has none or cannot be read). */
export function corefileFileWorkers(path: string): number {
  try {
    return corefileWorkers(readFileSync(path, 'utf8'), { file: path, baseDir: dirname(resolve(path)), cpus: usableCpus() });
  } catch {
    return 1;
  }
}

/**
 * In a node cache's second and later `multisocket` workers: waits (up to 30 s) until the first
 * worker has brought up the interface holding the local addresses. Their DNS sockets are the
 * parent's and bind before it exists (FREEBIND), but health and metrics listen on these
 * addresses too. The first worker, and a process without siblings, returns at once.
 */
export async function interfaceOfFirstWorker(addresses: readonly string[], log: { warn(line: string): void }): Promise<void> {
  if (workerIndex() === 0) return;
  const present = (): boolean => {
    const held = new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address)));
    return addresses.every((a) => held.has(a));
  };
  for (const deadline = Date.now() + 30_000; !present(); ) {
    if (Date.now() > deadline) {
      log.warn(`kdns: ${addresses.join(', ')} not up after 30 s; serving without waiting for the first worker's interface`);
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
