// Every Corefile the operator renders must be one kdns itself runs: render each seed example,
// start the real server on it (free loopback ports instead of 5353/8080/8181/9153), and ask it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../server/log.js';
import { startServer } from '../server/server.js';
import { dig } from '../../test/util/dig.js';
import { freePort } from '../../test/util/net.js';
import { dnsFromText } from './io.js';
import { render } from './render.js';

const root = new URL('../../', import.meta.url);
const clusterDir = fileURLToPath(new URL('examples/cluster/', root));
const fixtures = [
  ...readdirSync(new URL('examples/operator/', root))
    .filter((f) => f.startsWith('dns-'))
    .map((f) => `examples/operator/${f}`),
  // Entries that are invalid are left out; what remains must still run.
  ...readdirSync(new URL('examples/operator/invalid/', root)).map((f) => `examples/operator/invalid/${f}`),
];

/** caBundle ConfigMap names a DNS resource refers to. */
function caBundlesOf(dns: unknown): string[] {
  return [...JSON.stringify(dns).matchAll(/"caBundle":\{"name":"([^"]+)"\}/g)].map((m) => m[1]!);
}

for (const file of fixtures) {
  test(`kdns serve runs the Corefile rendered from ${file}`, async () => {
    const r = render({ dns: dnsFromText(readFileSync(new URL(file, root), 'utf8'), file), now: new Date(), options: {} });
    if (!r.ok) {
      // Only a resource the operator refuses whole renders nothing (and so has nothing to serve).
      assert.deepEqual(
        r.errors.map((e) => e.field),
        ['metadata.name'],
      );
      return;
    }
    const ports = { dns: await freePort(), health: await freePort(), ready: await freePort(), metrics: await freePort() };
    const dir = mkdtempSync(join(tmpdir(), 'kdns-op-serve-'));
    // What the DaemonSet mounts from caBundle ConfigMaps: here, the system's own CA bundle.
    const caBundleRoot = join(dir, 'ca');
    for (const name of caBundlesOf(r.dns)) {
      mkdirSync(join(caBundleRoot, name), { recursive: true });
      copyFileSync('/etc/ssl/certs/ca-certificates.crt', join(caBundleRoot, name, 'ca-bundle.crt'));
    }
    const rendered = render({ dns: r.dns, now: new Date(), options: { ports, caBundleRoot } });
    assert.ok(rendered.ok);
    const corefilePath = join(dir, 'Corefile');
    writeFileSync(corefilePath, rendered.corefile);
    const logs: string[] = [];
    const server = await startServer({ corefilePath, options: { clusterDir }, log: createLogger((level, line) => void logs.push(`[${level}] ${line}`)) });
    try {
      const answer = await dig('kubernetes.default.svc.cluster.local', 'A', { port: ports.dns });
      assert.equal(answer.status, 'NOERROR', answer.raw);
      assert.equal(answer.answer.length, 1);
      const ready = await fetch(`http://127.0.0.1:${ports.ready}/ready`);
      assert.equal(ready.status, 200);
      const health = await fetch(`http://127.0.0.1:${ports.health}/health`);
      assert.equal(health.status, 200);
    } finally {
      await server.stop();
    }
  });
}
