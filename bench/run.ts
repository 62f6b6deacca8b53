// npm run bench: kdns beside unbound, named, kresd, dnsmasq and a minimal Node.js responder,
// each loaded by dnsperf in turn on the same workloads, then the side-by-side tables.
// Options are environment variables (bench/options.ts, `npm run bench -- --help`);
// bench/README.md says what each figure means.
import { appendFileSync } from 'node:fs';
import { optionsHelp, parseOptions, type Options, type PeerName } from './options.js';
import type { RunResult } from './results.js';
import { log, runOne, standardWorkloads } from './runner.js';
import { dnsmasq } from './servers/dnsmasq.js';
import { kdns, type KdnsBuild } from './servers/kdns.js';
import { kresd } from './servers/kresd.js';
import { minimal } from './servers/minimal.js';
import { named } from './servers/named.js';
import type { ServerSpec } from './servers/server.js';
import { unbound } from './servers/unbound.js';
import { fail, kdnsBuild, nodeBinaries, optionsOrExit, startSession, type NodeBinary } from './session.js';
import { summarize } from './summarize.js';

function peerSpec(peer: Exclude<PeerName, 'minimal'>, opts: Options): ServerSpec {
  switch (peer) {
    case 'dnsmasq':
      return dnsmasq(opts);
    case 'unbound':
      return unbound(opts);
    case 'kresd':
      return kresd(opts);
    case 'named':
      return named(opts);
  }
}

/** kdns in each configuration on each node, then the peers in PEERS's order (the floor once per node). */
function serverList(opts: Options, nodes: readonly NodeBinary[], build: KdnsBuild | undefined): ServerSpec[] {
  const out: ServerSpec[] = [];
  if (build) for (const which of opts.KDNS_COREFILES) for (const n of nodes) out.push(kdns(which, build, n, opts.KDNS_NODE_FLAGS, opts.KDNS_WORKERS));
  for (const peer of opts.PEERS) {
    if (peer === 'minimal') out.push(...nodes.map(minimal));
    else out.push(peerSpec(peer, opts));
  }
  return out;
}

function usage(): string {
  return `npm run bench [-- --help]: kdns beside its peers under dnsperf; tables on stdout.
Run as root: it installs missing peers with apt-get, and runs in a network namespace of its own.
Options (environment variables) [default]:
${optionsHelp()}
Example: DURATION=5 WORKLOADS=auth PEERS=unbound npm run bench`;
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  const opts = optionsOrExit(() => parseOptions(process.env));
  const nodes = nodeBinaries(opts);
  const build = opts.KDNS_COREFILES.length > 0 ? kdnsBuild(opts) : undefined;
  const servers = serverList(opts, nodes, build);
  if (servers.length === 0) fail('nothing to run: PEERS and KDNS_COREFILES are both empty');
  const { fixture, meta, results, context } = startSession(opts, servers, nodes, build, 'results');

  const workloads = standardWorkloads(fixture, meta);
  const all: RunResult[] = [];
  const total = opts.REPS * opts.WORKLOADS.length * servers.length;
  // Repetitions interleaved: a drift of the machine spreads over every server instead of one.
  for (let rep = 1; rep <= opts.REPS; rep++) {
    for (const w of opts.WORKLOADS) {
      for (const server of servers) {
        log(`run ${all.length + 1}/${total}: ${server.label}, ${w}${opts.REPS > 1 ? `, repetition ${rep}` : ''}`);
        const r = await runOne({ server, workload: workloads[w], rep, fixture, opts, context });
        all.push(r);
        appendFileSync(results, `${JSON.stringify(r)}\n`);
        if (!r.error) log(`  ${Math.round(r.qps)} QPS, ${r.cpuUsPerQuery.toFixed(1)} µs/query, ${(r.rssKiB / 1024).toFixed(1)} MiB, lost ${r.lost}, checks ${r.checks}`);
      }
    }
  }
  process.stdout.write(`${summarize(all)}\n`);
  log(`raw results: ${results} (again as tables: node --import tsx bench/summarize.ts ${results})`);
}

main().catch((e: unknown) => fail(e instanceof Error ? (e.stack ?? e.message) : String(e), 1));
