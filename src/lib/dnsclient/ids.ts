// Query IDs for upstream exchanges. They are the only thing (besides the question) that ties a
// UDP reply to its query, so they come from the system CSPRNG rather than Math.random; drawing
// them in blocks keeps that off the per-query cost.
import { randomFillSync } from 'node:crypto';

const BLOCK = 4096;
const pool = new Uint16Array(BLOCK);
let next = BLOCK;

export function randomId(): number {
  if (next === BLOCK) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] as number;
}

/** A random ID not in `taken` (tries random values; in-flight sets are far smaller than 65536). */
export function freeId(taken: { has(id: number): boolean }): number {
  for (;;) {
    const id = randomId();
    if (!taken.has(id)) return id;
  }
}
