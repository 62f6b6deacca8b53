// The `autopath` Corefile directive, read into a plain config. File reading is passed in, so
// tests are tables.
//
//   autopath [ZONES...] RESOLV-CONF|@kubernetes {
//       edns_option CODE       # kdns: the search-path option's code (default 65534)
//       resolv_conf FILE       # kdns: host search paths with @kubernetes (default /etc/resolv.conf)
//   }

import { argPosition, duplicateProperty, expectArgs, invalidArg, noBlockAllowed, unknownProperty } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { searchFromResolvConf } from '../pkg/apnames.js';
import { corefileRelative } from '../pkg/corefilepath.js';
import { DEFAULT_RESOLV_CONF, searchFromNamedFile, type FileReader } from '../pkg/hostsearch.js';
import { DEFAULT_OPTION_CODE, parseOptionCode } from '../pkg/searchoption.js';
import { zoneArgAt } from '../pkg/zones.js';

export type SearchSource =
  /** Every client gets the search list of a resolv.conf (CoreDNS's RESOLV-CONF). */
  | { kind: 'file'; path: string; search: string[] }
  /** The client's pod, found by its IP in the kubernetes plugin of the block (`pods verified`). */
  | { kind: 'kubernetes' };

export interface AutopathConfig {
  /** Zones where classic (CoreDNS) autopath applies; absolute, lower-case. */
  zones: string[];
  source: SearchSource;
  /** The node's search paths: appended to a pod's cluster paths (@kubernetes, and ap.k8s.io names without the option). */
  hostSearch: string[];
  optionCode: number;
}

/** A zone argument, which may start with `dns://` and end with a port, as a server key. */
function zoneArg(d: Directive, index: number): string[] {
  return zoneArgAt(d, index, (d.args[index] as string).replace(/^dns:\/\//i, '').replace(/:\d+$/, ''));
}

export function parseAutopath(d: Directive, blockZones: readonly string[], corefilePath: string, read: FileReader): AutopathConfig {
  if (d.args.length < 1) throw CorefileError.at(d, 'autopath: no resolv-conf specified (expected [ZONES...] RESOLV-CONF or @kubernetes)');
  const last = d.args.length - 1;
  const resolvArg = d.args[last] as string;
  const zones = last > 0 ? d.args.slice(0, last).flatMap((_, i) => zoneArg(d, i)) : [...blockZones];
  let source: SearchSource;
  if (resolvArg.startsWith('@')) {
    const plugin = resolvArg.slice(1);
    if (plugin !== 'kubernetes') invalidArg(d, resolvArg, 'the only plugin kdns can ask for search paths is @kubernetes');
    source = { kind: 'kubernetes' };
  } else {
    const path = corefileRelative(resolvArg, corefilePath);
    source = { kind: 'file', path, search: searchFromNamedFile(read, path, argPosition(d, last), 'autopath') };
  }
  let optionCode = DEFAULT_OPTION_CODE;
  let resolvConf: { path: string; at: Directive } | undefined;
  const seen = new Set<string>();
  for (const p of d.block ?? []) {
    if (seen.has(p.name)) duplicateProperty(p, 'autopath');
    seen.add(p.name);
    noBlockAllowed(p);
    switch (p.name) {
      case 'edns_option':
        optionCode = parseOptionCode(p);
        break;
      case 'resolv_conf':
        resolvConf = { path: corefileRelative((expectArgs(p, 1, 1) as [string])[0], corefilePath), at: p };
        if (source.kind === 'file') throw CorefileError.at(p, 'autopath: resolv_conf is for @kubernetes; with a RESOLV-CONF argument its search paths are the host paths');
        break;
      default:
        unknownProperty(p, 'autopath');
    }
  }
  let hostSearch: string[];
  if (source.kind === 'file') hostSearch = source.search;
  else if (resolvConf !== undefined) hostSearch = searchFromNamedFile(read, resolvConf.path, argPosition(resolvConf.at, 0), 'autopath resolv_conf');
  // CoreDNS reads its own /etc/resolv.conf for these and carries on without it.
  else hostSearch = searchFromResolvConf(read(DEFAULT_RESOLV_CONF) ?? '');
  return { zones, source, hostSearch, optionCode };
}
