// Reconcile passes over a real manifest directory: idempotent, a failing render never clobbers
// the last good objects, and each state is logged once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { DirectoryBackend } from './dirbackend.js';
import { Reconciler } from './reconcile.js';

const root = new URL('../../', import.meta.url);
const example = (name: string): string => fileURLToPath(new URL(`examples/operator/${name}`, root));

function setup(files: Record<string, string> = {}): { dir: string; logs: string[]; reconciler: Reconciler; generated: (name: string) => string; clock: { now: Date } } {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-reconcile-'));
  for (const [name, from] of Object.entries(files)) copyFileSync(from, join(dir, name));
  const logs: string[] = [];
  const clock = { now: new Date('2024-05-01T12:00:00Z') };
  const reconciler = new Reconciler(new DirectoryBackend(dir), { render: {}, log: (l) => logs.push(l), now: () => clock.now });
  return { dir, logs, reconciler, generated: (name) => join(dir, 'generated', name), clock };
}

const mtimes = (dir: string): Record<string, number> => Object.fromEntries(readdirSync(join(dir, 'generated')).map((f) => [f, statSync(join(dir, 'generated', f)).mtimeMs]));

test('reconcile: first pass writes the objects, the Corefile and the status', async () => {
  const s = setup({ 'dns.yaml': example('dns-forwarding.yaml') });
  const outcome = await s.reconciler.pass();
  assert.deepEqual(outcome, { kind: 'applied', written: ['ConfigMap/dns-default', 'DaemonSet/dns-default', 'DaemonSet/node-resolver', 'Service/dns-default', 'ConfigMap/kdns-webhook'], failed: [], statusChanged: true });
  assert.deepEqual(readdirSync(join(s.dir, 'generated')).sort(), [
    'Corefile',
    'configmap-dns-default.yaml',
    'configmap-kdns-webhook.yaml',
    'daemonset-dns-default.yaml',
    'daemonset-node-resolver.yaml',
    'dns-default-status.yaml',
    'service-dns-default.yaml',
  ]);
  const cm = parse(readFileSync(s.generated('configmap-dns-default.yaml'), 'utf8')) as { data: { Corefile: string } };
  assert.equal(readFileSync(s.generated('Corefile'), 'utf8'), cm.data.Corefile);
  assert.match(cm.data.Corefile, /^foo\.com:5353 \{/);
});

test('reconcile: idempotent — a settled second pass writes nothing', async () => {
  const s = setup({ 'dns.yaml': example('dns-forwarding.yaml') });
  await s.reconciler.pass();
  await s.reconciler.pass(); // the DaemonSets now exist: the status says so once
  const before = mtimes(s.dir);
  s.clock.now = new Date('2024-05-01T13:00:00Z');
  const outcome = await s.reconciler.pass();
  assert.deepEqual(outcome, { kind: 'applied', written: [], failed: [], statusChanged: false });
  assert.deepEqual(mtimes(s.dir), before);
});

test('reconcile: a rejected resource keeps every object and says why in the status', async () => {
  const s = setup({ 'dns.yaml': example('dns-forwarding.yaml') });
  await s.reconciler.pass();
  const corefile = readFileSync(s.generated('Corefile'), 'utf8');
  // A field at the top of the object that makes it unusable as a whole.
  writeFileSync(join(s.dir, 'dns.yaml'), JSON.stringify({ apiVersion: 'operator.openshift.io/v1', kind: 'DNS', metadata: { name: 'default' }, spec: 7 }));
  const outcome = await s.reconciler.pass();
  assert.equal(outcome.kind, 'rejected');
  assert.equal(readFileSync(s.generated('Corefile'), 'utf8'), corefile);
  const status = parse(readFileSync(s.generated('dns-default-status.yaml'), 'utf8')) as { status: { conditions: Array<{ type: string; status: string; reason: string; message: string }> } };
  const cond = status.status.conditions.find((c) => c.type === 'ConfigurationValid');
  assert.equal(`${cond?.status}/${cond?.reason}`, 'False/Rejected');
  assert.match(cond?.message ?? '', /spec: Invalid value: 7: must be an object/);
});

test('reconcile: a manifest that does not parse is skipped and reported once; the objects stay', async () => {
  const s = setup({ 'dns.yaml': example('dns-forwarding.yaml') });
  await s.reconciler.pass();
  const corefile = readFileSync(s.generated('Corefile'), 'utf8');
  writeFileSync(join(s.dir, 'dns.yaml'), 'kind: DNS\n  bad: [indent\n');
  assert.deepEqual(await s.reconciler.pass(), { kind: 'no-dns' });
  await s.reconciler.pass();
  assert.equal(readFileSync(s.generated('Corefile'), 'utf8'), corefile);
  assert.equal(s.logs.filter((l) => l.startsWith('dns.yaml:')).length, 1, s.logs.join('\n'));
  assert.ok(s.logs.includes('no DNS resource named "default": nothing to do'));
});

test('reconcile: a placement matching no node keeps the current placement; Nodes come from the directory', async () => {
  const s = setup({ 'dns.yaml': example('dns-infra.yaml'), 'nodes.yaml': example('nodes.yaml') });
  await s.reconciler.pass();
  writeFileSync(join(s.dir, 'dns.yaml'), readFileSync(example('dns-nowhere.yaml')));
  await s.reconciler.pass();
  const ds = parse(readFileSync(s.generated('daemonset-dns-default.yaml'), 'utf8')) as { spec: { template: { spec: { nodeSelector: Record<string, string> } } } };
  assert.deepEqual(ds.spec.template.spec.nodeSelector, { 'node-role.kubernetes.io/infra': '' });
  assert.ok(s.logs.some((l) => l.startsWith('spec.nodePlacement refused, the current placement is kept: nodePlacement selects no schedulable node')));
});

test('reconcile: Unmanaged leaves the objects alone', async () => {
  const s = setup({ 'dns.yaml': example('dns-forwarding.yaml') });
  await s.reconciler.pass();
  const corefile = readFileSync(s.generated('Corefile'), 'utf8');
  writeFileSync(join(s.dir, 'dns.yaml'), readFileSync(join(s.dir, 'dns.yaml'), 'utf8').replace('spec:', 'spec:\n  managementState: Unmanaged').replace('foo.com', 'changed.com'));
  assert.deepEqual(await s.reconciler.pass(), { kind: 'unmanaged' });
  assert.equal(readFileSync(s.generated('Corefile'), 'utf8'), corefile);
});

test('reconcile: a hand edit of a generated file is put back by the next pass', async () => {
  const s = setup({ 'dns.yaml': example('dns-forwarding.yaml') });
  await s.reconciler.pass();
  const corefile = readFileSync(s.generated('Corefile'), 'utf8');
  const cm = readFileSync(s.generated('configmap-dns-default.yaml'), 'utf8');
  writeFileSync(s.generated('Corefile'), '.:5353 {\n  forward . 8.8.8.8\n}\n');
  writeFileSync(s.generated('configmap-dns-default.yaml'), cm.replace('foo.com:5353', 'bar.com:5353'));
  const outcome = await s.reconciler.pass();
  assert.deepEqual(outcome.kind === 'applied' ? outcome.written : [], ['ConfigMap/dns-default']);
  assert.equal(readFileSync(s.generated('Corefile'), 'utf8'), corefile);
  assert.equal(readFileSync(s.generated('configmap-dns-default.yaml'), 'utf8'), cm);
});
