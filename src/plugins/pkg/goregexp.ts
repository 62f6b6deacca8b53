// Go (RE2) regular expressions as Corefiles write them, run by JavaScript's RegExp. The two
// dialects agree on most of what DNS patterns use; the differences handled here are the ones
// CoreDNS users write: `(?P<name>…)` named groups, leading flag groups such as `(?i)`, `\A`,
// `\z` and the POSIX classes `[[:alpha:]]`. RE2 has no backreferences or lookaround, so a
// pattern using them is refused rather than silently meaning something else.
// Used by the rewrite and template plugins, whose patterns are Go's in CoreDNS.

/** Longest pattern accepted (CoreDNS's limit, against patterns that cost too much to compile). */
export const MAX_REGEX_LENGTH = 10000;

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

export interface GoRegExp {
  readonly regex: RegExp;
  /** Number of capture groups, as Go's NumSubexp. */
  readonly groups: number;
  /** Name of each group by index (index 0, the whole match, has none), as Go's SubexpNames. */
  readonly names: readonly string[];
}

/** Compiles a Go pattern; throws Error saying what is wrong. */
export function compileGoRegExp(pattern: string): GoRegExp {
  if (pattern.length > MAX_REGEX_LENGTH) throw new Error(`regex pattern too long: ${pattern.length} > ${MAX_REGEX_LENGTH}`);
  let body = pattern;
  let flags = '';
  const lead = /^\(\?([imsU]+)\)/.exec(body);
  if (lead) {
    const f = lead[1] as string;
    if (f.includes('U')) throw new Error(`invalid regex ${JSON.stringify(pattern)}: the U (ungreedy) flag is not supported`);
    flags = [...new Set(f)].join('');
    body = body.slice(lead[0].length);
  }
  const source = translate(body, pattern);
  let regex: RegExp;
  try {
    regex = new RegExp(source, flags);
  } catch (e) {
    throw new Error(`invalid regex ${JSON.stringify(pattern)}: ${(e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '')}`);
  }
  const names: string[] = [''];
  const groupRe = /\\.|\[(?:\\.|[^\]\\])*\]|\((\?(?:P?<([A-Za-z_][A-Za-z0-9_]*)>)|\?)?/g;
  for (const m of source.matchAll(groupRe)) {
    if (!m[0].startsWith('(')) continue;
    if (m[1] === undefined) names.push('');
    else if (m[2] !== undefined) names.push(m[2]);
  }
  return { regex, groups: names.length - 1, names };
}

function translate(body: string, pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c === '\\') {
      const n = body[i + 1];
      if (n === undefined) throw new Error(`invalid regex ${JSON.stringify(pattern)}: trailing backslash`);
      if (!inClass && /[1-9]/.test(n)) throw new Error(`invalid regex ${JSON.stringify(pattern)}: backreferences are not supported`);
      if (!inClass && n === 'A') out += '^';
      else if (!inClass && n === 'z') out += '$(?![\\s\\S])';
      else out += c + n;
      i++;
      continue;
    }
    if (inClass) {
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(body.slice(i));
      if (posix) {
        const set = POSIX_CLASSES[posix[2] as string];
        if (set === undefined || posix[1] === '^') throw new Error(`invalid regex ${JSON.stringify(pattern)}: unknown character class ${posix[0]}`);
        out += set;
        i += posix[0].length - 1;
        continue;
      }
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      // A `]` right after `[` or `[^` is a literal in Go; JavaScript needs it escaped.
      if (body[i + 1] === '^') {
        out += '^';
        i++;
      }
      if (body[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (c === '(' && body[i + 1] === '?') {
      const rest = body.slice(i);
      if (rest.startsWith('(?P<')) {
        out += '(?<';
        i += 3;
        continue;
      }
      if (rest.startsWith('(?=') || rest.startsWith('(?!') || rest.startsWith('(?<=') || rest.startsWith('(?<!')) {
        throw new Error(`invalid regex ${JSON.stringify(pattern)}: lookaround is not supported`);
      }
    }
    out += c;
  }
  return out;
}

/** Go's FindStringSubmatch: the whole match and every group ('' for a group that took no part), or undefined. */
export function submatch(re: GoRegExp, s: string): string[] | undefined {
  const m = re.regex.exec(s);
  if (!m) return undefined;
  const out: string[] = new Array<string>(m.length);
  for (let i = 0; i < m.length; i++) out[i] = m[i] ?? '';
  return out;
}

/** Replaces `{0}`…`{N}` in `template` with the groups of a match (CoreDNS's rewrite syntax). */
export function expandGroups(template: string, groups: readonly string[]): string {
  let s = template;
  for (let i = 0; i < groups.length; i++) s = s.replaceAll(`{${i}}`, groups[i] as string);
  return s;
}

/** How many distinct `{0}`…`{100}` references `template` uses (CoreDNS checks it against the groups). */
export function groupReferences(template: string): number {
  let n = 0;
  for (let i = 0; i <= 100; i++) if (template.includes(`{${i}}`)) n++;
  return n;
}
