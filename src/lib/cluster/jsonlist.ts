// Skimming a large JSON list (`kubectl get -o json`, a `ServiceList` from the API) without
// building it: where each item of its top-level "items" array starts and ends, and an item's
// own `kind`, found by walking the text. The items are then parsed one at a time, or not at all.

export interface JsonList {
  kind: string;
  apiVersion: string | undefined;
  /** [start, end) of each element of the top-level "items" array. */
  ranges: Array<[number, number]>;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** A position in JSON text, for skimming it without building values. */
interface Cursor {
  readonly text: string;
  p: number;
}

function skipWs(c: Cursor): void {
  while (c.p < c.text.length && WS.has(c.text.charCodeAt(c.p))) c.p++;
}

function skipString(c: Cursor): boolean {
  c.p++; // opening quote
  while (c.p < c.text.length) {
    const ch = c.text.charCodeAt(c.p);
    if (ch === 0x5c) c.p += 2;
    else if (ch === 0x22) {
      c.p++;
      return true;
    } else c.p++;
  }
  return false;
}

function skipValue(c: Cursor): boolean {
  const text = c.text;
  const first = text.charCodeAt(c.p);
  if (first === 0x22) return skipString(c);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    while (c.p < text.length) {
      const d = text.charCodeAt(c.p);
      if (d === 0x22) {
        if (!skipString(c)) return false;
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) {
          c.p++;
          return true;
        }
      }
      c.p++;
    }
    return false;
  }
  const start = c.p;
  while (c.p < text.length && !WS.has(text.charCodeAt(c.p)) && !',}]'.includes(text[c.p] as string)) c.p++;
  return c.p > start;
}

/** What a member callback tells walkObject: go on, stop here (fine), or the text is not what we read. */
type Walk = 'next' | 'stop' | 'invalid';

/**
 * Walks the members of the object at the cursor: `member` gets each key with the cursor at its
 * value and leaves it after the value. 'invalid' for anything but an object (or a member that
 * says so); otherwise the cursor ends after the object, or where `member` stopped.
 */
function walkObject(c: Cursor, member: (key: string) => Walk): Walk {
  skipWs(c);
  if (c.text.charCodeAt(c.p) !== 0x7b) return 'invalid';
  c.p++;
  skipWs(c);
  if (c.text.charCodeAt(c.p) === 0x7d) {
    c.p++;
    return 'next';
  }
  for (;;) {
    skipWs(c);
    if (c.text.charCodeAt(c.p) !== 0x22) return 'invalid';
    const keyStart = c.p;
    if (!skipString(c)) return 'invalid';
    let key: string;
    try {
      key = JSON.parse(c.text.slice(keyStart, c.p)) as string;
    } catch {
      return 'invalid';
    }
    skipWs(c);
    if (c.text.charCodeAt(c.p) !== 0x3a) return 'invalid';
    c.p++;
    skipWs(c);
    const went = member(key);
    if (went !== 'next') return went;
    skipWs(c);
    const ch = c.text.charCodeAt(c.p++);
    if (ch === 0x7d) return 'next';
    if (ch !== 0x2c) return 'invalid';
  }
}

/** The value at the cursor, parsed, when it is a string; the cursor ends after it either way. */
function stringValue(c: Cursor): string | undefined | 'invalid' {
  const start = c.p;
  if (!skipValue(c)) return 'invalid';
  try {
    const v: unknown = JSON.parse(c.text.slice(start, c.p));
    return typeof v === 'string' ? v : undefined;
  } catch {
    return 'invalid';
  }
}

/**
 * Finds the items of a top-level JSON object `{"kind": "...List", ..., "items": [...]}` without
 * parsing them. undefined when the text is not exactly that (then the ordinary parse decides).
 */
export function jsonListItems(text: string): JsonList | undefined {
  const c: Cursor = { text, p: 0 };
  let kind: string | undefined;
  let apiVersion: string | undefined;
  let ranges: Array<[number, number]> | undefined;
  const walked = walkObject(c, (key) => {
    if (key === 'items' && text.charCodeAt(c.p) === 0x5b) {
      c.p++;
      ranges = [];
      skipWs(c);
      if (text.charCodeAt(c.p) === 0x5d) {
        c.p++;
        return 'next';
      }
      for (;;) {
        skipWs(c);
        const start = c.p;
        if (!skipValue(c)) return 'invalid';
        ranges.push([start, c.p]);
        skipWs(c);
        const ch = text.charCodeAt(c.p++);
        if (ch === 0x5d) return 'next';
        if (ch !== 0x2c) return 'invalid';
      }
    }
    if (key !== 'kind' && key !== 'apiVersion') return skipValue(c) ? 'next' : 'invalid';
    const v = stringValue(c);
    if (v === 'invalid') return 'invalid';
    if (key === 'kind') kind = v;
    else apiVersion = v;
    return 'next';
  });
  skipWs(c);
  if (walked !== 'next' || c.p !== text.length || ranges === undefined || kind === undefined || !kind.endsWith('List')) return undefined;
  return { kind, apiVersion, ranges };
}

/** An item's own `kind`, read without parsing the rest of it (usually its first or second key). */
export function itemKind(text: string, start: number): string | undefined {
  const c: Cursor = { text, p: start };
  let kind: string | undefined;
  walkObject(c, (key) => {
    if (key !== 'kind') return skipValue(c) ? 'next' : 'invalid';
    const v = stringValue(c);
    if (typeof v === 'string') kind = v;
    return 'stop';
  });
  return kind;
}
