// Autopath's cost on the server (scripts/bench-autopath.sh runs this): one kdns with
// `autopath ap.k8s.io`, `kubernetes` over the fixture, `forward` to the upstream and `cache 30`,
// asked the fwd workload's names as they are, and the same names as a ClusterFirstWithAutopath
// pod of one namespace asks them (NAME.search.NS.cluster.local.ap.k8s.io: three cluster
// candidates, then the name forwarded). Also without autopath (the memory baseline), and each
// of those without the cache (every query expanded and forwarded anew).
//
//   AUTOPATH_WORKLOAD [fwd | miss]  CACHE_MODES ["on off"]  and the bench's options (DURATION …)
//
// With miss, each name is asked once: every lookup is an uncached expansion, compared with a
// forwarded miss through the same cache.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLUSTER_ZONE, type Check, type FixtureMeta, type Probe } from './fixture.js';
import { parseOptions } from './options.js';
import type { RunResult } from './results.js';
import { log, runOne, standardWorkloads, type Workload } from './runner.js';
import type { KdnsBuild } from './servers/kdns.js';
import type { ServerSpec } from './servers/server.js';
import { fail, kdnsBuild, nodeBinaries, optionsOrExit, ROOT, startSession } from './session.js';
import { summarize } from './summarize.js';

const AP_ZONE = 'ap.k8s.io';

/** How a pod of `namespace` with ClusterFirstWithAutopath asks for `name`. */
export function autopathName(name: string, namespace: string): string {
  return `${name.replace(/\.$/, '')}.search.${namespace}.${CLUSTER_ZONE}.${AP_ZONE}`;
}

/** A dnsperf file with every name rewritten as autopathName does. */
export function rewriteQueries(text: string, namespace: string): string {
  return text.replace(/^(\S+)(\s)/gm, (_, name: string, space: string) => `${autopathName(name, namespace)}${space}`);
}

function apWorkload(base: Workload, dir: string, namespace: string): Workload {
  const rewrite = (file: string): string => {
    const out = join(dir, `ap-${file.split('/').pop() as string}`);
    writeFileSync(out, rewriteQueries(readFileSync(file, 'utf8'), namespace));
    return out;
  };
  const probe: Probe = { ...base.probe, name: autopathName(base.probe.name, namespace) };
  // The answer: a CNAME to the name as asked, then its address.
  const checks: Check[] = base.checks.map((c) => ({ ...c, name: autopathName(c.name, namespace), answers: c.answers + 1 }));
  return {
    name: `${base.name}, autopath names`,
    role: base.role,
    queries: rewrite(base.queries),
    ...(base.warmPass ? { warmPass: rewrite(base.warmPass) } : {}),
    warm: rewrite(base.warm),
    probe,
    checks,
  };
}

function kdnsAutopath(build: KdnsBuild, node: string, flags: readonly string[], autopath: boolean, cache: boolean): ServerSpec {
  const label = `kdns, ${autopath ? 'autopath' : 'no autopath'}, cache ${cache ? 'on' : 'off'}`;
  return {
    id: label.replace(/[^a-z]+/g, '-'),
    label,
    kind: 'kdns',
    needs: [],
    threads: 1,
    answersChecks: true,
    stopSignal: 'SIGQUIT',
    supports: (role) => role === 'forward',
    prepare(ctx) {
      // The cluster DNS pod's resolv.conf: no search line, so an outside name is tried as the
      // three cluster candidates and then as it is.
      writeFileSync(join(ctx.runDir, 'resolv.conf'), 'nameserver 127.0.0.1\n');
      const lines = [
        `.:${ctx.port} {`,
        '    bind 127.0.0.1',
        ...(autopath ? [`    autopath ${AP_ZONE} ${join(ctx.runDir, 'resolv.conf')}`] : []),
        `    kubernetes ${CLUSTER_ZONE} {`,
        `        manifests ${join(ctx.fixture, 'cluster')}`,
        '    }',
        `    forward . 127.0.0.1:${ctx.upstreamPort}`,
        ...(cache ? ['    cache 30'] : []),
        '}',
      ];
      writeFileSync(join(ctx.runDir, 'Corefile'), `${lines.join('\n')}\n`);
      return [{ argv: [node, ...flags, join(build.tree, 'bin/kdns'), 'serve', '--conf', join(ctx.runDir, 'Corefile')], cwd: ctx.runDir }];
    },
  };
}

async function main(): Promise<void> {
  const opts = optionsOrExit(() => parseOptions(process.env));
  const which = process.env.AUTOPATH_WORKLOAD ?? 'fwd';
  if (which !== 'fwd' && which !== 'miss') fail(`AUTOPATH_WORKLOAD: "${which}" is not fwd or miss`);
  const modes = (process.env.CACHE_MODES ?? 'on off').split(/\s+/).filter(Boolean);
  for (const m of modes) if (m !== 'on' && m !== 'off') fail(`CACHE_MODES: "${m}" is not on or off`);
  const node = nodeBinaries(opts)[0] as { path: string; version: string };
  const build = kdnsBuild(opts);
  const plan = modes.flatMap((m) => [
    { server: kdnsAutopath(build, node.path, opts.KDNS_NODE_FLAGS, false, m === 'on'), apNames: false },
    { server: kdnsAutopath(build, node.path, opts.KDNS_NODE_FLAGS, true, m === 'on'), apNames: false },
    { server: kdnsAutopath(build, node.path, opts.KDNS_NODE_FLAGS, true, m === 'on'), apNames: true },
  ]);
  const { fixture, meta, results, context } = startSession(opts, plan.map((p) => p.server), [{ ...node, labelled: false }], build, 'autopath');
  const direct = standardWorkloads(fixture, meta as FixtureMeta)[which];
  const apDir = join(ROOT, '.bench', 'autopath');
  mkdirSync(apDir, { recursive: true });
  // A namespace the cluster has, other than default and kube-system.
  const ap = apWorkload(direct, apDir, meta.namespaces[2] ?? 'default');

  const all: RunResult[] = [];
  for (const [i, p] of plan.entries()) {
    const workload = p.apNames ? ap : direct;
    log(`run ${i + 1}/${plan.length}: ${p.server.label}, ${workload.name}`);
    const r = await runOne({ server: p.server, workload, rep: 1, fixture, opts, context });
    all.push(r);
    appendFileSync(results, `${JSON.stringify(r)}\n`);
  }
  process.stdout.write(`${summarize(all)}\n`);
  const find = (label: string, workload: string): RunResult | undefined => all.find((r) => r.label === label && r.workload === workload && !r.error);
  for (const m of modes) {
    const d = find(`kdns, autopath, cache ${m}`, direct.name);
    const a = find(`kdns, autopath, cache ${m}`, ap.name);
    const none = find(`kdns, no autopath, cache ${m}`, direct.name);
    if (d && a) {
      process.stdout.write(
        `cache ${m}: direct ${Math.round(d.qps)} QPS, through autopath ${Math.round(a.qps)} QPS (${((100 * a.qps) / d.qps).toFixed(1)}% of direct); ` +
          `server CPU ${d.cpuUsPerQuery.toFixed(1)} against ${a.cpuUsPerQuery.toFixed(1)} µs per lookup: ${(a.cpuUsPerQuery / d.cpuUsPerQuery).toFixed(2)}×\n`,
      );
    }
    const mib = (r: RunResult | undefined): string => (r ? `${(r.rssKiB / 1024).toFixed(1)} MiB` : '–');
    process.stdout.write(`cache ${m}: RSS without autopath ${mib(none)}, with autopath ${mib(d)} (direct names), ${mib(a)} (autopath names)\n`);
  }
  log(`raw results: ${results}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((e: unknown) => fail(e instanceof Error ? (e.stack ?? e.message) : String(e), 1));
}
