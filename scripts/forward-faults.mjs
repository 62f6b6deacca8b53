#!/usr/bin/env node
// forward-faults: what kdns's forwarder answers when an upstream starts cold or dies, and under
// a flood of new names; every query of a fixed-rate load is accounted for (scripts/dnsload.mjs)
// and every kernel socket drop on the way is counted, so a lost answer can be placed.
//
// Scenarios (everything on loopback, kdns pinned to CPU 0, the load and the upstreams to CPU 1):
//   a  unique names at 6,000 QPS through `forward` to two upstreams (named and unbound) from
//      the first second after kdns starts; one upstream SIGKILLed in the middle
//   b  the stock Kubernetes Corefile (kubernetes, forward max_concurrent 1000, cache 30, loop,
//      loadbalance, ...), 1,000,000 distinct names forwarded to a healthy named at 9,000 QPS
//   c  the same Corefile, 1,000,000 distinct NXDOMAIN names under cluster.local at 25,000 QPS
//
//   node scripts/forward-faults.mjs [a|b|c|all] [--runs 3] [--kdns DIR] [--peer unbound]
//                                   [--count N] [--seconds S] [--stall server|named:MS] [--stall-every S]
//   node scripts/forward-faults.mjs --table RUNS.jsonl...    (the table of saved runs)
//
// --kdns DIR measures the kdns built in DIR (default: this repository; `npm install` or
// `npm run build` first, so DIR/dist exists). --peer unbound runs b and c against unbound
// instead of kdns (unbound forwarding to the same named with its cache; unbound answering
// cluster.local from a static zone), as the comparison of a C resolver under the same flood.
// --stall server:MS (or named:MS) stops the server under test (or the upstream named) with SIGSTOP
// for MS milliseconds every --stall-every seconds (default 5), from the load's second second on:
// the stalls that other work on a busy node causes, made the same for every run, so that runs
// of two builds can be compared whatever else the machine is doing.
// Needs: node, taskset (util-linux), named (Debian bind9), unbound (Debian unbound), two CPUs.
// On a machine others use too, NICE=-10 (as root) keeps their work from stalling the runs.
// Installs nothing. Prints one JSON line per run on stdout and a Markdown table at the end.
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os, { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { udpSockets } from './procnet.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');

function parseArgs(argv) {
  const o = { scenarios: ['a', 'b', 'c'], runs: 3, kdns: repo, peer: '', count: 0, seconds: 0, stall: undefined, stallEvery: 5 };
  const rest = argv.slice(2);
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (['a', 'b', 'c'].includes(a)) o.scenarios = [a];
    else if (a === 'all') o.scenarios = ['a', 'b', 'c'];
    else if (a === '--runs') o.runs = Number(rest[++i]);
    else if (a === '--kdns') o.kdns = resolve(rest[++i] ?? '');
    else if (a === '--peer') o.peer = rest[++i] ?? '';
    else if (a === '--count') o.count = Number(rest[++i]);
    else if (a === '--seconds') o.seconds = Number(rest[++i]);
    else if (a === '--stall') {
      const m = /^(server|named):([0-9]+)$/.exec(rest[++i] ?? '');
      if (!m) throw new Error('--stall: server:MS or named:MS');
      o.stall = { target: m[1], ms: Number(m[2]) };
    } else if (a === '--stall-every') o.stallEvery = Number(rest[++i]);
    else throw new Error(`unknown argument "${a}" (scenarios: a, b, c, all)`);
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error('--runs: a positive integer');
  if (o.peer !== '' && o.peer !== 'unbound') throw new Error('--peer: only "unbound"');
  if (!(o.stallEvery > 0)) throw new Error('--stall-every: a positive number of seconds');
  return o;
}

function which(bin) {
  return spawnSync('sh', ['-c', `command -v ${bin} || test -x /usr/sbin/${bin} && echo /usr/sbin/${bin}`], { encoding: 'utf8' }).stdout.trim().split('\n')[0] || '';
}

function checkNeeds(o) {
  const missing = [];
  for (const [bin, pkg] of [['taskset', 'util-linux'], ['named', 'bind9'], ['unbound', 'unbound']]) if (!which(bin)) missing.push(`${bin} (Debian ${pkg})`);
  if (!o.peer && !existsSync(join(o.kdns, 'dist/cli/main.js'))) missing.push(`${o.kdns}/dist (run npm install or npm run build there)`);
  if (missing.length) throw new Error(`forward-faults needs: ${missing.join(', ')}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  // A port free for both UDP and TCP on 127.0.0.1.
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 30000);
    const ok = await new Promise((res) => {
      const srv = net.createServer();
      srv.once('error', () => res(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
    });
    if (!ok) continue;
    const udpOk = await new Promise((res) => {
      const s = dgram.createSocket('udp4');
      s.once('error', () => res(false));
      s.bind(port, '127.0.0.1', () => s.close(() => res(true)));
    });
    if (udpOk) return port;
  }
}

/** One DNS query over UDP; resolves to the RCODE or undefined after `ms`. */
function ask(port, name, ms = 500) {
  return new Promise((res) => {
    const s = dgram.createSocket('udp4');
    const labels = name.split('.').filter(Boolean);
    const q = Buffer.concat([Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0, 0, 1, 0, 1])]);
    const t = setTimeout(() => {
      s.close();
      res(undefined);
    }, ms);
    s.on('message', (m) => {
      clearTimeout(t);
      s.close();
      res(m[3] & 0x0f);
    });
    s.send(q, port, '127.0.0.1');
  });
}

/**
 * A child process started pinned to a CPU, its output written to `logFile`. With NICE set, in a
 * session of its own whose scheduling group gets that nice value: with the kernel's autogroups a
 * process's own nice value only counts against its session's other processes.
 */
function startPinned(cpu, cmd, args, logFile, env = process.env) {
  const fd = openSync(logFile, 'w');
  const nice = process.env.NICE;
  const child = spawn('taskset', ['-c', String(cpu), cmd, ...args], { stdio: ['ignore', fd, fd], env, detached: nice !== undefined });
  closeSync(fd);
  if (nice !== undefined) prioritize(child.pid, Number(nice));
  return { child, log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '') };
}

function prioritize(pid, nice) {
  try {
    os.setPriority(pid, nice);
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch (e) {
    process.stderr.write(`forward-faults: NICE=${nice} not applied to ${pid}: ${e instanceof Error ? e.message : String(e)}\n`);
  }
}

async function stop(proc, signal = 'SIGTERM') {
  const c = proc.child;
  if (c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise((r) => c.once('exit', r));
  c.kill(signal);
  // The stock Corefile's health plugin keeps kdns answering for its 5 s lameduck first.
  const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(t);
}

// ---- upstreams ---------------------------------------------------------------------------

function startNamed(dir, port) {
  const zone = join(dir, 'example.test.zone');
  writeFileSync(zone, '$TTL 300\n@ IN SOA ns hostmaster 1 3600 600 86400 30\n@ IN NS ns\nns IN A 127.0.0.1\n*.miss IN A 192.0.2.99\n');
  writeFileSync(
    join(dir, 'named.conf'),
    `controls { };
options {
  directory "${dir}";
  pid-file none;
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
  minimal-responses yes;
};
zone "example.test" { type primary; file "${zone}"; };
`,
  );
  return startPinned(1, which('named'), ['-g', '-n', '1', '-c', join(dir, 'named.conf')], join(dir, 'named.log'));
}

/** unbound answering *.miss.example.test itself (a redirect zone), or forwarding to named, or cluster.local NXDOMAIN. */
function startUnbound(dir, port, cpu, role, namedPort = 0) {
  const roles = {
    // An upstream like named: the wildcard's answer for every name below miss.example.test
    // (and "." static, so the health check's ". NS" is answered instead of recursed on).
    upstream: ['local-zone: "." static', 'local-zone: "miss.example.test." redirect', 'local-data: "miss.example.test. 300 IN A 192.0.2.99"'],
    // A caching forwarder to named: the peer of kdns in scenario b.
    // (unbound answers NXDOMAIN for test. by itself, RFC 6761, unless told not to.)
    forwarder: ['do-not-query-localhost: no', 'local-zone: "test." nodefault', 'local-zone: "cluster.local." static', 'msg-cache-size: 32m', 'rrset-cache-size: 64m'],
    // Nothing under cluster.local exists: the peer of kdns in scenario c.
    nxdomain: ['local-zone: "cluster.local." static'],
  };
  const server = [
    'interface: 127.0.0.1',
    `port: ${port}`,
    'do-ip6: no',
    'do-daemonize: no',
    'num-threads: 1',
    'username: ""',
    'chroot: ""',
    `directory: "${dir}"`,
    'pidfile: ""',
    'use-syslog: no',
    'logfile: ""',
    'verbosity: 0',
    'access-control: 127.0.0.0/8 allow',
    'module-config: "iterator"',
    'qname-minimisation: no',
    ...roles[role],
  ];
  const forwardZone = role === 'forwarder' ? `forward-zone:\n  name: "."\n  forward-addr: 127.0.0.1@${namedPort}\n` : '';
  const conf = join(dir, `unbound-${role}.conf`);
  writeFileSync(conf, `server:\n${server.map((l) => `  ${l}`).join('\n')}\n${forwardZone}`);
  return startPinned(cpu, which('unbound'), ['-d', '-c', conf], join(dir, `unbound-${role}.log`));
}

async function waitAnswers(port, name, what, ms = 15000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await ask(port, name, 300)) !== undefined) return;
    await sleep(100);
  }
  throw new Error(`${what} on port ${port} did not answer ${name} within ${ms} ms`);
}

// ---- kdns ----------------------------------------------------------------------------------

function stockCorefile(port, upstream, metricsPort, healthPort, readyPort) {
  // kubeadm's Corefile (deploy/coredns/corefile.yaml without its autopath line), on loopback,
  // the demo cluster for the kubernetes plugin and named for the forward.
  return `.:${port} {
    bind 127.0.0.1
    errors
    health 127.0.0.1:${healthPort} {
       lameduck 5s
    }
    ready 127.0.0.1:${readyPort}
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       manifests ${join(repo, 'examples/cluster')}
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus 127.0.0.1:${metricsPort}
    forward . ${upstream} {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
`;
}

function twoUpstreamsCorefile(port, upstreams, metricsPort) {
  return `.:${port} {
    bind 127.0.0.1
    prometheus 127.0.0.1:${metricsPort}
    forward . ${upstreams.join(' ')}
}
`;
}

async function startKdns(o, dir, corefile, port) {
  writeFileSync(join(dir, 'Corefile'), corefile);
  // KDNS_NODE_FLAGS replaces the node flags kdns ships with (e.g. to add --trace-gc or --cpu-prof).
  const flags = process.env.KDNS_NODE_FLAGS ? process.env.KDNS_NODE_FLAGS.split(/\s+/).filter(Boolean) : ['--max-semi-space-size=1', '--v8-pool-size=1'];
  const p = startPinned(0, process.execPath, [...flags, join(o.kdns, 'bin/kdns'), 'serve', '--conf', join(dir, 'Corefile')], join(dir, 'kdns.log'));
  // Ready when it says it listens: no query is sent before the load, so the load's first
  // second is kdns's first second of work.
  const until = Date.now() + 30_000;
  while (!p.log().includes(`listening on 127.0.0.1:${port}`)) {
    if (p.child.exitCode !== null) throw new Error(`kdns exited:\n${p.log()}`);
    if (Date.now() > until) throw new Error(`kdns did not start:\n${p.log()}`);
    await sleep(20);
  }
  return p;
}

async function metricsText(port) {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/metrics`);
    return await r.text();
  } catch {
    return '';
  }
}

/** Sum of a metric's samples whose labels contain `match`. */
function metricSum(text, name, match = '') {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    if (match && !line.includes(match)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return sum;
}

// ---- kernel counters -----------------------------------------------------------------------

function udpSnmp() {
  const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Udp:'));
  const names = lines[0].split(/\s+/).slice(1);
  const values = lines[1].split(/\s+/).slice(1).map(Number);
  return Object.fromEntries(names.map((n, i) => [n, values[i]]));
}


function socketInodes(pid) {
  const inodes = new Set();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    // process gone
  }
  return inodes;
}

/**
 * Samples per-socket drop counters while the load runs, so sockets that close during the run
 * (kdns replaces its upstream sockets every `expire`) are counted too.
 */
function dropSampler(roles) {
  const maxDrops = new Map();
  const kdnsInodes = new Set();
  let maxRxQueue = 0;
  const started = Date.now();
  // Second of the run → drops seen in it, by where.
  const timeline = new Map();
  let lastTotals = { listener: 0, upstream: 0 };
  // Time the server's main thread spent runnable but waiting for its CPU (another process had
  // it): the part of a stall that is not the server's own doing.
  const waitNs = () => {
    try {
      return Number(readFileSync(`/proc/${roles.serverPid}/task/${roles.serverPid}/schedstat`, 'utf8').split(' ')[1]);
    } catch {
      return NaN;
    }
  };
  const wait0 = waitNs();
  let lastWait = wait0;
  let maxWaitIn200ms = 0;
  const sample = () => {
    const w = waitNs();
    maxWaitIn200ms = Math.max(maxWaitIn200ms, w - lastWait);
    lastWait = w;
    if (roles.kdnsPid) for (const i of socketInodes(roles.kdnsPid)) kdnsInodes.add(i);
    for (const [inode, s] of udpSockets()) {
      const prev = maxDrops.get(inode);
      if (!prev || s.drops > prev.drops) maxDrops.set(inode, { port: s.port, drops: s.drops });
      if (s.port === roles.listenPort) maxRxQueue = Math.max(maxRxQueue, s.rxQueue);
    }
    const totals = { listener: 0, upstream: 0 };
    for (const [inode, s] of maxDrops) {
      const d = s.drops - (base.get(inode) ?? 0);
      if (s.port === roles.listenPort) totals.listener += d;
      else if (kdnsInodes.has(inode)) totals.upstream += d;
    }
    if (totals.listener !== lastTotals.listener || totals.upstream !== lastTotals.upstream) {
      const sec = Math.floor((Date.now() - started) / 1000);
      const t = timeline.get(sec) ?? { second: sec, listener: 0, upstreamSockets: 0 };
      t.listener += totals.listener - lastTotals.listener;
      t.upstreamSockets += totals.upstream - lastTotals.upstream;
      timeline.set(sec, t);
      lastTotals = totals;
    }
  };
  const base = new Map([...udpSockets()].map(([inode, s]) => [inode, s.drops]));
  sample();
  const timer = setInterval(sample, 200);
  return {
    finish() {
      clearInterval(timer);
      sample();
      const by = { serverListener: 0, kdnsUpstreamSockets: 0, upstreams: {}, other: 0 };
      for (const [inode, s] of maxDrops) {
        const d = s.drops - (base.get(inode) ?? 0);
        if (d === 0) continue;
        if (s.port === roles.listenPort) by.serverListener += d;
        else if (kdnsInodes.has(inode)) by.kdnsUpstreamSockets += d;
        else if (roles.upstreamPorts[s.port]) by.upstreams[roles.upstreamPorts[s.port]] = (by.upstreams[roles.upstreamPorts[s.port]] ?? 0) + d;
        else by.other += d;
      }
      by.listenerMaxRxQueueBytes = maxRxQueue;
      by.serverWaitedForCpuMs = Math.round((lastWait - wait0) / 1e6);
      by.serverMaxWaitIn200msMs = Math.round(maxWaitIn200ms / 1e6);
      by.loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
      by.bySecond = [...timeline.values()].slice(0, 20);
      return by;
    },
  };
}

function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

// ---- stalls ----------------------------------------------------------------------------------

/**
 * Stops `proc` with SIGSTOP for `stall.ms` every `everySeconds`, from 1 s into the load until
 * `loadSeconds`; stop() continues it and returns how many stalls there were.
 */
function startStalls(stall, everySeconds, proc, loadSeconds) {
  if (!stall) return { stop: () => 0 };
  let count = 0;
  let stopped = false;
  const resume = () => {
    if (stopped) {
      stopped = false;
      proc.child.kill('SIGCONT');
    }
  };
  const one = () => {
    proc.child.kill('SIGSTOP');
    stopped = true;
    count++;
    setTimeout(resume, stall.ms);
  };
  const first = setTimeout(() => {
    one();
    timer = setInterval(() => {
      if ((count + 1) * everySeconds < loadSeconds) one();
    }, everySeconds * 1000);
  }, 1000);
  let timer;
  return {
    stop() {
      clearTimeout(first);
      clearInterval(timer);
      resume();
      return count;
    },
  };
}

// ---- one run -------------------------------------------------------------------------------

const SCENARIOS = {
  a: { rate: 6000, count: 336_000, names: 'q{i}.{tag}.miss.example.test', kill: true },
  b: { rate: 9000, count: 1_000_000, names: 'q{i}.{tag}.miss.example.test', kill: false },
  c: { rate: 25_000, count: 1_000_000, names: 'n{i}.{tag}.svc.cluster.local', kill: false },
};

async function runOnce(o, scenario, run) {
  const sc = { ...SCENARIOS[scenario] };
  if (o.seconds > 0) sc.count = Math.round(o.seconds * sc.rate);
  if (o.count > 0) sc.count = o.count;
  const dir = mkdtempSync(join(tmpdir(), `kdns-faults-${scenario}-`));
  const procs = [];
  const result = { scenario, run, server: o.peer || 'kdns', rate: sc.rate, count: sc.count };
  try {
    const namedPort = await freePort();
    const named = startNamed(dir, namedPort);
    procs.push(named);
    await waitAnswers(namedPort, 'x.miss.example.test', 'named');
    const upstreamPorts = { [namedPort]: 'named' };
    let unboundUp;
    let unboundPort = 0;
    if (scenario === 'a') {
      unboundPort = await freePort();
      unboundUp = startUnbound(dir, unboundPort, 1, 'upstream');
      procs.push(unboundUp);
      await waitAnswers(unboundPort, 'x.miss.example.test', 'unbound');
      upstreamPorts[unboundPort] = 'unbound';
    }
    const port = await freePort();
    const metricsPort = await freePort();
    let server;
    if (o.peer === 'unbound') {
      if (scenario === 'a') throw new Error('--peer unbound: scenarios b and c only');
      server = startUnbound(dir, port, 0, scenario === 'b' ? 'forwarder' : 'nxdomain', namedPort);
      procs.push(server);
      await waitAnswers(port, 'ready.cluster.local', 'unbound');
    } else {
      const corefile = scenario === 'a' ? twoUpstreamsCorefile(port, [`127.0.0.1:${namedPort}`, `127.0.0.1:${unboundPort}`], metricsPort) : stockCorefile(port, `127.0.0.1:${namedPort}`, metricsPort, await freePort(), await freePort());
      server = await startKdns(o, dir, corefile, port);
      procs.push(server);
    }
    const pid = server.child.pid;
    const snmp0 = udpSnmp();
    const drops = dropSampler({ kdnsPid: o.peer ? 0 : pid, serverPid: pid, listenPort: port, upstreamPorts });
    const cpu0 = cpuSeconds(pid);
    const t0 = Date.now();
    const load = spawn('taskset', ['-c', '1', process.execPath, join(here, 'dnsload.mjs'), '--server', `127.0.0.1:${port}`, '--rate', String(sc.rate), '--count', String(sc.count), '--names', sc.names, '--tag', `r${run}${Math.random().toString(36).slice(2, 6)}`], {
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: process.env.NICE !== undefined,
    });
    if (process.env.NICE !== undefined) prioritize(load.pid, Number(process.env.NICE));
    let out = '';
    load.stdout.on('data', (d) => (out += d));
    let killAt = 0;
    let killed = '';
    let cpuLoadEnd = NaN;
    if (sc.kill) {
      // Half way through the load, one upstream dies without a word: named on odd runs, unbound on even ones.
      const victim = run % 2 === 1 ? named : unboundUp;
      killed = run % 2 === 1 ? 'named' : 'unbound';
      setTimeout(() => {
        killAt = Date.now();
        victim.child.kill('SIGKILL');
        load.kill('SIGUSR2');
      }, (sc.count / sc.rate / 2) * 1000);
    }
    setTimeout(() => (cpuLoadEnd = cpuSeconds(pid)), (sc.count / sc.rate) * 1000);
    const stalls = startStalls(o.stall, o.stallEvery, o.stall?.target === 'named' ? named : server, sc.count / sc.rate);
    const code = await new Promise((r) => load.on('exit', r));
    const stallsDone = stalls.stop();
    if (code !== 0) throw new Error(`dnsload exited ${code}`);
    const loadResult = JSON.parse(out);
    const cpuUsed = (Number.isNaN(cpuLoadEnd) ? cpuSeconds(pid) : cpuLoadEnd) - cpu0;
    const snmp1 = udpSnmp();
    const text = o.peer ? '' : await metricsText(metricsPort);
    Object.assign(result, loadResult, {
      killed,
      killSecond: killAt ? Math.floor((killAt - loadResult.startEpochMs) / 1000) : undefined,
      stall: o.stall ? { ...o.stall, everySeconds: o.stallEvery, count: stallsDone } : undefined,
      serverCpuOfCore: Math.round((cpuUsed / (sc.count / sc.rate)) * 1000) / 10,
      serverCpuUsPerQuery: Math.round((cpuUsed / sc.count) * 1e7) / 10,
      socketDrops: drops.finish(),
      udpSnmpDelta: { InErrors: snmp1.InErrors - snmp0.InErrors, RcvbufErrors: snmp1.RcvbufErrors - snmp0.RcvbufErrors, SndbufErrors: snmp1.SndbufErrors - snmp0.SndbufErrors },
      forward: o.peer
        ? undefined
        : {
            maxConcurrentRejects: metricSum(text, 'coredns_forward_max_concurrent_rejects_total'),
            healthcheckFailures: metricSum(text, 'coredns_proxy_healthcheck_failures_total'),
            // Per upstream: a healthy one that fails its checks was marked down by kdns's own losses.
            healthcheckFailuresBy: Object.fromEntries(Object.entries(upstreamPorts).map(([p, name]) => [name, metricSum(text, 'coredns_proxy_healthcheck_failures_total', `to="127.0.0.1:${p}"`)])),
            healthcheckBroken: metricSum(text, 'coredns_forward_healthcheck_broken_total'),
            requests: metricSum(text, 'coredns_forward_requests_total'),
            responses: metricSum(text, 'coredns_forward_responses_total'),
            // Copies of late UDP queries (kdns with retransmission; absent before it).
            retransmits: metricSum(text, 'kdns_forward_retransmits_total'),
          },
      serverWarnings: server
        .log()
        .split('\n')
        .filter((l) => /warn|error|down|again/i.test(l))
        .slice(0, 8),
    });
    delete result.startEpochMs;
    delete result.badSeconds;
    result.badSeconds = loadResult.badSeconds.slice(0, 12);
    return result;
  } finally {
    for (const p of procs.reverse()) await stop(p);
    // KEEP_RUN_DIR=1 keeps the configurations and logs of the run.
    if (process.env.KEEP_RUN_DIR === '1') process.stderr.write(`forward-faults: run files kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

function row(r) {
  const rc = r.rcodes ?? {};
  const lat = r.latencyMs ?? {};
  const outside = r.outsideMark ? ` (${r.outsideMark.latencyMs.p999} outside the kill)` : '';
  const d = r.socketDrops ?? {};
  const upstreamDrops = Object.values(d.upstreams ?? {}).reduce((a, b) => a + b, 0);
  const stall = r.stall ? `, ${r.stall.target} stopped ${r.stall.ms} ms ×${r.stall.count}` : '';
  return `| ${r.scenario}${stall} | ${r.server} | ${r.run} | ${r.count} | ${(rc.NOERROR ?? 0) + (rc.NXDOMAIN ?? 0)} | ${rc.SERVFAIL ?? 0} | ${rc.REFUSED ?? 0} | ${r.noAnswer} | ${lat.p50} / ${lat.p99} / ${lat.p999}${outside} | ${r.serverCpuOfCore}% | ${d.serverListener ?? '-'} / ${d.kdnsUpstreamSockets ?? '-'} / ${upstreamDrops} / ${r.client?.kernelDrops ?? '-'} | ${r.forward?.retransmits ?? '-'} | ${d.loadavg ?? ''} |`;
}

/** The Markdown table of runs (also: node scripts/forward-faults.mjs --table FILE.jsonl...). */
function table(runs) {
  const head = '| scenario | server | run | queries | answered (NOERROR/NXDOMAIN) | SERVFAIL | REFUSED | no answer in 5 s | latency p50 / p99 / p99.9 ms | server CPU of its core | socket drops: server listener / kdns upstream sockets / upstream servers / client | copies sent again | load average |\n|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---|';
  return `${head}\n${runs.map(row).join('\n')}\n`;
}

async function main() {
  if (process.argv[2] === '--table') {
    const runs = process.argv.slice(3).flatMap((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)));
    process.stdout.write(table(runs));
    return;
  }
  const o = parseArgs(process.argv);
  checkNeeds(o);
  // NICE=-10 (root) runs the server, the upstreams and the load ahead of whatever else the
  // machine is doing (startPinned): on a shared machine, the time the server waits for its CPU
  // is otherwise a stall of its own (each run reports it as serverWaitedForCpuMs).
  const runs = [];
  for (const s of o.scenarios) {
    if (o.peer && s === 'a') continue;
    for (let run = 1; run <= o.runs; run++) {
      const r = await runOnce(o, s, run);
      process.stdout.write(JSON.stringify(r) + '\n');
      runs.push(r);
    }
  }
  process.stdout.write('\n' + table(runs));
}

main().catch((e) => {
  process.stderr.write(`forward-faults: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
