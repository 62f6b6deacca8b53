import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lex, type LexToken } from './lexer.js';

function w(text: string, line: number, endLine = line): LexToken {
  return { text, quoted: false, line, endLine };
}
function q(text: string, line: number, endLine = line): LexToken {
  return { text, quoted: true, line, endLine };
}

const cases: Array<{ name: string; text: string; want: LexToken[] }> = [
  { name: 'empty input', text: '', want: [] },
  { name: 'whitespace only', text: ' \t\n\r\n', want: [] },
  { name: 'words and lines', text: 'a b c\nd e', want: [w('a', 1), w('b', 1), w('c', 1), w('d', 2), w('e', 2)] },
  { name: 'braces are words of their own when spaced', text: 'x {\n}', want: [w('x', 1), w('{', 1), w('}', 2)] },
  { name: 'a brace glued to a word is part of it', text: 'x{ {$A}', want: [w('x{', 1), w('{$A}', 1)] },
  { name: 'a quoted word keeps its spaces', text: '"a b" c', want: [q('a b', 1), w('c', 1)] },
  { name: 'an empty quoted word', text: '""', want: [q('', 1)] },
  { name: 'only \\" is an escape inside quotes', text: String.raw`"a\"b\n\\c"`, want: [q(String.raw`a"b\n\\c`, 1)] },
  { name: 'a quote inside a word is a character', text: 'a"b c"', want: [w('a"b', 1), w('c"', 1)] },
  { name: 'a closing quote ends the word', text: '"a"b', want: [q('a', 1), w('b', 1)] },
  { name: 'a quoted word spanning lines', text: '"a\nb" c\nd', want: [q('a\nb', 1, 2), w('c', 2), w('d', 3)] },
  { name: 'a comment runs to the end of the line', text: 'a # b c\nd', want: [w('a', 1), w('d', 2)] },
  { name: 'a # inside a word starts a comment', text: 'a#b c\nd', want: [w('a', 1), w('d', 2)] },
  { name: 'a # inside quotes is text', text: '"a # b"', want: [q('a # b', 1)] },
  { name: 'a carriage return is dropped, even inside a word', text: 'a\r\nb\rc', want: [w('a', 1), w('bc', 2)] },
  { name: 'a carriage return inside quotes is kept', text: '"a\rb"', want: [q('a\rb', 1)] },
  { name: 'a byte order mark is ignored', text: '\uFEFFa', want: [w('a', 1)] },
  { name: 'tabs and Unicode spaces separate words', text: 'a\tb\u00a0c', want: [w('a', 1), w('b', 1), w('c', 1)] },
];

describe('lex', () => {
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(lex(c.text, 'Corefile'), c.want);
    });
  }

  it('an unterminated quote is an error at the line it opens', () => {
    assert.throws(() => lex('a\n"b\nc', 'conf/x.conf'), { message: 'conf/x.conf:2: unterminated quoted string (the quote opened here is never closed)' });
  });
});
