// The rig's in-namespace half, started by run.ts as
//   unshare --net -- setpriv --pdeathsig KILL -- node agent.js
// so it is the only process of a fresh network namespace that has nothing but `lo`. It puts the
// pod's nameserver addresses on `lo`, opens UDP and TCP port 53 on each one that should answer,
// starts the lookup client and reports, on stdout, every DNS message the client sends; the
// runner relays them to the servers under test and sends the answers back on stdin. The
// protocol is in protocol.ts.
//
// Lifetime: the agent ends when its stdin ends, whether the runner closed it or died (even by
// SIGKILL), and the kernel kills it if its parent dies (pdeathsig). The client gets the same
// pdeathsig from the agent, so nothing of a run outlives the test process.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { frame, preciseNow, splitFrames, type AgentConfig, type FromAgent, type ToAgent } from './protocol.js';

const DNS_PORT = 53;
/** After the client ends, how long to keep reading: datagrams it sent just before may still be queued. */
const SETTLE_MS = 30;

let nextSeq = 0;
let nextConn = 0;
const udpReplyTo = new Map<number, { socket: dgram.Socket; address: string; port: number }>();
const tcpClients = new Map<number, net.Socket>();
const closables: Array<{ close(): unknown }> = [];
let client: ChildProcess | undefined;

function send(message: FromAgent): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function fatal(message: string): never {
  send({ kind: 'fatal', message });
  process.exit(1);
}

function ip(args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) fatal(`ip ${args.join(' ')}: ${r.error?.message ?? r.stderr.trim()}`);
}

function openUdp(address: string, route: 'relay' | 'drop'): Promise<void> {
  const socket = dgram.createSocket({ type: net.isIPv6(address) ? 'udp6' : 'udp4', ipv6Only: net.isIPv6(address) });
  socket.on('message', (data, rinfo) => {
    const seq = nextSeq++;
    if (route === 'relay') udpReplyTo.set(seq, { socket, address: rinfo.address, port: rinfo.port });
    send({ kind: 'query', seq, transport: 'udp', server: address, conn: null, route, at: preciseNow(), data: data.toString('base64') });
  });
  closables.push(socket);
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(DNS_PORT, address, () => resolve());
  });
}

function openTcp(address: string, route: 'relay' | 'drop'): Promise<void> {
  const server = net.createServer((socket) => {
    const conn = nextConn++;
    tcpClients.set(conn, socket);
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      const at = preciseNow();
      const { messages, rest } = splitFrames(Buffer.concat([pending, chunk]));
      pending = Buffer.from(rest);
      for (const m of messages) send({ kind: 'query', seq: nextSeq++, transport: 'tcp', server: address, conn, route, at, data: m.toString('base64') });
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      tcpClients.delete(conn);
      send({ kind: 'tcp-closed', conn });
    });
  });
  closables.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: address, port: DNS_PORT, ipv6Only: net.isIPv6(address) }, () => resolve());
  });
}

function startClient(config: AgentConfig): void {
  const { command, args, env } = config.client;
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  client = child;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  child.on('error', (e) => fatal(`starting the client (${command}): ${e.message}`));
  child.on('spawn', () => send({ kind: 'started', pid: child.pid ?? -1 }));
  child.on('close', (code, signal) => {
    setTimeout(() => send({ kind: 'exit', code, signal, stdout, stderr }), SETTLE_MS);
  });
}

async function start(config: AgentConfig): Promise<void> {
  ip(['link', 'set', 'lo', 'up']);
  for (const a of config.addresses) ip(net.isIPv6(a) ? ['addr', 'add', `${a}/128`, 'dev', 'lo', 'nodad'] : ['addr', 'add', `${a}/32`, 'dev', 'lo']);
  try {
    for (const l of config.listeners) {
      await openUdp(l.address, l.route);
      await openTcp(l.address, l.route);
    }
  } catch (e) {
    fatal(`opening port ${DNS_PORT}: ${(e as Error).message}`);
  }
  send({ kind: 'listening' });
  startClient(config);
}

function handle(message: ToAgent): void {
  switch (message.kind) {
    case 'start':
      start(message.config).catch((e: Error) => fatal(e.message));
      return;
    case 'udp-answer': {
      const to = udpReplyTo.get(message.seq);
      udpReplyTo.delete(message.seq);
      to?.socket.send(Buffer.from(message.data, 'base64'), to.port, to.address);
      return;
    }
    case 'tcp-answer':
      tcpClients.get(message.conn)?.write(frame(Buffer.from(message.data, 'base64')));
      return;
    case 'tcp-reset':
      tcpClients.get(message.conn)?.resetAndDestroy();
      return;
  }
}

function shutDown(): void {
  if (client && client.exitCode === null && client.signalCode === null) client.kill('SIGKILL');
  for (const c of closables) c.close();
  process.exit(0);
}

process.stdout.on('error', shutDown);
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() !== '') handle(JSON.parse(line) as ToAgent);
});
lines.on('close', shutDown);
