#!/usr/bin/env node
// What a pod's lookups see while its node cache is replaced or killed.
//
//   sudo node scripts/nodecache-swap.mjs [SCENARIO ...] [--runs N] [--json] [--tcp-migrate-req] [--pcap DIR]
//
// --pcap DIR captures the pod's traffic on the node side of its veth (tcpdump) and keeps the
// capture of each run that lost a lookup in DIR; lost lookups are listed with their UDP source
// port, to find them in it.
//
// Needs root (network namespaces, a mount namespace, iptables), iproute2, util-linux
// (unshare), iptables, bind9's `named`, kdns built (npm run build: dist/ and
// build/kdns_udp.node) and the real-client binaries (test/util/realclient/build.sh:
// build/realclient/lookup-glibc). Installs nothing; everything it makes is removed at the end.
//
// Layout, as a node runs NodeLocal DNSCache in link-local mode:
//   "node" namespace: a dummy interface with the cluster DNS Service's address (10.96.0.11),
//     where bind9's named serves cluster.local (a wildcard under svc.cluster.local with a 5 s
//     TTL, so the cache forwards a share of the lookups); `kdns node-cache -localip
//     169.254.20.10 -conf … -upstreamsvc kube-dns-upstream -setupinterface -setupiptables`
//     as the DaemonSet runs it (its own dummy interface and NOTRACK rules; a parent holding the
//     sockets and a worker serving them).
//   "pod" namespace: a veth to the node, default route through it, /etc/resolv.conf naming
//     169.254.20.10 (a private mount namespace), and a client sending a steady stream of
//     lookups: 200/s over UDP and 50/s over TCP (one connection per lookup, as a resolver
//     opens it), each waiting up to 2 s for its answer with no retry, plus 20/s through glibc's
//     getaddrinfo (a process per lookup, glibc's own timeout and retry).
//
// Scenarios (each starts from one cache serving for 3 s, and watches 4 s after the event):
//   swap           the DaemonSet's rolling update with maxSurge: a second cache with the same
//                  arguments starts beside the first; once it serves, the first gets SIGTERM.
//   swap-teardown  NodeLocal DNSCache's rolling update: SIGTERM first (it removes its
//                  interface and rules, as node-cache does), then the new cache starts.
//   kill-worker    kill -9 of the worker (what the OOM killer picks: the biggest process).
//   kill-parent    kill -9 of the parent, and of the worker with it (in a container the parent is
//                  PID 1, whose end kills the whole PID namespace); after 1 s (the kubelet
//                  restarting the container) a new cache starts.
//
// Per scenario and run: lookups sent during the event window (the event's start to 2 s after
// the last process change), lost (no answer within 2 s) and failed (an error answer, a
// refused connection, a getaddrinfo error), latency p50/p99 of the answered ones, and the time
// from the event until lookups work again (the send time of the first answered lookup after
// the last one that failed, counted from the event; 0 when none failed).

import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LOCAL_IP = '169.254.20.10';
const CLUSTER_DNS = '10.96.0.11';
const ALL = ['swap', 'swap-teardown', 'kill-worker', 'kill-parent'];
const TIMEOUT_MS = 2_000;
const RATES = { udp: 200, tcp: 50, glibc: 20 };
const TCP_MIGRATE_REQ = process.argv.includes('--tcp-migrate-req');
// --pcap DIR: capture the node side of the pod's veth per run; kept in DIR when a lookup was lost.
const PCAP_DIR = process.argv.includes('--pcap') ? process.argv[process.argv.indexOf('--pcap') + 1] : undefined;

// ---------------------------------------------------------------- the client (in the pod)

/** One DNS query for name A, id `id`. */
function query(id, name) {
  const labels = name.split('.').flatMap((l) => [Buffer.from([l.length]), Buffer.from(l)]);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
}

/** Sends lookups until stdin closes; one JSON line per lookup on stdout: {t, via, ms|null, ok}. */
async function client(glibcBinary) {
  const out = (r) => process.stdout.write(JSON.stringify(r) + '\n');
  let n = 0;
  const name = () => `s${n++ % 1000}.svc.cluster.local`;
  const udp = () => {
    const t = Date.now();
    const s = dgram.createSocket('udp4');
    const id = n & 0xffff;
    const timer = setTimeout(() => {
      const port = s.address().port;
      s.close();
      out({ t, via: 'udp', ms: null, ok: false, port });
    }, TIMEOUT_MS);
    s.on('message', (m) => {
      if (m.readUInt16BE(0) !== id) return;
      clearTimeout(timer);
      s.close();
      out({ t, via: 'udp', ms: Date.now() - t, ok: (m.readUInt16BE(2) & 0xf) === 0 });
    });
    s.on('error', () => undefined);
    s.send(query(id, name()), 53, LOCAL_IP);
  };
  const tcp = () => {
    const t = Date.now();
    const id = n & 0xffff;
    const q = query(id, name());
    const len = Buffer.alloc(2);
    len.writeUInt16BE(q.length);
    let done = false;
    let got = Buffer.alloc(0);
    const finish = (ms, ok) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      c.destroy();
      out({ t, via: 'tcp', ms, ok });
    };
    const c = net.connect({ host: LOCAL_IP, port: 53 }, () => c.write(Buffer.concat([len, q])));
    const timer = setTimeout(() => finish(null, false), TIMEOUT_MS);
    c.on('data', (d) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) finish(Date.now() - t, (got.readUInt16BE(4) & 0xf) === 0);
    });
    // A refused or reset connection is an answer of its own: a failure, not a timeout.
    c.on('error', () => finish(Date.now() - t, false));
    c.on('close', () => finish(Date.now() - t, false));
  };
  const glibc = () => {
    const t = Date.now();
    const p = spawn(glibcBinary, [name(), 'inet'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    p.stdout.on('data', (d) => (text += d));
    p.on('close', (code) => out({ t, via: 'glibc', ms: Date.now() - t, ok: code === 0 && text.trim() !== '' }));
  };
  const timers = [setInterval(udp, 1000 / RATES.udp), setInterval(tcp, 1000 / RATES.tcp), setInterval(glibc, 1000 / RATES.glibc)];
  process.stdin.resume();
  process.stdin.on('end', () => {
    for (const t of timers) clearInterval(t);
    setTimeout(() => process.exit(0), TIMEOUT_MS + 6_000).unref();
  });
}

// ---------------------------------------------------------------- the rig (on the host)

const sh = (cmd, args, opts = {}) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0 && !opts.ok) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const inNs = (ns, ...cmd) => sh('ip', ['netns', 'exec', ns, ...cmd]);

function namedConf(dir) {
  writeFileSync(
    join(dir, 'cluster.local.zone'),
    `$TTL 5\n@ IN SOA ns.cluster.local. h.cluster.local. 1 3600 600 86400 5\n@ IN NS ns.cluster.local.\nns IN A ${CLUSTER_DNS}\n*.svc IN A 10.96.0.100\n`,
  );
  writeFileSync(
    join(dir, 'named.conf'),
    `options { directory "${dir}"; listen-on port 53 { ${CLUSTER_DNS}; }; listen-on-v6 { none; }; recursion no; pid-file "${dir}/named.pid"; };\nzone "cluster.local" { type primary; file "${dir}/cluster.local.zone"; };\n`,
  );
  return join(dir, 'named.conf');
}

/** NodeLocal DNSCache's template (deploy/nodecache's blocks for cluster.local and the rest, without the workloads plugin's API watch). */
const TEMPLATE = `cluster.local:53 {
    errors
    cache {
        success 9984 30
        denial 9984 5
    }
    reload
    loop
    bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__
    forward . __PILLAR__CLUSTER__DNS__ {
        force_tcp
    }
    prometheus :9253
    health ${LOCAL_IP}:8080
}
.:53 {
    errors
    cache 30
    reload
    loop
    bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__
    forward . __PILLAR__CLUSTER__DNS__
    prometheus :9253
}
`;

class Rig {
  constructor() {
    this.tag = `swap${process.pid}`;
    this.node = `${this.tag}-node`;
    this.pod = `${this.tag}-pod`;
    this.dir = mkdtempSync(join(tmpdir(), 'kdns-swap-'));
    this.procs = [];
  }

  setup() {
    sh('ip', ['netns', 'add', this.node]);
    sh('ip', ['netns', 'add', this.pod]);
    for (const ns of [this.node, this.pod]) inNs(ns, 'ip', 'link', 'set', 'lo', 'up');
    // A bridge without ports where the kernel has no dummy driver (kdns falls back the same way).
    if (spawnSync('ip', ['netns', 'exec', this.node, 'ip', 'link', 'add', 'cluster0', 'type', 'dummy']).status !== 0) inNs(this.node, 'ip', 'link', 'add', 'cluster0', 'type', 'bridge');
    inNs(this.node, 'ip', 'addr', 'add', `${CLUSTER_DNS}/32`, 'dev', 'cluster0');
    inNs(this.node, 'ip', 'link', 'set', 'cluster0', 'up');
    sh('ip', ['link', 'add', 'swn0', 'netns', this.node, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', this.pod]);
    inNs(this.node, 'ip', 'addr', 'add', '10.244.0.1/24', 'dev', 'swn0');
    inNs(this.pod, 'ip', 'addr', 'add', '10.244.0.2/24', 'dev', 'eth0');
    inNs(this.node, 'ip', 'link', 'set', 'swn0', 'up');
    inNs(this.pod, 'ip', 'link', 'set', 'eth0', 'up');
    inNs(this.pod, 'ip', 'route', 'add', 'default', 'via', '10.244.0.1');
    // --tcp-migrate-req: the kernel moves connections waiting in a closing listener's accept
    // queue to another listener of its SO_REUSEPORT group (Linux 5.14+) instead of resetting them.
    if (TCP_MIGRATE_REQ) inNs(this.node, 'sysctl', '-qw', 'net.ipv4.tcp_migrate_req=1');
    this.named = spawn('ip', ['netns', 'exec', this.node, 'named', '-g', '-c', namedConf(this.dir)], { stdio: 'ignore' });
    writeFileSync(join(this.dir, 'Corefile.base'), TEMPLATE);
    writeFileSync(join(this.dir, 'resolv.conf'), `nameserver ${LOCAL_IP}\n`);
  }

  /** A node cache with the DaemonSet's arguments; resolves once it logged that it listens. */
  async startCache() {
    const args = [join(ROOT, 'bin/kdns'), 'node-cache', '-localip', LOCAL_IP, '-conf', join(this.dir, 'Corefile'), '-basecorefile', join(this.dir, 'Corefile.base'), '-upstreamsvc', 'kube-dns-upstream', '-health-port', '8080'];
    const child = spawn('ip', ['netns', 'exec', this.node, process.execPath, ...args], {
      env: { ...process.env, KUBE_DNS_UPSTREAM_SERVICE_HOST: CLUSTER_DNS },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = { child, log: '', exited: new Promise((r) => child.on('exit', (code, signal) => r(code ?? signal))) };
    for (const s of [child.stdout, child.stderr]) s.on('data', (d) => (p.log += d));
    this.procs.push(p);
    const until = Date.now() + 30_000;
    while (!p.log.includes(`listening on ${LOCAL_IP}:53`)) {
      if (Date.now() > until || child.exitCode !== null) throw new Error(`node cache did not start:\n${p.log}`);
      await sleep(20);
    }
    return p;
  }

  /** `ip netns exec` execs: the child's pid is the kdns parent's. Its worker is its only child. */
  workerOf(p) {
    const children = readFileSync(`/proc/${p.child.pid}/task/${p.child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    if (children.length !== 1) throw new Error(`parent ${p.child.pid} has children [${children}]`);
    return Number(children[0]);
  }

  startClient() {
    const glibc = join(ROOT, 'build/realclient/lookup-glibc');
    const script = fileURLToPath(import.meta.url);
    const inner = `mount --bind ${this.dir}/resolv.conf /etc/resolv.conf && exec ${process.execPath} ${script} --client ${glibc}`;
    const child = spawn('ip', ['netns', 'exec', this.pod, 'unshare', '-m', 'sh', '-c', inner], { stdio: ['pipe', 'pipe', 'inherit'] });
    const results = [];
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop();
      for (const l of lines) if (l) results.push(JSON.parse(l));
    });
    const done = new Promise((r) => child.on('exit', r));
    return { results, stop: () => (child.stdin.end(), done) };
  }

  teardown() {
    for (const p of this.procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    this.named?.kill('SIGKILL');
    for (const ns of [this.node, this.pod]) {
      const pids = sh('ip', ['netns', 'pids', ns], { ok: true }) ?? '';
      for (const pid of pids.split('\n').filter(Boolean)) spawnSync('kill', ['-KILL', pid]);
      spawnSync('ip', ['netns', 'del', ns]);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs the event; returns [eventStart, eventEnd] in ms since the epoch. */
async function event(rig, scenario, first) {
  const start = Date.now();
  switch (scenario) {
    case 'swap': {
      await rig.startCache();
      await sleep(200);
      first.child.kill('SIGTERM');
      await first.exited;
      break;
    }
    case 'swap-teardown': {
      first.child.kill('SIGTERM');
      await first.exited;
      await rig.startCache();
      break;
    }
    case 'kill-worker': {
      process.kill(rig.workerOf(first), 'SIGKILL');
      // Back when the parent's next worker says it listens again.
      const before = first.log.split(`listening on ${LOCAL_IP}:53`).length;
      const until = Date.now() + 10_000;
      while (first.log.split(`listening on ${LOCAL_IP}:53`).length === before && Date.now() < until) await sleep(10);
      break;
    }
    case 'kill-parent': {
      // In a container the parent is PID 1: when it dies the kernel kills the rest of the pod's
      // PID namespace, the worker with it, at once (no teardown runs).
      const worker = rig.workerOf(first);
      first.child.kill('SIGKILL');
      process.kill(worker, 'SIGKILL');
      await first.exited;
      await sleep(1_000);
      await rig.startCache();
      break;
    }
    default:
      throw new Error(`unknown scenario ${scenario}; one of ${ALL.join(', ')}`);
  }
  return [start, Date.now()];
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summarize(results, [start, end]) {
  const windowEnd = end + 2_000;
  const inWindow = results.filter((r) => r.t >= start && r.t <= windowEnd);
  const row = { sent: inWindow.length, lost: 0, failed: 0, byVia: {} };
  for (const r of inWindow) {
    const v = (row.byVia[r.via] ??= { sent: 0, lost: 0, failed: 0 });
    v.sent++;
    if (r.ms === null) (row.lost++, v.lost++);
    else if (!r.ok) (row.failed++, v.failed++);
  }
  const ms = inWindow.filter((r) => r.ok).map((r) => r.ms).sort((a, b) => a - b);
  row.p50 = percentile(ms, 50);
  row.p99 = percentile(ms, 99);
  const bad = results.filter((r) => r.t >= start && !r.ok);
  const lastBad = bad.reduce((m, r) => Math.max(m, r.t), -Infinity);
  const recovered = results.filter((r) => r.ok && r.t > lastBad).reduce((m, r) => Math.min(m, r.t), Infinity);
  row.recoveryMs = bad.length === 0 ? 0 : recovered - start;
  row.eventMs = end - start;
  return row;
}

async function runOnce(scenario) {
  const rig = new Rig();
  try {
    rig.setup();
    const first = await rig.startCache();
    const client = rig.startClient();
    const pcap = PCAP_DIR ? join(rig.dir, 'swn0.pcap') : undefined;
    const capture = pcap ? spawn('ip', ['netns', 'exec', rig.node, 'tcpdump', '-U', '-s', '128', '-i', 'swn0', '-w', pcap, 'port', '53'], { stdio: 'ignore' }) : undefined;
    await sleep(3_000);
    const window = await event(rig, scenario, first);
    await sleep(4_000);
    await client.stop();
    const row = summarize(client.results, window);
    row.lostLookups = client.results.filter((r) => r.ms === null).map((r) => ({ via: r.via, at: r.t - window[0], port: r.port }));
    if (capture) {
      capture.kill('SIGINT');
      await new Promise((r) => capture.on('exit', r));
      if (row.lost > 0) sh('cp', [pcap, join(PCAP_DIR, `${scenario}-${Date.now()}.pcap`)]);
    }
    row.iface = spawnSync('ip', ['netns', 'exec', rig.node, 'ip', 'link', 'show', 'nodelocaldns']).status === 0;
    return row;
  } finally {
    rig.teardown();
  }
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === '--client') return client(argv[1]);
  const runsAt = argv.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 3;
  const json = argv.includes('--json');
  const valueAt = new Set([runsAt, argv.indexOf('--pcap')].filter((i) => i >= 0).map((i) => i + 1));
  const scenarios = argv.filter((a, i) => !a.startsWith('--') && !valueAt.has(i));
  for (const need of [join(ROOT, 'dist/cli/main.js'), join(ROOT, 'build/kdns_udp.node'), join(ROOT, 'build/realclient/lookup-glibc')]) {
    if (!existsSync(need)) throw new Error(`${need} is missing (npm run build; test/util/realclient/build.sh)`);
  }
  console.log(`node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('| scenario | run | sent (udp/tcp/glibc) | lost | failed | p50 ms | p99 ms | lookups work again after | event took | interface after |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const rows = [];
  for (const scenario of scenarios.length > 0 ? scenarios : ALL) {
    for (let i = 1; i <= runs; i++) {
      const r = await runOnce(scenario);
      rows.push({ scenario, run: i, ...r });
      const v = (k) => r.byVia[k] ?? { sent: 0, lost: 0, failed: 0 };
      const split = (f) => `${r[f]} (${v('udp')[f]}/${v('tcp')[f]}/${v('glibc')[f]})`;
      const shown = r.lostLookups.slice(0, 10);
      if (shown.length > 0) console.log(`lost: ${JSON.stringify(shown)}${r.lostLookups.length > shown.length ? ` and ${r.lostLookups.length - shown.length} more` : ''}`);
      console.log(`| ${scenario} | ${i} | ${split('sent')} | ${split('lost')} | ${split('failed')} | ${r.p50} | ${r.p99} | ${r.recoveryMs} ms | ${r.eventMs} ms | ${r.iface ? 'present' : 'gone'} |`);
    }
  }
  console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (json) console.log(JSON.stringify(rows));
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
