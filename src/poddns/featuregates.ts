// `--feature-gates K=V,K2=V2`, as the kubelet and the API server take it. Only the gates pod DNS
// reads are known; naming any other is a usage error, like a misspelt flag.

export const FEATURE_GATE_DEFAULTS = {
  /** Allow `_` and a lone `.` in search names (API server; kdns defaults it off). */
  RelaxedDNSSearchValidation: false,
} as const;

export type FeatureGateName = keyof typeof FEATURE_GATE_DEFAULTS;
export type FeatureGates = Record<FeatureGateName, boolean>;

export type FeatureGateParse = { ok: true; gates: FeatureGates } | { ok: false; error: string };

function isGateName(name: string): name is FeatureGateName {
  return Object.hasOwn(FEATURE_GATE_DEFAULTS, name);
}

/** Go's strconv.ParseBool, which the kubelet uses for gate values. */
export function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/** Parses the flag value; an empty value leaves every gate at its default. */
export function parseFeatureGates(text: string): FeatureGateParse {
  const gates: FeatureGates = { ...FEATURE_GATE_DEFAULTS };
  for (const pair of text.split(',')) {
    const item = pair.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq < 0) return { ok: false, error: `missing bool value for ${item}` };
    const name = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1).trim();
    if (!isGateName(name)) return { ok: false, error: `unrecognized feature gate: ${name} (known: ${Object.keys(FEATURE_GATE_DEFAULTS).join(', ')})` };
    const value = parseGoBool(raw);
    if (value === undefined) return { ok: false, error: `invalid value of ${name}=${raw}, must be true or false` };
    gates[name] = value;
  }
  return { ok: true, gates };
}
