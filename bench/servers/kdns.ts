// kdns under test, in one of two configurations:
//   plain  only the plugins the workload needs: `kubernetes` over the fixture's manifests for
//          auth; `forward` to the upstream and `cache 30` for fwd and miss;
//   stock  the Corefile kubeadm installs for CoreDNS (errors, health with lameduck, ready,
//          kubernetes with pods insecure, prometheus, forward with max_concurrent, cache 30,
//          loop, reload, loadbalance), the same for every workload: what a cluster runs.
// With KDNS_WORKERS above 1, each Corefile also says `multisocket N`: `kdns serve` is then a
// parent and N worker processes, each with its own SO_REUSEPORT sockets on the port. The parent
// is the process the runner starts, so its CPU time and memory are measured with its workers'
// (bench/procstat.ts sums a server's whole process tree).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_ZONE } from '../fixture.js';
import type { KdnsCorefileName } from '../options.js';
import type { ServerSpec, StartContext } from './server.js';

/** Loopback ports of the stock Corefile's health, ready and metrics endpoints. */
const HEALTH_PORT = 18080;
const READY_PORT = 18181;
const METRICS_PORT = 19153;

/** The `multisocket` line for `workers` worker processes; none for one (a single process, as kdns ships). */
export function multisocketLine(workers: number): string {
  return workers > 1 ? `    multisocket ${workers}\n` : '';
}

export function kdnsCorefile(which: KdnsCorefileName, ctx: StartContext, workers = 1): string {
  const manifests = join(ctx.fixture, 'cluster');
  const multisocket = multisocketLine(workers);
  if (which === 'stock') {
    return `.:${ctx.port} {
    bind 127.0.0.1
${multisocket}    errors
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
${multisocket}    kubernetes ${CLUSTER_ZONE} {
        manifests ${manifests}
    }
}
`;
  }
  return `.:${ctx.port} {
    bind 127.0.0.1
${multisocket}    forward . 127.0.0.1:${ctx.upstreamPort}
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

/** The row's name: "kdns", "kdns ×2, stock Corefile on node v26.1.0", … */
export function kdnsLabel(which: KdnsCorefileName, workers: number, nodeVersion: string | undefined): string {
  const name = workers > 1 ? `kdns ×${workers}` : 'kdns';
  const base = which === 'stock' ? `${name}, stock Corefile` : name;
  return nodeVersion !== undefined ? `${base} on node ${nodeVersion}` : base;
}

export function kdns(which: KdnsCorefileName, build: KdnsBuild, node: { path: string; version: string; labelled: boolean }, flags: readonly string[], workers = 1): ServerSpec {
  return {
    // The worker count is in the id too: results of a ×1 and a ×2 session summarized together stay two rows.
    id: `kdns-${which}${workers > 1 ? `-x${workers}` : ''}${node.labelled ? `@${node.version}` : ''}`,
    label: kdnsLabel(which, workers, node.labelled ? node.version : undefined),
    kind: 'kdns',
    needs: [],
    threads: workers,
    answersChecks: true,
    stopSignal: 'SIGQUIT',
    supports: () => true,
    prepare(ctx) {
      const conf = join(ctx.runDir, 'Corefile');
      writeFileSync(conf, kdnsCorefile(which, ctx, workers));
      return [{ argv: [node.path, ...flags, join(build.tree, 'bin/kdns'), 'serve', '--conf', conf], cwd: ctx.runDir }];
    },
    noteFromLog: udpPathFromLog,
  };
}
