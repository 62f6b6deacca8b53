// unbound: auth from local-data (a static local zone holding every record of the fixture's
// zone), forward with a forward-zone for "." to the upstream. No DNSSEC validation (the
// fixture is unsigned), no remote control, no chroot or user change, foreground.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_ZONE, readZoneRecords } from '../fixture.js';
import type { Options } from '../options.js';
import type { ServerSpec, StartContext } from './server.js';

export function unboundConfig(ctx: StartContext, threads: number): string {
  const lines = [
    'server:',
    '  interface: 127.0.0.1',
    `  port: ${ctx.port}`,
    '  do-ip6: no',
    `  num-threads: ${threads}`,
    // One socket per thread, as unbound is run with several threads.
    `  so-reuseport: ${threads > 1 ? 'yes' : 'no'}`,
    '  do-daemonize: no',
    '  chroot: ""',
    '  username: ""',
    `  directory: "${ctx.runDir}"`,
    '  pidfile: ""',
    '  use-syslog: no',
    '  logfile: ""',
    '  verbosity: 0',
    '  module-config: "iterator"',
    '  access-control: 127.0.0.0/8 allow',
  ];
  if (ctx.role === 'auth') {
    lines.push(`  local-zone: "${CLUSTER_ZONE}." static`, `  include: "${join(ctx.runDir, 'local-data.conf')}"`);
  } else {
    // test. is one of unbound's built-in RFC 6761 zones; the upstream's names live under it.
    lines.push('  local-zone: "test." nodefault', '  do-not-query-localhost: no', 'forward-zone:', '  name: "."', `  forward-addr: 127.0.0.1@${ctx.upstreamPort}`);
  }
  lines.push('remote-control:', '  control-enable: no');
  return `${lines.join('\n')}\n`;
}

/** One local-data line per record, the SOA included so that negative answers carry it. */
export function unboundLocalData(zone: string): string {
  return readZoneRecords(zone)
    .filter((r) => r.type !== 'NS')
    .map((r) => `  local-data: "${r.owner} ${r.ttl} IN ${r.type} ${r.data}"\n`)
    .join('');
}

export function unbound(opts: Options): ServerSpec {
  const threads = opts.UNBOUND_THREADS ?? opts.PEER_THREADS;
  return {
    id: 'unbound',
    label: 'unbound',
    kind: 'peer',
    needs: [{ command: 'unbound', debian: 'unbound' }],
    threads,
    answersChecks: true,
    stopSignal: 'SIGTERM',
    supports: () => true,
    prepare(ctx) {
      if (ctx.role === 'auth') writeFileSync(join(ctx.runDir, 'local-data.conf'), unboundLocalData(readFileSync(join(ctx.fixture, `${CLUSTER_ZONE}.zone`), 'utf8')));
      const conf = join(ctx.runDir, 'unbound.conf');
      writeFileSync(conf, unboundConfig(ctx, threads));
      return [{ argv: ['unbound', '-d', '-c', conf] }];
    },
  };
}
