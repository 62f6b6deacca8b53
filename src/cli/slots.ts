// The plain-DNS addresses of a Corefile file or text, for a parent to hold (src/supervisor/plan.ts).
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { dirname, resolve } from 'node:path';
import { usableCpus } from '../plugins/pkg/multisocket.js';
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
