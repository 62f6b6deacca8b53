// Glob matching for `import` patterns, with the syntax of Go's path/filepath.Match that CoreDNS
// uses: `*` (any run of characters but '/'), `?` (one character but '/'), `[a-z]` / `[^a-z]`
// classes and `\` escapes, in any path component. Like Go, `*` also matches names starting with
// a dot, and the matches of each directory come in byte order.

import { join } from 'node:path';

export type ListDir = (dir: string) => string[];

/** True when the pattern has wildcard characters (otherwise it names one file). */
export function hasGlobMeta(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

export class GlobPatternError extends Error {}

function escapeRegExp(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}

/** Index just after the `]` closing the class that opens at `start`, and the class as regex. */
function compileClass(part: string, start: number): { regex: string; next: number } {
  let i = start + 1;
  let regex = '[';
  if (part[i] === '^') {
    regex += '^';
    i++;
  }
  let first = true;
  while (i < part.length && (part[i] !== ']' || first)) {
    first = false;
    let ch = part[i] as string;
    if (ch === '\\') {
      i++;
      if (i >= part.length) break;
      ch = part[i] as string;
    }
    regex += escapeRegExp(ch);
    i++;
    if (part[i] === '-' && part[i + 1] !== undefined && part[i + 1] !== ']') {
      let hi = part[i + 1] as string;
      i += 2;
      if (hi === '\\') {
        hi = part[i] ?? '';
        i++;
      }
      if (hi === '' || hi < ch) throw new GlobPatternError(`bad character range in ${JSON.stringify(part)}`);
      regex += `-${escapeRegExp(hi)}`;
    }
  }
  if (part[i] !== ']') throw new GlobPatternError(`unclosed '[' in ${JSON.stringify(part)}`);
  // A class never matches the path separator.
  return { regex: `(?!/)${regex}]`, next: i + 1 };
}

/** One path component's pattern as an anchored RegExp. */
export function componentRegExp(part: string): RegExp {
  let regex = '';
  let i = 0;
  while (i < part.length) {
    const ch = part[i] as string;
    if (ch === '*') {
      regex += '[^/]*';
      i++;
    } else if (ch === '?') {
      regex += '[^/]';
      i++;
    } else if (ch === '[') {
      const cls = compileClass(part, i);
      regex += cls.regex;
      i = cls.next;
    } else if (ch === '\\') {
      if (i + 1 >= part.length) throw new GlobPatternError(`trailing '\\' in ${JSON.stringify(part)}`);
      regex += escapeRegExp(part[i + 1] as string);
      i += 2;
    } else {
      regex += escapeRegExp(ch);
      i++;
    }
  }
  return new RegExp(`^${regex}$`, 's');
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Entries of `dir`, sorted; none when it cannot be listed (not a folder, missing). */
function entriesOf(dir: string, listDir: ListDir): string[] {
  try {
    return [...listDir(dir)].sort(byteOrder);
  } catch {
    return [];
  }
}

/**
 * Existing paths matching an absolute pattern, as Go's filepath.Glob finds them. Leading
 * components without wildcards are taken as written; after the first wildcard every component
 * is checked against its folder's listing.
 */
export function globPaths(absolutePattern: string, listDir: ListDir): string[] {
  let current = [absolutePattern.startsWith('/') ? '/' : ''];
  let expanded = false;
  for (const part of absolutePattern.split('/')) {
    if (part === '') continue;
    if (!hasGlobMeta(part)) {
      current = expanded ? current.filter((dir) => entriesOf(dir, listDir).includes(part)) : current;
      current = current.map((dir) => join(dir, part));
      continue;
    }
    expanded = true;
    const re = componentRegExp(part);
    current = current.flatMap((dir) => entriesOf(dir, listDir).filter((e) => re.test(e)).map((e) => join(dir, e)));
  }
  return current;
}
