#!/usr/bin/env node
// Admission throughput and latency of `kdns webhook` at a burst of pod creations, beside the
// stand-in API server's own cost. Three runs of the same burst through the stand-in (fake API
// server + the admission chain of a stock kube-apiserver, webhooks called over TLS as it does):
//   none       no webhook configured: what the stand-in alone costs per create
//   opted-out  the webhook configured, pods that did not opt in (the API server skips the call:
//              matchConditions), i.e. what every other pod in the cluster pays
//   opted-in   pods with dns.kdns.io/policy: ClusterFirstWithAutopath: a TLS call and a patch each
// Usage: npm run build && node scripts/bench-webhook.mjs [PODS=2000] [CONCURRENCY=32]
// (env BENCH_PODS / BENCH_CONCURRENCY). Prints one table; numbers are from this machine and run.
import { startWebhookRig } from '../dist/testutil/webhookrig.js';

const PODS = Number(process.env.BENCH_PODS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SETTINGS = { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'], nodeCacheIP: '169.254.20.10' };

function pod(i, annotations) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: `bench-${i}`, annotations }, spec: { containers: [{ name: 'app', image: 'app:1' }], dnsPolicy: 'ClusterFirst' } };
}

function percentile(sorted, p) {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function burst(rig, namespace, annotations) {
  const latencies = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  async function worker() {
    for (let i = next++; i < PODS; i = next++) {
      const t0 = performance.now();
      const r = await rig.createPod(namespace, pod(i, annotations), 'Strict');
      latencies.push(performance.now() - t0);
      if (r.code !== 201) failed++;
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: PODS / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), failed };
}

async function run(label, configure, annotations) {
  const rig = await startWebhookRig({ settings: SETTINGS, variant: 'deploy/nodecache' });
  try {
    configure(rig);
    // Warm-up: JIT and TLS session setup outside the measurement.
    await burst({ createPod: (ns, p, fv) => rig.createPod(ns, { ...p, metadata: { ...p.metadata, name: `warm-${p.metadata.name}` } }, fv) }, 'warm', annotations);
    rig.standIn.calls.length = 0;
    const r = await burst(rig, 'bench', annotations);
    const calls = rig.standIn.calls.map((c) => c.ms).sort((a, b) => a - b);
    const outcomes = {};
    for (const c of rig.standIn.calls) outcomes[c.outcome] = (outcomes[c.outcome] ?? 0) + 1;
    return { label, ...r, calls: calls.length, callP50: percentile(calls, 50), callP99: percentile(calls, 99), outcomes };
  } finally {
    await rig.close();
  }
}

const rows = [
  await run('none (stand-in only)', (rig) => rig.standIn.uninstall(), { team: 'a' }),
  await run('opted-out pods', () => undefined, { team: 'a' }),
  await run('opted-in pods', () => undefined, { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' }),
];
const f = (n) => (Number.isFinite(n) ? n.toFixed(2) : '-');
console.log(`webhook admission bench: ${PODS} pod creations, ${CONCURRENCY} at a time, Node ${process.version}`);
console.log('| run | creates/s | create p50 ms | create p99 ms | webhook calls | call p50 ms | call p99 ms | failed | call outcomes |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
for (const r of rows) {
  console.log(`| ${r.label} | ${r.perSecond.toFixed(0)} | ${f(r.p50)} | ${f(r.p99)} | ${r.calls} | ${f(r.callP50)} | ${f(r.callP99)} | ${r.failed} | ${JSON.stringify(r.outcomes)} |`);
}
