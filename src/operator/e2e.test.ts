// Local end-to-end: `kdns operator run --cluster DIR` and `kdns serve` on the Corefile it
// generates, with a real BIND upstream. Adding a forwardPlugin makes its domain resolve through
// the upstream within seconds; breaking it keeps the previous config serving, and the status
// says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { dig } from '../../test/util/dig.js';
import { startKdns } from '../../test/util/kdns.js';
import { freePort, waitFor } from '../../test/util/net.js';
import { startNamed } from '../../test/util/upstream.js';

const dnsResource = (plugins: unknown[]): string =>
  JSON.stringify({ apiVersion: 'operator.openshift.io/v1', kind: 'DNS', metadata: { name: 'default' }, spec: { pluginConfig: { forwardPlugins: plugins } } }, null, 2);

const CLUSTER = `apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec: {type: ClusterIP, clusterIP: 10.96.0.50, ports: [{name: http, port: 80, protocol: TCP}]}
`;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

test('operator run + kdns serve: a new forwarded domain resolves through a real upstream; a broken edit keeps it serving', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-e2e-'));
  mkdirSync(join(dir, 'cluster'));
  writeFileSync(join(dir, 'cluster', 'demo.yaml'), CLUSTER);
  const dnsFile = join(dir, 'cluster', 'dns.yaml');
  writeFileSync(dnsFile, dnsResource([]));

  const named = await startNamed(await freePort(), { 'example.test': 'www IN A 192.0.2.80' });
  const ports = { dns: await freePort(), health: await freePort(), ready: await freePort(), metrics: await freePort() };
  const clusterDir = join(dir, 'cluster');
  const generated = join(clusterDir, 'generated');
  const operator = startKdns([
    'operator',
    'run',
    '--cluster',
    clusterDir,
    '--resync',
    '1s',
    '--reload-interval',
    '2s',
    '--dns-port',
    String(ports.dns),
    '--health-port',
    String(ports.health),
    '--ready-port',
    String(ports.ready),
    '--metrics-port',
    String(ports.metrics),
  ]);
  let server: ReturnType<typeof startKdns> | undefined;
  const context = (): string => `\n--- operator:\n${operator.output()}\n--- serve:\n${server?.output() ?? ''}`;
  const conditions = (): Condition[] => {
    const file = join(generated, 'dns-default-status.yaml');
    return existsSync(file) ? ((parse(readFileSync(file, 'utf8')) as { status: { conditions: Condition[] } }).status.conditions ?? []) : [];
  };
  const www = async (): Promise<string[]> => {
    const r = await dig('www.example.test', 'A', { port: ports.dns, timeout: 1 }).catch(() => undefined);
    return r?.status === 'NOERROR' ? r.answer.map((a) => a.data) : [];
  };
  try {
    await waitFor(() => existsSync(join(generated, 'Corefile')), 15_000).catch((e: Error) => assert.fail(`${e.message}${context()}`));
    server = startKdns(['serve', '--conf', join(generated, 'Corefile'), '--cluster', clusterDir]);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.ready}/ready`).catch(() => undefined))?.status === 200, 15_000).catch((e: Error) => assert.fail(`${e.message}${context()}`));
    // /ready may answer before the DNS listeners are open: wait for an answer, not for the probe.
    const cluster = await waitFor(async () => (await dig('web.demo.svc.cluster.local', 'A', { port: ports.dns, timeout: 1 }).catch(() => undefined)) ?? false, 15_000).catch((e: Error) =>
      assert.fail(`${e.message}${context()}`),
    );
    assert.deepEqual(
      cluster.answer.map((a) => a.data),
      ['10.96.0.50'],
    );

    // Add forwarding for example.test to the local bind9.
    const added = Date.now();
    writeFileSync(dnsFile, dnsResource([{ domain: 'example.test', nameServers: [`127.0.0.1:${named.port}`], policy: 'Sequential' }]));
    await waitFor(async () => (await www()).includes('192.0.2.80'), 15_000).catch((e: Error) => assert.fail(`${e.message}${context()}`));
    const seconds = (Date.now() - added) / 1000;
    assert.ok(seconds < 10, `forwarding took ${seconds}s`);

    // Break it: the previous forwarding keeps serving, and the status says why.
    writeFileSync(dnsFile, dnsResource([{ domain: 'example.test', nameServers: ['upstream.example.test'], policy: 'Sequential' }]));
    await waitFor(() => conditions().find((c) => c.type === 'ConfigurationValid' && c.status === 'False'), 15_000).catch((e: Error) => assert.fail(`${e.message}${context()}`));
    const cond = conditions().find((c) => c.type === 'ConfigurationValid');
    assert.match(cond?.message ?? '', /spec\.pluginConfig\.forwardPlugins\[0\] \("example\.test"\): the last good version is kept: spec\.pluginConfig\.forwardPlugins\[0\]\.nameServers\[0\]: Invalid value: "upstream\.example\.test"/);
    assert.match(operator.output(), /the last good version is kept/);
    // Give reload a chance to pick up anything it would (it must not: the Corefile kept the entry).
    await new Promise((r) => setTimeout(r, 3000));
    assert.deepEqual(await www(), ['192.0.2.80']);
    assert.match(readFileSync(join(generated, 'Corefile'), 'utf8'), new RegExp(`example\\.test:${ports.dns} \\{[^}]*forward \\. 127\\.0\\.0\\.1:${named.port}`));

    // A resource that is not usable at all (not named default) changes nothing either.
    writeFileSync(dnsFile, dnsResource([]).replace('"default"', '"other"'));
    await waitFor(() => operator.output().includes('DNS "other" ignored'), 15_000).catch((e: Error) => assert.fail(`${e.message}${context()}`));
    assert.deepEqual(await www(), ['192.0.2.80']);
  } finally {
    await server?.stop();
    await operator.stop();
    await named.stop();
  }
});
