// node-resolver against a real DNS server (BIND named on loopback) and real files: the DNS client,
// a pass that adds, keeps, changes and removes entries, DNS going down, concurrent writers, and a
// hosts file that is a bind mount (where rename fails).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/util/net.js';
import { lookup, LookupError } from './dnsclient.js';
import { BEGIN_MARKER, END_MARKER, parseHosts } from './hostsblock.js';
import { withLock } from './hostsfile.js';
import { serviceName, syncOnce } from './resolver.js';
import type { SyncOptions } from './resolver.js';
import { startNamed, type NamedServer } from '../../test/util/upstream.js';

const ZONE = 'cluster.local';
const bigRRset = Array.from({ length: 90 }, (_, i) => `big.ns.svc IN A 10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`).join('\n');
const records = (regIP: string): Record<string, string> => ({
  [ZONE]: [`reg.ns.svc IN A ${regIP}`, 'reg.ns.svc IN AAAA fd00::5', 'v4only.ns.svc IN A 10.0.0.7', 'alias.ns.svc IN CNAME reg.ns.svc', bigRRset].join('\n'),
});

let named: NamedServer;
let deadPort: number;

before(async () => {
  named = await startNamed(await freePort(), records('10.0.0.5'));
  deadPort = await freePort();
});
after(async () => {
  await named?.stop();
});

const ns = (): { host: string; port: number } => ({ host: '127.0.0.1', port: named.port });
const quick = { timeoutMs: 300, attempts: 1 };

// ---- the DNS client ----

const lookupCases: Array<{ name: string; q: string; type: 'A' | 'AAAA'; want: { rcode: number; addresses: string[] } }> = [
  { name: 'A record', q: 'reg.ns.svc.cluster.local.', type: 'A', want: { rcode: 0, addresses: ['10.0.0.5'] } },
  { name: 'AAAA record', q: 'reg.ns.svc.cluster.local.', type: 'AAAA', want: { rcode: 0, addresses: ['fd00::5'] } },
  { name: 'NODATA', q: 'v4only.ns.svc.cluster.local.', type: 'AAAA', want: { rcode: 0, addresses: [] } },
  { name: 'NXDOMAIN', q: 'gone.ns.svc.cluster.local.', type: 'A', want: { rcode: 3, addresses: [] } },
  { name: 'CNAME chain followed', q: 'alias.ns.svc.cluster.local.', type: 'A', want: { rcode: 0, addresses: ['10.0.0.5'] } },
  { name: 'REFUSED outside the served zones', q: 'example.org.', type: 'A', want: { rcode: 5, addresses: [] } },
];

for (const c of lookupCases) {
  test(`lookup: ${c.name}`, async () => {
    assert.deepEqual(await lookup(c.q, c.type, ns(), quick), c.want);
  });
}

test('lookup: a truncated UDP reply is retried over TCP', async () => {
  const r = await lookup('big.ns.svc.cluster.local.', 'A', ns(), quick);
  assert.equal(r.addresses.length, 90);
});

test('lookup: no server answering is a LookupError after the timeout', async () => {
  const started = Date.now();
  await assert.rejects(lookup('reg.ns.svc.cluster.local.', 'A', { host: '127.0.0.1', port: deadPort }, { timeoutMs: 200, attempts: 2 }), LookupError);
  assert.ok(Date.now() - started >= 350);
});

// ---- passes over a real hosts file ----

const OTHER = '127.0.0.1\tlocalhost\n# a comment, kept exactly  \n::1 localhost ip6-localhost\n';
const REG = '10.0.0.5 reg.ns.svc reg.ns.svc.cluster.local\nfd00::5 reg.ns.svc reg.ns.svc.cluster.local\n';

function fixture(content = OTHER): { dir: string; hosts: string; lock: string; logs: string[]; opts: (port?: number, names?: string[]) => SyncOptions } {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-nr-'));
  const hosts = join(dir, 'hosts');
  writeFileSync(hosts, content, { mode: 0o644 });
  const logs: string[] = [];
  const lock = join(dir, 'hosts.lock');
  return {
    dir,
    hosts,
    lock,
    logs,
    opts: (port = named.port, names = ['reg.ns.svc', 'v4only.ns.svc']) => ({
      services: names.map((n) => serviceName(n, ZONE)),
      nameserver: { host: '127.0.0.1', port },
      hostsFile: hosts,
      lockFile: lock,
      lookup: quick,
      log: (l) => logs.push(l),
    }),
  };
}

const block = (body: string): string => `${BEGIN_MARKER}\n${body}${END_MARKER}\n`;
const V4ONLY = '10.0.0.7 v4only.ns.svc v4only.ns.svc.cluster.local\n';

test('syncOnce: adds the block, keeps every other byte, keeps the mode, logs each entry', async () => {
  const f = fixture();
  const r = await syncOnce(f.opts());
  assert.equal(readFileSync(f.hosts, 'utf8'), OTHER + block(REG + V4ONLY));
  assert.equal(r.wrote, 'rename');
  assert.deepEqual(r.failures, []);
  assert.equal(statSync(f.hosts).mode & 0o777, 0o644);
  assert.deepEqual(f.logs.slice(0, 3), [
    `${f.hosts}: added 10.0.0.5 reg.ns.svc reg.ns.svc.cluster.local`,
    `${f.hosts}: added fd00::5 reg.ns.svc reg.ns.svc.cluster.local`,
    `${f.hosts}: added 10.0.0.7 v4only.ns.svc v4only.ns.svc.cluster.local`,
  ]);
});

test('syncOnce: no write when nothing changed', async () => {
  const f = fixture(OTHER + block(REG + V4ONLY));
  const before = statSync(f.hosts);
  const r = await syncOnce(f.opts());
  const after = statSync(f.hosts);
  assert.equal(r.wrote, undefined);
  assert.deepEqual(f.logs, []);
  assert.equal(after.ino, before.ino);
  assert.equal(after.mtimeMs, before.mtimeMs);
});

test('syncOnce: DNS down keeps the stale entries and says so', async () => {
  const stale = OTHER + block('10.0.0.4 reg.ns.svc reg.ns.svc.cluster.local\n');
  const f = fixture(stale);
  const r = await syncOnce(f.opts(deadPort, ['reg.ns.svc']));
  assert.equal(readFileSync(f.hosts, 'utf8'), stale);
  assert.equal(r.failures.length, 2);
  assert.match(f.logs[0] ?? '', /^lookup failed, keeping the current entries: reg\.ns\.svc\.cluster\.local\. A: no reply from 127\.0\.0\.1:\d+ within 300 ms$/);
});

test('syncOnce: a refusing server (REFUSED) also keeps the stale entries', async () => {
  const stale = block('10.0.0.9 web.example.org\n');
  const f = fixture(stale);
  const r = await syncOnce(f.opts(named.port, ['web.example.org.']));
  assert.equal(readFileSync(f.hosts, 'utf8'), stale);
  assert.deepEqual(r.failures, ['web.example.org. A: rcode REFUSED', 'web.example.org. AAAA: rcode REFUSED']);
});

test('syncOnce: a deleted service (NXDOMAIN) loses its entries', async () => {
  const f = fixture(OTHER + block('10.0.0.8 gone.ns.svc gone.ns.svc.cluster.local\n' + V4ONLY));
  await syncOnce(f.opts(named.port, ['gone.ns.svc', 'v4only.ns.svc']));
  assert.equal(readFileSync(f.hosts, 'utf8'), OTHER + block(V4ONLY));
  assert.ok(f.logs.includes(`${f.hosts}: removed 10.0.0.8 gone.ns.svc gone.ns.svc.cluster.local`));
});

test('syncOnce: a changing IP is followed, and the change logged', async () => {
  const f = fixture();
  await syncOnce(f.opts(named.port, ['reg.ns.svc']));
  await named.restart(records('10.0.0.6'));
  try {
    f.logs.length = 0;
    await syncOnce(f.opts(named.port, ['reg.ns.svc']));
    assert.equal(readFileSync(f.hosts, 'utf8'), OTHER + block(REG.replace('10.0.0.5', '10.0.0.6')));
    assert.deepEqual(f.logs.slice(0, 2), [`${f.hosts}: removed 10.0.0.5 reg.ns.svc reg.ns.svc.cluster.local`, `${f.hosts}: added 10.0.0.6 reg.ns.svc reg.ns.svc.cluster.local`]);
  } finally {
    await named.restart(records('10.0.0.5'));
  }
});

test('syncOnce: a lock left by a dead writer is taken over once stale', async () => {
  const f = fixture();
  writeFileSync(f.lock, '99999 dead\n');
  const old = (Date.now() - 60_000) / 1000;
  utimesSync(f.lock, old, old);
  await syncOnce(f.opts());
  assert.equal(readFileSync(f.hosts, 'utf8'), OTHER + block(REG + V4ONLY));
});

test('syncOnce: concurrent writers (several passes at once, and a foreign writer using the lock) lose nothing', async () => {
  const f = fixture();
  const foreign = async (i: number): Promise<void> => {
    await withLock(f.lock, async () => {
      const text = readFileSync(f.hosts, 'utf8');
      writeFileSync(f.hosts, text + `192.0.2.${i} admin-${i}\n`);
    });
  };
  await Promise.all([...Array.from({ length: 6 }, () => syncOnce(f.opts())), ...Array.from({ length: 6 }, (_, i) => foreign(i + 1))]);
  const text = readFileSync(f.hosts, 'utf8');
  assert.equal(text.split(BEGIN_MARKER).length, 2, 'exactly one block');
  assert.deepEqual(parseHosts(text).entries.map((e) => e.ip), ['10.0.0.5', 'fd00::5', '10.0.0.7']);
  for (let i = 1; i <= 6; i++) assert.ok(text.includes(`192.0.2.${i} admin-${i}\n`), `admin-${i} kept`);
  assert.ok(text.startsWith(OTHER));
});
