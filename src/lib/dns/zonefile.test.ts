import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rrToString } from './rr.js';
import { parseTtlText, parseZoneFile, ZoneFileError } from './zonefile.js';

const SOA = '@ 3600 IN SOA ns.example.org. admin.example.org. 1 7200 3600 1209600 300';

/** The records of `text` (origin example.org.) as dig-like lines, tab-separated. */
function records(text: string, includes: Record<string, string> = {}): string[] {
  return parseZoneFile(text, {
    origin: 'example.org.',
    file: 'db.example.org',
    readInclude: (path) => {
      const found = includes[path];
      if (found === undefined) throw new Error('no such file');
      return { text: found, file: path };
    },
  }).map((e) => rrToString(e.rr).replaceAll('\t', ' '));
}

test('zone file: what parses', () => {
  const cases: Array<{ name: string; text: string; includes?: Record<string, string>; want: string[] }> = [
    {
      name: '$ORIGIN, $TTL, @ and relative names',
      text: '$TTL 30M\n$ORIGIN example.org.\n@ IN A 10.0.0.1\nwww IN CNAME @\nsub.www A 10.0.0.2\nabs.example.com. A 10.0.0.3',
      want: ['example.org. 1800 IN A 10.0.0.1', 'www.example.org. 1800 IN CNAME example.org.', 'sub.www.example.org. 1800 IN A 10.0.0.2', 'abs.example.com. 1800 IN A 10.0.0.3'],
    },
    {
      name: 'owner omitted (leading blank) is the previous owner',
      text: 'a 60 IN A 10.0.0.1\n  IN AAAA 2001:DB8:0:0::1\n\tTXT "x"',
      want: ['a.example.org. 60 IN A 10.0.0.1', 'a.example.org. 60 IN AAAA 2001:db8::1', 'a.example.org. 60 IN TXT "x"'],
    },
    {
      name: 'without $TTL the last explicit TTL carries on (RFC 1035)',
      text: 'a 60 A 10.0.0.1\nb A 10.0.0.2\nc 70 A 10.0.0.3\nd A 10.0.0.4',
      want: ['a.example.org. 60 IN A 10.0.0.1', 'b.example.org. 60 IN A 10.0.0.2', 'c.example.org. 70 IN A 10.0.0.3', 'd.example.org. 70 IN A 10.0.0.4'],
    },
    {
      name: 'with $TTL an omitted TTL is $TTL, whatever came before',
      text: '$TTL 100\na 60 A 10.0.0.1\nb A 10.0.0.2',
      want: ['a.example.org. 60 IN A 10.0.0.1', 'b.example.org. 100 IN A 10.0.0.2'],
    },
    {
      name: 'class before TTL, and TTL units',
      text: 'a IN 1h30m A 10.0.0.1\nb 1W A 10.0.0.2\nc 2d3h A 10.0.0.3',
      want: ['a.example.org. 5400 IN A 10.0.0.1', 'b.example.org. 604800 IN A 10.0.0.2', 'c.example.org. 183600 IN A 10.0.0.3'],
    },
    {
      name: 'SOA over several lines with comments; times with units',
      text: '@ IN SOA ns admin (\n  2017042745 ; serial\n  4H ; refresh\n  1H\n  7D\n  4H ) ; minimum',
      want: ['example.org. 14400 IN SOA ns.example.org. admin.example.org. 2017042745 14400 3600 604800 14400'],
    },
    {
      name: 'MX, SRV, NS, PTR, DNAME, HINFO',
      text: '@ 60 MX 10 mail\n_http._tcp 60 SRV 0 5 80 www\n@ 60 NS ns1.example.net.\n1 60 PTR host\nold 60 DNAME new.example.net.\nh 60 HINFO "PC" Linux',
      want: [
        'example.org. 60 IN MX 10 mail.example.org.',
        '_http._tcp.example.org. 60 IN SRV 0 5 80 www.example.org.',
        'example.org. 60 IN NS ns1.example.net.',
        '1.example.org. 60 IN PTR host.example.org.',
        'old.example.org. 60 IN DNAME new.example.net.',
        'h.example.org. 60 IN HINFO "PC" "Linux"',
      ],
    },
    {
      name: 'TXT: several strings, escapes, ; and ( inside quotes, \\DDD bytes',
      text: 't 60 TXT "v=spf1 a mx ~all" "two; (three)" unquoted "say \\"hi\\"" "\\065\\255"',
      want: ['t.example.org. 60 IN TXT "v=spf1 a mx ~all" "two; (three)" "unquoted" "say \\"hi\\"" "A\\255"'],
    },
    {
      name: 'TXT over lines in parentheses',
      text: 't 60 TXT ( "part one"\n   "part two" )',
      want: ['t.example.org. 60 IN TXT "part one" "part two"'],
    },
    {
      name: 'escapes in owner names: \\. inside a label, \\DDD, case kept',
      text: 'a\\.b 60 A 10.0.0.1\nsp\\032ace 60 A 10.0.0.2\nMiXed 60 A 10.0.0.3',
      want: ['a\\.b.example.org. 60 IN A 10.0.0.1', 'sp\\032ace.example.org. 60 IN A 10.0.0.2', 'MiXed.example.org. 60 IN A 10.0.0.3'],
    },
    {
      name: '$ORIGIN relative to the current origin',
      text: '$ORIGIN sub\nx 60 A 10.0.0.1\n$ORIGIN .\ny.test 60 A 10.0.0.2',
      want: ['x.sub.example.org. 60 IN A 10.0.0.1', 'y.test. 60 IN A 10.0.0.2'],
    },
    {
      name: '$INCLUDE with and without origin; the origin comes back after it',
      text: '$INCLUDE inc.db\n$INCLUDE inc.db other.example.org.\nafter 60 A 10.0.0.9',
      includes: { 'inc.db': 'inc 60 A 10.0.0.1' },
      want: ['inc.example.org. 60 IN A 10.0.0.1', 'inc.other.example.org. 60 IN A 10.0.0.1', 'after.example.org. 60 IN A 10.0.0.9'],
    },
    {
      name: 'CAA, DS, SSHFP, TLSA, SPF and RFC 3597 generic RDATA',
      text: 'c 60 CAA 0 issue "letsencrypt.org"\nd 60 DS 60485 5 1 2BB183AF5F22588179A53B0A98631FAD1A292118\ns 60 SSHFP 1 1 0123456789abcdef\nt 60 TLSA 3 1 1 ABCD\nspf 60 SPF "v=spf1 -all"\ng 60 TYPE65280 \\# 3 ABCDEF\nz 60 TYPE65281 \\# 0',
      want: [
        'c.example.org. 60 IN CAA \\# 22 00056973737565' + Buffer.from('letsencrypt.org').toString('hex').toUpperCase(),
        'd.example.org. 60 IN DS \\# 24 EC4505012BB183AF5F22588179A53B0A98631FAD1A292118',
        's.example.org. 60 IN SSHFP \\# 10 01010123456789ABCDEF',
        't.example.org. 60 IN TLSA \\# 5 030101ABCD',
        'spf.example.org. 60 IN SPF \\# 12 0B763D73706631202D616C6C',
        'g.example.org. 60 IN TYPE65280 \\# 3 ABCDEF',
        'z.example.org. 60 IN TYPE65281 \\# 0',
      ],
    },
    {
      name: 'the SOA without any TTL takes its MINIMUM; later records carry it on',
      text: '@ SOA ns admin 1 2 3 4 300\na A 10.0.0.1',
      want: ['example.org. 300 IN SOA ns.example.org. admin.example.org. 1 2 3 4 300', 'a.example.org. 300 IN A 10.0.0.1'],
    },
    { name: 'a UTF-8 byte order mark (read as latin1) is not part of the first name', text: '\xef\xbb\xbf$TTL 60\na A 10.0.0.1', want: ['a.example.org. 60 IN A 10.0.0.1'] },
    { name: 'CRLF line ends', text: '$TTL 60\r\na A 10.0.0.1\r\n  TXT "x"\r\n', want: ['a.example.org. 60 IN A 10.0.0.1', 'a.example.org. 60 IN TXT "x"'] },
    { name: 'comments and blank lines only', text: '; nothing\n\n   ; still nothing\n', want: [] },
    { name: 'a name that looks like a type still works as owner', text: 'a 60 A 10.0.0.1\nmx 60 MX 10 a', want: ['a.example.org. 60 IN A 10.0.0.1', 'mx.example.org. 60 IN MX 10 a.example.org.'] },
  ];
  for (const c of cases) assert.deepEqual(records(c.text, c.includes), c.want, c.name);
});

test('zone file: errors name the file and line', () => {
  const cases: Array<{ text: string; error: string; includes?: Record<string, string> }> = [
    { text: `${SOA}\nwww 60 IN AA 10.0.0.1`, error: 'db.example.org:2: unknown record type "AA"' },
    { text: `${SOA}\n\nwww 60 IN A 10.0.0.300`, error: 'db.example.org:3: invalid IPv4 address "10.0.0.300"' },
    { text: `${SOA}\nwww 60 IN AAAA 10.0.0.1`, error: 'db.example.org:2: invalid IPv6 address "10.0.0.1"' },
    { text: 'www 60 IN A', error: 'db.example.org:1: A needs an IPv4 address, got 0 field(s)' },
    { text: 'www 60 IN A 10.0.0.1 10.0.0.2', error: 'db.example.org:1: A needs an IPv4 address, got 2 field(s)' },
    { text: 'www 60 CH A 10.0.0.1', error: 'db.example.org:1: class CH is not supported (only IN)' },
    { text: '  60 A 10.0.0.1', error: 'db.example.org:1: record without an owner name, and no earlier record to take it from' },
    { text: '@ IN SOA ns admin (\n 1 2 3 4 5', error: 'db.example.org:1: unbalanced "(": no closing ")"' },
    { text: 'a 60 A 10.0.0.1 )', error: 'db.example.org:1: unbalanced ")"' },
    { text: 'a 60 TXT "open', error: 'db.example.org:1: unterminated quoted string' },
    { text: `a 60 TXT "${'x'.repeat(256)}"`, error: 'db.example.org:1: character-string of 256 octets (at most 255)' },
    { text: 'a..b 60 A 10.0.0.1', error: 'db.example.org:1: invalid domain name "a..b": empty label at offset 2' },
    { text: `${'x'.repeat(64)} 60 A 10.0.0.1`, error: 'db.example.org:1: invalid domain name "' + 'x'.repeat(64) + '": label longer than 63 octets at offset 63' },
    { text: 'a 60 MX 70000 b', error: 'db.example.org:1: invalid MX preference "70000" (an integer from 0 to 65535)' },
    { text: 'a 60 SRV 1 2 b', error: 'db.example.org:1: SRV needs PRIORITY WEIGHT PORT TARGET, got 3 field(s)' },
    { text: '@ SOA ns admin 1 2 3 4', error: 'db.example.org:1: SOA needs MNAME RNAME SERIAL REFRESH RETRY EXPIRE MINIMUM, got 6 field(s)' },
    { text: '@ SOA ns admin 1 2x 3 4 5', error: 'db.example.org:1: invalid SOA refresh "2x"' },
    { text: 'a 4294967295 A 10.0.0.1', error: 'db.example.org:1: TTL 4294967295 is above 2147483647 (RFC 2181)' },
    { text: '$TTL soon', error: 'db.example.org:1: invalid $TTL "soon"' },
    { text: '$ORIGIN', error: 'db.example.org:1: $ORIGIN needs one domain name' },
    { text: '$GENERATE 1-10 host$ A 10.0.0.$', error: 'db.example.org:1: $GENERATE is not supported by kdns' },
    { text: '$FOO bar', error: 'db.example.org:1: unknown directive "$FOO"' },
    { text: 'a 60 RRSIG A 8 2 60 20170112031301 20161213031301 53289 example.org. AAAA', error: 'db.example.org:1: record type RRSIG is not supported in zone files by kdns (write its RDATA in the RFC 3597 form "\\# LENGTH HEX")' },
    { text: 'a 60 A \\# 4 0A000001', error: 'db.example.org:1: write A RDATA in its own syntax, not "\\#"' },
    { text: 'a 60 TYPE65280 \\# 3 ABCD', error: 'db.example.org:1: RFC 3597 RDATA says 3 octets but has 2' },
    { text: 'a 60 DS 1 2 3 XYZ', error: 'db.example.org:1: invalid DS digest: "XYZ" is not an even number of hex digits' },
    { text: 'a 60 AXFR x', error: 'db.example.org:1: AXFR cannot appear in a zone file' },
    { text: 'a 60 A 10.0.0.1\n$INCLUDE missing.db', error: 'db.example.org:2: $INCLUDE missing.db: no such file' },
    { text: '$INCLUDE inc.db', includes: { 'inc.db': 'ok 60 A 10.0.0.1\nbad 60 A x' }, error: 'inc.db:2: invalid IPv4 address "x"' },
    { text: '$INCLUDE loop.db', includes: { 'loop.db': '$INCLUDE loop.db' }, error: 'loop.db:1: $INCLUDE nested more than 8 deep' },
  ];
  for (const c of cases) {
    assert.throws(
      () => records(c.text, c.includes),
      (e: unknown) => {
        assert.ok(e instanceof ZoneFileError, String(e));
        assert.equal(e.message, c.error, c.text);
        return true;
      },
      c.text,
    );
  }
});

test('zone file: TTL text', () => {
  const cases: Array<[string, number | undefined]> = [
    ['0', 0],
    ['3600', 3600],
    ['1h', 3600],
    ['1H30M', 5400],
    ['1w1d1h1m1s', 604800 + 86400 + 3600 + 60 + 1],
    ['1x', undefined],
    ['h', undefined],
    ['-1', undefined],
    ['', undefined],
  ];
  for (const [text, want] of cases) assert.equal(parseTtlText(text), want, text);
});

/** named-checkzone's verdict on a zone: true when it loads. */
function bindAccepts(text: string): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-zone-'));
  try {
    const file = join(dir, 'db');
    writeFileSync(file, text, 'latin1');
    execFileSync('named-checkzone', ['-q', 'example.org', file], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function kdnsAccepts(text: string): boolean {
  try {
    records(text);
    return true;
  } catch {
    return false;
  }
}

test('zone file: kdns and BIND agree on what parses', { skip: bindMissing() }, () => {
  const base = `$TTL 300\n${SOA}\n@ NS ns\nns A 10.0.0.53\n`;
  const cases: Array<{ name: string; body: string; parses: boolean }> = [
    { name: 'plain records', body: 'www A 10.0.0.1\n AAAA 2001:db8::1\nmail MX 10 www', parses: true },
    { name: 'parentheses and comments', body: 'txt TXT ( "a" ; one\n "b" ) ; two', parses: true },
    { name: 'TTL units and class first', body: 'a IN 1h A 10.0.0.1', parses: true },
    { name: 'escaped dot in a label', body: 'a\\.b A 10.0.0.1', parses: true },
    { name: 'TXT with \\DDD', body: 't TXT "\\255\\000"', parses: true },
    { name: 'CAA and DS', body: 'c CAA 0 issue "ca.example.net"\nd DS 60485 5 1 2BB183AF5F22588179A53B0A98631FAD1A292118', parses: true },
    { name: 'generic RDATA', body: 'g TYPE65280 \\# 2 ABCD', parses: true },
    { name: 'bad IPv4', body: 'www A 10.0.0.256', parses: false },
    { name: 'unknown type', body: 'www FOO 1', parses: false },
    { name: 'unbalanced parenthesis', body: 'www TXT ( "a"', parses: false },
    { name: 'unterminated quote', body: 'www TXT "a', parses: false },
    { name: 'empty label', body: 'a..b A 10.0.0.1', parses: false },
    { name: 'label of 64 octets', body: `${'x'.repeat(64)} A 10.0.0.1`, parses: false },
    { name: 'MX preference too large', body: 'm MX 65536 www', parses: false },
    { name: 'too few SRV fields', body: 's SRV 1 2 www', parses: false },
    { name: 'generic RDATA of the wrong length', body: 'g TYPE65280 \\# 3 ABCD', parses: false },
  ];
  for (const c of cases) {
    const text = base + c.body + '\n';
    assert.equal(bindAccepts(text), c.parses, `BIND: ${c.name}`);
    assert.equal(kdnsAccepts(text), c.parses, `kdns: ${c.name}`);
  }
});

function bindMissing(): string | false {
  try {
    execFileSync('named-checkzone', ['-v'], { stdio: 'ignore' });
    return false;
  } catch {
    if (process.env.CI === 'true') return false;
    return 'named-checkzone not installed (apt-get install bind9)';
  }
}
