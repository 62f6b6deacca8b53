// kdns under test, in one of two configurations:
//   plain  only the plugins the workload needs: `kubernetes` over the fixture's manifests for
//          auth; `forward` to the upstream and `cache 30` for fwd and miss;
//   stock  the Corefile kubeadm installs for CoreDNS (errors, health with lameduck, ready,
//          kubernetes with pods insecure, prometheus, forward with max_concurrent, cache 30,
//          loop, reload, loadbalance), the same for every workload: what a cluster runs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_ZONE } from '../fixture.js';
import type { KdnsCorefileName } from '../options.js';
import type { ServerSpec, StartContext } from './server.js';

/** Loopback ports of the stock Corefile's health, ready and metrics endpoints. */
const HEALTH_PORT = 18080;
const READY_PORT = 18181;
const METRICS_PORT = 19153;

export function kdnsCorefile(which: KdnsCorefileName, ctx: StartContext): string {
  const manifests = join(ctx.fixture, 'cluster');
  if (which === 'stock') {
    return `.:${ctx.port} {
    bind 127.0.0.1
    errors
    health 127.0.0.1:${HEALTH_PORT} {
        lameduck 5s
    }
    ready 127.0.0.1:${READY_PORT}
    kubernetes ${CLUSTER_ZONE} in-addr.arpa ip6.arpa {
        manifests ${manifests}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    prometheus 127.0.0.1:${METRICS_PORT}
    forward . 127.0.0.1:${ctx.upstreamPort} {
        max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
`;
  }
  if (ctx.role === 'auth') {
    return `${CLUSTER_ZONE}:${ctx.port} {
    bind 127.0.0.1
    kubernetes ${CLUSTER_ZONE} {
        manifests ${manifests}
    }
}
`;
  }
  return `.:${ctx.port} {
    bind 127.0.0.1
    forward . 127.0.0.1:${ctx.upstreamPort}
    cache 30
}
`;
}

/** How kdns says it serves UDP: its start-up line mentions node:dgram only when it falls back. */
export function udpPathFromLog(log: string): string | undefined {
  if (!/listening|serving|ready|udp/i.test(log)) return undefined;
  return /udp via node:dgram/.test(log) ? 'udp: node:dgram' : 'udp: native';
}

export interface KdnsBuild {
  /** The folder with bin/kdns and dist/ (the working tree, or an exported revision). */
  tree: string;
  /** What it is, for the table's heading: a commit, with "+ changes" for a dirty tree. */
  revision: string;
}

export function kdns(which: KdnsCorefileName, build: KdnsBuild, node: { path: string; version: string; labelled: boolean }, flags: readonly string[]): ServerSpec {
  const base = which === 'stock' ? 'kdns, stock Corefile' : 'kdns';
  return {
    id: `kdns-${which}${node.labelled ? `@${node.version}` : ''}`,
    label: node.labelled ? `${base} on node ${node.version}` : base,
    kind: 'kdns',
    needs: [],
    threads: 1,
    answersChecks: true,
    stopSignal: 'SIGQUIT',
    supports: () => true,
    prepare(ctx) {
      const conf = join(ctx.runDir, 'Corefile');
      writeFileSync(conf, kdnsCorefile(which, ctx));
      return [{ argv: [node.path, ...flags, join(build.tree, 'bin/kdns'), 'serve', '--conf', conf], cwd: ctx.runDir }];
    },
    noteFromLog: udpPathFromLog,
  };
}
