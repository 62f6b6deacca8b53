// `kdns node-resolver` as a process: against real named, with the faults the issue lists (DNS
// down, a changing IP, concurrent writers, a bind-mounted hosts file) and its usage errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '../../test/util/net.js';
import { BEGIN_MARKER, END_MARKER, parseHosts } from '../noderesolver/hostsblock.js';
import { kdnsCommand, runKdns, startKdns } from '../../test/util/kdns.js';
import { startNamed, type NamedServer } from '../../test/util/upstream.js';

const zone = (ip: string): Record<string, string> => ({ 'cluster.local': `reg.ns.svc IN A ${ip}` });
let named: NamedServer;
let deadPort: number;

before(async () => {
  named = await startNamed(await freePort(), zone('10.0.0.5'));
  deadPort = await freePort();
});
after(async () => {
  await named?.stop();
});

const OTHER = '127.0.0.1 localhost\n::1 localhost\n';
const entry = (ip: string): string => `${BEGIN_MARKER}\n${ip} reg.ns.svc reg.ns.svc.cluster.local\n${END_MARKER}\n`;

function hostsFixture(content = OTHER): { dir: string; hosts: string; lock: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-nrcli-'));
  const hosts = join(dir, 'hosts');
  writeFileSync(hosts, content);
  return { dir, hosts, lock: join(dir, 'lock') };
}

const args = (f: { hosts: string; lock: string }, port: number, extra: string[] = []): string[] => [
  'node-resolver',
  '--services',
  'reg.ns.svc',
  '--nameserver',
  `127.0.0.1:${port}`,
  '--hosts-file',
  f.hosts,
  '--lock-file',
  f.lock,
  '--timeout',
  '300ms',
  ...extra,
];

test('kdns node-resolver --once: writes the entry, exit 0', async () => {
  const f = hostsFixture();
  const r = await runKdns([...args(f, named.port), '--once']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readFileSync(f.hosts, 'utf8'), OTHER + entry('10.0.0.5'));
  assert.match(r.stderr, /node-resolver: .*hosts: added 10\.0\.0\.5 reg\.ns\.svc reg\.ns\.svc\.cluster\.local/);
});

test('kdns node-resolver --once with DNS down: file untouched, exit 1', async () => {
  const f = hostsFixture(OTHER + entry('10.0.0.4'));
  const r = await runKdns([...args(f, deadPort), '--once']);
  assert.equal(r.code, 1);
  assert.equal(readFileSync(f.hosts, 'utf8'), OTHER + entry('10.0.0.4'));
  assert.match(r.stderr, /lookup failed, keeping the current entries: reg\.ns\.svc\.cluster\.local\. A: no reply/);
});

const usage: Array<[string, string[], RegExp]> = [
  ['bad nameserver', ['--nameserver', 'dns.local'], /--nameserver: invalid value "dns\.local"/],
  ['bad interval', ['--interval', 'soon'], /--interval: invalid duration "soon"/],
  ['bad service name', ['--services', 'Reg_Svc'], /--services: invalid name "Reg_Svc"/],
];

for (const [name, extra, want] of usage) {
  test(`kdns node-resolver: ${name} is a usage error (exit 2)`, async () => {
    const f = hostsFixture();
    const r = await runKdns([...args(f, named.port), ...extra, '--once']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, want);
  });
}

test('kdns node-resolver: a damaged block is refused with its line, file untouched, exit 1', async () => {
  const damaged = `${OTHER}${BEGIN_MARKER}\n10.0.0.4 reg.ns.svc\n`;
  const f = hostsFixture(damaged);
  const r = await runKdns([...args(f, named.port), '--once']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /line 3: begin marker without an end marker/);
  assert.equal(readFileSync(f.hosts, 'utf8'), damaged);
});

test('kdns node-resolver (loop): follows a changing IP, survives DNS down, exits 0 on SIGTERM', async () => {
  const f = hostsFixture();
  const p = startKdns(args(f, named.port, ['--interval', '200ms']));
  const seen = (what: string) => (e: unknown): never => {
    throw new Error(`${what}: ${(e as Error).message}\nnode-resolver said:\n${p.output()}\nhosts:\n${readFileSync(f.hosts, 'utf8')}`);
  };
  try {
    await waitFor(() => readFileSync(f.hosts, 'utf8') === OTHER + entry('10.0.0.5'), 10_000).catch(seen('first entry'));
    await named.stop();
    // While DNS is down, passes fail and the entry stays.
    await waitFor(() => p.output().includes('lookup failed'), 10_000).catch(seen('DNS down'));
    assert.equal(readFileSync(f.hosts, 'utf8'), OTHER + entry('10.0.0.5'));
    await named.restart(zone('10.0.0.6'));
    await waitFor(() => readFileSync(f.hosts, 'utf8') === OTHER + entry('10.0.0.6'), 10_000).catch(seen('changed IP'));
    // The file is written before the log lines cross the pipe from the child: wait for them.
    await waitFor(() => /removed 10\.0\.0\.5 .*\n.*added 10\.0\.0\.6/.test(p.output()), 5_000).catch(seen('log of the change'));
  } finally {
    await p.stop();
    await named.restart(zone('10.0.0.5'));
  }
  assert.equal(p.child.exitCode, 0, p.output());
});

test('kdns node-resolver: concurrent processes and an appending admin leave one block and every admin line', async () => {
  const f = hostsFixture();
  const runs = Array.from({ length: 3 }, () => runKdns([...args(f, named.port), '--once']));
  // An administrator appending lines meanwhile, with the same lock protocol (O_EXCL lock file).
  const admin = (async () => {
    const { withLock } = await import('../noderesolver/hostsfile.js');
    for (let i = 1; i <= 20; i++) {
      await withLock(f.lock, async () => writeFileSync(f.hosts, readFileSync(f.hosts, 'utf8') + `192.0.2.${i} admin-${i}\n`));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const results = await Promise.all(runs);
  await admin;
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  const text = readFileSync(f.hosts, 'utf8');
  assert.equal(text.split(BEGIN_MARKER).length, 2);
  assert.deepEqual(
    parseHosts(text).entries.map((e) => e.ip),
    ['10.0.0.5'],
  );
  for (let i = 1; i <= 20; i++) assert.ok(text.includes(`192.0.2.${i} admin-${i}\n`), `admin-${i} kept`);
});

/**
 * Runs node-resolver where the hosts file cannot be replaced by rename: a bind mount inside a
 * private mount namespace (as in a pod), or, where no mount namespace can be had, a file in a
 * directory the process may not write.
 */
function runWhereRenameFails(f: { dir: string; hosts: string; lock: string }, port: number): { code: number | null; stderr: string; how: string } {
  const target = join(f.dir, 'mounted-hosts');
  writeFileSync(target, '');
  const node = [process.execPath, ...kdnsCommand([...args({ hosts: target, lock: f.lock }, port), '--once'])];
  const script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"';
  const asRoot = process.getuid?.() === 0;
  const ns = spawnSync('unshare', [...(asRoot ? ['-m'] : ['-r', '-m']), 'sh', '-c', script, 'sh', f.hosts, target, ...node], { encoding: 'utf8', timeout: 30_000 });
  if (ns.status !== null && !/unshare failed|Operation not permitted|mount: /.test(ns.stderr ?? '')) return { code: ns.status, stderr: ns.stderr, how: 'bind mount' };
  // No mount namespace here: a read-only directory makes the temp file impossible instead.
  assert.ok(!asRoot, `unshare -m failed as root: ${ns.stderr}`);
  chmodSync(f.dir, 0o555);
  try {
    const direct = spawnSync(process.execPath, kdnsCommand([...args({ hosts: f.hosts, lock: join(tmpdir(), `kdns-nr-${process.pid}.lock`) }, port), '--once']), { encoding: 'utf8', timeout: 30_000 });
    return { code: direct.status, stderr: direct.stderr, how: 'read-only directory' };
  } finally {
    chmodSync(f.dir, 0o755);
  }
}

test('kdns node-resolver: a hosts file where rename fails is rewritten in place, read back and verified', () => {
  const f = hostsFixture();
  const inode = statSync(f.hosts).ino;
  const r = runWhereRenameFails(f, named.port);
  assert.equal(r.code, 0, `${r.how}: ${r.stderr}`);
  assert.equal(readFileSync(f.hosts, 'utf8'), OTHER + entry('10.0.0.5'));
  assert.equal(statSync(f.hosts).ino, inode, 'same file, not a replacement');
  assert.match(r.stderr, /written in place under the lock \(rename not possible here\), read back and verified/);
});
