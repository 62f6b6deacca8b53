// dnsmasq: auth from a hosts file (the A records) and srv-host lines (the SRV records), with
// local=/cluster.local/ so that names it does not have are NXDOMAIN; forward to the upstream
// with its cache. It keeps srv-host entries in a list it walks for every query, which is
// most of what it spends on the auth workload: the fixture has some 5,000 of them.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_TTL, CLUSTER_ZONE, readZoneRecords } from '../fixture.js';
import type { Options } from '../options.js';
import type { ServerSpec, StartContext } from './server.js';

const bare = (name: string): string => name.replace(/\.$/, '');

/** "address name" lines for the A records; a name with several addresses gets several lines. */
export function dnsmasqHosts(zone: string): string {
  return readZoneRecords(zone)
    .filter((r) => r.type === 'A' && r.owner.endsWith(`.${CLUSTER_ZONE}.`) && !r.owner.startsWith('ns.dns.'))
    .map((r) => `${r.data} ${bare(r.owner)}\n`)
    .join('');
}

/** srv-host=owner,target,port,priority,weight for the SRV records. */
export function dnsmasqSrv(zone: string): string {
  return readZoneRecords(zone)
    .filter((r) => r.type === 'SRV')
    .map((r) => {
      const [priority, weight, port, target] = r.data.split(' ') as [string, string, string, string];
      return `srv-host=${bare(r.owner)},${bare(target)},${port},${priority},${weight}\n`;
    })
    .join('');
}

export function dnsmasqConfig(ctx: StartContext): string {
  const lines = [
    `port=${ctx.port}`,
    'listen-address=127.0.0.1',
    'bind-interfaces',
    'no-resolv',
    'no-hosts',
    'no-poll',
    'user=root',
    'group=root',
    'pid-file=',
    'log-facility=-',
    'cache-size=10000',
  ];
  if (ctx.role === 'auth') {
    lines.push(`local=/${CLUSTER_ZONE}/`, `addn-hosts=${join(ctx.runDir, 'cluster.hosts')}`, `local-ttl=${CLUSTER_TTL}`, `conf-file=${join(ctx.runDir, 'srv.conf')}`);
  } else {
    lines.push(`server=127.0.0.1#${ctx.upstreamPort}`);
  }
  return `${lines.join('\n')}\n`;
}

export function dnsmasq(_opts: Options): ServerSpec {
  return {
    id: 'dnsmasq',
    label: 'dnsmasq',
    kind: 'peer',
    needs: [{ command: 'dnsmasq', debian: 'dnsmasq-base' }],
    threads: 1,
    answersChecks: true,
    stopSignal: 'SIGTERM',
    supports: () => true,
    prepare(ctx) {
      if (ctx.role === 'auth') {
        const zone = readFileSync(join(ctx.fixture, `${CLUSTER_ZONE}.zone`), 'utf8');
        writeFileSync(join(ctx.runDir, 'cluster.hosts'), dnsmasqHosts(zone));
        writeFileSync(join(ctx.runDir, 'srv.conf'), dnsmasqSrv(zone));
      }
      const conf = join(ctx.runDir, 'dnsmasq.conf');
      writeFileSync(conf, dnsmasqConfig(ctx));
      // -k: foreground, as the same process.
      return [{ argv: ['dnsmasq', '-k', '-C', conf] }];
    },
  };
}
