// Pieces shared by the tests that run kdns with a stock manifest's arguments in network
// namespaces: an authoritative named on a namespace's address (the node's upstream resolver),
// the fake Kubernetes API behind HTTPS (what in-cluster config reaches), a service-account
// directory as the kubelet mounts it, and HTTP GETs made from inside a namespace.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { helperScript } from './kdns.js';
import type { NetNs, Proc } from './netns.js';
import { waitFor } from './net.js';

export function scratchDir(tag: string): string {
  return mkdtempSync(join(tmpdir(), `kdns-${tag}-`));
}

/** named answering `zones` (origin → zone text) authoritatively on address:53 inside `ns`. */
export async function namedIn(ns: NetNs, address: string, zones: Record<string, string>): Promise<Proc> {
  const dir = scratchDir('named');
  const decls = Object.entries(zones).map(([origin, text]) => {
    const file = join(dir, `${origin}.zone`);
    writeFileSync(file, text);
    return `zone "${origin}" { type primary; file "${file}"; };`;
  });
  const conf = join(dir, 'named.conf');
  writeFileSync(
    conf,
    `controls { };\noptions {\n  directory "${dir}";\n  pid-file none;\n  listen-on port 53 { ${address}; };\n  listen-on-v6 { none; };\n  recursion no;\n  dnssec-validation no;\n  notify no;\n};\n${decls.join('\n')}\n`,
  );
  const named = ns.spawn(['named', '-g', '-c', conf]);
  await waitFor(() => named.output().includes('running') || named.child.exitCode !== null, 20_000, 50);
  if (named.child.exitCode !== null) throw new Error(`named did not start:\n${named.output()}`);
  return named;
}

const API_FIXTURES = fileURLToPath(new URL('../../src/lib/cluster/testdata/api/', import.meta.url));

function fixture(name: string): unknown[] {
  const d = JSON.parse(readFileSync(join(API_FIXTURES, name), 'utf8')) as unknown[] | { items: unknown[] };
  return Array.isArray(d) ? d : d.items;
}

/**
 * The fake API server over HTTPS on address:port inside `ns`, seeded with the fixtures of
 * src/lib/cluster/testdata/api (namespaces default, kube-system, shop; services kube-dns, cart,
 * orders-db, payments). Returns the process and the CA to trust (its self-signed certificate).
 */
export async function apiServerIn(ns: NetNs, address: string, port: number): Promise<{ proc: Proc; caPem: string }> {
  const dir = scratchDir('apiserver');
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  const r = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=kubernetes', '-addext', `subjectAltName=IP:${address},DNS:kubernetes.default.svc`, '-keyout', key, '-out', cert],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`openssl: ${r.stderr}`);
  const seed = {
    '/api/v1/namespaces': fixture('namespaces.json'),
    '/api/v1/services': fixture('services.json'),
    '/apis/discovery.k8s.io/v1/endpointslices': fixture('endpointslices.json'),
    '/api/v1/pods': fixture('pods.json'),
  };
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ host: address, port, certFile: cert, keyFile: key, seed }));
  const proc = ns.spawn([process.execPath, ...helperScript('apiserver-main'), config]);
  await waitFor(() => proc.output().includes('listening') || proc.child.exitCode !== null, 30_000, 50);
  if (proc.child.exitCode !== null) throw new Error(`API server did not start:\n${proc.output()}`);
  return { proc, caPem: readFileSync(cert, 'utf8') };
}

/** /var/run/secrets/kubernetes.io/serviceaccount as the kubelet mounts it. */
export function serviceAccountDir(caPem: string, namespace = 'kube-system'): string {
  const dir = scratchDir('sa');
  writeFileSync(join(dir, 'ca.crt'), caPem);
  writeFileSync(join(dir, 'token'), 'test-token');
  writeFileSync(join(dir, 'namespace'), namespace);
  return dir;
}

/**
 * A ConfigMap volume laid out as the kubelet writes one: the data in a timestamped hidden
 * directory, `..data` linking to it, and each key a link through `..data`.
 */
export function configMapDir(data: Record<string, string>): string {
  const dir = scratchDir('configmap');
  updateConfigMap(dir, data);
  for (const key of Object.keys(data)) symlinkSync(join('..data', key), join(dir, key));
  return dir;
}

let generation = 0;

/** A ConfigMap update as the kubelet makes it: a new data directory, then `..data` swapped to it in one rename. */
export function updateConfigMap(dir: string, data: Record<string, string>): void {
  const version = `..${Date.now()}_${generation++}`;
  mkdirSync(join(dir, version));
  for (const [key, value] of Object.entries(data)) writeFileSync(join(dir, version, key), value);
  symlinkSync(version, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
}

/** GET `url` from inside `ns`: status and body ('0' and the error when it could not connect). */
export function httpGetIn(ns: NetNs, url: string): { status: number; body: string } {
  const code = `fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(5000) }).then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.text() })), (e) => console.log(JSON.stringify({ status: 0, body: String(e) })))`;
  const r = ns.run([process.execPath, '-e', code]);
  try {
    return JSON.parse(r.stdout) as { status: number; body: string };
  } catch {
    return { status: 0, body: r.stdout + r.stderr };
  }
}
