// Helpers every plugin setup uses to read its directive, so all plugins word the same mistake the
// same way and every message names the file and line. Each throws CorefileError.

import { CorefileError, type Directive, type Position } from './ast.js';

// ---- durations ------------------------------------------------------------------------

export interface DurationOptions {
  /** Accept a bare integer as seconds ("30"), as e.g. cache's TTL does. Default false. */
  bareSeconds?: boolean;
  /** Smallest accepted value in milliseconds. Default 0 (no negative durations). */
  minMs?: number;
  /** Largest accepted value in milliseconds. */
  maxMs?: number;
}

/** Milliseconds per unit of Go's time.ParseDuration. */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3, // U+00B5 micro sign
  'μs': 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go duration text → milliseconds, or undefined when it is not one. */
function goDurationMs(text: string): number | undefined {
  const m = /^([+-]?)(.*)$/s.exec(text) as RegExpExecArray;
  const sign = m[1] === '-' ? -1 : 1;
  const body = m[2] as string;
  if (body === '0') return 0;
  if (body === '') return undefined;
  const part = /([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < body.length) {
    part.lastIndex = at;
    const p = part.exec(body);
    // A number needs at least one digit ("." alone is not one).
    if (!p || !/[0-9]/.test(p[1] as string)) return undefined;
    total += Number(p[1]) * (UNIT_MS[p[2] as string] as number);
    at = part.lastIndex;
  }
  return sign * total;
}

/** Milliseconds as Go prints a duration: "0s", "500ms", "5s", "1m30s", "1h0m0s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms < 1000) return ms < 1 ? `${Math.round(ms * 1000)}µs` : `${ms}ms`;
  const whole = Math.round(ms);
  const h = Math.floor(whole / 3_600_000);
  const m = Math.floor((whole % 3_600_000) / 60_000);
  const restMs = whole % 60_000;
  const fraction = restMs % 1000 === 0 ? '' : `.${String(restMs % 1000).padStart(3, '0').replace(/0+$/, '')}`;
  const s = `${Math.floor(restMs / 1000)}${fraction}s`;
  if (h > 0) return `${h}h${m}m${s}`;
  return m > 0 ? `${m}m${s}` : s;
}

/**
 * A duration in Go syntax (`500ms`, `5s`, `1m30s`, `1h`, `0`), in milliseconds; with
 * `bareSeconds` also a plain integer of seconds. `what` names the value in messages
 * ("lameduck", "cache ttl").
 */
export function parseDuration(text: string, pos: Position, what: string, opts: DurationOptions = {}): number {
  const ms = opts.bareSeconds && /^[0-9]+$/.test(text) ? Number(text) * 1000 : goDurationMs(text);
  if (ms === undefined || !Number.isFinite(ms)) {
    const expected = opts.bareSeconds ? 'seconds or a Go duration' : 'a Go duration';
    throw CorefileError.at(pos, `invalid duration for ${what}: "${text}" (expected ${expected} such as 500ms, 5s or 1m30s)`);
  }
  const min = opts.minMs ?? 0;
  if (ms < min) throw CorefileError.at(pos, `${what} must be at least ${formatDuration(min)}, got ${text}`);
  if (opts.maxMs !== undefined && ms > opts.maxMs) {
    throw CorefileError.at(pos, `${what} must be at most ${formatDuration(opts.maxMs)}, got ${text}`);
  }
  return ms;
}

// ---- integers -------------------------------------------------------------------------

export interface IntOptions {
  /** Names the value in messages ("max_concurrent", "port"). */
  what: string;
  min?: number;
  max?: number;
}

/** A decimal integer (optional sign, as Go's strconv.Atoi) within [min, max]. */
export function parseIntArg(text: string, pos: Position, opts: IntOptions): number {
  const n = /^[+-]?[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw CorefileError.at(pos, `invalid ${opts.what}: "${text}" is not an integer`);
  const { min, max } = opts;
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
    const range =
      min !== undefined && max !== undefined ? `between ${min} and ${max}` : min !== undefined ? `at least ${min}` : `at most ${max}`;
    throw CorefileError.at(pos, `${opts.what} must be ${range}, got ${n}`);
  }
  return n;
}

// ---- directive shape ------------------------------------------------------------------

function argumentCount(n: number): string {
  return n === 0 ? 'no arguments' : String(n);
}

/**
 * Checks the number of arguments and returns them: `expectArgs(d, 1)` (at least one),
 * `expectArgs(d, 0, 2)` (at most two), `expectArgs(d, 1, 1)` (exactly one).
 */
export function expectArgs(d: Directive, min: number, max?: number): string[] {
  const got = d.args.length;
  let expected: string | undefined;
  if (got < min) expected = min === max ? argumentCount(min) : `at least ${min}`;
  else if (max !== undefined && got > max) expected = min === max ? argumentCount(max) : `at most ${max}`;
  if (expected !== undefined) {
    throw CorefileError.at(d, `wrong argument count for "${d.name}": expected ${expected}, got ${got}`);
  }
  return d.args;
}

/** Where argument `index` of `d` sits (its own line when it is on one). */
export function argPosition(d: Directive, index: number): Position {
  return { file: d.file, line: d.argLines[index] ?? d.line };
}

/** A line inside a plugin's block that the plugin does not know. */
export function unknownProperty(d: Directive, plugin: string): never {
  throw CorefileError.at(d, `unknown property "${d.name}" in ${plugin} block`);
}

/** A property that may appear once in a plugin's block, appearing again. */
export function duplicateProperty(d: Directive, plugin: string): never {
  throw CorefileError.at(d, `duplicate property "${d.name}" in ${plugin} block`);
}

/** Throws when the directive has a `{ }` block (for directives and properties that take none). */
export function noBlockAllowed(d: Directive): void {
  if (d.block !== undefined) throw CorefileError.at(d, `"${d.name}" does not take a block`);
}

/**
 * The lines of `d`'s block, in order, each checked on the way out: a property may appear once
 * (duplicateProperty) and takes no block of its own (noBlockAllowed). `key` says what counts
 * as the same property (default its name; e.g. cache's `disable` once per type); a line it
 * gives no key for is passed on unchecked (e.g. hosts' inline entries). The caller's switch
 * ends in unknownProperty.
 */
export function* blockProperties(d: Directive, plugin: string, key: (prop: Directive) => string | undefined = (prop) => prop.name): Generator<Directive> {
  const seen = new Set<string>();
  for (const prop of d.block ?? []) {
    const id = key(prop);
    if (id !== undefined) {
      if (seen.has(id)) duplicateProperty(prop, plugin);
      seen.add(id);
      noBlockAllowed(prop);
    }
    yield prop;
  }
}

/** An argument of `d` that is wrong for the reason `why`; the error points at its line. */
export function invalidArg(d: Directive, arg: string, why: string): never {
  const index = d.args.indexOf(arg);
  const pos = index >= 0 ? argPosition(d, index) : d;
  throw CorefileError.at(pos, `invalid argument "${arg}" for "${d.name}": ${why}`);
}
