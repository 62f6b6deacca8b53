// CONTRACT STUB — the wire-format helper replaces the bodies; the signatures are the contract.
// Names are absolute presentation-format strings (see ./types.ts).

/** Lower-cases ASCII letters only (DNS case-insensitivity is ASCII-only). */
export function lowerName(name: string): string {
  return name.toLowerCase();
}

/** Makes a name absolute ("a.b" → "a.b.", "" → "."). Does not change case. */
export function fqdn(name: string): string {
  return name.endsWith('.') ? name : name + '.';
}

/** Case-insensitive equality of two absolute names. */
export function nameEquals(a: string, b: string): boolean {
  return lowerName(a) === lowerName(b);
}

/** True when `name` is `zone` or below it (case-insensitive; both absolute). */
export function isSubdomain(name: string, zone: string): boolean {
  void name;
  void zone;
  throw new Error('not implemented');
}
