// Listening sockets this process was handed already bound, by the parent that keeps them open
// across a worker's restarts (src/supervisor/). The parent passes each descriptor in a stdio
// slot of the worker and names them in KDNS_LISTEN_FDS; a listener for the same transport,
// address and port takes its descriptor instead of binding, so queries that arrived while no
// worker ran are waiting in it.

import { closeSync } from 'node:fs';

/** One inherited descriptor: what it listens on, and its number in this process. */
export interface InheritedListener {
  kind: 'udp' | 'tcp';
  /** '' for every address, as listeners name it. */
  address: string;
  port: number;
  fd: number;
}

/** The variable the parent names the descriptors in. */
export const LISTEN_FDS_ENV = 'KDNS_LISTEN_FDS';

/** Parses KDNS_LISTEN_FDS; anything malformed is ignored (the worker then binds as usual). */
export function parseInherited(text: string | undefined): InheritedListener[] {
  if (!text) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  return value.filter(
    (v): v is InheritedListener =>
      typeof v === 'object' && v !== null && (v.kind === 'udp' || v.kind === 'tcp') && typeof v.address === 'string' && Number.isInteger(v.port) && Number.isInteger(v.fd) && v.fd > 2,
  );
}

const keyOf = (kind: string, address: string, port: number): string => `${kind} ${address} ${port}`;

let pending: Map<string, InheritedListener> | undefined;
const taken: InheritedListener[] = [];

function table(): Map<string, InheritedListener> {
  pending ??= new Map(parseInherited(process.env[LISTEN_FDS_ENV]).map((l) => [keyOf(l.kind, l.address, l.port), l]));
  return pending;
}

/** The inherited descriptor for kind, address and port, once (a second listener binds anew). */
export function takeInherited(kind: 'udp' | 'tcp', address: string, port: number): number | undefined {
  const t = table();
  const key = keyOf(kind, address, port);
  const found = t.get(key);
  t.delete(key);
  if (found) taken.push(found);
  return found?.fd;
}

/**
 * Closes the inherited descriptors no listener took (the Corefile no longer names them) and
 * returns them: the parent must close its copies too, or the kernel would go on handing
 * queries to a socket nobody reads.
 */
export function releaseUnusedInherited(): InheritedListener[] {
  const unused = [...table().values()];
  table().clear();
  for (const l of unused) {
    try {
      closeSync(l.fd);
    } catch {
      // already closed: nothing held
    }
  }
  return unused;
}

/** The inherited descriptors listeners took, for the worker to open once it serves. */
export function takenInherited(): readonly InheritedListener[] {
  return taken;
}
