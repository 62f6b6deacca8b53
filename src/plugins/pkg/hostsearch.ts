// The node's search paths, from the resolv.conf a Corefile names (or /etc/resolv.conf): the
// "host" part of every pod's ClusterFirst search list, as the kubelet builds it. Used by the
// autopath (cluster DNS) and searchpath (node cache) setups, which must agree on it.

import { readFileSync } from 'node:fs';
import { CorefileError, type Position } from '../../lib/corefile/ast.js';
import { searchFromResolvConf } from './apnames.js';

export const DEFAULT_RESOLV_CONF = '/etc/resolv.conf';

/** Reads a file named in the Corefile (path already resolved); undefined when it cannot be read. */
export type FileReader = (path: string) => string | undefined;

/** The FileReader of a running server: the file's text, undefined when it cannot be read. */
export function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The search list of a resolv.conf the user named: unreadable is a Corefile error at `pos`. */
export function searchFromNamedFile(read: FileReader, path: string, pos: Position, what: string): string[] {
  const text = read(path);
  if (text === undefined) throw CorefileError.at(pos, `${what}: cannot read ${path}`);
  return searchFromResolvConf(text);
}
