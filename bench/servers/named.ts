// BIND 9's named: auth as the primary of the fixture's zone, forward as a forwarding-only
// resolver. Also the upstream every forwarding run asks: primary of example.test.
// Foreground (-g, logging to stderr), no control channel, IPv4 loopback only.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_ZONE, UPSTREAM_ZONE } from '../fixture.js';
import type { Options } from '../options.js';
import type { ProcessSpec, ServerSpec, StartContext } from './server.js';

function namedOptions(dir: string, port: number, extra: string[]): string {
  return [
    'controls { };',
    'options {',
    `  directory "${dir}";`,
    `  pid-file "${join(dir, 'named.pid')}";`,
    `  managed-keys-directory "${dir}";`,
    `  listen-on port ${port} { 127.0.0.1; };`,
    '  listen-on-v6 { none; };',
    '  dnssec-validation no;',
    '  notify no;',
    '  allow-transfer { none; };',
    ...extra.map((l) => `  ${l}`),
    '};',
  ].join('\n');
}

export function namedConfig(ctx: StartContext): string {
  if (ctx.role === 'auth') {
    return `${namedOptions(ctx.runDir, ctx.port, ['recursion no;'])}\nzone "${CLUSTER_ZONE}" { type primary; file "${join(ctx.fixture, `${CLUSTER_ZONE}.zone`)}"; };\n`;
  }
  return `${namedOptions(ctx.runDir, ctx.port, ['recursion yes;', 'allow-recursion { 127.0.0.0/8; };', 'forward only;', `forwarders { 127.0.0.1 port ${ctx.upstreamPort}; };`])}\n`;
}

export function named(opts: Options): ServerSpec {
  const threads = opts.NAMED_THREADS ?? opts.PEER_THREADS;
  return {
    id: 'named',
    label: 'named',
    kind: 'peer',
    needs: [{ command: 'named', debian: 'bind9' }],
    threads,
    answersChecks: true,
    stopSignal: 'SIGTERM',
    supports: () => true,
    prepare(ctx) {
      const conf = join(ctx.runDir, 'named.conf');
      writeFileSync(conf, namedConfig(ctx));
      return [{ argv: ['named', '-g', '-4', '-n', String(threads), '-c', conf] }];
    },
  };
}

/** The upstream of the forwarding runs: named, authoritative for example.test (and its miss wildcard). */
export function upstreamProcess(fixture: string, dir: string, port: number): ProcessSpec {
  const conf = join(dir, 'named.conf');
  writeFileSync(conf, `${namedOptions(dir, port, ['recursion no;'])}\nzone "${UPSTREAM_ZONE}" { type primary; file "${join(fixture, `${UPSTREAM_ZONE}.zone`)}"; };\n`);
  return { argv: ['named', '-g', '-4', '-n', '1', '-c', conf] };
}
