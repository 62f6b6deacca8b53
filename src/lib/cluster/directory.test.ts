import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, open, rm, writeFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_FILE_BYTES, DirectorySource, maxFileBytesFrom, type DirectorySourceOptions } from './directory.js';
import { sleep, waitFor } from '../../../test/util/net.js';
import type { StoreDelta } from './store.js';

const svc = (name: string, ip: string, ns = 'demo'): string => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec: {clusterIP: ${ip}, ports: [{name: http, port: 80}]}
`;

interface Step {
  what: string;
  /** File writes (text) and removals (null), relative to the folder. */
  files: Record<string, string | null>;
  /** `name.namespace=ip` for every service in the store afterwards. */
  services: string[];
  /** Service keys the step's delta reported. */
  changed: string[];
  /** Error lines (file relative) the source reports afterwards. */
  errors: string[];
}

const steps: Step[] = [
  {
    what: 'initial load of two files',
    files: { 'a.yaml': svc('a', '10.0.0.1'), 'b.yaml': svc('b', '10.0.0.2') },
    services: ['a.demo=10.0.0.1', 'b.demo=10.0.0.2'],
    changed: ['a.demo', 'b.demo'],
    errors: [],
  },
  {
    what: 'editing one service changes only that service',
    files: { 'a.yaml': svc('a', '10.0.0.11') },
    services: ['a.demo=10.0.0.11', 'b.demo=10.0.0.2'],
    changed: ['a.demo'],
    errors: [],
  },
  {
    what: 'rewriting a file with the same content changes nothing',
    files: { 'b.yaml': `# touched\n${svc('b', '10.0.0.2')}` },
    services: ['a.demo=10.0.0.11', 'b.demo=10.0.0.2'],
    changed: [],
    errors: [],
  },
  {
    what: 'a broken file keeps what it held and says where',
    files: { 'a.yaml': 'apiVersion: v1\nkind: Service\nmetadata: {name: a\n' },
    services: ['a.demo=10.0.0.11', 'b.demo=10.0.0.2'],
    changed: [],
    errors: ['a.yaml:3'],
  },
  {
    what: 'an invalid field is a file error too',
    files: { 'a.yaml': svc('a', '10.0.0.999') },
    services: ['a.demo=10.0.0.11', 'b.demo=10.0.0.2'],
    changed: [],
    errors: ['a.yaml:4'],
  },
  {
    what: 'fixing it applies the new content',
    files: { 'a.yaml': svc('a', '10.0.0.12') },
    services: ['a.demo=10.0.0.12', 'b.demo=10.0.0.2'],
    changed: ['a.demo'],
    errors: [],
  },
  {
    what: 'removing a file removes its objects',
    files: { 'b.yaml': null },
    services: ['a.demo=10.0.0.12'],
    changed: ['b.demo'],
    errors: [],
  },
  {
    what: 'a new file in a new subfolder is read',
    files: { 'sub/c.json': JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'c', namespace: 'x' }, spec: { clusterIP: '10.0.0.3' } }) },
    services: ['a.demo=10.0.0.12', 'c.x=10.0.0.3'],
    changed: ['c.x'],
    errors: [],
  },
  {
    what: 'moving an object between files keeps it',
    files: { 'a.yaml': null, 'sub/a2.yaml': svc('a', '10.0.0.12') },
    services: ['a.demo=10.0.0.12', 'c.x=10.0.0.3'],
    changed: ['a.demo'],
    errors: [],
  },
  {
    what: 'a service written without a namespace lands in default',
    files: { 'd.yaml': `apiVersion: v1\nkind: Service\nmetadata: {name: d}\nspec: {clusterIP: 10.0.0.4}\n---\n${svc('e', '10.0.0.5')}` },
    services: ['a.demo=10.0.0.12', 'c.x=10.0.0.3', 'd.default=10.0.0.4', 'e.demo=10.0.0.5'],
    changed: ['d.default', 'e.demo'],
    errors: [],
  },
  {
    what: 'editing its file keeps it, and drops only what the file no longer holds',
    files: { 'd.yaml': 'apiVersion: v1\nkind: Service\nmetadata: {name: d}\nspec: {clusterIP: 10.0.0.4}\n' },
    services: ['a.demo=10.0.0.12', 'c.x=10.0.0.3', 'd.default=10.0.0.4'],
    changed: ['e.demo'],
    errors: [],
  },
  {
    what: 'files that are not manifests are ignored',
    files: { 'README.md': '# not yaml: [', '.hidden.yaml': 'kind: [' },
    services: ['a.demo=10.0.0.12', 'c.x=10.0.0.3', 'd.default=10.0.0.4'],
    changed: [],
    errors: [],
  },
];

// Small files are parsed on the event loop, large ones in a child process: the same steps, both ways.
for (const [where, parserProcessAboveBytes] of [['on the event loop', Infinity], ['in a child process', 0]] as const) {
test(`DirectorySource applies each file as a unit, incrementally (parsed ${where})`, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kdns-dirsrc-'));
  const source = new DirectorySource(dir, undefined, { pollMs: 0, debounceMs: 10_000, settleMs: 0, parserProcessAboveBytes });
  let deltas: StoreDelta[] = [];
  source.store.subscribe((d) => deltas.push(d));
  try {
    let first = true;
    for (const step of steps) {
      await t.test(step.what, async () => {
        for (const [file, text] of Object.entries(step.files)) {
          const p = join(dir, file);
          if (text === null) await unlink(p);
          else {
            await mkdir(join(p, '..'), { recursive: true });
            await writeFile(p, text);
          }
        }
        deltas = [];
        if (first) await source.start();
        else await source.rescan();
        first = false;
        const services = [...source.store.allServices()].map((s) => `${s.key}=${s.clusterIPs.join(',')}`).sort();
        assert.deepEqual(services, step.services);
        const changed = [...new Set(deltas.flatMap((d) => [...d.services]))].sort();
        assert.deepEqual(changed, step.changed);
        assert.deepEqual(
          source.currentErrors().map((e) => `${e.file.slice(dir.length + 1)}:${e.line}`),
          step.errors,
        );
      });
    }
  } finally {
    await source.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
}

test('DirectorySource sees a change through file-system events within a second', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kdns-dirwatch-'));
  await writeFile(join(dir, 'a.yaml'), svc('a', '10.0.0.1'));
  const source = new DirectorySource(dir, undefined, { pollMs: 0 });
  try {
    await source.start();
    assert.deepEqual(source.store.service('a.demo')?.clusterIPs, ['10.0.0.1']);
    const seen = new Promise<number>((resolve) => {
      const started = Date.now();
      source.store.subscribe((d) => {
        if (d.services.has('a.demo')) resolve(Date.now() - started);
      });
    });
    await writeFile(join(dir, 'a.yaml'), svc('a', '10.0.0.2'));
    const ms = await Promise.race([seen, new Promise<number>((r) => setTimeout(() => r(Infinity), 2000))]);
    assert.ok(ms < 1000, `change seen after ${ms} ms`);
    assert.deepEqual(source.store.service('a.demo')?.clusterIPs, ['10.0.0.2']);
  } finally {
    await source.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('DirectorySource: the store is synced after start even when a file is broken', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kdns-dirbroken-'));
  await writeFile(join(dir, 'good.yaml'), svc('g', '10.0.0.1'));
  await writeFile(join(dir, 'bad.yaml'), 'kind: [\n');
  const lines: string[] = [];
  const source = new DirectorySource(dir, undefined, { pollMs: 0, log: { info: () => {}, warn: (m) => lines.push(m), error: (m) => lines.push(m) } });
  try {
    await source.start();
    assert.equal(source.store.synced, true);
    assert.deepEqual([...source.store.allServices()].map((s) => s.key), ['g.demo']);
    assert.equal(lines.length, 1);
    assert.match(lines[0] as string, /bad\.yaml:1: YAML: /);
  } finally {
    await source.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('DirectorySource: ignored kinds are never stored', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kdns-dirkinds-'));
  await writeFile(join(dir, 'a.yaml'), `${svc('a', '10.0.0.1')}---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: demo}\nstatus: {podIP: 10.1.0.1}\n`);
  const source = new DirectorySource(dir, undefined, { pollMs: 0, ignoreKinds: new Set(['Pod']) });
  try {
    await source.start();
    assert.deepEqual(source.store.counts(), { namespaces: 0, services: 1, endpointGroups: 0, pods: 0, nodes: 0 });
  } finally {
    await source.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('DirectorySource: with nodeName, only the pods of that node; a pod that moves away leaves, one that moves in arrives', async (t) => {
  const pod = (name: string, node: string, ip: string): string => `---\napiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: demo}\nspec: {nodeName: ${node}}\nstatus: {phase: Running, podIP: ${ip}}\n`;
  const dir = await mkdtemp(join(tmpdir(), 'kdns-dirnode-'));
  // What a workloads block without kubernetes reads: pods only, of its node.
  const source = new DirectorySource(dir, undefined, { pollMs: 0, debounceMs: 10_000, settleMs: 0, ignoreKinds: new Set(['Namespace', 'Service', 'Endpoints', 'EndpointSlice', 'Node', 'ServiceImport']), nodeName: 'node-a' });
  const ips = (): string[] => ['10.1.0.1', '10.1.0.2', '10.2.0.1'].filter((ip) => source.store.podsByIP(ip).length > 0);
  const steps: Array<{ what: string; text: string; ips: string[] }> = [
    { what: 'first load: node-a\'s pod only, no service', text: `${svc('a', '10.0.0.1')}${pod('a1', 'node-a', '10.1.0.1')}${pod('b1', 'node-b', '10.2.0.1')}`, ips: ['10.1.0.1'] },
    { what: 'a new pod on node-a arrives, b1 moves onto node-a', text: `${pod('a1', 'node-a', '10.1.0.1')}${pod('a2', 'node-a', '10.1.0.2')}${pod('b1', 'node-a', '10.2.0.1')}`, ips: ['10.1.0.1', '10.1.0.2', '10.2.0.1'] },
    { what: 'a1 moves to node-b and leaves; the others stay', text: `# a1 moved\n${pod('a1', 'node-b', '10.1.0.1')}${pod('a2', 'node-a', '10.1.0.2')}${pod('b1', 'node-a', '10.2.0.1')}`, ips: ['10.1.0.2', '10.2.0.1'] },
  ];
  try {
    let first = true;
    for (const step of steps) {
      await t.test(step.what, async () => {
        await writeFile(join(dir, 'cluster.yaml'), step.text);
        if (first) await source.start();
        else await source.rescan();
        first = false;
        assert.deepEqual(ips(), step.ips);
        assert.equal(source.store.counts().services, 0);
      });
    }
  } finally {
    await source.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

/** A source on a fresh folder whose log lines are collected as `level message`. */
async function logged(files: Record<string, string>, opts: DirectorySourceOptions) {
  const dir = await mkdtemp(join(tmpdir(), 'kdns-dirlog-'));
  for (const [f, text] of Object.entries(files)) await writeFile(join(dir, f), text);
  const lines: string[] = [];
  // File paths are logged relative to the working directory; the tests compare base names.
  const at = (level: string) => (m: string) => lines.push(`${level} ${m.replace(/\S*\/(?=[^/\s]+\.yaml)/g, '')}`);
  const source = new DirectorySource(dir, undefined, { pollMs: 0, ...opts, log: { info: at('info'), warn: at('warn'), error: at('error') } });
  await source.start();
  lines.length = 0;
  return { dir, source, lines, done: async () => {
    await source.stop();
    await rm(dir, { recursive: true, force: true });
  } };
}

test('DirectorySource: every change after the first load is logged, removal too', async () => {
  const { dir, source, lines, done } = await logged({ 'a.yaml': svc('a', '10.0.0.1'), 'b.yaml': `${svc('b', '10.0.0.2')}---\n${svc('c', '10.0.0.3')}` }, { settleMs: 0, debounceMs: 10_000 });
  try {
    await writeFile(join(dir, 'a.yaml'), `${svc('a', '10.0.0.9')}---\n${svc('d', '10.0.0.4')}`);
    await source.rescan();
    await writeFile(join(dir, 'b.yaml'), svc('b', '10.0.0.2'));
    await source.rescan();
    await unlink(join(dir, 'b.yaml'));
    await source.rescan();
    assert.deepEqual(lines, [
      'info a.yaml: applied: 1 added, 1 changed, 0 removed',
      'info b.yaml: applied: 0 added, 0 changed, 1 removed',
      'info b.yaml: removed: 1 objects dropped',
    ]);
  } finally {
    await done();
  }
});

test('DirectorySource: a file over the size limit is not read, says so, and keeps what it held', async () => {
  const { dir, source, lines, done } = await logged({ 'a.yaml': svc('a', '10.0.0.1') }, { settleMs: 0, debounceMs: 10_000, maxFileBytes: 1000 });
  try {
    const big = `${svc('a', '10.0.0.2')}${'# padding\n'.repeat(100)}`;
    await writeFile(join(dir, 'a.yaml'), big);
    await source.rescan();
    assert.deepEqual(source.store.service('a.demo')?.clusterIPs, ['10.0.0.1']);
    assert.deepEqual(lines, [
      `error a.yaml: not read: ${big.length} bytes, over the limit of 1000 (KDNS_CLUSTER_MAX_FILE_BYTES)`,
      'warn a.yaml: keeping the 1 objects from its last good version',
    ]);
    assert.deepEqual(source.currentErrors().map((e) => e.line), [0]);
  } finally {
    await done();
  }
});

test('DirectorySource: a file still being written is read once, when it has stopped changing', async () => {
  const { dir, source, lines, done } = await logged({}, { settleMs: 400, debounceMs: 10 });
  try {
    // The first half is valid YAML on its own: applied, it would define only `a`.
    const fh = await open(join(dir, 'ab.yaml'), 'w');
    await fh.write(`${svc('a', '10.0.0.1')}---\n`);
    for (let i = 0; i < 4; i++) {
      await sleep(150);
      await fh.write(`# still writing ${i}\n`);
    }
    assert.equal(source.store.service('a.demo'), undefined, 'applied while still changing');
    await fh.write(svc('b', '10.0.0.2'));
    await fh.close();
    await waitFor(() => source.store.service('b.demo'), 5000);
    await sleep(600);
    assert.deepEqual(lines, ['info ab.yaml: applied: 2 added, 0 changed, 0 removed']);
  } finally {
    await done();
  }
});

test('maxFileBytesFrom reads KDNS_CLUSTER_MAX_FILE_BYTES', () => {
  const cases: Array<[string | undefined, number | string]> = [
    [undefined, DEFAULT_MAX_FILE_BYTES],
    ['', DEFAULT_MAX_FILE_BYTES],
    ['1000', 1000],
    ['64Ki', 65536],
    ['64Mi', 67108864],
    ['1Gi', 1073741824],
    ['0', 'KDNS_CLUSTER_MAX_FILE_BYTES: invalid size "0" (bytes, or a number with Ki, Mi or Gi)'],
    ['64MB', 'KDNS_CLUSTER_MAX_FILE_BYTES: invalid size "64MB" (bytes, or a number with Ki, Mi or Gi)'],
    ['-5', 'KDNS_CLUSTER_MAX_FILE_BYTES: invalid size "-5" (bytes, or a number with Ki, Mi or Gi)'],
  ];
  for (const [value, want] of cases) {
    if (typeof want === 'number') assert.equal(maxFileBytesFrom(value), want, String(value));
    else assert.throws(() => maxFileBytesFrom(value), { message: want });
  }
});
