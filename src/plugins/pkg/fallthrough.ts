// `fallthrough [ZONES...]`: a name the plugin does not have goes on to the next plugin, in every
// zone (no arguments) or in the zones listed. CoreDNS's plugin/pkg/fall, for the plugins that
// offer it: file, auto, etcd, hosts, template and k8s_external.

import type { Directive } from '../../lib/corefile/ast.js';
import { inZones, normalizeZones } from './zones.js';

/** `fallthrough [ZONES...]`. */
export function parseFallthrough(prop: Directive): string[] {
  return prop.args.flatMap((z) => normalizeZones(z, prop));
}

/** `fallthrough [ZONES]`: undefined = off, [] = every zone. */
export function fallsThrough(fallthrough: readonly string[] | undefined, name: string): boolean {
  if (fallthrough === undefined) return false;
  return fallthrough.length === 0 || inZones(name, fallthrough);
}
