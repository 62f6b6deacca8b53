// The few rules of the Prometheus text format (version 0.0.4) that kdns writes itself: escaping
// in HELP lines and label values, and how a sample's value is spelled. Used by series.ts.

/** HELP text: backslash and line feed escaped. */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A label value inside its double quotes: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** `name="value"` pairs joined by commas, in the record's order; '' for no labels. */
export function labelPairs(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([name, value]) => `${name}="${escapeLabelValue(value)}"`)
    .join(',');
}

/**
 * A sample value as JavaScript prints a number (what prom-client writes, so the text does not
 * change between the two writers), with the format's spellings of infinities. NaN is written
 * `Nan`, prom-client's spelling, which Prometheus reads as NaN (it ignores the case).
 */
export function sampleValue(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (Number.isNaN(v)) return 'Nan';
  return String(v);
}
