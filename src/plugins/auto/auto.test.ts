import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { RRType } from '../../lib/dns/types.js';
import { createLogger } from '../../server/log.js';
import { Reply, responseFor } from '../../server/reply.js';
import { firstDirective } from '../../../test/util/corefile.js';
import { testRequest } from '../../../test/util/request.js';
import { AutoPlugin } from './handler.js';
import { originFor, scanDirectory } from './scan.js';
import { parseAuto } from './setup.js';

test('auto: Corefile syntax (CoreDNS setup_test)', () => {
  const defaults = { zones: ['example.org.'], directory: '/tmp', regexp: 'db\\.(.*)', template: '{1}', reloadMs: 60_000 };
  const cases: Array<{ corefile: string; want?: Partial<typeof defaults>; error?: string }> = [
    { corefile: 'auto example.org {\n  directory /tmp\n}', want: {} },
    { corefile: 'auto 10.0.0.0/24 {\n  directory /tmp\n}', want: { zones: ['0.0.10.in-addr.arpa.'] } },
    { corefile: 'auto {\n  directory /tmp\n  reload 0\n}', want: { reloadMs: 0 } },
    { corefile: 'auto {\n  directory /tmp (.*) bliep\n}', want: { regexp: '(.*)', template: 'bliep' } },
    { corefile: 'auto {\n  directory /tmp (.*) bliep\n  reload 10s\n}', want: { regexp: '(.*)', template: 'bliep', reloadMs: 10_000 } },
    { corefile: 'auto {\n  directory zones\n}', want: { directory: '/etc/kdns/zones' } },
    { corefile: 'auto example.org {\n  directory /tmp\n  upstream 8.8.8.8 1.1.1.1\n}', want: {} },
    { corefile: 'auto example.org {\n  directory /tmp\n  upstream\n}', want: {} },
    // errors
    { corefile: 'auto {\n  directory /tmp\n  no_reload\n}', error: 'Corefile:4: unknown property "no_reload" in auto block' },
    { corefile: 'auto {\n  directory /tmp (.*) bliep 10\n}', error: 'Corefile:3: wrong argument count for "directory": expected at most 3, got 4' },
    { corefile: 'auto {\n  directory /tmp (.*) bliep 10\n  transfer to 127.0.0.1\n}', error: 'Corefile:3: wrong argument count for "directory": expected at most 3, got 4' },
    { corefile: 'auto {\n  directory /tmp (.*)\n}', error: 'Corefile:3: directory: REGEXP "(.*)" needs an ORIGIN_TEMPLATE after it (e.g. {1})' },
    { corefile: 'auto example.org {\n  directory\n}', error: 'Corefile:3: wrong argument count for "directory": expected at least 1, got 0' },
    { corefile: 'auto example.org {\n  directory /tmp * {1}\n}', error: 'Corefile:3: invalid regexp "*" for directory: /*/: Nothing to repeat' },
    { corefile: 'auto example.org {\n  directory /tmp db\\..* {1}\n}', error: 'Corefile:3: regexp "db\\..*" for directory needs at least one (group) for the origin template' },
    { corefile: `auto example.org {\n  directory /tmp (${'a'.repeat(10_000)}) {1}\n}`, error: 'Corefile:3: regexp for directory is longer than 10000 characters' },
    { corefile: 'auto example.org {\n  reload 5s\n}', error: 'Corefile:2: auto needs a "directory DIR" line in its block' },
    { corefile: 'auto example.org {\n  directory /tmp\n  reload soon\n}', error: 'Corefile:4: invalid duration for reload: "soon" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { corefile: 'auto example.org {\n  directory /tmp\n  reload -1s\n}', error: 'Corefile:4: reload must be at least 0s, got -1s' },
    { corefile: 'auto a..b {\n  directory /tmp\n}', error: 'Corefile:2: invalid argument "a..b" for "auto": not a valid zone name' },
  ];
  for (const c of cases) {
    const parse = () => {
      const cfg = parseAuto(firstDirective(`example.org {\n${c.corefile}\n}`), ['example.org.'], '/etc/kdns/Corefile');
      return { ...cfg, regexp: cfg.regexp.source };
    };
    if (c.error) assert.throws(parse, { message: c.error }, c.corefile);
    else assert.deepEqual(parse(), { ...defaults, ...c.want }, c.corefile);
  }
});

test('auto: origins from file names (CoreDNS walk_test, regexp_test)', () => {
  const cases: Array<[string, string, string, string | undefined]> = [
    ['db\\.(.*)', '{1}', 'db.example.org', 'example.org.'],
    ['db\\.(.*)', '{1}', 'DB.Example.ORG', undefined],
    ['db\\.(.*)', '{1}', 'db.Example.ORG', 'example.org.'],
    ['db\\.(.*)', '{1}', 'aa.example.org', undefined],
    // Unanchored, as CoreDNS: a backup file matches too unless the regexp says $.
    ['db\\.(.*)', '{1}', 'db.example.org.bak', 'example.org.bak.'],
    ['^db\\.(.*)$', '{1}', 'x.db.example.org', undefined],
    ['www\\.db\\.(.*)', '{1}', 'www.db.example.org', 'example.org.'],
    ['(.*)\\.zone$', '{1}', 'example.net.zone', 'example.net.'],
    ['(.*)\\.(.*)\\.zone$', '{2}.{1}', 'sub.example.zone', 'example.sub.'],
    ['(.*)', 'bliep', 'anything', 'bliep.'],
    ['db\\.(.*)', '{1}', 'db.bad..name', undefined],
  ];
  for (const [re, template, file, want] of cases) assert.equal(originFor(new RegExp(re), template, file), want, `${re} ${template} ${file}`);
});

const zoneText = (serial: number, www: string) => `@ IN SOA sns.dns.icann.org. noc.dns.icann.org. ${serial} 7200 3600 1209600 3600
    NS a.iana-servers.net.
    NS b.iana-servers.net.
www IN A ${www}
`;

test('auto: scanning picks up, follows symlinks, and drops zones (CoreDNS walk_test, watcher_test)', async () => {
  const base = mkdtempSync(join(tmpdir(), 'kdns-auto-'));
  try {
    const dir = join(base, 'zones');
    mkdirSync(join(dir, 'nested'), { recursive: true });
    writeFileSync(join(dir, 'db.example.org'), zoneText(1, '127.0.0.1'));
    writeFileSync(join(dir, 'nested', 'db.example.com'), zoneText(1, '127.0.0.2'));
    writeFileSync(join(dir, 'aa.example.net'), zoneText(1, '127.0.0.3'));
    writeFileSync(join(dir, 'db.broken.test'), '@ IN SOA ns admin 1 2 3 4 5\nwww A nonsense\n');
    const link = join(base, 'mounted');
    symlinkSync(dir, link);

    assert.deepEqual([...scanDirectory(link, /db\.(.*)/, '{1}').zones.keys()].sort(), ['broken.test.', 'example.com.', 'example.org.']);
    assert.deepEqual(scanDirectory(join(base, 'none'), /db\.(.*)/, '{1}').warnings, [`directory ${join(base, 'none')} does not exist`]);

    // A ConfigMap volume as the kubelet writes it: keys are symlinks into ..data, a symlink to a timestamped folder.
    const volume = join(base, 'volume');
    mkdirSync(join(volume, '..2026_11_28_05_00_00.000000001'), { recursive: true });
    writeFileSync(join(volume, '..2026_11_28_05_00_00.000000001', 'db.example.io'), zoneText(1, '127.0.0.4'));
    symlinkSync('..2026_11_28_05_00_00.000000001', join(volume, '..data'));
    symlinkSync('..data/db.example.io', join(volume, 'db.example.io'));
    const fromVolume = scanDirectory(volume, /db\.(.*)/, '{1}');
    assert.deepEqual({ zones: [...fromVolume.zones.keys()], warnings: fromVolume.warnings }, { zones: ['example.io.'], warnings: [] });

    const logs: string[] = [];
    const plugin = new AutoPlugin(
      { zones: ['.'], directory: link, regexp: /db\.(.*)/, template: '{1}', reloadMs: 0 },
      createLogger((level, line) => logs.push(`[${level}] ${line}`)),
    );
    plugin.scan();
    assert.deepEqual([...plugin.sources.keys()].sort(), ['example.com.', 'example.org.']);
    assert.ok(logs.some((l) => l.startsWith('[WARNING] parse zone broken.test.: ') && l.endsWith('db.broken.test:2: invalid IPv4 address "nonsense"')), logs.join('\n'));

    const www = async (name: string): Promise<string> => {
      const req = testRequest(name, RRType.A);
      const reply = await plugin.serve(req, () => Reply.of(responseFor(req, 5)));
      const m = reply?.view();
      return m?.rcode === 5 ? 'next' : ((m?.answers[0]?.data as { address?: string } | undefined)?.address ?? String(m?.rcode));
    };
    assert.equal(await www('www.example.org.'), '127.0.0.1');
    assert.equal(await www('www.example.com.'), '127.0.0.2');
    assert.equal(await www('www.example.net.'), 'next');

    unlinkSync(join(dir, 'nested', 'db.example.com'));
    writeFileSync(join(dir, 'db.example.org'), zoneText(2, '127.0.0.9'));
    writeFileSync(join(dir, 'db.broken.test'), zoneText(1, '127.0.0.4'));
    await plugin.refresh();
    assert.deepEqual([...plugin.sources.keys()].sort(), ['broken.test.', 'example.org.']);
    assert.equal(await www('www.example.com.'), 'next');
    assert.equal(await www('www.example.org.'), '127.0.0.9');
    assert.equal(await www('www.broken.test.'), '127.0.0.4');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('auto: only the configured zones are answered, whatever the folder holds', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-auto-'));
  try {
    writeFileSync(join(dir, 'db.example.org'), zoneText(1, '127.0.0.1'));
    writeFileSync(join(dir, 'db.example.com'), zoneText(1, '127.0.0.2'));
    const plugin = new AutoPlugin({ zones: ['example.org.'], directory: dir, regexp: /db\.(.*)/, template: '{1}', reloadMs: 0 }, createLogger(() => undefined));
    plugin.scan();
    // Loaded (as CoreDNS does), but never asked.
    assert.equal(plugin.sources.has('example.com.'), true);
    const req = testRequest('www.example.com.', RRType.A);
    const marker = Reply.of(responseFor(req, 5));
    assert.equal(await plugin.serve(req, () => marker), marker);
    const org = await plugin.serve(testRequest('nope.example.org.', RRType.A), () => marker);
    assert.equal(org?.view().rcode, 3);
    assert.equal(org?.view().aa, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('auto: the README examples are valid', () => {
  const readme = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
  let directives = 0;
  for (const m of readme.matchAll(/~~~ corefile\n([\s\S]*?)~~~/g)) {
    for (const block of parseCorefile(m[1] as string, { file: 'Corefile', baseDir: '/etc/kdns' })) {
      for (const d of block.directives.filter((x) => x.name === 'auto')) {
        parseAuto(d, ['example.org.'], '/etc/kdns/Corefile');
        directives++;
      }
    }
  }
  assert.equal(directives, 2);
});
