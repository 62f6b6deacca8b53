// The `searchpath` Corefile directive (kdns, node-local cache side of autopath):
//
//   searchpath [RESOLV-CONF] {
//       edns_option CODE     # the option's code (default 65534, as autopath's)
//   }
//
// RESOLV-CONF is the node's resolv.conf (default /etc/resolv.conf): its search paths are the
// "host" part of every pod's ClusterFirst search list, as the kubelet builds it.

import { duplicateProperty, expectArgs, noBlockAllowed, unknownProperty, argPosition } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';
import { searchFromResolvConf } from '../pkg/apnames.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import { DEFAULT_RESOLV_CONF, searchFromNamedFile, type FileReader } from '../pkg/hostsearch.js';
import { DEFAULT_OPTION_CODE, parseOptionCode } from '../pkg/searchoption.js';

export interface SearchpathConfig {
  /** The node's search paths, absolute and lower-case. */
  hostSearch: string[];
  optionCode: number;
}

export function parseSearchpath(d: Directive, corefilePath: string, read: FileReader): SearchpathConfig {
  const args = expectArgs(d, 0, 1);
  let hostSearch: string[];
  if (args.length === 1) {
    hostSearch = searchFromNamedFile(read, corefileRelative(args[0] as string, corefilePath), argPosition(d, 0), 'searchpath');
  } else {
    // A node without a resolv.conf has no host search paths; that is no reason not to serve.
    hostSearch = searchFromResolvConf(read(DEFAULT_RESOLV_CONF) ?? '');
  }
  let optionCode = DEFAULT_OPTION_CODE;
  const seen = new Set<string>();
  for (const p of d.block ?? []) {
    if (seen.has(p.name)) duplicateProperty(p, 'searchpath');
    seen.add(p.name);
    noBlockAllowed(p);
    if (p.name === 'edns_option') optionCode = parseOptionCode(p);
    else unknownProperty(p, 'searchpath');
  }
  return { hostSearch, optionCode };
}
