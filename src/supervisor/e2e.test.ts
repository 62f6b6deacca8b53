// The parent and its worker as users run them: `kdns serve` with KDNS_SUPERVISE=1, real
// processes, real sockets, dig. A worker killed with SIGKILL (as the OOM killer does) is
// replaced, and what clients sent while no worker ran is answered by the next one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildQuery } from '../lib/dns/wire.js';
import { nameToWire } from '../lib/dns/name.js';
import { answers, dig } from '../../test/util/dig.js';
import { kdnsCommand } from '../../test/util/kdns.js';
import { freePort, waitFor } from '../../test/util/net.js';
import { spawnCollected, type CollectedProcess } from '../../test/util/proc.js';
import { alive, childrenOf, udpBurst } from '../../test/util/workers.js';

const dir = mkdtempSync(join(tmpdir(), 'kdns-supervisor-'));

function corefile(port: number, address: string): string {
  const file = join(dir, `Corefile-${port}`);
  writeFileSync(file, `.:${port} {\n  hosts {\n    ${address} web.example\n  }\n}\n`);
  return file;
}

function serve(file: string, env: NodeJS.ProcessEnv = { KDNS_SUPERVISE: '1' }): CollectedProcess {
  return spawnCollected(process.execPath, kdnsCommand(['serve', '--conf', file]), { env: { ...process.env, ...env }, killAfterMs: 5000 });
}

async function lookup(port: number, tcp = false): Promise<string[]> {
  return answers(await dig('web.example', 'A', { server: '127.0.0.1', port, args: tcp ? ['+tcp'] : [], timeout: 2, tries: 1 }));
}

const burst = (port: number, count: number, sources = 1): Promise<number> => udpBurst(port, count, { sources });

/** One DNS query over a TCP connection opened now; resolves with the reply's answer count. */
function tcpQuery(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = net.connect(port, '127.0.0.1');
    const q = buildQuery(nameToWire('web.example.'), 1, 1, { id: 9 });
    const framed = Buffer.concat([Buffer.from([q.length >> 8, q.length & 0xff]), q]);
    let got = Buffer.alloc(0);
    c.setTimeout(30_000, () => c.destroy(new Error('no reply within 30 s')));
    c.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
        c.end();
        resolve(got.readUInt16BE(2 + 6));
      }
    });
    c.on('error', reject);
    c.write(framed);
  });
}

describe('kdns serve under its parent (KDNS_SUPERVISE=1)', () => {
  let port: number;
  let file: string;
  let kdns: CollectedProcess;
  let parent: number;

  before(async () => {
    port = await freePort();
    file = corefile(port, '192.0.2.1');
    kdns = serve(file);
    parent = kdns.child.pid as number;
    await waitFor(async () => (await lookup(port).catch(() => [])).length > 0, 15_000);
  });
  after(async () => {
    await kdns.stop();
  });

  test('one parent and one worker; the worker answers', async () => {
    assert.equal(childrenOf(parent).length, 1);
    assert.deepEqual(await lookup(port), ['A 192.0.2.1']);
  });

  test('a worker killed with SIGKILL is replaced, and queries sent before the next one runs are all answered', async () => {
    const [worker] = childrenOf(parent);
    process.kill(worker as number, 'SIGKILL');
    const answered = await burst(port, 300);
    assert.equal(answered, 300);
    const [next] = childrenOf(parent);
    assert.notEqual(next, worker);
    assert.match(kdns.output(), new RegExp(`worker ${worker} ended \\(SIGKILL\\) while serving; starting another`));
  });

  test('a TCP connection opened before the next worker runs is served by it', async () => {
    const [worker] = childrenOf(parent);
    process.kill(worker as number, 'SIGKILL');
    assert.equal(await tcpQuery(port), 1);
  });

  test('SIGUSR1 reaches the worker: it reloads the changed Corefile', async () => {
    writeFileSync(file, `.:${port} {\n  hosts {\n    192.0.2.2 web.example\n  }\n}\n`);
    process.kill(parent, 'SIGUSR1');
    await waitFor(async () => (await lookup(port)).includes('A 192.0.2.2'), 10_000);
    assert.deepEqual(await lookup(port, true), ['A 192.0.2.2']);
  });

  test('SIGHUP and SIGALRM end neither process: the worker logs and ignores them', async () => {
    const [worker] = childrenOf(parent);
    for (const s of ['SIGHUP', 'SIGALRM'] as const) process.kill(parent, s);
    await waitFor(() => /SIGALRM/.test(kdns.output()), 5000);
    assert.deepEqual(childrenOf(parent), [worker]);
    assert.deepEqual(await lookup(port), ['A 192.0.2.2']);
  });

  test('SIGTERM stops the worker and then the parent, exit code 0, and the port is free', async () => {
    const [worker] = childrenOf(parent);
    assert.equal(await kdns.stop(), 0);
    assert.equal(alive(worker as number), false);
    const probe = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.bind(port, '127.0.0.1', resolve);
    });
    probe.close();
  });
});

describe('the parent: startup failures and its own end', () => {
  test('a Corefile error ends the parent with the worker’s exit code and message, without a restart', async () => {
    const bad = join(dir, 'Corefile-bad');
    writeFileSync(bad, '.:53 {\n  nosuchplugin\n}\n');
    const p = serve(bad);
    const code = await p.done;
    assert.equal(code, 1);
    assert.match(p.output(), /Corefile-bad:2/);
    assert.doesNotMatch(p.output(), /starting another/);
  });

  test('a parent killed with SIGKILL takes its worker with it', async () => {
    const port = await freePort();
    const p = serve(corefile(port, '192.0.2.3'));
    await waitFor(async () => (await lookup(port).catch(() => [])).length > 0, 15_000);
    const [worker] = childrenOf(p.child.pid as number);
    p.child.kill('SIGKILL');
    await waitFor(() => !alive(worker as number), 10_000);
  });

  test('SIGQUIT ends the worker and the parent at once, exit code 0', async () => {
    const port = await freePort();
    const p = serve(corefile(port, '192.0.2.5'));
    await waitFor(async () => (await lookup(port).catch(() => [])).length > 0, 15_000);
    const [worker] = childrenOf(p.child.pid as number);
    p.child.kill('SIGQUIT');
    assert.equal(await p.done, 0);
    assert.equal(alive(worker as number), false);
  });

  test('until its worker serves, a parent’s sockets take no queries: the process already on the address answers them all', async () => {
    const port = await freePort();
    const file = corefile(port, '192.0.2.6');
    const first = serve(file, {});
    // The second kdns's worker takes 8 s to start (the parent binds at once).
    const slow = join(dir, 'slow-worker.mjs');
    writeFileSync(slow, "if (process.env.KDNS_WORKER === '1') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 8000);\n");
    let second: CollectedProcess | undefined;
    try {
      await waitFor(async () => (await lookup(port).catch(() => [])).length > 0, 15_000);
      second = spawnCollected(process.execPath, ['--import', slow, ...kdnsCommand(['serve', '--conf', file])], { env: { ...process.env, KDNS_SUPERVISE: '1' }, killAfterMs: 5000 });
      const parent = second.child.pid as number;
      await waitFor(() => childrenOf(parent).length === 1, 10_000);
      assert.equal(await burst(port, 300, 30), 300);
    } finally {
      await second?.stop();
      await first.stop();
    }
  });

  test('without KDNS_SUPERVISE, kdns serve is one process', async () => {
    const port = await freePort();
    const p = serve(corefile(port, '192.0.2.4'), {});
    await waitFor(async () => (await lookup(port).catch(() => [])).length > 0, 15_000);
    assert.deepEqual(childrenOf(p.child.pid as number), []);
    await p.stop();
  });
});
