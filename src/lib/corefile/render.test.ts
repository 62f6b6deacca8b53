import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCorefile } from './parser.js';
import { quoteWord, renderCorefile, toRenderBlocks, type RenderBlock } from './render.js';

function reparse(text: string): RenderBlock[] {
  return toRenderBlocks(parseCorefile(text, { file: 'Corefile', env: {} }));
}

const KUBERNETES: RenderBlock[] = [
  {
    keys: ['.:53'],
    directives: [
      { name: 'errors', args: [] },
      { name: 'health', args: [], block: [{ name: 'lameduck', args: ['5s'] }] },
      { name: 'ready', args: [] },
      {
        name: 'kubernetes',
        args: ['cluster.local', 'in-addr.arpa', 'ip6.arpa'],
        block: [
          { name: 'pods', args: ['insecure'] },
          { name: 'fallthrough', args: ['in-addr.arpa', 'ip6.arpa'] },
          { name: 'ttl', args: ['30'] },
        ],
      },
      { name: 'prometheus', args: [':9153'] },
      { name: 'forward', args: ['.', '/etc/resolv.conf'], block: [{ name: 'max_concurrent', args: ['1000'] }] },
      { name: 'cache', args: ['30'] },
      { name: 'loop', args: [] },
      { name: 'reload', args: [] },
      { name: 'loadbalance', args: [] },
    ],
  },
];

const KUBERNETES_TEXT = `.:53 {
\terrors
\thealth {
\t\tlameduck 5s
\t}
\tready
\tkubernetes cluster.local in-addr.arpa ip6.arpa {
\t\tpods insecure
\t\tfallthrough in-addr.arpa ip6.arpa
\t\tttl 30
\t}
\tprometheus :9153
\tforward . /etc/resolv.conf {
\t\tmax_concurrent 1000
\t}
\tcache 30
\tloop
\treload
\tloadbalance
}
`;

describe('renderCorefile', () => {
  it('prints the stock Kubernetes Corefile with tabs', () => {
    assert.equal(renderCorefile(KUBERNETES), KUBERNETES_TEXT);
  });

  it('separates blocks with a blank line and prints an empty block', () => {
    const text = renderCorefile([
      { keys: ['a.org', 'b.org:1053'], directives: [{ name: 'health', args: [], block: [] }] },
      { keys: ['.'], directives: [] },
    ]);
    assert.equal(text, 'a.org b.org:1053 {\n\thealth {\n\t}\n}\n\n. {\n}\n');
  });

  it('prints nothing for no blocks', () => {
    assert.equal(renderCorefile([]), '');
  });

  const refused: Array<{ name: string; blocks: RenderBlock[]; want: string }> = [
    { name: 'a block without keys', blocks: [{ keys: [], directives: [] }], want: 'cannot write a server block without keys' },
    { name: 'a key with a comma', blocks: [{ keys: ['a,b'], directives: [] }], want: 'cannot write server block key "a,b"' },
    { name: 'a key that reads as a snippet', blocks: [{ keys: ['(x)'], directives: [] }], want: 'cannot write server block key "(x)"' },
    {
      name: 'a word that quoting cannot express',
      blocks: [{ keys: ['.'], directives: [{ name: 'dir', args: ['a b\\'] }] }],
      want: 'cannot write "a b\\\\" in a Corefile: it needs quotes, and a backslash before a quote or at the end cannot be quoted',
    },
  ];
  for (const c of refused) {
    it(`refuses ${c.name}`, () => {
      assert.throws(() => renderCorefile(c.blocks), { message: c.want });
    });
  }
});

describe('quoteWord', () => {
  const cases: Array<[string, string]> = [
    ['plain', 'plain'],
    ['/etc/resolv.conf', '/etc/resolv.conf'],
    ['a\\b', 'a\\b'],
    ['', '""'],
    ['a b', '"a b"'],
    ['tab\there', '"tab\there"'],
    ['#x', '"#x"'],
    ['a#b', '"a#b"'],
    ['"x', '"\\"x"'],
    ['a"b', '"a\\"b"'],
    ['{', '"{"'],
    ['}', '"}"'],
    ['{{ .Name }}', '"{{ .Name }}"'],
    ['(.*)\\.example', '(.*)\\.example'],
  ];
  for (const [word, want] of cases) {
    it(JSON.stringify(word), () => {
      assert.equal(quoteWord(word), want);
    });
  }
});

const roundTrips: Array<{ name: string; blocks: RenderBlock[] }> = [
  { name: 'the stock Kubernetes Corefile', blocks: KUBERNETES },
  {
    name: 'words that need quotes',
    blocks: [
      {
        keys: ['example.org:1053'],
        directives: [
          { name: 'template', args: ['IN', 'A', '{{ .Name }} 60 IN A 10.0.0.1', '', 'say "hi"', '#not-a-comment', '{', '}', 'two\nlines', 'nb\u00a0sp'] },
          { name: 'rewrite', args: ['name', 'regex', '(.*)\\.old\\.org', '{1}.new.org'] },
        ],
      },
    ],
  },
  {
    name: 'deep nesting, empty blocks and several blocks',
    blocks: [
      { keys: ['a.org', 'b.org'], directives: [{ name: 'x', args: ['1'], block: [{ name: 'y', args: [], block: [{ name: 'z', args: ['2'], block: [] }] }] }] },
      { keys: ['10.0.0.0/24', 'tls://c.org:853'], directives: [] },
      { keys: ['.'], directives: [{ name: 'hosts', args: [], block: [{ name: '10.0.0.1', args: ['a.example'] }, { name: 'fallthrough', args: [] }] }] },
    ],
  },
];

describe('parse(render(x)) gives back x', () => {
  for (const c of roundTrips) {
    it(c.name, () => {
      assert.deepEqual(reparse(renderCorefile(c.blocks)), c.blocks);
    });
  }

  it('render(parse(text)) is canonical: rendering it again changes nothing', () => {
    const messy = '.:53   {\n  errors # log errors\n    health {   lameduck 5s }\n cache 30\n}\nexample.org, b.org\n{\n log\n}';
    const once = renderCorefile(reparse(messy));
    assert.equal(once, '.:53 {\n\terrors\n\thealth {\n\t\tlameduck 5s\n\t}\n\tcache 30\n}\n\nexample.org b.org {\n\tlog\n}\n');
    assert.equal(renderCorefile(reparse(once)), once);
  });
});
