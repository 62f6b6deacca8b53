// Where a file named in the Corefile is: a relative path is taken from the Corefile's folder
// (kdns's rule for every plugin, whatever the working directory), so a config and the files it
// names travel together. Used by the setups of file, auto, etcd, hosts, root, tls, kubernetes,
// autopath and searchpath.

import { dirname, isAbsolute, resolve } from 'node:path';

/** A path from the Corefile: relative paths are taken from the Corefile's folder. */
export function corefileRelative(path: string, corefilePath: string): string {
  return isAbsolute(path) ? path : resolve(dirname(corefilePath), path);
}
