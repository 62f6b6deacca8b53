// Zones as Corefile directives name them, and the test of a name against a list of zones.
// A zone argument is a domain name or a CIDR standing for its reverse zones, as in server keys;
// one reading of it here keeps every plugin accepting the same spellings.
// Used by the setups of hosts, file, auto, etcd, template, k8s_external, kubernetes, acl,
// metadata, cache and autopath (zone arguments), and by hosts, auto and the zone answering code
// (inZones).

import { argPosition, invalidArg } from '../../lib/corefile/args.js';
import { CorefileError, type Directive } from '../../lib/corefile/ast.js';
import { cidrToReverseZones, fqdn, isSubdomain, isValidDomainName, lowerName } from '../../lib/dns/name.js';

/** What is wrong with a zone argument that names no zone. */
type ZoneProblem = { invalid: 'CIDR' | 'name' };

/** The zones `text` stands for (absolute, lower-case), or what is wrong with it. */
function zonesOf(text: string): string[] | ZoneProblem {
  if (text.includes('/')) {
    try {
      return cidrToReverseZones(text);
    } catch {
      return { invalid: 'CIDR' };
    }
  }
  if (!isValidDomainName(text)) return { invalid: 'name' };
  return [lowerName(fqdn(text))];
}

/** A zone argument: a domain name, or a CIDR standing for its reverse zones (as in server keys). */
export function normalizeZones(arg: string, at: Directive): string[] {
  const zones = zonesOf(arg);
  if (!Array.isArray(zones)) return invalidArg(at, arg, zones.invalid === 'CIDR' ? 'not a valid CIDR' : 'not a valid zone name');
  return zones;
}

/** Every one of `args` (arguments of `d`) as zones, in order. */
export function zoneArgs(d: Directive, args: readonly string[]): string[] {
  return args.flatMap((arg) => normalizeZones(arg, d));
}

/**
 * The argument `index` of `d` as zones, where the plugin accepts more than a zone there
 * (`dns://`, a port) and passes `bare`, the zone part; an error quotes the argument as written.
 */
export function zoneArgAt(d: Directive, index: number, bare: string): string[] {
  const zones = zonesOf(bare);
  if (Array.isArray(zones)) return zones;
  const why = zones.invalid === 'CIDR' ? 'not a valid CIDR' : 'not a valid domain name';
  throw CorefileError.at(argPosition(d, index), `invalid zone "${d.args[index]}" for "${d.name}": ${why}`);
}

/**
 * `name` is one of `zones` or below it. Both sides are lower-case and absolute here, so a
 * suffix test does (the general isSubdomain costs ~300 ns; this runs per unknown name);
 * names with escapes take the exact path.
 */
export function inZones(name: string, zones: readonly string[]): boolean {
  for (const zone of zones) {
    if (zone === '.') return true;
    if (name.includes('\\') || zone.includes('\\')) {
      if (isSubdomain(name, zone)) return true;
      continue;
    }
    if (name === zone) return true;
    const cut = name.length - zone.length;
    if (cut > 0 && name.endsWith(zone) && name.charCodeAt(cut - 1) === 46 /* . */) return true;
  }
  return false;
}
