#!/usr/bin/env node
// Admission throughput, latency and CPU of `kdns webhook` at a burst of pod creations, beside the
// stand-in API server's own cost. The webhook runs as its own process (`kdns webhook`, as the
// Deployment runs it: the image's node flags, pinned to core 1 when taskset exists); the stand-in (fake API server + the
// admission chain of a stock kube-apiserver, webhooks called over TLS with keep-alive as
// kube-apiserver's client does) runs here, on core 0. The same burst three times:
//   none       no webhook configured: what the stand-in alone costs per create
//   opted-out  the webhook configured, pods that did not opt in: the API server skips the call
//              (matchConditions), which is what every other pod in the cluster pays
//   opted-in   pods with dns.kdns.io/policy: ClusterFirstWithAutopath: a call and a patch each
// Usage: npm run bench:webhook (env BENCH_PODS, default 4000; BENCH_CONCURRENCY, default 32).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { register } from 'tsx/esm/api';

// The rig is test code, run from its TypeScript sources (never built into dist/).
register();
const { SHIPPED_NODE_FLAGS } = await import('../test/util/kdns.ts');
const { startWebhookRig } = await import('../test/util/webhookrig.ts');

const PODS = Number(process.env.BENCH_PODS ?? 4000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
if (hasTaskset) spawnSync('taskset', ['-pc', '0', String(process.pid)], { stdio: 'ignore' });

const rig = await startWebhookRig({ settings: { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'] }, variant: 'deploy/nodecache', keepAlive: true }, 0);
const dir = mkdtempSync(join(tmpdir(), 'kdns-bench-webhook-'));
writeFileSync(join(dir, 'config.yaml'), 'clusterDomain: cluster.local\nclusterDNS: [10.96.0.10]\nnodeCacheIP: 169.254.20.10\n');
const args = [...SHIPPED_NODE_FLAGS, 'bin/kdns', 'webhook', '--kubeconfig', rig.kubeconfig, '--namespace', rig.namespace, '--config', join(dir, 'config.yaml'), '--listen', '127.0.0.1:0', '--health', '127.0.0.1:0', '--metrics', '127.0.0.1:0'];
const webhook = spawn(hasTaskset ? 'taskset' : process.execPath, hasTaskset ? ['-c', '1', process.execPath, ...args] : args, { stdio: ['ignore', 'ignore', 'pipe'] });
let log = '';
webhook.stderr.on('data', (b) => (log += b));
const port = await new Promise((resolve, reject) => {
  const timer = setInterval(() => {
    const m = /serving admission on 127\.0\.0\.1:(\d+)/.exec(log);
    if (m) {
      clearInterval(timer);
      resolve(Number(m[1]));
    }
  }, 50);
  webhook.once('exit', () => reject(new Error(`kdns webhook exited: ${log}`)));
});
rig.backends.push(port);
await rig.caBundleWritten();

/** user+system CPU seconds of a process so far (/proc/PID/stat, clock ticks of 1/100 s). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
function rssMiB(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}

function pod(name, annotations) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations }, spec: { containers: [{ name: 'app', image: 'app:1' }], dnsPolicy: 'ClusterFirst' } };
}

function percentile(sorted, p) {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

let serial = 0;
async function burst(namespace, annotations) {
  const latencies = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  async function worker() {
    for (let i = next++; i < PODS; i = next++) {
      const t0 = performance.now();
      const r = await rig.createPod(namespace, pod(`bench-${serial++}`, annotations), 'Strict');
      latencies.push(performance.now() - t0);
      if (r.code !== 201) failed++;
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: PODS / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), failed };
}

async function run(label, annotations) {
  rig.standIn.calls.length = 0;
  const cpu0 = cpuSeconds(webhook.pid);
  const r = await burst('bench', annotations);
  const cpu = cpuSeconds(webhook.pid) - cpu0;
  const calls = rig.standIn.calls.map((c) => c.ms).sort((a, b) => a - b);
  const patched = rig.standIn.calls.filter((c) => c.outcome === 'patched').length;
  return { label, ...r, calls: calls.length, patched, callP50: percentile(calls, 50), callP99: percentile(calls, 99), cpuPerAdmission: calls.length > 0 ? (cpu * 1e6) / calls.length : NaN };
}

const configuration = rig.api.get(MWC, undefined, 'kdns-webhook');
const OPTED_IN = { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' };
// Warm-up: JIT, connections, both paths.
await burst('warm', OPTED_IN);
await burst('warm', { team: 'a' });
rig.api.remove(MWC, undefined, 'kdns-webhook');
const none = await run('none (stand-in only)', { team: 'a' });
rig.api.add(MWC, configuration);
const optedOut = await run('opted-out pods', { team: 'a' });
const optedIn = await run('opted-in pods', OPTED_IN);
const rss = rssMiB(webhook.pid);
webhook.kill('SIGTERM');
await rig.close();

const f = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '-');
console.log(`webhook admission bench: ${PODS} pod creations, ${CONCURRENCY} at a time, Node ${process.version}${hasTaskset ? ', stand-in on core 0, webhook on core 1' : ''}`);
console.log('| run | creates/s | create p50 ms | create p99 ms | webhook calls | patched | call p50 ms | call p99 ms | webhook CPU µs/admission | failed creates |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of [none, optedOut, optedIn]) {
  console.log(`| ${r.label} | ${r.perSecond.toFixed(0)} | ${f(r.p50)} | ${f(r.p99)} | ${r.calls} | ${r.patched} | ${f(r.callP50)} | ${f(r.callP99)} | ${f(r.cpuPerAdmission, 0)} | ${r.failed} |`);
}
console.log(`webhook RSS after the runs: ${rss.toFixed(1)} MiB`);
