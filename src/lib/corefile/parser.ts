// Corefile → ServerBlock[], with the grammar CoreDNS takes from Caddy v1:
//
//     KEY [[,] KEY...] {          one or more keys; a trailing comma continues them on the next line
//         NAME [ARG...] [{        a directive; a block opens at the end of its line
//             NAME [ARG...]       ...and holds directives, to any depth
//         }]
//     }
//
// plus `{$ENV}` substitution, `import PATTERN [ARG...]` of files, globs and snippets, and a
// file made of a single server block may leave out the braces.
//
// Imports are expanded by splicing tokens into the stream, as Caddy does, so an import may stand
// anywhere a server block or a directive may start. Every token remembers the chain of imports
// that brought it in, which is how cycles are caught, and the arguments of the import that
// brought it in, which `{args[N]}` placeholders are resolved from when the token is read — not
// earlier, so a snippet defined in an imported file keeps its placeholders for its own imports.
//
// Where kdns is stricter than CoreDNS it is to report a mistake CoreDNS would swallow: a '{'
// alone on a directive's next line, words after a block's '}', an empty key, an unterminated
// quote, a key CoreDNS would turn into a nonsense zone.

import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { CorefileError, type Directive, type Position, type ServerBlock } from './ast.js';
import { checkDuplicateZones } from './duplicates.js';
import { substituteEnv, type Env } from './env.js';
import { GlobPatternError, globPaths, hasGlobMeta, type ListDir } from './glob.js';
import { parseServerKey } from './key.js';
import { lex } from './lexer.js';

export { keyPort, parseServerKey } from './key.js';

export interface ParseOptions {
  /** Name of the Corefile as the user knows it; errors and positions use it. */
  file: string;
  /** Environment for `{$NAME}` (default: process.env). */
  env?: Env;
  /** Reads an imported file (default: fs.readFileSync as UTF-8). */
  readFile?: (path: string) => string;
  /** Lists a directory for glob imports (default: fs.readdirSync). */
  listDir?: ListDir;
  /** Folder that relative imports of the main file resolve against (default: the file's folder). */
  baseDir?: string;
  /** Port of keys without one, for the duplicate-zone check (default 53, as `-dns.port`). */
  defaultPort?: number;
}

/** Hard cap on import expansions, so snippets that import each other twice per level cannot explode. */
export const MAX_IMPORTS = 10_000;

/** One step of the import chain: a file (by absolute path) or a snippet (by name). */
interface ChainLink {
  id: string;
  label: string;
}

interface Token extends Position {
  text: string;
  quoted: boolean;
  /** A structural brace: unquoted `{` or `}` as written (a brace from substitution is text). */
  brace?: '{' | '}';
  endLine: number;
  /** First token of its line: ends the directive before it. */
  startsLine: boolean;
  /** Absolute folder of the file the token was read from: relative imports start there. */
  dir: string;
  chain: readonly ChainLink[];
  /** Arguments of the import that brought the token in (undefined in the main file). */
  importArgs?: readonly string[];
  importedAt?: Position;
}

interface Snippet {
  tokens: Token[];
  at: Position;
}

interface SourceFile {
  display: string;
  dir: string;
}

const PLACEHOLDER = /\{args\[([0-9]*)(:?)([0-9]*)\]\}/g;

function isImport(t: Token): boolean {
  return !t.quoted && !t.brace && t.text === 'import';
}

function snippetName(keys: readonly string[]): string | undefined {
  if (keys.length !== 1) return undefined;
  const m = /^\((.*)\)$/s.exec(keys[0] as string);
  return m ? (m[1] as string) : undefined;
}

function describe(t: Token): string {
  return t.brace ? `'${t.brace}'` : JSON.stringify(t.text);
}

function errorCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

class Parser {
  private tokens: Token[] = [];
  private i = 0;
  private readonly snippets = new Map<string, Snippet>();
  private readonly blocks: ServerBlock[] = [];
  private imports = 0;
  private readonly env: Env;
  private readonly readFile: (path: string) => string;
  private readonly listDir: ListDir;

  constructor(private readonly opts: ParseOptions) {
    this.env = opts.env ?? process.env;
    this.readFile = opts.readFile ?? ((p) => readFileSync(p, 'utf8'));
    this.listDir = opts.listDir ?? ((d) => readdirSync(d));
  }

  parse(text: string): ServerBlock[] {
    const dir = resolve(this.opts.baseDir ?? dirname(resolve(this.opts.file)));
    const abs = this.opts.baseDir === undefined ? resolve(this.opts.file) : join(dir, basename(this.opts.file));
    const root: ChainLink = { id: `file:${abs}`, label: this.opts.file };
    this.tokens = this.tokenize(text, { display: this.opts.file, dir }, [root]);
    while (this.resolveAt(this.i)) {
      const t = this.current();
      if (t.brace === '}') throw CorefileError.at(t, "unexpected '}' (no block is open here)");
      if (t.brace === '{') throw CorefileError.at(t, "unexpected '{': a server block needs its keys before the '{'");
      if (isImport(t)) this.expandImport();
      else this.serverBlockOrSnippet();
    }
    return this.blocks;
  }

  private current(): Token {
    return this.tokens[this.i] as Token;
  }

  private tokenize(text: string, src: SourceFile, chain: readonly ChainLink[], importArgs?: readonly string[], importedAt?: Position): Token[] {
    let prevEnd = 0;
    return lex(text, src.display).map((t) => {
      const token: Token = {
        text: substituteEnv(t.text, this.env),
        quoted: t.quoted,
        file: src.display,
        line: t.line,
        endLine: t.endLine,
        startsLine: t.line > prevEnd,
        dir: src.dir,
        chain,
      };
      if (!t.quoted && (t.text === '{' || t.text === '}')) token.brace = t.text;
      if (importArgs) token.importArgs = importArgs;
      if (importedAt) token.importedAt = importedAt;
      prevEnd = t.endLine;
      return token;
    });
  }

  // ---- placeholders -------------------------------------------------------------------

  /**
   * Resolves `{args[...]}` in the token at `at` (which may become zero or several tokens) and
   * tells whether a token is left there to read.
   */
  private resolveAt(at: number): boolean {
    for (;;) {
      const t = this.tokens[at];
      if (!t) return false;
      if (!t.importArgs || !t.text.includes('{args[')) return true;
      const replacement = this.resolvePlaceholders(t, t.importArgs);
      this.tokens.splice(at, 1, ...replacement);
      const next = this.tokens[at + replacement.length];
      if (replacement.length === 0 && t.startsLine && next && !next.startsLine && next.file === t.file && next.line === t.line) {
        // The line's first word vanished (an empty {args[:]}): the next word now starts the line.
        this.tokens[at] = { ...next, startsLine: true };
      }
    }
  }

  private resolvePlaceholders(t: Token, args: readonly string[]): Token[] {
    const importedAt = t.importedAt ? ` (imported at ${t.importedAt.file}:${t.importedAt.line})` : '';
    const passed = `the import passes ${args.length} argument${args.length === 1 ? '' : 's'}${importedAt}`;
    const literal = (text: string): Token => {
      const out: Token = { ...t, text, quoted: true };
      delete out.importArgs;
      delete out.brace;
      return out;
    };
    const whole = new RegExp(`^${PLACEHOLDER.source}$`).exec(t.text);
    if (whole && whole[2] === ':') {
      const start = whole[1] === '' ? 0 : Number(whole[1]);
      const end = whole[3] === '' ? args.length : Number(whole[3]);
      if (start > end || end > args.length) throw CorefileError.at(t, `placeholder ${t.text} is out of range: ${passed}`);
      return args.slice(start, end).map(literal);
    }
    const text = t.text.replace(PLACEHOLDER, (ph: string, index: string, colon: string) => {
      if (colon === ':') throw CorefileError.at(t, `placeholder ${ph} expands to several words, so it must be a word on its own`);
      const value = index === '' ? undefined : args[Number(index)];
      if (value === undefined) throw CorefileError.at(t, `placeholder ${ph} is out of range: ${passed}`);
      return value;
    });
    return [literal(text)];
  }

  // ---- imports ------------------------------------------------------------------------

  /** Replaces the `import` line at the cursor with the tokens it names. */
  private expandImport(): void {
    const imp = this.current();
    let end = this.i + 1;
    const words: Token[] = [];
    while (this.resolveAt(end)) {
      const t = this.tokens[end] as Token;
      if (t.brace || t.startsLine) break;
      words.push(t);
      end++;
    }
    const patternToken = words[0];
    if (!patternToken) throw CorefileError.at(imp, 'import needs a file, a glob pattern or a snippet name');
    const pattern = patternToken.text;
    if (pattern === '') throw CorefileError.at(imp, 'import: the pattern is empty (an unset environment variable?)');
    this.imports++;
    if (this.imports > MAX_IMPORTS) throw CorefileError.at(imp, `too many imports (more than ${MAX_IMPORTS}): do snippets import each other?`);
    const args = words.slice(1).map((w) => w.text);
    const snippet = this.snippets.get(pattern);
    const expanded = snippet ? this.snippetTokens(imp, pattern, snippet, args) : this.fileTokens(imp, pattern, args);
    if (expanded[0]) expanded[0] = { ...expanded[0], startsLine: true };
    this.tokens.splice(this.i, end - this.i, ...expanded);
  }

  private extendChain(imp: Token, link: ChainLink): readonly ChainLink[] {
    const seen = imp.chain.findIndex((l) => l.id === link.id);
    if (seen >= 0) {
      const cycle = [...imp.chain.slice(seen), link].map((l) => l.label).join(' -> ');
      throw CorefileError.at(imp, `import cycle: ${cycle}`);
    }
    return [...imp.chain, link];
  }

  private snippetTokens(imp: Token, name: string, snippet: Snippet, args: readonly string[]): Token[] {
    const chain = this.extendChain(imp, { id: `snippet:${name}`, label: `(${name})` });
    const importedAt: Position = { file: imp.file, line: imp.line };
    return snippet.tokens.map((t) => ({ ...t, chain, importArgs: args, importedAt }));
  }

  /** How an imported file is named in positions: relative to the importer as the user wrote it. */
  private displayName(imp: Token, pattern: string, path: string): string {
    return isAbsolute(pattern) ? path : join(dirname(imp.file), relative(imp.dir, path));
  }

  private fileTokens(imp: Token, pattern: string, args: readonly string[]): Token[] {
    const absPattern = isAbsolute(pattern) ? pattern : resolve(imp.dir, pattern);
    const isGlob = hasGlobMeta(pattern);
    let paths: string[];
    try {
      paths = isGlob ? globPaths(absPattern, this.listDir) : [absPattern];
    } catch (e) {
      if (e instanceof GlobPatternError) throw CorefileError.at(imp, `import: bad glob pattern: ${e.message}`);
      throw e;
    }
    const out: Token[] = [];
    for (const path of paths) {
      const display = this.displayName(imp, pattern, path);
      const text = this.readImported(imp, pattern, path, display, isGlob);
      if (text === undefined) continue;
      const chain = this.extendChain(imp, { id: `file:${path}`, label: display });
      out.push(...this.tokenize(text, { display, dir: dirname(path) }, chain, args, { file: imp.file, line: imp.line }));
    }
    return out;
  }

  /** The file's text; undefined for a glob match that turns out not to be a readable file. */
  private readImported(imp: Token, pattern: string, path: string, display: string, isGlob: boolean): string | undefined {
    try {
      return this.readFile(path);
    } catch (e) {
      const code = errorCode(e);
      if (isGlob && (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR')) return undefined;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        if (!pattern.includes('/')) {
          throw CorefileError.at(imp, `import: unknown snippet "${pattern}", and no file of that name (a snippet must be defined before it is imported)`);
        }
        throw CorefileError.at(imp, `import: file not found: ${display}`);
      }
      if (code === 'EISDIR') throw CorefileError.at(imp, `import: ${display} is a directory (import ${join(pattern, '*')} for the files in it)`);
      throw CorefileError.at(imp, `import: cannot read ${display}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  // ---- server blocks ------------------------------------------------------------------

  private serverBlockOrSnippet(): void {
    const first = this.current();
    const written = this.readKeys();
    const keys = written.map((k) => k.text);
    const name = snippetName(keys);
    if (name === undefined) {
      for (const k of written) parseServerKey(k.text, this.opts.defaultPort, k.at);
    }
    const open = this.tokens[this.i];
    if (open?.brace === '{') {
      this.i++;
      if (name !== undefined) {
        this.defineSnippet(name, first, open);
        return;
      }
      this.blocks.push({ file: first.file, line: first.line, keys, directives: this.directives(open) });
      return;
    }
    if (name !== undefined) throw CorefileError.at(first, `snippet "${keys[0]}" needs a body: expected '{' after its name`);
    if (this.blocks.length > 0) {
      throw CorefileError.at(first, `server block "${keys.join(' ')}" has no body: expected '{' after its keys`);
    }
    // Caddy's single-block form: the rest of the file is this block's directives.
    this.blocks.push({ file: first.file, line: first.line, keys, directives: this.directives(undefined) });
  }

  /** Keys up to the '{' or the end of their line; a trailing comma carries on to the next line. */
  private readKeys(): Array<{ text: string; at: Token }> {
    const keys: Array<{ text: string; at: Token }> = [];
    let wantAnother = false;
    let last = this.current();
    while (this.resolveAt(this.i)) {
      const t = this.current();
      if (t.brace === '}') throw CorefileError.at(t, "unexpected '}' (no block is open here)");
      if (t.brace === '{' || (keys.length > 0 && !wantAnother && t.startsLine)) break;
      wantAnother = t.text.endsWith(',');
      const text = wantAnother ? t.text.slice(0, -1) : t.text;
      // A lone "," only separates keys.
      const pieces = text === '' && wantAnother ? [] : text.split(',');
      for (const piece of pieces) {
        if (piece === '') throw CorefileError.at(t, 'empty server block key (an unset environment variable, or a stray comma?)');
        keys.push({ text: piece, at: t });
      }
      last = t;
      this.i++;
    }
    const next = this.tokens[this.i];
    if (wantAnother) {
      throw CorefileError.at(next ?? last, next ? `expected another key after ',' but found ${describe(next)}` : "expected another key after ','");
    }
    return keys;
  }

  private defineSnippet(name: string, at: Token, open: Token): void {
    if (name === '') throw CorefileError.at(at, 'a snippet needs a name: (name) { ... }');
    const earlier = this.snippets.get(name);
    if (earlier) throw CorefileError.at(at, `snippet "${name}" is already defined (at ${earlier.at.file}:${earlier.at.line})`);
    const start = this.i;
    let depth = 1;
    for (; this.i < this.tokens.length; this.i++) {
      const brace = this.current().brace;
      if (brace === '{') depth++;
      if (brace === '}' && --depth === 0) break;
    }
    if (depth > 0) throw this.unclosed(open);
    // Kept as written: placeholders and imports inside are resolved each time it is imported.
    this.snippets.set(name, { tokens: this.tokens.slice(start, this.i), at: { file: at.file, line: at.line } });
    this.i++;
  }

  private unclosed(open: Token): CorefileError {
    return CorefileError.at(open, "unclosed '{' (opened here, no matching '}')");
  }

  // ---- directives ---------------------------------------------------------------------

  /** Directives up to the '}' matching `open` (consumed), or to the end of input without one. */
  private directives(open: Token | undefined): Directive[] {
    const out: Directive[] = [];
    for (;;) {
      if (!this.resolveAt(this.i)) {
        if (open) throw this.unclosed(open);
        return out;
      }
      const t = this.current();
      if (t.brace === '}') {
        if (!open) throw CorefileError.at(t, "unexpected '}' (no block is open here)");
        this.i++;
        return out;
      }
      if (t.brace === '{') {
        throw CorefileError.at(t, "unexpected '{': a block must open at the end of the line of the directive it belongs to");
      }
      if (isImport(t)) this.expandImport();
      else out.push(this.directive());
    }
  }

  private directive(): Directive {
    const nameToken = this.current();
    if (!nameToken.quoted && /^[{}]{2,}$/.test(nameToken.text)) {
      // CoreDNS would read "}}" as a plugin name and fail far away; say what happened here.
      throw CorefileError.at(nameToken, `"${nameToken.text}" is read as one word: separate braces with spaces`);
    }
    this.i++;
    const d: Directive = { file: nameToken.file, line: nameToken.line, name: nameToken.text, args: [], argLines: [] };
    while (this.resolveAt(this.i)) {
      const t = this.current();
      if (t.brace || t.startsLine) break;
      d.args.push(t.text);
      d.argLines.push(t.line);
      this.i++;
    }
    const open = this.tokens[this.i];
    if (open?.brace === '{' && !open.startsLine) {
      this.i++;
      d.block = this.directives(open);
      this.expectLineEndAfterBlock();
    }
    return d;
  }

  /** `dir { ... } more` is ambiguous (CoreDNS glues "more" onto dir): ask for a new line. */
  private expectLineEndAfterBlock(): void {
    if (!this.resolveAt(this.i)) return;
    const next = this.current();
    if (next.startsLine || next.brace === '}') return;
    throw CorefileError.at(next, `unexpected ${describe(next)} after the '}' that closes a block (start a new line)`);
  }
}

/**
 * Parses a Corefile into its server blocks (snippets and imports expanded, environment
 * substituted). Throws CorefileError naming the file and line of the first problem, including a
 * zone served twice on the same transport, port and `bind` address.
 */
export function parseCorefile(text: string, opts: ParseOptions): ServerBlock[] {
  const blocks = new Parser(opts).parse(text);
  checkDuplicateZones(blocks, opts.defaultPort ?? 53);
  return blocks;
}
