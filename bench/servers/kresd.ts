// Knot Resolver (kresd 5): auth from an RPZ file holding the fixture's records as local data,
// then NXDOMAIN for anything else under cluster.local (kresd 5 serves no zone files; RPZ is
// how it answers local data); forward with policy.FORWARD to the upstream. No DNSSEC.
// Several instances are separate processes on one address (the kernel spreads queries over
// their sockets with SO_REUSEPORT) sharing one cache.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_ZONE, readZoneRecords } from '../fixture.js';
import type { Options } from '../options.js';
import type { ServerSpec, StartContext } from './server.js';

/** The zone as an RPZ: every owner under the policy zone "rpz."; SOA and NS of cluster.local left out. */
export function rpzFromZone(zone: string, ttl: number): string {
  const records = readZoneRecords(zone).filter((r) => r.type !== 'SOA' && r.type !== 'NS');
  const head = [`$TTL ${ttl}`, `rpz. ${ttl} IN SOA localhost. hostmaster.localhost. 1 7200 1800 86400 ${ttl}`, `rpz. ${ttl} IN NS localhost.`];
  return `${[...head, ...records.map((r) => `${r.owner}rpz. ${r.ttl} IN ${r.type} ${r.data}`)].join('\n')}\n`;
}

export function kresdConfig(ctx: StartContext): string {
  const lines = [
    'net.ipv6 = false',
    `net.listen('127.0.0.1', ${ctx.port}, { kind = 'dns' })`,
    `cache.open(100 * MB, 'lmdb://${join(ctx.runDir, 'cache')}')`,
    "trust_anchors.remove('.')",
  ];
  if (ctx.role === 'auth') {
    lines.push(
      `policy.add(policy.rpz(policy.DENY, '${join(ctx.runDir, 'cluster.rpz')}', false))`,
      `policy.add(policy.suffix(policy.DENY, policy.todnames({'${CLUSTER_ZONE}.'})))`,
    );
  } else {
    lines.push(`policy.add(policy.all(policy.FORWARD({'127.0.0.1@${ctx.upstreamPort}'})))`);
  }
  return `${lines.join('\n')}\n`;
}

export function kresd(opts: Options): ServerSpec {
  const instances = opts.KRESD_INSTANCES ?? opts.PEER_THREADS;
  return {
    id: 'kresd',
    label: 'kresd',
    kind: 'peer',
    needs: [{ command: 'kresd', debian: 'knot-resolver' }],
    threads: instances,
    answersChecks: true,
    stopSignal: 'SIGTERM',
    supports: () => true,
    prepare(ctx) {
      if (ctx.role === 'auth') writeFileSync(join(ctx.runDir, 'cluster.rpz'), rpzFromZone(readFileSync(join(ctx.fixture, `${CLUSTER_ZONE}.zone`), 'utf8'), 5));
      const conf = join(ctx.runDir, 'kresd.conf');
      writeFileSync(conf, kresdConfig(ctx));
      // -n: no interactive console on stdin; the last argument is its working folder.
      return Array.from({ length: instances }, () => ({ argv: ['kresd', '-n', '-q', '-c', conf, ctx.runDir], cwd: ctx.runDir }));
    },
  };
}
