import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { runKdns } from '../../test/util/kdns.js';

const root = new URL('../../', import.meta.url);
const path = (rel: string): string => fileURLToPath(new URL(rel, root));

interface Case {
  name: string;
  args: string[];
  code: number;
  /** kind/name of every item printed, in order; [] = nothing on stdout. */
  items: string[];
  stderr: RegExp[];
}

const ALL = ['ConfigMap/dns-default', 'DaemonSet/dns-default', 'DaemonSet/node-resolver', 'Service/dns-default', 'ConfigMap/kdns-webhook', 'DNS/default'];

const cases: Case[] = [
  { name: 'a valid DNS renders, exit 0', args: ['-f', path('examples/operator/dns-forwarding.yaml'), '--nodes', path('examples/operator/nodes.yaml')], code: 0, items: ALL, stderr: [/^$/] },
  {
    name: 'an invalid entry: objects still printed, entry named, exit 1',
    args: ['-f', path('examples/operator/invalid/bad-nameserver.yaml')],
    code: 1,
    items: ALL,
    stderr: [/bad-nameserver\.yaml: spec\.pluginConfig\.forwardPlugins\[0\] \("foo\.com"\): left out of the Corefile: .*"dns\.foo\.com"/],
  },
  {
    name: 'a placement matching no node is refused with the reason, exit 1',
    args: ['-f', path('examples/operator/dns-nowhere.yaml'), '--nodes', path('examples/operator/nodes.yaml')],
    code: 1,
    items: ALL,
    stderr: [/spec\.nodePlacement: refused: nodePlacement selects no schedulable node: .*nodes considered: cp-0 \(/],
  },
  { name: 'not the default DNS: nothing printed, exit 1', args: ['-f', path('examples/operator/invalid/not-default.yaml')], code: 1, items: [], stderr: [/metadata\.name: Invalid value: "secondary"/] },
  { name: 'missing file, exit 1', args: ['-f', '/nonexistent/dns.yaml'], code: 1, items: [], stderr: [/\/nonexistent\/dns\.yaml: no such file/] },
  { name: 'unknown output format, exit 2', args: ['-f', path('examples/operator/dns-forwarding.yaml'), '-o', 'xml'], code: 2, items: [], stderr: [/-o: unsupported format "xml"/] },
  { name: 'bad service CIDR, exit 2', args: ['-f', path('examples/operator/dns-forwarding.yaml'), '--service-cidr', '10.0.0.0'], code: 2, items: [], stderr: [/--service-cidr/] },
  { name: 'no -f, exit 2', args: [], code: 2, items: [], stderr: [/required option '-f, --file/] },
];

for (const c of cases) {
  test(`kdns operator render: ${c.name}`, async () => {
    const r = await runKdns(['operator', 'render', ...c.args]);
    assert.equal(r.code, c.code, r.stderr);
    const printed = r.stdout === '' ? [] : (parse(r.stdout) as { items: Array<{ kind: string; metadata: { name: string } }> }).items.map((i) => `${i.kind}/${i.metadata.name}`);
    assert.deepEqual(printed, c.items);
    for (const re of c.stderr) assert.match(r.stderr.replace(/npm warn.*\n/g, '').trim(), re);
  });
}

test('kdns operator render -o json prints the same List as JSON', async () => {
  const r = await runKdns(['operator', 'render', '-f', path('examples/operator/dns-forwarding.yaml'), '-o', 'json']);
  assert.equal(r.code, 0);
  const list = JSON.parse(r.stdout) as { kind: string; items: Array<{ kind: string }> };
  assert.equal(list.kind, 'List');
  assert.deepEqual(
    list.items.map((i) => i.kind),
    ['ConfigMap', 'DaemonSet', 'DaemonSet', 'Service', 'ConfigMap', 'DNS'],
  );
});

test('kdns operator crd prints deploy/operator/crd-dns.yaml', async () => {
  const r = await runKdns(['operator', 'crd']);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, readFileSync(path('deploy/operator/crd-dns.yaml'), 'utf8'));
});

test('kdns operator run --once --cluster DIR: one pass writes generated/, exit 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-run-once-'));
  copyFileSync(path('examples/operator/dns-forwarding.yaml'), join(dir, 'dns.yaml'));
  const r = await runKdns(['operator', 'run', '--once', '--cluster', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(readdirSync(join(dir, 'generated')).sort(), [
    'Corefile',
    'configmap-dns-default.yaml',
    'configmap-kdns-webhook.yaml',
    'daemonset-dns-default.yaml',
    'daemonset-node-resolver.yaml',
    'dns-default-status.yaml',
    'service-dns-default.yaml',
  ]);
  assert.match(r.stderr, /operator: applied ConfigMap\/dns-default/);
});

const runUsage: Array<[string, string[], RegExp]> = [
  ['no source', ['operator', 'run', '--once'], /give exactly one of --cluster DIR, --kubeconfig PATH or --in-cluster/],
  ['two sources', ['operator', 'run', '--once', '--cluster', '/tmp', '--in-cluster'], /give exactly one of/],
  ['reload interval below 2s', ['operator', 'run', '--once', '--cluster', '/tmp', '--reload-interval', '1s'], /--reload-interval: at least 2s/],
  ['bad port', ['operator', 'run', '--once', '--cluster', '/tmp', '--dns-port', '70000'], /--dns-port: invalid port "70000"/],
];

for (const [name, args, want] of runUsage) {
  test(`kdns operator run: ${name} is a usage error (exit 2)`, async () => {
    const r = await runKdns(args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, want);
  });
}

test('kdns operator run --once with no DNS resource: nothing written, exit 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-run-empty-'));
  const r = await runKdns(['operator', 'run', '--once', '--cluster', dir]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no DNS resource named "default": nothing to do/);
  assert.equal(existsSync(join(dir, 'generated')), false);
});
