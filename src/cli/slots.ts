// The plain-DNS addresses of a Corefile file or text, for a parent to hold (src/supervisor/plan.ts).
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { dirname, resolve } from 'node:path';
import { corefileListenSlots, type ListenSlot } from '../supervisor/plan.js';

export function corefileTextSlots(text: string, path: string, defaultPort: number): ListenSlot[] {
  return corefileListenSlots(text, { file: path, baseDir: dirname(resolve(path)), defaultPort, interfaces: networkInterfaces() });
}

export function corefileSlots(path: string, defaultPort: number): ListenSlot[] {
  return corefileTextSlots(readFileSync(path, 'utf8'), path, defaultPort);
}
