// Splits Corefile text into tokens the way CoreDNS's Caddyfile lexer does, so a Corefile that
// CoreDNS accepts gives the same tokens here:
//
// - tokens are separated by whitespace; a newline ends a line;
// - `#` starts a comment anywhere outside quotes, even in the middle of a word;
// - a `"` opens a quoted token only at the start of a token (`a"b` is the word a"b), and the
//   quoted token ends at the closing quote; inside it only `\"` is an escape, every other
//   backslash is kept as written (so regexes such as "\.example" survive);
// - a `\r` outside quotes is ignored (CRLF files).
//
// One deliberate difference: an unterminated quote is an error here, where Caddy silently
// takes the rest of the file as one token.

import { CorefileError } from './ast.js';

export interface LexToken {
  /** The token's text, quotes removed and `\"` unescaped; no substitution yet. */
  text: string;
  /** Written in quotes: never a brace, never `import`. */
  quoted: boolean;
  /** Line the token starts on (1-based). */
  line: number;
  /** Line the token ends on: differs from `line` only for quoted text spanning lines. */
  endLine: number;
}

const BYTE_ORDER_MARK = '\uFEFF';

function isSpace(ch: string): boolean {
  // Go's unicode.IsSpace, which Caddy uses: ASCII whitespace plus NEL, NBSP and the Unicode spaces.
  return /\s/u.test(ch) || ch === '\u0085';
}

/** The tokens of `text`; `file` only names the source in errors. */
export function lex(text: string, file: string): LexToken[] {
  const tokens: LexToken[] = [];
  const src = text.startsWith(BYTE_ORDER_MARK) ? text.slice(1) : text;
  let line = 1;
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === '\n') {
      line++;
      i++;
      continue;
    }
    if (ch === '\r' || isSpace(ch)) {
      i++;
      continue;
    }
    if (ch === '#') {
      i = skipComment(src, i);
      continue;
    }
    if (ch === '"') {
      const quoted = readQuoted(src, i + 1, line, file);
      tokens.push({ text: quoted.text, quoted: true, line, endLine: quoted.endLine });
      line = quoted.endLine;
      i = quoted.next;
      continue;
    }
    const word = readWord(src, i);
    tokens.push({ text: word.text, quoted: false, line, endLine: line });
    i = word.next;
  }
  return tokens;
}

/** Index of the newline that ends the comment starting at `start` (or the end of text). */
function skipComment(src: string, start: number): number {
  const nl = src.indexOf('\n', start);
  return nl < 0 ? src.length : nl;
}

/** A bare word: up to whitespace or a `#` (which starts a comment even mid-word). */
function readWord(src: string, start: number): { text: string; next: number } {
  let text = '';
  let i = start;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === '#') {
      // The word ends here; the comment is skipped by the main loop.
      return { text, next: i };
    }
    if (ch === '\r') {
      // Caddy drops a carriage return without ending the word.
      i++;
      continue;
    }
    if (isSpace(ch)) break;
    text += ch;
    i++;
  }
  return { text, next: i };
}

/** The body of a quoted token whose opening quote is just before `start`. */
function readQuoted(src: string, start: number, line: number, file: string): { text: string; next: number; endLine: number } {
  let text = '';
  let endLine = line;
  let i = start;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === '\\' && i + 1 < src.length) {
      const after = src[i + 1] as string;
      // Only \" is an escape; any other pair is kept verbatim, both characters.
      text += after === '"' ? '"' : ch + after;
      if (after === '\n') endLine++;
      i += 2;
      continue;
    }
    if (ch === '"') return { text, next: i + 1, endLine };
    if (ch === '\n') endLine++;
    text += ch;
    i++;
  }
  throw new CorefileError(file, line, 'unterminated quoted string (the quote opened here is never closed)');
}
