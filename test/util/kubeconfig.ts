// A kubeconfig file for a test API server on plain HTTP (client-node refuses plain HTTP unless
// TLS verification is off).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Writes a kubeconfig whose current context points at `url` with a bearer token; returns its path. */
export function writeKubeconfig(url: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'kdns-kubeconfig-')), 'config');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'test', user: { token: 'test-token' } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'test' } }],
      'current-context': 'test',
    }),
  );
  return file;
}
