import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCorefile } from '../../lib/corefile/parser.js';
import { RRType } from '../../lib/dns/types.js';
import { parseZoneFile } from '../../lib/dns/zonefile.js';
import { createLogger } from '../../server/log.js';
import { firstDirective } from '../../../test/util/corefile.js';
import { testRequest } from '../../../test/util/request.js';
import { Zone } from '../pkg/zone.js';
import { loadZoneFile } from '../pkg/zonesource.js';
import { FilePlugin } from './handler.js';
import { loadAtSetup, parseFile } from './setup.js';

const defaults = { path: '/etc/kdns/db.example.org', origins: ['example.org.'], reloadMs: 60_000, reloadByMtime: false };

test('file: Corefile syntax (CoreDNS setup_test)', () => {
  const cases: Array<{ corefile: string; want?: Partial<typeof defaults> & { fallthrough?: string[] }; error?: string }> = [
    { corefile: 'example.org {\n  file db.example.org\n}', want: {} },
    { corefile: 'example.org {\n  file /srv/db.example.org\n}', want: { path: '/srv/db.example.org' } },
    { corefile: 'example.org {\n  file db.example.org Example.ORG example.net\n}', want: { origins: ['example.org.', 'example.net.'] } },
    { corefile: 'example.org {\n  file db.example.org 10.0.0.0/24\n}', want: { origins: ['0.0.10.in-addr.arpa.'] } },
    { corefile: 'example.org {\n  file db.example.org {\n    reload 30s\n  }\n}', want: { reloadMs: 30_000 } },
    { corefile: 'example.org {\n  file db.example.org {\n    reload 0\n  }\n}', want: { reloadMs: 0 } },
    { corefile: 'example.org {\n  file db.example.org {\n    reload_by_mtime\n  }\n}', want: { reloadByMtime: true } },
    { corefile: 'example.org {\n  file db.example.org {\n    fallthrough\n  }\n}', want: { fallthrough: [] } },
    { corefile: 'example.org {\n  file db.example.org {\n    fallthrough in-addr.arpa ip6.arpa\n  }\n}', want: { fallthrough: ['in-addr.arpa.', 'ip6.arpa.'] } },
    // Deprecated in CoreDNS, accepted and ignored.
    { corefile: 'example.org {\n  file db.example.org {\n    upstream 8.8.8.8\n  }\n}', want: {} },
    { corefile: 'example.org {\n  file\n}', error: 'Corefile:2: wrong argument count for "file": expected at least 1, got 0' },
    { corefile: 'example.org {\n  file db.example.org bad..zone\n}', error: 'Corefile:2: invalid argument "bad..zone" for "file": not a valid zone name' },
    { corefile: 'example.org {\n  file db.example.org {\n    reload\n  }\n}', error: 'Corefile:3: wrong argument count for "reload": expected 1, got 0' },
    { corefile: 'example.org {\n  file db.example.org {\n    reload often\n  }\n}', error: 'Corefile:3: invalid duration for reload: "often" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { corefile: 'example.org {\n  file db.example.org {\n    reload -1s\n  }\n}', error: 'Corefile:3: reload must be at least 0s, got -1s' },
    { corefile: 'example.org {\n  file db.example.org {\n    reload_by_mtime yes\n  }\n}', error: 'Corefile:3: wrong argument count for "reload_by_mtime": expected no arguments, got 1' },
    { corefile: 'example.org {\n  file db.example.org {\n    fallthrough a..b\n  }\n}', error: 'Corefile:3: invalid argument "a..b" for "fallthrough": not a valid zone name' },
    { corefile: 'example.org {\n  file db.example.org {\n    relaod 5s\n  }\n}', error: 'Corefile:3: unknown property "relaod" in file block' },
    { corefile: 'example.org {\n  file db.example.org {\n    reload 5s\n    reload 6s\n  }\n}', error: 'Corefile:4: duplicate property "reload" in file block' },
  ];
  for (const c of cases) {
    const parse = () => parseFile(firstDirective(c.corefile), ['example.org.'], '/etc/kdns/Corefile');
    if (c.error) assert.throws(parse, { message: c.error }, c.corefile);
    else assert.deepEqual(parse(), { ...defaults, ...c.want }, c.corefile);
  }
});

const ZONE = (serial: number, address: string) => `$TTL 60\n@ SOA ns admin ${serial} 2 3 4 60\n@ NS ns\nns A 10.0.0.1\nwww A ${address}\n`;

test('file: loading at setup names the directive line and the zone file line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-file-'));
  try {
    writeFileSync(join(dir, 'good'), ZONE(1, '10.0.0.2'));
    writeFileSync(join(dir, 'bad'), '$TTL 60\n@ SOA ns admin 1 2 3 4 60\nwww A 10.0.0.999\n');
    const corefile = join(dir, 'Corefile');
    const load = (body: string): FilePlugin => {
      const d = firstDirective(`example.org {\n${body}\n}`);
      const plugin = new FilePlugin(parseFile(d, ['example.org.'], corefile), createLogger(() => undefined));
      loadAtSetup(plugin, d, createLogger(() => undefined));
      return plugin;
    };
    assert.equal(load('  file good').sources.get('example.org.')?.zone?.serial, 1);
    assert.throws(() => load('  file bad'), { message: `Corefile:2: file: ${join(dir, 'bad')}:3: invalid IPv4 address "10.0.0.999"` });
    assert.throws(() => load('  file missing {\n    reload 0\n  }'), { message: `Corefile:2: file: zone file ${join(dir, 'missing')} does not exist` });
    // With reload on, a missing file is waited for; its zone answers SERVFAIL meanwhile (as CoreDNS).
    const waiting = load('  file missing');
    assert.equal(waiting.sources.get('example.org.')?.zone, undefined);
    const servfail = await waiting.serve(testRequest('www.example.org.', RRType.A), () => undefined);
    assert.equal(servfail?.rcode, 2);
    writeFileSync(join(dir, 'missing'), ZONE(7, '10.0.0.7'));
    assert.equal(await waiting.refresh(), true);
    assert.equal(waiting.sources.get('example.org.')?.zone?.serial, 7);
    // A signed zone loads without its signatures, and says so once per type.
    writeFileSync(
      join(dir, 'signed'),
      `${ZONE(1, '10.0.0.2')}@ 60 RRSIG SOA 8 2 60 (\n  20170112031301 20161213031301 53289 example.org.\n  GZ30uFuGATKzwHXg= )\n@ 60 RRSIG NS 8 2 60 20170112031301 20161213031301 53289 example.org. D8Sd9J=\n@ 60 NSEC www A NS SOA RRSIG NSEC\n`,
    );
    const signed = loadZoneFile(join(dir, 'signed'), 'example.org.');
    assert.equal(signed.zone.records, 4);
    assert.deepEqual(signed.warnings, [
      `${join(dir, 'signed')}:6: 2 RRSIG record(s) skipped: kdns serves zones unsigned`,
      `${join(dir, 'signed')}:10: 1 NSEC record(s) skipped: kdns serves zones unsigned`,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('file: reload keeps the old zone on a parse error and follows the SOA serial', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-file-'));
  try {
    const path = join(dir, 'db');
    writeFileSync(path, ZONE(1, '10.0.0.2'));
    const logs: string[] = [];
    const plugin = new FilePlugin({ path, origins: ['example.org.'], reloadMs: 0, reloadByMtime: false }, createLogger((l, m) => logs.push(`[${l}] ${m}`)));
    plugin.sources.get('example.org.')?.loadNow();
    const www = async (): Promise<string> => {
      const reply = await plugin.serve(testRequest('www.example.org.', RRType.A), () => undefined);
      const a = reply?.view().answers[0]?.data as { address: string } | undefined;
      return a?.address ?? 'none';
    };
    // Distinct sizes make the change visible even within one mtime tick.
    const steps: Array<{ write: string; reloaded: boolean; www: string; log?: RegExp }> = [
      { write: '$TTL 60\n@ SOA ns admin 2 2 3 4 60\nwww A 10.0.0.999\n', reloaded: false, www: '10.0.0.2', log: /\[ERROR\] zone example.org.: .*db:3: invalid IPv4 address "10.0.0.999"; keeping the zone loaded before/ },
      { write: ZONE(1, '10.0.0.33'), reloaded: false, www: '10.0.0.2', log: /SOA serial is still 1: not reloaded/ },
      { write: ZONE(2, '10.0.0.4'), reloaded: true, www: '10.0.0.4' },
    ];
    for (const s of steps) {
      writeFileSync(path, s.write);
      assert.equal(await plugin.refresh(), s.reloaded, s.write);
      assert.equal(await www(), s.www, s.write);
      if (s.log) assert.ok(logs.some((l) => s.log?.test(l)), `${s.log}: ${logs.join('\n')}`);
    }
    // reload_by_mtime: any change of the file is a new zone, serial or not.
    const byMtime = new FilePlugin({ path, origins: ['example.org.'], reloadMs: 0, reloadByMtime: true }, createLogger(() => undefined));
    byMtime.sources.get('example.org.')?.loadNow();
    writeFileSync(path, ZONE(2, '10.0.0.55'));
    assert.equal(await byMtime.refresh(), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('file: the README examples are valid', () => {
  const src = new URL('../', import.meta.url);
  const blocks = (name: string, kind: string): string[] =>
    [...readFileSync(new URL(`${name}/README.md`, src), 'utf8').matchAll(new RegExp(`~~~ ${kind}\\n([\\s\\S]*?)~~~`, 'g'))].map((m) => m[1] as string);
  let directives = 0;
  for (const text of blocks('file', 'corefile')) {
    for (const block of parseCorefile(text, { file: 'Corefile', baseDir: '/etc/kdns' })) {
      for (const d of block.directives.filter((x) => x.name === 'file')) {
        parseFile(d, ['example.org.'], '/etc/kdns/Corefile');
        directives++;
      }
    }
  }
  assert.equal(directives, 3);
  const zoneExample = blocks('file', 'txt').find((t) => t.startsWith('$ORIGIN'));
  assert.ok(zoneExample);
  assert.equal(Zone.build('example.org.', parseZoneFile(zoneExample, { origin: 'example.org.', file: 'README' }), 'README').records, 8);
});
