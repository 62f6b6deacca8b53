import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CorefileError, type Directive, type ServerBlock } from './ast.js';
import { parseCorefile, type ParseOptions } from './parser.js';

/** A directive whose args all sit on its own line. */
function d(line: number, name: string, args: string[] = [], block?: Directive[]): Directive {
  const out: Directive = { file: 'Corefile', line, name, args, argLines: args.map(() => line) };
  if (block) out.block = block;
  return out;
}

/** The same directives, read from another file. */
function inFile(file: string, directives: Directive[]): Directive[] {
  return directives.map((x) => {
    const out: Directive = { ...x, file };
    if (x.block) out.block = inFile(file, x.block);
    return out;
  });
}

function sb(line: number, keys: string[], directives: Directive[], file = 'Corefile'): ServerBlock {
  return { file, line, keys, directives };
}

function parse(text: string, opts: Partial<ParseOptions> = {}): ServerBlock[] {
  return parseCorefile(text, { file: 'Corefile', env: {}, ...opts });
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof CorefileError, `expected a CorefileError, got ${String(e)}`);
    return e.message;
  }
  assert.fail('expected an error');
}

const KUBERNETES_COREFILE = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
`;

interface ValidCase {
  name: string;
  text: string;
  env?: Record<string, string>;
  want: ServerBlock[];
}

const validCases: ValidCase[] = [
  {
    name: 'the stock Kubernetes Corefile',
    text: KUBERNETES_COREFILE,
    want: [
      sb(1, ['.:53'], [
        d(2, 'errors'),
        d(3, 'health', [], [d(4, 'lameduck', ['5s'])]),
        d(6, 'ready'),
        d(7, 'kubernetes', ['cluster.local', 'in-addr.arpa', 'ip6.arpa'], [
          d(8, 'pods', ['insecure']),
          d(9, 'fallthrough', ['in-addr.arpa', 'ip6.arpa']),
          d(10, 'ttl', ['30']),
        ]),
        d(12, 'prometheus', [':9153']),
        d(13, 'forward', ['.', '/etc/resolv.conf'], [d(14, 'max_concurrent', ['1000'])]),
        d(16, 'cache', ['30']),
        d(17, 'loop'),
        d(18, 'reload'),
        d(19, 'loadbalance'),
      ]),
    ],
  },
  { name: 'an empty file has no blocks', text: '', want: [] },
  { name: 'comments and blank lines only', text: '# nothing\n\n   # here\n', want: [] },
  { name: 'an empty body', text: 'example.org {\n}\n', want: [sb(1, ['example.org'], [])] },
  {
    name: 'keys separated by spaces',
    text: 'a.org b.org:1053 10.0.0.0/24 {\n whoami\n}',
    want: [sb(1, ['a.org', 'b.org:1053', '10.0.0.0/24'], [d(2, 'whoami')])],
  },
  {
    name: 'keys separated by commas, with or without a space',
    text: 'a.org, b.org,c.org {\n}',
    want: [sb(1, ['a.org', 'b.org', 'c.org'], [])],
  },
  {
    name: 'a lone comma between keys',
    text: 'a.org , b.org {\n}',
    want: [sb(1, ['a.org', 'b.org'], [])],
  },
  {
    name: 'a trailing comma continues the keys on the next line',
    text: 'a.org,\n  b.org,\n  c.org {\n log\n}',
    want: [sb(1, ['a.org', 'b.org', 'c.org'], [d(4, 'log')])],
  },
  {
    name: "the block's '{' may sit on the line after the keys",
    text: 'example.org\n{\n  whoami\n}',
    want: [sb(1, ['example.org'], [d(3, 'whoami')])],
  },
  {
    name: 'a single block may leave out the braces',
    text: '.:53\nerrors\nforward . 1.1.1.1\n',
    want: [sb(1, ['.:53'], [d(2, 'errors'), d(3, 'forward', ['.', '1.1.1.1'])])],
  },
  { name: 'a file of keys alone is one block without directives', text: 'example.org', want: [sb(1, ['example.org'], [])] },
  {
    name: 'several blocks in order',
    text: 'a.org {\n whoami\n}\n\nb.org:1053 {\n log\n}\n',
    want: [sb(1, ['a.org'], [d(2, 'whoami')]), sb(5, ['b.org:1053'], [d(6, 'log')])],
  },
  {
    name: 'blocks may follow each other on one line',
    text: 'a.org { whoami } b.org { log }',
    want: [sb(1, ['a.org'], [d(1, 'whoami')]), sb(1, ['b.org'], [d(1, 'log')])],
  },
  {
    name: 'nesting to any depth',
    text: '. {\n a 1 {\n  b 2 {\n   c 3 {\n    d 4\n   }\n  }\n }\n}',
    want: [sb(1, ['.'], [d(2, 'a', ['1'], [d(3, 'b', ['2'], [d(4, 'c', ['3'], [d(5, 'd', ['4'])])])])])],
  },
  {
    name: 'an empty nested block is kept (distinct from no block)',
    text: '. {\n health {\n }\n ready\n}',
    want: [sb(1, ['.'], [d(2, 'health', [], []), d(4, 'ready')])],
  },
  {
    name: 'a nested block on one line',
    text: '. {\n health { lameduck 5s }\n ready\n}',
    want: [sb(1, ['.'], [d(2, 'health', [], [d(2, 'lameduck', ['5s'])]), d(3, 'ready')])],
  },
  {
    name: 'lines inside a block that are data, not options, are directives too',
    text: '. {\n hosts {\n  10.0.0.1 a.example b.example\n  fallthrough\n }\n}',
    want: [sb(1, ['.'], [d(2, 'hosts', [], [d(3, '10.0.0.1', ['a.example', 'b.example']), d(4, 'fallthrough')])])],
  },
  {
    name: 'quoted arguments keep spaces; \\" is a quote; other backslashes stay',
    text: '. {\n template "a b" "say \\"hi\\"" "(.*)\\.example" ""\n}',
    want: [sb(1, ['.'], [d(2, 'template', ['a b', 'say "hi"', '(.*)\\.example', ''])])],
  },
  {
    name: 'a quote inside a word is an ordinary character',
    text: '. {\n dir a"b c\n}',
    want: [sb(1, ['.'], [d(2, 'dir', ['a"b', 'c'])])],
  },
  {
    name: 'a quoted argument spanning lines: later args record their own line',
    text: '. {\n dir "one\ntwo" three\n next\n}',
    want: [sb(1, ['.'], [{ file: 'Corefile', line: 2, name: 'dir', args: ['one\ntwo', 'three'], argLines: [2, 3] }, d(4, 'next')])],
  },
  {
    name: 'comments: whole lines, after words, not inside quotes',
    text: '# header\n. { # after the brace\n log # trailing\n dir "a # b" c#d e\n # inside\n}',
    want: [sb(2, ['.'], [d(3, 'log'), d(4, 'dir', ['a # b', 'c'])])],
  },
  {
    name: 'CRLF line endings',
    text: '. {\r\n  errors\r\n  cache 30\r\n}\r\n',
    want: [sb(1, ['.'], [d(2, 'errors'), d(3, 'cache', ['30'])])],
  },
  {
    name: 'a quoted brace is a word, not a block',
    text: '. {\n dir "{" "}"\n}',
    want: [sb(1, ['.'], [d(2, 'dir', ['{', '}'])])],
  },
  {
    name: '"import" that is not the first word of a line is an argument',
    text: '. {\n dir import x\n}',
    want: [sb(1, ['.'], [d(2, 'dir', ['import', 'x'])])],
  },
  {
    name: 'names and keys keep their case as written',
    text: 'Example.ORG {\n Forward . 1.1.1.1\n}',
    want: [sb(1, ['Example.ORG'], [d(2, 'Forward', ['.', '1.1.1.1'])])],
  },
  {
    name: 'the same zone on different ports is fine',
    text: 'example.org {\n}\nexample.org:1053 {\n}',
    want: [sb(1, ['example.org'], []), sb(3, ['example.org:1053'], [])],
  },
  {
    name: 'the same zone bound to different addresses is fine',
    text: 'example.org {\n bind 127.0.0.1\n}\nexample.org {\n bind 127.0.0.2\n}',
    want: [sb(1, ['example.org'], [d(2, 'bind', ['127.0.0.1'])]), sb(4, ['example.org'], [d(5, 'bind', ['127.0.0.2'])])],
  },
  {
    name: 'the same zone on different transports is fine',
    text: 'example.org {\n}\ntls://example.org {\n}',
    want: [sb(1, ['example.org'], []), sb(3, ['tls://example.org'], [])],
  },
];

describe('parseCorefile: valid Corefiles', () => {
  for (const c of validCases) {
    it(c.name, () => {
      assert.deepEqual(parse(c.text, c.env ? { env: c.env } : {}), c.want);
    });
  }
});

const envCases: ValidCase[] = [
  {
    name: '{$VAR} in keys and arguments',
    text: '{$ZONE}:{$PORT} {\n forward . {$UPSTREAM}\n}',
    env: { ZONE: 'cluster.local', PORT: '1053', UPSTREAM: '10.0.0.10' },
    want: [sb(1, ['cluster.local:1053'], [d(2, 'forward', ['.', '10.0.0.10'])])],
  },
  {
    name: 'the Windows form {%VAR%} and {env.VAR}',
    text: '. {\n dir {%A%} {env.B} x{$A}y\n}',
    env: { A: 'one', B: 'two' },
    want: [sb(1, ['.'], [d(2, 'dir', ['one', 'two', 'xoney'])])],
  },
  {
    name: 'an unset variable becomes empty, as in CoreDNS',
    text: '. {\n dir {$UNSET} a{$UNSET}b\n}',
    want: [sb(1, ['.'], [d(2, 'dir', ['', 'ab'])])],
  },
  {
    name: 'substitution also happens inside quotes',
    text: '. {\n dir "Test {$X} test"\n}',
    env: { X: 'foobar' },
    want: [sb(1, ['.'], [d(2, 'dir', ['Test foobar test'])])],
  },
  {
    name: 'a value with spaces stays one argument',
    text: '. {\n dir {$X} end\n}',
    env: { X: 'a b c' },
    want: [sb(1, ['.'], [d(2, 'dir', ['a b c', 'end'])])],
  },
  {
    name: 'a value that is a brace is text, never a block',
    text: '. {\n dir {$OPEN}\n}',
    env: { OPEN: '{' },
    want: [sb(1, ['.'], [d(2, 'dir', ['{'])])],
  },
  {
    name: 'malformed references are left as written',
    text: '. {\n dir {$} {%A} {$A\n}',
    env: { A: 'x' },
    want: [sb(1, ['.'], [d(2, 'dir', ['{$}', '{%A}', '{$A'])])],
  },
  {
    name: 'a value is not expanded again',
    text: '. {\n dir {$A}\n}',
    env: { A: '{$B}', B: 'no' },
    want: [sb(1, ['.'], [d(2, 'dir', ['{$B}'])])],
  },
];

describe('parseCorefile: environment substitution', () => {
  for (const c of envCases) {
    it(c.name, () => {
      assert.deepEqual(parse(c.text, { env: c.env ?? {} }), c.want);
    });
  }

  it('defaults to process.env', () => {
    process.env.KDNS_COREFILE_TEST_ZONE = 'from-process.example';
    try {
      const blocks = parseCorefile('{$KDNS_COREFILE_TEST_ZONE} {\n}', { file: 'Corefile' });
      assert.deepEqual(blocks[0]?.keys, ['from-process.example']);
    } finally {
      delete process.env.KDNS_COREFILE_TEST_ZONE;
    }
  });
});

const snippetCases: ValidCase[] = [
  {
    name: 'a snippet is replayed where it is imported, with its own lines',
    text: '(common) {\n errors\n cache 30\n}\na.org {\n import common\n log\n}\nb.org {\n import common\n}',
    want: [
      sb(5, ['a.org'], [d(2, 'errors'), d(3, 'cache', ['30']), d(7, 'log')]),
      sb(9, ['b.org'], [d(2, 'errors'), d(3, 'cache', ['30'])]),
    ],
  },
  {
    name: 'a snippet with a nested block',
    text: '(fwd) {\n forward . 1.1.1.1 {\n  max_concurrent 10\n }\n}\n. {\n import fwd\n}',
    want: [sb(6, ['.'], [d(2, 'forward', ['.', '1.1.1.1'], [d(3, 'max_concurrent', ['10'])])])],
  },
  {
    name: 'a snippet imported inside a nested block',
    text: '(opts) {\n policy sequential\n}\n. {\n forward . 1.1.1.1 {\n  import opts\n  expire 10s\n }\n}',
    want: [sb(4, ['.'], [d(5, 'forward', ['.', '1.1.1.1'], [d(2, 'policy', ['sequential']), d(7, 'expire', ['10s'])])])],
  },
  {
    name: '{args[N]} is replaced, also inside a word',
    text: '(log) {\n log {args[0]}.example {\n  class {args[1]}\n }\n}\n. {\n import log zone denial\n}',
    want: [sb(6, ['.'], [d(2, 'log', ['zone.example'], [d(3, 'class', ['denial'])])])],
  },
  {
    name: '{args[:]} spreads every argument into words',
    text: '(fwd) {\n forward . {args[:]}\n}\n. {\n import fwd 1.1.1.1 "8.8.8.8"\n}',
    want: [sb(4, ['.'], [d(2, 'forward', ['.', '1.1.1.1', '8.8.8.8'])])],
  },
  {
    name: '{args[1:]} and {args[:1]} spread a slice',
    text: '(s) {\n first {args[:1]}\n rest {args[1:]}\n}\n. {\n import s a b c\n}',
    want: [sb(5, ['.'], [d(2, 'first', ['a']), d(3, 'rest', ['b', 'c'])])],
  },
  {
    name: 'an empty spread leaves the rest of the line as a directive of its own',
    text: '(s) {\n errors\n {args[:]} log\n}\n. {\n import s\n}',
    want: [sb(5, ['.'], [d(2, 'errors'), d(3, 'log')])],
  },
  {
    name: 'a snippet passes its arguments on to a snippet it imports',
    text: '(inner) {\n forward . {args[0]}\n}\n(outer) {\n import inner {args[1]}\n}\n. {\n import outer x 9.9.9.9\n}',
    want: [sb(7, ['.'], [d(2, 'forward', ['.', '9.9.9.9'])])],
  },
  {
    name: 'a snippet imported at the top level can make whole server blocks',
    text: '(site) {\n{args[0]} {\n whoami\n}\n}\nimport site a.org\nimport site b.org',
    want: [sb(2, ['a.org'], [d(3, 'whoami')]), sb(2, ['b.org'], [d(3, 'whoami')])],
  },
  {
    name: 'a placeholder outside any import is left as written (CoreDNS has no placeholders)',
    text: '. {\n dir {args[0]}\n}',
    want: [sb(1, ['.'], [d(2, 'dir', ['{args[0]}'])])],
  },
  {
    name: 'a snippet defined after a block is usable below its definition',
    text: 'a.org {\n}\n(s) {\n log\n}\nb.org {\n import s\n}',
    want: [sb(1, ['a.org'], []), sb(6, ['b.org'], [d(4, 'log')])],
  },
];

describe('parseCorefile: snippets', () => {
  for (const c of snippetCases) {
    it(c.name, () => {
      assert.deepEqual(parse(c.text), c.want);
    });
  }
});

interface ImportCase {
  name: string;
  /** Files under a fresh temp folder; "Corefile" is the main one. `${dir}` is replaced by that folder. */
  files: Record<string, string>;
  want: (dir: string) => ServerBlock[];
}

const importCases: ImportCase[] = [
  {
    name: 'a file of directives imported into a block; its lines name that file',
    files: {
      Corefile: '. {\n import common.conf\n log\n}',
      'common.conf': 'errors\ncache 30\n',
    },
    want: () => [sb(1, ['.'], [...inFile('common.conf', [d(1, 'errors'), d(2, 'cache', ['30'])]), d(3, 'log')])],
  },
  {
    name: 'a file of whole server blocks imported at the top level',
    files: {
      Corefile: 'import zones/extra.server\n. {\n whoami\n}',
      'zones/extra.server': 'example.org {\n  log\n}\n',
    },
    want: () => [sb(1, ['example.org'], inFile('zones/extra.server', [d(2, 'log')]), 'zones/extra.server'), sb(2, ['.'], [d(3, 'whoami')])],
  },
  {
    name: 'a glob imports every match in name order and skips folders and non-matches',
    files: {
      Corefile: 'import conf.d/*.server',
      'conf.d/b.server': 'b.org {\n}',
      'conf.d/a.server': 'a.org {\n}',
      'conf.d/notes.txt': 'not { a corefile',
      'conf.d/sub.server/x': 'ignored {\n}',
    },
    want: () => [sb(1, ['a.org'], [], 'conf.d/a.server'), sb(1, ['b.org'], [], 'conf.d/b.server')],
  },
  {
    name: 'a glob with no match imports nothing',
    files: { Corefile: 'import nothing/*.server\n. {\n}' },
    want: () => [sb(2, ['.'], [])],
  },
  {
    name: 'a wildcard in a folder component',
    files: {
      Corefile: 'import sites/*/zone.server',
      'sites/one/zone.server': 'one.org {\n}',
      'sites/two/zone.server': 'two.org {\n}',
    },
    want: () => [sb(1, ['one.org'], [], 'sites/one/zone.server'), sb(1, ['two.org'], [], 'sites/two/zone.server')],
  },
  {
    name: "an imported file's relative imports start from its own folder",
    files: {
      Corefile: '. {\n import conf/outer.conf\n}',
      'conf/outer.conf': 'import inner.conf\nlog',
      'conf/inner.conf': 'errors',
    },
    want: () => [sb(1, ['.'], [...inFile('conf/inner.conf', [d(1, 'errors')]), ...inFile('conf/outer.conf', [d(2, 'log')])])],
  },
  {
    name: 'an absolute import is named by its absolute path',
    files: {
      Corefile: '. {\n import ${dir}/abs.conf\n}',
      'abs.conf': 'whoami',
    },
    want: (dir) => [sb(1, ['.'], inFile(join(dir, 'abs.conf'), [d(1, 'whoami')]))],
  },
  {
    name: 'arguments to a file import fill its placeholders',
    files: {
      Corefile: '. {\n import fwd.conf 10.0.0.1 10.0.0.2\n}',
      'fwd.conf': 'forward . {args[:]}\n',
    },
    want: () => [sb(1, ['.'], inFile('fwd.conf', [d(1, 'forward', ['.', '10.0.0.1', '10.0.0.2'])]))],
  },
  {
    name: 'a snippet defined in an imported file keeps its placeholders for its own imports',
    files: {
      Corefile: 'import snippets.conf\n. {\n import fwd 9.9.9.9\n}',
      'snippets.conf': '(fwd) {\n forward . {args[0]}\n}\n',
    },
    want: () => [sb(2, ['.'], inFile('snippets.conf', [d(2, 'forward', ['.', '9.9.9.9'])]))],
  },
  {
    name: 'a snippet defined in the Corefile is usable from an imported file',
    files: {
      Corefile: '(common) {\n errors\n}\nimport site.server',
      'site.server': 'example.org {\n import common\n}',
    },
    want: () => [sb(1, ['example.org'], [d(2, 'errors')], 'site.server')],
  },
  {
    name: 'the same file imported twice (no cycle)',
    files: {
      Corefile: 'a.org {\n import c.conf\n}\nb.org {\n import c.conf\n}',
      'c.conf': 'log',
    },
    want: () => [sb(1, ['a.org'], inFile('c.conf', [d(1, 'log')])), sb(4, ['b.org'], inFile('c.conf', [d(1, 'log')]))],
  },
];

function writeTree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-corefile-'));
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text.replaceAll('${dir}', dir));
  }
  return dir;
}

function parseTree(dir: string, opts: Partial<ParseOptions> = {}): ServerBlock[] {
  return parseCorefile(readFileSync(join(dir, 'Corefile'), 'utf8'), { file: 'Corefile', baseDir: dir, env: {}, ...opts });
}

describe('parseCorefile: imports', () => {
  for (const c of importCases) {
    it(c.name, () => {
      const dir = writeTree(c.files);
      assert.deepEqual(parseTree(dir), c.want(dir));
    });
  }

  it('reads and lists through the injected readFile and listDir', () => {
    const files: Record<string, string> = { '/virtual/conf.d/a.conf': 'log', '/virtual/conf.d/b.conf': 'errors' };
    const readFile = (p: string): string => {
      const text = files[p];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
      return text;
    };
    const listDir = (p: string): string[] => (p === '/virtual/conf.d' ? ['b.conf', 'a.conf'] : []);
    const blocks = parseCorefile('. {\n import conf.d/*.conf\n}', { file: 'Corefile', baseDir: '/virtual', env: {}, readFile, listDir });
    assert.deepEqual(blocks, [sb(1, ['.'], [...inFile('conf.d/a.conf', [d(1, 'log')]), ...inFile('conf.d/b.conf', [d(1, 'errors')])])]);
  });

  it('the import pattern takes environment variables', () => {
    const dir = writeTree({ Corefile: '. {\n import {$CONF}/x.conf\n}', 'sub/x.conf': 'whoami' });
    assert.deepEqual(parseTree(dir, { env: { CONF: 'sub' } }), [sb(1, ['.'], inFile('sub/x.conf', [d(1, 'whoami')]))]);
  });
});

interface ErrorCase {
  name: string;
  text: string;
  env?: Record<string, string>;
  defaultPort?: number;
  want: string;
}

const errorCases: ErrorCase[] = [
  { name: "a '}' with no block open", text: '. {\n log\n}\n}', want: "Corefile:4: unexpected '}' (no block is open here)" },
  { name: "a '}' right after the keys", text: 'a.org }', want: "Corefile:1: unexpected '}' (no block is open here)" },
  { name: "a '}' in a brace-less block", text: '.\nlog\n}', want: "Corefile:3: unexpected '}' (no block is open here)" },
  { name: 'an unclosed server block', text: '. {\n log\n', want: "Corefile:1: unclosed '{' (opened here, no matching '}')" },
  {
    name: 'an unclosed nested block names its own line',
    text: '. {\n log\n forward . 1.1.1.1 {\n  max_concurrent 1\n',
    want: "Corefile:3: unclosed '{' (opened here, no matching '}')",
  },
  { name: 'an unclosed snippet', text: '(s) {\n log\n', want: "Corefile:1: unclosed '{' (opened here, no matching '}')" },
  { name: "a '{' without keys", text: '{\n log\n}', want: "Corefile:1: unexpected '{': a server block needs its keys before the '{'" },
  {
    name: "a '{' on the line after its directive",
    text: '. {\n forward . 1.1.1.1\n {\n  max_concurrent 1\n }\n}',
    want: "Corefile:3: unexpected '{': a block must open at the end of the line of the directive it belongs to",
  },
  {
    name: "words after a block's '}'",
    text: '. {\n health { lameduck 5s } ready\n}',
    want: `Corefile:2: unexpected "ready" after the '}' that closes a block (start a new line)`,
  },
  { name: 'braces glued together', text: '. {\n forward . 1.1.1.1 {\n }}\n', want: 'Corefile:3: "}}" is read as one word: separate braces with spaces' },
  {
    name: 'a second server block without a body',
    text: 'a.org {\n}\nb.org\n',
    want: `Corefile:3: server block "b.org" has no body: expected '{' after its keys`,
  },
  { name: 'a snippet without a body', text: '(s)\n', want: `Corefile:1: snippet "(s)" needs a body: expected '{' after its name` },
  { name: 'a snippet without a name', text: '() {\n}', want: 'Corefile:1: a snippet needs a name: (name) { ... }' },
  { name: 'a snippet defined twice', text: '(s) {\n}\n\n(s) {\n}', want: 'Corefile:4: snippet "s" is already defined (at Corefile:1)' },
  {
    name: 'an unknown snippet',
    text: '. {\n import common\n}',
    want: 'Corefile:2: import: unknown snippet "common", and no file of that name (a snippet must be defined before it is imported)',
  },
  {
    name: 'a snippet used above its definition',
    text: '. {\n import late\n}\n(late) {\n log\n}',
    want: 'Corefile:2: import: unknown snippet "late", and no file of that name (a snippet must be defined before it is imported)',
  },
  { name: 'an import without a pattern', text: '. {\n import\n}', want: 'Corefile:2: import needs a file, a glob pattern or a snippet name' },
  { name: 'an import of an unset variable', text: '. {\n import {$NOPE}\n}', want: 'Corefile:2: import: the pattern is empty (an unset environment variable?)' },
  {
    name: 'a missing file',
    text: '. {\n import conf.d/missing.conf\n}',
    want: 'Corefile:2: import: file not found: conf.d/missing.conf',
  },
  { name: 'a bad glob', text: '. {\n import conf.d/[ab.conf\n}', want: `Corefile:2: import: bad glob pattern: unclosed '[' in "[ab.conf"` },
  {
    name: 'an unterminated quote',
    text: '. {\n dir "abc\n}\n',
    want: 'Corefile:2: unterminated quoted string (the quote opened here is never closed)',
  },
  { name: 'an empty key from an unset variable', text: '{$ZONE} {\n}', want: 'Corefile:1: empty server block key (an unset environment variable, or a stray comma?)' },
  { name: 'an empty quoted key', text: 'a.org "" {\n}', want: 'Corefile:1: empty server block key (an unset environment variable, or a stray comma?)' },
  { name: 'two commas in a row', text: 'a.org,,b.org {\n}', want: 'Corefile:1: empty server block key (an unset environment variable, or a stray comma?)' },
  { name: "a trailing comma before '{'", text: 'a.org, {\n}', want: "Corefile:1: expected another key after ',' but found '{'" },
  { name: 'a trailing comma at the end of the file', text: 'a.org,', want: "Corefile:1: expected another key after ','" },
  { name: 'a bad port', text: 'example.org:abc {\n}', want: 'Corefile:1: invalid server block key "example.org:abc": bad port "abc"' },
  { name: 'a port out of range', text: 'example.org:70000 {\n}', want: 'Corefile:1: invalid server block key "example.org:70000": port 70000 is out of range (0-65535)' },
  {
    name: 'an unknown scheme',
    text: 'a.org {\n}\nudp://example.org {\n}',
    want: 'Corefile:3: invalid server block key "udp://example.org": unknown scheme "udp://" (use dns://, tls://, https://, grpc:// or quic://)',
  },
  { name: 'an invalid CIDR', text: '10.0.0.0/33 {\n}', want: 'Corefile:1: invalid server block key "10.0.0.0/33": invalid CIDR "10.0.0.0/33"' },
  {
    name: 'a key on a continuation line names its own line',
    text: 'a.org,\n b_c!.org {\n}',
    want: 'Corefile:2: invalid server block key "b_c!.org": invalid character "!" in zone "b_c!.org"',
  },
  {
    name: 'the same zone twice',
    text: 'example.org {\n}\n\nexample.org {\n}',
    want: 'Corefile:4: cannot serve dns://example.org.:53 - it is already defined (first at Corefile:1)',
  },
  {
    name: 'the same zone twice, spelled differently',
    text: 'Example.ORG. {\n}\ndns://example.org:53 {\n}',
    want: 'Corefile:3: cannot serve dns://example.org.:53 - it is already defined (first at Corefile:1)',
  },
  {
    name: 'the root zone with and without the default port',
    text: '.:1053 {\n}\n. {\n}',
    defaultPort: 1053,
    want: 'Corefile:3: cannot serve dns://.:1053 - it is already defined (first at Corefile:1)',
  },
  {
    name: 'a CIDR key and its reverse zone',
    text: '10.0.0.0/24 {\n}\n0.0.10.in-addr.arpa {\n}',
    want: 'Corefile:3: cannot serve dns://0.0.10.in-addr.arpa.:53 - it is already defined (first at Corefile:1)',
  },
  {
    name: 'the same zone bound to the same address',
    text: 'a.org {\n bind 127.0.0.1\n}\na.org {\n bind 127.0.0.1\n}',
    want: 'Corefile:4: cannot serve dns://a.org.:53 on 127.0.0.1 - it is already defined (first at Corefile:1)',
  },
  { name: 'a zone twice in one block', text: 'a.org a.org {\n}', want: 'Corefile:1: cannot serve dns://a.org.:53 - it is already defined (first at Corefile:1)' },
  {
    name: 'a placeholder beyond the arguments passed',
    text: '(s) {\n forward . {args[1]}\n}\n. {\n import s 1.1.1.1\n}',
    want: 'Corefile:2: placeholder {args[1]} is out of range: the import passes 1 argument (imported at Corefile:5)',
  },
  {
    name: 'a spread beyond the arguments passed',
    text: '(s) {\n forward . {args[2:]}\n}\n. {\n import s\n}',
    want: 'Corefile:2: placeholder {args[2:]} is out of range: the import passes 0 arguments (imported at Corefile:5)',
  },
  {
    name: 'a spread inside a word',
    text: '(s) {\n forward x{args[:]}\n}\n. {\n import s a\n}',
    want: 'Corefile:2: placeholder {args[:]} expands to several words, so it must be a word on its own',
  },
  { name: 'a snippet importing itself', text: '(loop) {\n import loop\n}\n. {\n import loop\n}', want: 'Corefile:2: import cycle: (loop) -> (loop)' },
  {
    name: 'snippets importing each other',
    text: '(a) {\n import b\n}\n(b) {\n import a\n}\n. {\n import a\n}',
    want: 'Corefile:5: import cycle: (a) -> (b) -> (a)',
  },
  {
    name: 'an import fan-out that would explode',
    text: [
      '(s0) {\n log\n}',
      ...Array.from({ length: 14 }, (_, k) => `(s${k + 1}) {\n import s${k}\n import s${k}\n}`),
      '. {\n import s14\n}',
    ].join('\n'),
    // The 10001st expansion is one of s2's imports of s1.
    want: 'Corefile:9: too many imports (more than 10000): do snippets import each other?',
  },
];

describe('parseCorefile: errors', () => {
  for (const c of errorCases) {
    it(c.name, () => {
      const opts: Partial<ParseOptions> = { env: c.env ?? {} };
      if (c.defaultPort !== undefined) opts.defaultPort = c.defaultPort;
      assert.equal(errorOf(() => parse(c.text, opts)), c.want);
    });
  }
});

interface ImportErrorCase {
  name: string;
  files: Record<string, string>;
  want: (dir: string) => string;
}

const importErrorCases: ImportErrorCase[] = [
  {
    name: 'a file importing the Corefile back',
    files: { Corefile: '. {\n import a.conf\n}', 'a.conf': 'log\nimport Corefile\n' },
    want: () => 'a.conf:2: import cycle: Corefile -> a.conf -> Corefile',
  },
  {
    name: 'the Corefile importing itself',
    files: { Corefile: '. {\n import Corefile\n}' },
    want: () => 'Corefile:2: import cycle: Corefile -> Corefile',
  },
  {
    name: 'a cycle through a glob',
    files: { Corefile: 'import d/*.conf', 'd/a.conf': 'import b.conf', 'd/b.conf': 'import a.conf' },
    want: () => 'd/b.conf:1: import cycle: d/a.conf -> d/b.conf -> d/a.conf',
  },
  {
    name: 'an error inside an imported file names that file and line',
    files: { Corefile: 'import site.server', 'site.server': '# site\nexample.org {\n log\n' },
    want: () => "site.server:2: unclosed '{' (opened here, no matching '}')",
  },
  {
    name: 'importing a folder',
    files: { Corefile: '. {\n import conf.d\n}', 'conf.d/x': 'log' },
    want: () => 'Corefile:2: import: conf.d is a directory (import conf.d/* for the files in it)',
  },
  {
    name: 'a missing file by absolute path',
    files: { Corefile: '. {\n import ${dir}/nope.conf\n}' },
    want: (dir) => `Corefile:2: import: file not found: ${join(dir, 'nope.conf')}`,
  },
];

describe('parseCorefile: import errors', () => {
  for (const c of importErrorCases) {
    it(c.name, () => {
      const dir = writeTree(c.files);
      assert.equal(errorOf(() => parseTree(dir)), c.want(dir));
    });
  }
});
