// --setup-interface for real, inside a network namespace this test creates (unshare --net): the
// dummy interface appears with the link-local address, the cache answers on it, and the
// interface is gone after SIGTERM; an interface that was there before is used and left alone.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parseDig } from '../../test/util/dig.js';
import { waitFor } from '../../test/util/net.js';
import { kdnsCommand } from '../../test/util/kdns.js';

const IN_CI = process.env.CI === 'true';

function whyNot(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  if (spawnSync('unshare', ['--net', 'true']).status !== 0) return 'unshare --net does not work here (util-linux, CAP_SYS_ADMIN)';
  if (spawnSync('ip', ['-V']).status !== 0) return 'needs iproute2: apt-get install iproute2';
  if (spawnSync('dig', ['-v']).status !== 0) return 'needs dig: apt-get install bind9-dnsutils';
  return false;
}
const reason = whyNot();
const skip = reason && !IN_CI ? reason : false;

const LOCAL_IP = '169.254.20.10';

/** `kdns args...` inside the namespace at `netns`; `done` resolves with its exit code. */
function kdnsIn(netns: string, args: readonly string[]): { child: ChildProcess; output: () => string; done: Promise<number | null> } {
  const child = spawn('nsenter', [`--net=${netns}`, process.execPath, ...kdnsCommand(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => out, done };
}

describe('kdns nodecache --setup-interface in a network namespace', { skip }, () => {
  let holder: ChildProcess;
  let netns: string;
  /** Runs a command inside the namespace. */
  const inNs = (cmd: string[]): { status: number | null; stdout: string; stderr: string } => {
    const r = spawnSync('nsenter', [`--net=${netns}`, ...cmd], { encoding: 'utf8', timeout: 20_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const addresses = (dev: string): string[] | undefined => {
    const r = inNs(['ip', '-j', 'addr', 'show', 'dev', dev]);
    if (r.status !== 0) return undefined;
    const links = JSON.parse(r.stdout) as Array<{ addr_info: Array<{ local: string; prefixlen: number }> }>;
    // The kernel's own IPv6 link-local address is not ours to count.
    return links.flatMap((l) => l.addr_info.filter((a) => !a.local.startsWith('fe80:')).map((a) => `${a.local}/${a.prefixlen}`));
  };

  before(async () => {
    // A process that only holds the namespace open; everything else joins it with nsenter.
    holder = spawn('unshare', ['--net', '--', 'sleep', '300'], { stdio: 'ignore' });
    const own = readlinkSync('/proc/self/ns/net');
    netns = `/proc/${holder.pid}/ns/net`;
    await waitFor(() => {
      try {
        return readlinkSync(netns) !== own;
      } catch {
        return false;
      }
    });
    assert.equal(inNs(['ip', 'link', 'set', 'lo', 'up']).status, 0);
  });
  after(() => {
    holder?.kill('SIGKILL');
  });

  const flags = ['nodecache', '--local-ip', LOCAL_IP, '--port', '53', '--cluster-dns', '127.0.0.1:5353', '--upstream', '127.0.0.1:5399', '--setup-interface'];

  test('creates nodelocaldns with the address, answers on it, removes it on SIGTERM', async () => {
    const run = kdnsIn(netns, flags);
    try {
      await waitFor(() => run.output().includes(`kdns nodecache listening on ${LOCAL_IP}:53`) || run.child.exitCode !== null, 30_000, 100);
      assert.match(run.output(), /created interface nodelocaldns( \(a bridge without ports: this kernel has no dummy driver\))? with 169\.254\.20\.10/);
      assert.deepEqual(addresses('nodelocaldns'), [`${LOCAL_IP}/32`]);
      // The cluster DNS of these flags does not exist in the namespace: SERVFAIL, but from the cache on its address.
      const q = inNs(['dig', `@${LOCAL_IP}`, 'api.search.ns1.cluster.local.ap.k8s.io', 'A', '+time=5', '+tries=1']);
      assert.equal(parseDig(q.stdout).status, 'SERVFAIL', q.stdout + q.stderr);
      const h = inNs([process.execPath, '-e', `fetch('http://${LOCAL_IP}:8080/health').then(async (r) => console.log(r.status, await r.text()))`]);
      assert.equal(h.stdout.trim(), '200 OK', h.stderr);
    } finally {
      run.child.kill('SIGTERM');
    }
    assert.equal(await run.done, 0, run.output());
    assert.equal(addresses('nodelocaldns'), undefined, 'the interface is still there');
  });

  test('an interface that already has the address is used and left in place', async () => {
    // A dummy where the kernel has the driver, else a bridge without ports (as kdns itself falls back).
    if (inNs(['ip', 'link', 'add', 'nodelocaldns', 'type', 'dummy']).status !== 0) assert.equal(inNs(['ip', 'link', 'add', 'nodelocaldns', 'type', 'bridge']).status, 0);
    assert.equal(inNs(['ip', 'addr', 'add', `${LOCAL_IP}/32`, 'dev', 'nodelocaldns']).status, 0);
    const run = kdnsIn(netns, flags);
    try {
      await waitFor(() => run.output().includes(`kdns nodecache listening on ${LOCAL_IP}:53`) || run.child.exitCode !== null, 30_000, 100);
      assert.match(run.output(), /using interface nodelocaldns/);
    } finally {
      run.child.kill('SIGTERM');
    }
    assert.equal(await run.done, 0, run.output());
    assert.deepEqual(addresses('nodelocaldns'), [`${LOCAL_IP}/32`]);
    inNs(['ip', 'link', 'del', 'nodelocaldns']);
  });

  test('a cache that cannot start takes its new interface down again', async () => {
    // Port 53 taken in the namespace by a socket without SO_REUSEPORT (another kdns would share
    // the port, as a node cache's successor does).
    const first = spawn('nsenter', [`--net=${netns}`, process.execPath, '-e', "require('dgram').createSocket('udp4').bind(53, '127.0.0.1', () => console.log('held'))"], { stdio: ['ignore', 'pipe', 'inherit'] });
    const held = new Promise<void>((resolve) => first.stdout.once('data', () => resolve()));
    const firstDone = new Promise<void>((resolve) => first.once('close', () => resolve()));
    try {
      await held;
      const second = kdnsIn(netns, ['nodecache', '--local-ip', '127.0.0.1', '--port', '53', '--cluster-dns', '127.0.0.1:5353', '--upstream', '127.0.0.1:5399', '--setup-interface', '--interface', 'kdnstest0', '--health', '127.0.0.1:18080', '--metrics', '127.0.0.1:19253']);
      assert.equal(await second.done, 1, second.output());
      assert.match(second.output(), /listen udp 127\.0\.0\.1:53/);
      assert.equal(addresses('kdnstest0'), undefined, 'the interface of the failed start is still there');
    } finally {
      first.kill('SIGTERM');
      await firstDone;
    }
  });
});
