#!/usr/bin/env node
// forward-balance: how a node's cache misses spread over the cluster DNS's replicas when it
// scales from one to three, with kdns forwarding over TCP (`force_tcp`, as the node cache does)
// to one Service address.
//
// What runs (all on 127.0.0.1):
//   - three named, the cluster DNS "replicas", each answering *.miss.example.test;
//   - the "Service": a connection-level load balancer written here. Each new TCP connection goes
//     to one of the replicas that are ready, picked at random as kube-proxy's iptables and
//     nftables modes do (`--lb rr`: in turn, as IPVS's default); a connection stays on the
//     replica it reached for its whole life. At first only replica 1 is ready; `--scale-at`
//     seconds later all three are (the Deployment scaled out, the Endpoints grew);
//   - kdns (from this repository's source) with `forward . <Service> { force_tcp ... }`, no cache,
//     so every query is a miss that goes upstream;
//   - a steady load of distinct names over UDP to kdns at `--rate` queries per second.
// Every `--window` seconds the script prints each replica's share of the queries the load
// balancer passed in that window, and at the end a Markdown table (one row per window after the
// scale-out), the shares over the whole time after the scale-out and over its last minute.
//
//   node scripts/forward-balance.mjs [--max-age 30s] [--max-queries 100] [--rate 200]
//        [--seconds 120] [--scale-at 10] [--window 10] [--lb random|rr] [--label TEXT]
//
// --max-age and --max-queries become forward's `max_age` and `maxtcpqueries`; `--max-age 0
// --max-queries -1` measures forward without either (kdns before them). --seconds counts from
// the scale-out. Prints the table on stdout, progress on stderr, and one JSON line at the end.
// Needs: node 26, named (Debian bind9), kdns built (npm run build). Installs nothing.
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os, { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parseArgs(argv) {
  const o = { maxAge: '30s', maxQueries: '100', rate: 200, seconds: 120, scaleAt: 10, window: 10, lb: 'random', label: '' };
  const rest = argv.slice(2);
  for (let i = 0; i < rest.length; i += 2) {
    const [key, value] = [rest[i], rest[i + 1]];
    if (value === undefined) throw new Error(`${key}: missing value`);
    if (key === '--max-age') o.maxAge = value;
    else if (key === '--max-queries') o.maxQueries = value;
    else if (key === '--lb') o.lb = value;
    else if (key === '--label') o.label = value;
    else if (['--rate', '--seconds', '--scale-at', '--window'].includes(key)) {
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`${key}: "${value}" is not a positive number`);
      o[key === '--scale-at' ? 'scaleAt' : key.slice(2)] = n;
    } else throw new Error(`unknown option ${key}`);
  }
  if (!['random', 'rr'].includes(o.lb)) throw new Error('--lb: random or rr');
  return o;
}

function which(bin) {
  return spawnSync('sh', ['-c', `command -v ${bin} || (test -x /usr/sbin/${bin} && echo /usr/sbin/${bin})`], { encoding: 'utf8' }).stdout.trim().split('\n')[0] || '';
}

async function freePort() {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 30000);
    const free = (make) =>
      new Promise((res) => {
        const s = make();
        s.once('error', () => res(false));
        if (s instanceof net.Server) s.listen(port, '127.0.0.1', () => s.close(() => res(true)));
        else s.bind(port, '127.0.0.1', () => s.close(() => res(true)));
      });
    if ((await free(() => net.createServer())) && (await free(() => dgram.createSocket('udp4')))) return port;
  }
}

function startLogged(cmd, args, logFile) {
  const fd = openSync(logFile, 'w');
  const child = spawn(cmd, args, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  return { child, log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '') };
}

async function stop(proc) {
  const c = proc.child;
  if (c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(t);
}

// ---- the replicas: named ------------------------------------------------------------------

function startNamed(dir, n, port) {
  const zone = join(dir, `example.test.${n}.zone`);
  writeFileSync(zone, `$TTL 300\n@ IN SOA ns hostmaster 1 3600 600 86400 30\n@ IN NS ns\nns IN A 127.0.0.1\n*.miss IN A 192.0.2.${n}\n`);
  const conf = join(dir, `named.${n}.conf`);
  writeFileSync(
    conf,
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
  tcp-clients 1000;
};
zone "example.test" { type primary; file "${zone}"; };
`,
  );
  return startLogged(which('named'), ['-g', '-n', '1', '-c', conf], join(dir, `named.${n}.log`));
}

/** Resolves once `port` answers a TCP query. */
async function waitTcpAnswer(port, what) {
  const until = Date.now() + 20_000;
  for (;;) {
    const ok = await new Promise((res) => {
      const s = net.connect(port, '127.0.0.1');
      const q = buildQuery('ready.miss.example.test', 1);
      s.once('connect', () => s.write(Buffer.concat([Buffer.from([q.length >> 8, q.length & 0xff]), q])));
      s.once('data', () => {
        s.destroy();
        res(true);
      });
      s.once('error', () => res(false));
      setTimeout(() => {
        s.destroy();
        res(false);
      }, 500);
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`${what} on port ${port} does not answer`);
    await sleep(100);
  }
}

// ---- the Service: a connection-level load balancer ----------------------------------------

/**
 * Each accepted connection is piped to one ready backend for its whole life; the queries the
 * client sends (2-byte length framing) are counted per backend on the way through.
 */
function startBalancer(port, backendPorts, lb) {
  const queries = backendPorts.map(() => 0);
  const connections = backendPorts.map(() => 0);
  let ready = 1;
  let turn = 0;
  const server = net.createServer((client) => {
    const b = lb === 'rr' ? turn++ % ready : Math.floor(Math.random() * ready);
    connections[b]++;
    const upstream = net.connect(backendPorts[b], '127.0.0.1');
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 2 && pending.length >= pending.readUInt16BE(0) + 2) {
        queries[b]++;
        pending = pending.subarray(pending.readUInt16BE(0) + 2);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  return new Promise((res) =>
    server.listen(port, '127.0.0.1', () =>
      res({
        queries,
        connections,
        scaleOut: () => {
          ready = backendPorts.length;
        },
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

// ---- kdns ---------------------------------------------------------------------------------

async function startKdns(dir, port, servicePort, o) {
  const lines = ['force_tcp'];
  if (o.maxAge !== '0' && o.maxAge !== '0s') lines.push(`max_age ${o.maxAge}`);
  if (o.maxQueries !== '-1') lines.push(`maxtcpqueries ${o.maxQueries}`);
  const corefile = `.:${port} {\n    bind 127.0.0.1\n    forward . 127.0.0.1:${servicePort} {\n${lines.map((l) => `        ${l}\n`).join('')}    }\n}\n`;
  writeFileSync(join(dir, 'Corefile'), corefile);
  const main = pathToFileURL(join(repo, 'dist/cli/main.js')).href; // the production build (npm run build)
  const code = `import(${JSON.stringify(main)}).then((m) => m.main(['node', 'kdns', ...process.argv.slice(1)]))`;
  const p = startLogged(process.execPath, ['-e', code, '--', 'serve', '--conf', join(dir, 'Corefile')], join(dir, 'kdns.log'));
  const until = Date.now() + 60_000;
  while (!p.log().includes(`listening on 127.0.0.1:${port}`)) {
    if (p.child.exitCode !== null) throw new Error(`kdns exited:\n${p.log()}`);
    if (Date.now() > until) throw new Error(`kdns did not start:\n${p.log()}`);
    await sleep(50);
  }
  return { proc: p, corefile };
}

// ---- the load ------------------------------------------------------------------------------

function buildQuery(name, id) {
  const labels = name.split('.').filter(Boolean);
  const b = Buffer.alloc(12 + labels.reduce((n, l) => n + 1 + l.length, 0) + 5);
  b.writeUInt16BE(id, 0);
  b.writeUInt16BE(0x0100, 2);
  b.writeUInt16BE(1, 4);
  let p = 12;
  for (const l of labels) {
    b[p++] = l.length;
    p += b.write(l, p, 'latin1');
  }
  b[p++] = 0;
  b.writeUInt16BE(1, p);
  b.writeUInt16BE(1, p + 2);
  return b;
}

/** Distinct names at `rate` per second to kdns over UDP until stopped; counts answers. */
function startLoad(port, rate, tag) {
  const sock = dgram.createSocket('udp4');
  const stats = { sent: 0, answered: 0 };
  sock.on('message', () => stats.answered++);
  const started = performance.now();
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    while (stats.sent < due) {
      sock.send(buildQuery(`q${stats.sent}.${tag}.miss.example.test`, stats.sent & 0xffff), port, '127.0.0.1');
      stats.sent++;
    }
  }, 5);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    sock.close();
  };
  return { stats, stop };
}

// ---- the run ------------------------------------------------------------------------------

const pct = (n, total) => (total === 0 ? '-' : `${((100 * n) / total).toFixed(1)}%`);
const within = (n, total) => total > 0 && Math.abs(n / total - 1 / 3) <= 0.2 / 3;

async function main() {
  const o = parseArgs(process.argv);
  if (!which('named')) throw new Error('forward-balance needs named (Debian bind9)');
  const dir = mkdtempSync(join(tmpdir(), 'kdns-balance-'));
  const procs = [];
  let balancer;
  let load;
  try {
    const backendPorts = [await freePort(), await freePort(), await freePort()];
    backendPorts.forEach((port, i) => procs.push(startNamed(dir, i + 1, port)));
    for (const [i, port] of backendPorts.entries()) await waitTcpAnswer(port, `named ${i + 1}`);
    const servicePort = await freePort();
    balancer = await startBalancer(servicePort, backendPorts, o.lb);
    const kdnsPort = await freePort();
    const kdns = await startKdns(dir, kdnsPort, servicePort, o);
    procs.push(kdns.proc);
    process.stderr.write(`forward-balance: ${o.label || ''} Corefile:\n${kdns.corefile}`);
    const commit = spawnSync('git', ['-C', repo, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
    const loadBefore = os.loadavg().map((x) => x.toFixed(2)).join(' ');

    load = startLoad(kdnsPort, o.rate, Math.random().toString(36).slice(2, 8));
    await sleep(o.scaleAt * 1000);
    balancer.scaleOut();
    const t0 = Date.now();
    process.stderr.write(`forward-balance: scaled out to 3 replicas after ${o.scaleAt} s of load\n`);
    const windows = [];
    let lastQ = [...balancer.queries];
    let lastC = [...balancer.connections];
    for (let w = 1; w * o.window <= o.seconds; w++) {
      await sleep(t0 + w * o.window * 1000 - Date.now());
      const q = balancer.queries.map((n, i) => n - lastQ[i]);
      const c = balancer.connections.map((n, i) => n - lastC[i]);
      lastQ = [...balancer.queries];
      lastC = [...balancer.connections];
      const total = q.reduce((a, b) => a + b, 0);
      windows.push({ until: w * o.window, queries: q, connections: c, total, balanced: q.every((n) => within(n, total)) });
      process.stderr.write(`  ${String(w * o.window).padStart(4)} s: ${q.map((n) => pct(n, total)).join(' / ')} of ${total} queries; new connections ${c.join(' / ')}\n`);
    }
    load.stop();
    const stats = { ...load.stats };
    const lastMinute = windows.filter((w) => w.until > o.seconds - 60);
    const minuteQ = [0, 1, 2].map((i) => lastMinute.reduce((a, w) => a + w.queries[i], 0));
    const minuteTotal = minuteQ.reduce((a, b) => a + b, 0);
    const allQ = [0, 1, 2].map((i) => windows.reduce((a, w) => a + w.queries[i], 0));
    const allTotal = allQ.reduce((a, b) => a + b, 0);
    const firstBalanced = windows.findIndex((w, i) => windows.slice(i).every((x) => x.balanced));
    const result = {
      label: o.label,
      commit,
      options: { maxAge: o.maxAge, maxQueries: o.maxQueries, rate: o.rate, lb: o.lb, window: o.window },
      loadavg: { before: loadBefore, after: os.loadavg().map((x) => x.toFixed(2)).join(' ') },
      sent: stats.sent,
      answered: stats.answered,
      windows,
      shares: allQ.map((n) => Number((n / allTotal).toFixed(3))),
      balanced: allQ.every((n) => within(n, allTotal)),
      lastMinuteShares: minuteQ.map((n) => Number((n / minuteTotal).toFixed(3))),
      lastMinuteBalanced: minuteQ.every((n) => within(n, minuteTotal)),
      balancedFromSecond: firstBalanced < 0 ? null : firstBalanced === 0 ? 0 : windows[firstBalanced - 1].until,
    };
    const head = `| s after scale-out | replica 1 | replica 2 | replica 3 | queries | new connections | each within ±20% of ⅓ |\n|---:|---:|---:|---:|---:|---|---|`;
    const rows = windows.map((w) => `| ${w.until} | ${w.queries.map((n) => pct(n, w.total)).join(' | ')} | ${w.total} | ${w.connections.join(' / ')} | ${w.balanced ? 'yes' : 'no'} |`);
    process.stdout.write(
      `\n${o.label ? `### ${o.label}\n\n` : ''}max_age ${o.maxAge}, maxtcpqueries ${o.maxQueries}, ${o.rate} q/s, load balancer ${o.lb}; commit ${commit}; load average ${result.loadavg.before} → ${result.loadavg.after}; answered ${stats.answered} of ${stats.sent}\n\n${head}\n${rows.join('\n')}\n\nAll ${o.seconds} s after the scale-out: ${allQ.map((n) => pct(n, allTotal)).join(' / ')} (${result.balanced ? 'each within' : 'not all within'} ±20% of ⅓). Last minute: ${minuteQ.map((n) => pct(n, minuteTotal)).join(' / ')} (${result.lastMinuteBalanced ? 'each within' : 'not all within'} ±20% of ⅓); every window balanced from ${result.balancedFromSecond === null ? 'never' : `${result.balancedFromSecond} s`} on.\n\n`,
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    load?.stop?.();
    for (const p of procs.reverse()) await stop(p);
    await balancer?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`forward-balance: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
