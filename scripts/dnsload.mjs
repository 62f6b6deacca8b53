#!/usr/bin/env node
// dnsload: a fixed-rate UDP DNS load with a record of every query, for fault and flood runs
// (scripts/forward-faults.mjs). dnsperf reports a mean and a maximum; a fault run needs to know
// which second lost what, and the tail of the latency distribution, so every query's send time,
// answer time and RCODE are kept.
//
// The client must not be what loses answers: queries go out over several connected sockets
// whose receive buffers are enlarged (SO_RCVBUF, up to net.core.rmem_max), and at the end the
// kernel's drop counter of each of those sockets (/proc/net/udp) is reported, so a run can show
// that no reply was dropped on the client's side.
//
//   node scripts/dnsload.mjs --server 127.0.0.1:1053 --rate 6000 --count 300000 \
//     --names 'q{i}.{tag}.miss.example.test' [--timeout 5] [--sockets 8] [--tag RUNID]
//
// Prints one JSON object on stdout (see `summary` below); progress goes to stderr. Only
// loopback servers are accepted.
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { udpSockets } from './procnet.mjs';

function parseArgs(argv) {
  const opts = { server: '', rate: 1000, count: 10000, names: 'q{i}.{tag}.example.test', timeout: 5, sockets: 8, tag: Math.random().toString(36).slice(2, 8), rcvbuf: 4 << 20, qtype: 1 };
  for (let i = 2; i < argv.length; i++) {
    const key = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${key}: missing value`);
    i++;
    switch (key) {
      case '--server':
        opts.server = value;
        break;
      case '--rate':
      case '--count':
      case '--timeout':
      case '--sockets':
      case '--rcvbuf':
      case '--qtype': {
        const n = Number(value);
        if (!Number.isFinite(n) || n <= 0) throw new Error(`${key}: "${value}" is not a positive number`);
        opts[key.slice(2)] = n;
        break;
      }
      case '--names':
        opts.names = value;
        break;
      case '--tag':
        opts.tag = value;
        break;
      default:
        throw new Error(`unknown option ${key}`);
    }
  }
  const m = /^(127\.\d+\.\d+\.\d+):(\d+)$/.exec(opts.server);
  if (!m) throw new Error(`--server: "${opts.server}" is not a loopback address:port (127.x.y.z:port)`);
  opts.host = m[1];
  opts.port = Number(m[2]);
  return opts;
}

/** The query for name number i: RD set, one question, no EDNS (as dnsperf sends by default). */
function buildQuery(name, id, qtype) {
  const labels = name.split('.').filter(Boolean);
  let len = 12 + 1 + 4;
  for (const l of labels) len += 1 + l.length;
  const b = Buffer.allocUnsafe(len);
  b.writeUInt16BE(id, 0);
  b.writeUInt16BE(0x0100, 2);
  b.writeUInt16BE(1, 4);
  b.writeUInt32BE(0, 6);
  b.writeUInt16BE(0, 10);
  let p = 12;
  for (const l of labels) {
    b[p++] = l.length;
    p += b.write(l, p, 'latin1');
  }
  b[p++] = 0;
  b.writeUInt16BE(qtype, p);
  b.writeUInt16BE(1, p + 2);
  return b;
}

const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

/** Kernel drop counters of our own sockets, by local port (the last field of /proc/net/udp). */
function socketDrops(ports) {
  const want = new Set(ports);
  let drops = 0;
  for (const socket of udpSockets().values()) if (want.has(socket.port)) drops += socket.drops;
  return drops;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, i)] * 1000) / 1000;
}

async function main() {
  const o = parseArgs(process.argv);
  const timeoutMs = o.timeout * 1000;
  const sent = new Float64Array(o.count).fill(-1);
  const latency = new Float32Array(o.count).fill(-1);
  const rcode = new Uint8Array(o.count).fill(255);
  let late = 0;
  let stray = 0;
  const sockets = [];
  for (let k = 0; k < o.sockets; k++) {
    const s = dgram.createSocket({ type: 'udp4', recvBufferSize: o.rcvbuf, sendBufferSize: o.rcvbuf });
    await new Promise((resolve, reject) => {
      s.once('error', reject);
      s.bind(0, '127.0.0.1', () => {
        s.off('error', reject);
        resolve();
      });
    });
    await new Promise((resolve) => s.connect(o.port, o.host, resolve));
    const state = { socket: s, slots: new Int32Array(65536).fill(-1), wires: new Array(65536), next: 0 };
    s.on('error', () => {
      // ICMP port unreachable while the server is down: the query simply gets no answer.
    });
    s.on('message', (msg) => {
      const now = performance.now();
      if (msg.length < 12) return;
      const id = msg.readUInt16BE(0);
      const i = state.slots[id];
      const wire = state.wires[id];
      // The question must be the one we sent under that ID (a reply to an older query whose ID
      // came round again is not an answer).
      if (i < 0 || !wire || msg.length < wire.length || msg.compare(wire, 12, wire.length, 12, wire.length) !== 0) {
        stray++;
        return;
      }
      if (latency[i] >= 0) return;
      const ms = now - sent[i];
      if (ms > timeoutMs) {
        late++;
        latency[i] = ms;
        rcode[i] = 254; // answered, but after the client gave up
        return;
      }
      latency[i] = ms;
      rcode[i] = msg[3] & 0x0f;
    });
    sockets.push(state);
  }
  const ports = sockets.map((s) => s.socket.address().port);
  const rcvbuf = sockets[0].socket.getRecvBufferSize();
  // SIGUSR2 marks a moment (forward-faults sends it when it kills an upstream): the queries in
  // flight then or sent within the second after it are reported apart from the rest.
  let markT = -1;
  process.on('SIGUSR2', () => {
    markT = performance.now();
  });
  const cpu0 = process.cpuUsage();
  const startEpoch = Date.now();
  const t0 = performance.now();
  let i = 0;
  await new Promise((resolve) => {
    const tick = () => {
      const owed = Math.min(o.count, Math.floor(((performance.now() - t0) * o.rate) / 1000));
      while (i < owed) {
        const st = sockets[i % o.sockets];
        const id = st.next;
        st.next = (st.next + 1) & 0xffff;
        const name = o.names.replaceAll('{i}', String(i)).replaceAll('{tag}', o.tag);
        const wire = buildQuery(name, id, o.qtype);
        st.slots[id] = i;
        st.wires[id] = wire;
        sent[i] = performance.now();
        st.socket.send(wire);
        i++;
      }
      if (i >= o.count) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  const sendEnd = performance.now();
  process.stderr.write(`dnsload: ${o.count} queries sent in ${((sendEnd - t0) / 1000).toFixed(1)} s; waiting ${o.timeout} s for the last answers\n`);
  await new Promise((r) => setTimeout(r, timeoutMs + 500));
  const cpu = process.cpuUsage(cpu0);
  const clientDrops = socketDrops(ports);
  for (const s of sockets) s.socket.close();

  const rcodes = {};
  let answered = 0;
  let unanswered = 0;
  const lat = [];
  const seconds = [];
  for (let q = 0; q < o.count; q++) {
    const sec = Math.floor((sent[q] - t0) / 1000);
    const b = (seconds[sec] ??= { second: sec, sent: 0, answered: 0, noAnswer: 0, servfail: 0, refused: 0, maxMs: 0, over100ms: 0 });
    b.sent++;
    const r = rcode[q];
    if (r === 255 || r === 254) {
      unanswered++;
      b.noAnswer++;
      continue;
    }
    answered++;
    b.answered++;
    const name = RCODES[r] ?? String(r);
    rcodes[name] = (rcodes[name] ?? 0) + 1;
    if (r === 2) b.servfail++;
    if (r === 5) b.refused++;
    const ms = latency[q];
    lat.push(ms);
    if (ms > b.maxMs) b.maxMs = Math.round(ms * 10) / 10;
    if (ms > 100) b.over100ms++;
  }
  const sorted = Float64Array.from(lat).sort();
  let outsideMark;
  let markWindow;
  if (markT >= 0) {
    // In the mark's second: sent within a second either side of it and not answered before it.
    const inWindow = (q) => sent[q] >= markT - 1000 && sent[q] < markT + 1000 && (latency[q] < 0 || rcode[q] >= 254 || sent[q] + latency[q] > markT);
    const outside = [];
    markWindow = { atSecond: Math.floor((markT - t0) / 1000), queries: 0, noAnswer: 0, servfail: 0, refused: 0, maxMs: 0 };
    for (let q = 0; q < o.count; q++) {
      const r = rcode[q];
      if (!inWindow(q)) {
        if (r < 254) outside.push(latency[q]);
        continue;
      }
      markWindow.queries++;
      if (r >= 254) markWindow.noAnswer++;
      else {
        if (r === 2) markWindow.servfail++;
        if (r === 5) markWindow.refused++;
        markWindow.maxMs = Math.max(markWindow.maxMs, Math.round(latency[q] * 10) / 10);
      }
    }
    // Around the mark in 100 ms steps by send time (from a second before to three after).
    markWindow.steps = [];
    for (let q = 0; q < o.count; q++) {
      const rel = sent[q] - markT;
      if (rel < -1000 || rel >= 3000) continue;
      const k = Math.floor(rel / 100);
      const b = (markWindow.steps[k + 10] ??= { fromMs: k * 100, sent: 0, noAnswer: 0, over100ms: 0, maxMs: 0 });
      b.sent++;
      if (rcode[q] >= 254) b.noAnswer++;
      else {
        if (latency[q] > 100) b.over100ms++;
        b.maxMs = Math.max(b.maxMs, Math.round(latency[q]));
      }
    }
    markWindow.steps = markWindow.steps.filter(Boolean);
    const so = Float64Array.from(outside).sort();
    outsideMark = { answered: so.length, latencyMs: { p50: percentile(so, 50), p99: percentile(so, 99), p999: percentile(so, 99.9), max: percentile(so, 100) } };
  }
  // The first two seconds in 100 ms steps by send time: how long a cold start holds answers up.
  const start = [];
  for (let q = 0; q < o.count && sent[q] - t0 < 2000; q++) {
    const b = (start[Math.floor((sent[q] - t0) / 100)] ??= { fromMs: Math.floor((sent[q] - t0) / 100) * 100, sent: 0, noAnswer: 0, maxMs: 0 });
    b.sent++;
    if (rcode[q] >= 254) b.noAnswer++;
    else b.maxMs = Math.max(b.maxMs, Math.round(latency[q]));
  }
  const summary = {
    startEpochMs: startEpoch,
    rate: o.rate,
    count: o.count,
    sendSeconds: Math.round((sendEnd - t0) / 10) / 100,
    answered,
    noAnswer: unanswered,
    answeredLate: late,
    stray,
    rcodes,
    latencyMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), p999: percentile(sorted, 99.9), max: percentile(sorted, 100) },
    markWindow,
    outsideMark,
    firstTwoSeconds: start.filter(Boolean),
    client: { sockets: o.sockets, rcvbufBytes: rcvbuf, kernelDrops: clientDrops, cpuSeconds: Math.round((cpu.user + cpu.system) / 1e4) / 100 },
    // Seconds with anything wrong in them (no answer, SERVFAIL, REFUSED or an answer over 100 ms).
    badSeconds: seconds.filter((b) => b && (b.noAnswer || b.servfail || b.refused || b.over100ms)),
  };
  process.stdout.write(JSON.stringify(summary) + '\n');
}

main().catch((e) => {
  process.stderr.write(`dnsload: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(2);
});
