// runClient: one getaddrinfo() by real glibc or musl, with a given resolv.conf, in a fresh
// network namespace, every query it sends recorded and relayed to servers on this machine's
// loopback (or refused, or dropped, per nameserver).
//
//   test process (this file)                 │ fresh network namespace: only lo
//                                            │
//   server under test ◄── relay ◄── pipe ◄───┼── agent.ts: port 53 on each nameserver address
//   127.0.0.1:PORT        (from source,      │     ▲ UDP/TCP
//                          e.g. 127.0.0.11)  │   lookup-glibc / lookup-musl, in its own mount
//                                            │   namespace: /etc overlaid on a private tmpfs
//
// The namespace is anonymous (unshare, no `ip netns` name), held by the agent alone; the mounts
// exist only in the client's mount namespace. The pipe's end ends the agent, the agent's end
// kills the client (pdeathsig): a killed test leaves nothing behind.

import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { parseQuery } from '../../../src/lib/dns/codec.js';
import { rcodeName, typeName } from '../../../src/lib/dns/rr.js';
import { fullRcode, headerRcode, isTruncated, scanMessage } from '../../../src/lib/dns/wire.js';
import { agentCommand, buildClients, clientBinary, namespacesUnavailable, repoRoot, scratchDir, type Libc } from './build.js';
import { planRun, type Plan, type Route } from './plan.js';
import { frame, preciseNow, splitFrames, type AgentConfig, type FromAgent, type ToAgent } from './protocol.js';

export type Family = 'unspec' | 'inet' | 'inet6';

export interface RunClientOptions {
  /** The client's /etc/resolv.conf, as text. */
  resolvConf: string;
  /** What getaddrinfo() is asked for. */
  name: string;
  libc: Libc;
  /** Where every nameserver's queries go unless `routes` says otherwise: `HOST:PORT` on loopback. */
  server?: string;
  /**
   * Per nameserver address of resolvConf: `HOST:PORT` on loopback (relay), `refuse` (nothing
   * listens: ICMP port unreachable / TCP reset) or `drop` (read, never answered).
   */
  routes?: Readonly<Record<string, string>>;
  /** The loopback address the relay sends from: the client address the server sees (default 127.0.0.1 / ::1). */
  source?: string;
  /** getaddrinfo's ai_family (default unspec: A and AAAA). */
  family?: Family;
  /** The client's /etc/hosts (default: localhost only). */
  hosts?: string;
  /** Variables added to the client's otherwise empty environment (PATH only), e.g. RES_OPTIONS. */
  env?: Readonly<Record<string, string>>;
  /** The whole run's limit; past it runClient rejects (default 30 000). */
  timeoutMs?: number;
  /** Called once the client runs, with the agent's and the client's pids (for tests of the rig). */
  onStarted?: (pids: { agent: number; client: number }) => void;
}

/** One DNS message the client sent. */
export interface ClientQuery {
  transport: 'udp' | 'tcp';
  /** The nameserver address (from resolvConf) it was sent to. */
  server: string;
  /** What the rig did with it. */
  route: 'relay' | 'drop';
  id: number | null;
  /** The question's name without the trailing dot ("." for the root); null when unparsable. */
  qname: string | null;
  /** "A", "AAAA", "TYPE65"…; null when unparsable. */
  qtype: string | null;
  /** The rcode of the answer the server gave; null when none came (dropped, server down, too late). */
  rcode: string | null;
  /** The answer had TC set. */
  truncated: boolean;
  /** Why a relayed query got no answer ("ECONNREFUSED" when nothing listens at the server, "timeout"). */
  relayError: string | null;
  /** Wall clock (ms since the epoch, fractional) when it reached the nameserver address. */
  sentAt: number;
  /** ms from the start of the getaddrinfo() call to when it was sent. */
  atMs: number;
  /** ms from the start of the getaddrinfo() call to when its answer came back; null without one. */
  answeredAtMs: number | null;
}

export interface ClientResult {
  libc: Libc;
  name: string;
  family: Family;
  /** 0: resolved; 2: getaddrinfo() failed (see eai). */
  status: 0 | 2;
  /** The EAI_* name when getaddrinfo() failed, else null. */
  eai: string | null;
  /** In the order getaddrinfo() returned them. */
  addresses: string[];
  /** Every message the client sent to a `relay` or `drop` nameserver, in the order they arrived. */
  queries: ClientQuery[];
  /** Wall-clock duration of the getaddrinfo() call itself, in ms. */
  clientMs: number;
  /** Wall-clock duration of the whole run (namespace, client, draining), in ms. */
  runMs: number;
  /** The nameservers the rig set up (resolvConf's, or 127.0.0.1 when it has none). */
  nameservers: string[];
  /** The client's stderr (gai_strerror text on failure). */
  stderr: string;
}

const DEFAULT_HOSTS = '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n';
const NSSWITCH = 'hosts: files dns\n';
const CLIENT_PATH = 'PATH=/usr/local/bin:/usr/bin:/bin';
const TOOLS_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** How long an unanswered relayed UDP query is waited for. */
const UDP_RELAY_TIMEOUT_MS = 5000;
/** After the client ends, how long answers still on their way are waited for (for their rcode). */
const DRAIN_MS = 1000;

/**
 * The client's start, in its own mount namespace: a tmpfs on the (empty) scratch directory holds
 * an overlay's upper layer over /etc, so resolv.conf, hosts and nsswitch.conf are replaced for
 * this process only, whatever the host's are (files, symlinks, bind mounts); a host nscd or
 * systemd-resolved socket is hidden. Then the client with an environment of PATH and the
 * caller's variables only. Overlay paths are relative to the scratch directory, so no character
 * of the repository's path can break the mount options. "$@" after the scratch directory:
 * env's arguments.
 */
const CLIENT_SETUP = `set -eu
mount -t tmpfs -o size=1m,mode=0700 realclient "$1"
cd "$1"; shift
mkdir upper work
mount -t overlay -o lowerdir=/etc,upperdir=upper,workdir=work realclient /etc
rm -f /etc/resolv.conf /etc/hosts /etc/nsswitch.conf
printf '%s' "$REALCLIENT_RESOLV_CONF" >/etc/resolv.conf
printf '%s' "$REALCLIENT_HOSTS" >/etc/hosts
printf '%s' "$REALCLIENT_NSSWITCH" >/etc/nsswitch.conf
for d in /run/nscd /var/run/nscd /run/systemd/resolve; do
  if [ -d "$d" ]; then mount -t tmpfs -o size=4k realclient "$d"; fi
done
exec env -i "$@"
`;

function validate(o: RunClientOptions): void {
  if (o.libc !== 'glibc' && o.libc !== 'musl') throw new Error(`libc: "${String(o.libc)}" is neither glibc nor musl`);
  if (typeof o.name !== 'string' || o.name === '' || o.name.includes('\0')) throw new Error('name: must be a non-empty string without NUL');
  const family = o.family ?? 'unspec';
  if (family !== 'unspec' && family !== 'inet' && family !== 'inet6') throw new Error(`family: "${String(family)}" is not unspec, inet or inet6`);
  for (const [k, v] of Object.entries(o.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new Error(`env: "${k}" is not a variable name`);
    if (v.includes('\0')) throw new Error(`env.${k}: contains NUL`);
  }
  for (const field of ['resolvConf', 'hosts'] as const) {
    if (o[field]?.includes('\0')) throw new Error(`${field}: contains NUL`);
  }
}

/** What the agent is told to set up and run. */
export function agentConfig(o: RunClientOptions, plan: Plan): AgentConfig {
  const listeners: AgentConfig['listeners'] = [];
  for (const [address, route] of plan.routes) if (route.kind !== 'refuse') listeners.push({ address, route: route.kind });
  const envArgs = [CLIENT_PATH, ...Object.entries(o.env ?? {}).map(([k, v]) => `${k}=${v}`)];
  return {
    addresses: plan.nameservers.filter((a) => a !== '::1' && !(net.isIPv4(a) && a.startsWith('127.'))),
    listeners,
    client: {
      command: 'setpriv',
      args: ['--pdeathsig', 'KILL', '--', 'unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', CLIENT_SETUP, 'realclient', scratchDir, ...envArgs, clientBinary(o.libc), '-t', o.name, o.family ?? 'unspec'],
      env: {
        PATH: TOOLS_PATH,
        REALCLIENT_RESOLV_CONF: o.resolvConf,
        REALCLIENT_HOSTS: o.hosts ?? DEFAULT_HOSTS,
        REALCLIENT_NSSWITCH: NSSWITCH,
      },
    },
  };
}

/** The lookup program's output: addresses or the EAI name, then "# START_US END_US" (the monotonic clock, as preciseNow). */
export function parseClientOutput(stdout: string, code: number): { status: 0 | 2; eai: string | null; addresses: string[]; startMs: number; endMs: number } {
  const lines = stdout.split('\n').filter((l) => l !== '');
  const timing = /^# (\d+) (\d+)$/.exec(lines.at(-1) ?? '');
  if (!timing) throw new Error(`the client's output has no timing line: ${JSON.stringify(stdout)}`);
  const body = lines.slice(0, -1);
  const startMs = Number(timing[1]) / 1000;
  const endMs = Number(timing[2]) / 1000;
  if (code === 0) return { status: 0, eai: null, addresses: body, startMs, endMs };
  return { status: 2, eai: body[0] ?? null, addresses: [], startMs, endMs };
}

function describeQuestion(data: Buffer): { id: number | null; qname: string | null; qtype: string | null } {
  const id = data.length >= 2 ? data.readUInt16BE(0) : null;
  try {
    const q = parseQuery(data);
    return { id, qname: q.qname === '.' ? '.' : q.qname.replace(/\.$/, ''), qtype: typeName(q.qtype) };
  } catch {
    return { id, qname: null, qtype: null };
  }
}

function answerRcode(answer: Buffer): string {
  const scanned = scanMessage(answer);
  return rcodeName(scanned ? fullRcode(answer, scanned.opt) : headerRcode(answer));
}

/** A relayed query as recorded, with what is still to come for it. */
interface Recorded {
  query: ClientQuery;
  settled: boolean;
}

/** Everything of one run that outlives a single message: the agent, relay sockets, the record. */
class Run {
  readonly recorded: Recorded[] = [];
  private readonly udpRelays = new Set<dgram.Socket>();
  private readonly tcpRelays = new Map<number, { socket: net.Socket; pending: Buffer; waiting: Recorded[] }>();
  private readonly settleWaiters = new Set<() => void>();

  constructor(
    private readonly plan: Plan,
    private readonly toAgent: (m: ToAgent) => void,
  ) {}

  private routeOf(server: string): Route {
    return this.plan.routes.get(server) as Route;
  }

  private settle(r: Recorded, answer: Buffer | undefined, error: string | null): void {
    if (r.settled) return;
    r.settled = true;
    if (answer) {
      r.query.rcode = answerRcode(answer);
      r.query.truncated = isTruncated(answer);
      r.query.answeredAtMs = preciseNow();
    }
    r.query.relayError = error;
    if (this.recorded.every((x) => x.settled)) for (const w of this.settleWaiters) w();
  }

  onQuery(m: Extract<FromAgent, { kind: 'query' }>): void {
    const data = Buffer.from(m.data, 'base64');
    const query: ClientQuery = {
      transport: m.transport,
      server: m.server,
      route: m.route,
      ...describeQuestion(data),
      rcode: null,
      truncated: false,
      relayError: null,
      sentAt: m.at,
      atMs: 0,
      answeredAtMs: null,
    };
    const r: Recorded = { query, settled: m.route === 'drop' };
    this.recorded.push(r);
    if (m.route === 'drop') return;
    const route = this.routeOf(m.server);
    if (route.kind !== 'relay') return;
    if (m.transport === 'udp') this.relayUdp(m.seq, data, route, r);
    else this.relayTcp(m.conn as number, data, route, r);
  }

  private sourceFor(host: string): string {
    return net.isIPv6(host) ? this.plan.source.v6 : this.plan.source.v4;
  }

  private relayUdp(seq: number, data: Buffer, route: { host: string; port: number }, r: Recorded): void {
    const socket = dgram.createSocket(net.isIPv6(route.host) ? 'udp6' : 'udp4');
    this.udpRelays.add(socket);
    const done = (answer: Buffer | undefined, error: string | null): void => {
      clearTimeout(timer);
      this.settle(r, answer, error);
      this.udpRelays.delete(socket);
      socket.close();
    };
    const timer = setTimeout(() => done(undefined, 'timeout'), UDP_RELAY_TIMEOUT_MS);
    socket.on('error', (e: NodeJS.ErrnoException) => done(undefined, e.code ?? e.message));
    socket.on('message', (answer) => {
      this.toAgent({ kind: 'udp-answer', seq, data: answer.toString('base64') });
      done(answer, null);
    });
    socket.bind({ address: this.sourceFor(route.host), port: 0 }, () => {
      socket.connect(route.port, route.host, () => socket.send(data));
    });
  }

  private relayTcp(conn: number, data: Buffer, route: { host: string; port: number }, r: Recorded): void {
    let relay = this.tcpRelays.get(conn);
    if (!relay) {
      const socket = net.connect({ host: route.host, port: route.port, localAddress: this.sourceFor(route.host) });
      const state = { socket, pending: Buffer.alloc(0), waiting: [] as Recorded[] };
      relay = state;
      this.tcpRelays.set(conn, state);
      socket.on('data', (chunk: Buffer) => {
        const { messages, rest } = splitFrames(Buffer.concat([state.pending, chunk]));
        state.pending = Buffer.from(rest);
        for (const answer of messages) {
          this.toAgent({ kind: 'tcp-answer', conn, data: answer.toString('base64') });
          // Pipelined answers may come in any order: match by ID.
          const i = state.waiting.findIndex((w) => w.query.id === answer.readUInt16BE(0));
          const [matched] = i >= 0 ? state.waiting.splice(i, 1) : [];
          if (matched) this.settle(matched, answer, null);
        }
      });
      const fail = (why: string): void => {
        for (const w of state.waiting.splice(0)) this.settle(w, undefined, why);
      };
      socket.on('error', (e: NodeJS.ErrnoException) => fail(e.code ?? e.message));
      socket.on('close', () => {
        fail('closed');
        if (this.tcpRelays.get(conn) === state) {
          this.tcpRelays.delete(conn);
          this.toAgent({ kind: 'tcp-reset', conn });
        }
      });
    }
    relay.waiting.push(r);
    relay.socket.write(frame(data));
  }

  onTcpClosed(conn: number): void {
    const relay = this.tcpRelays.get(conn);
    if (!relay) return;
    // The client hung up; answers still due are waited for by the drain, not by this socket.
    this.tcpRelays.delete(conn);
    relay.socket.end();
  }

  /** Resolves when every relayed query has its answer or its error, or after `ms`. */
  drain(ms: number): Promise<void> {
    if (this.recorded.every((x) => x.settled)) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.settleWaiters.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.settleWaiters.add(finish);
    });
  }

  close(): void {
    for (const s of this.udpRelays) s.close();
    this.udpRelays.clear();
    for (const { socket } of this.tcpRelays.values()) socket.destroy();
    this.tcpRelays.clear();
  }
}

/**
 * Runs one lookup. Resolves with what the client got and sent; rejects when the rig itself fails
 * (bad options, namespace or mount set-up, the client killed or past timeoutMs), never because
 * the lookup failed.
 */
export async function runClient(o: RunClientOptions): Promise<ClientResult> {
  validate(o);
  const plan = planRun({ resolvConf: o.resolvConf, server: o.server, routes: o.routes, source: o.source });
  const unavailable = namespacesUnavailable();
  if (unavailable) throw new Error(`realclient: ${unavailable}`);
  const build = buildClients();
  if (!build.ok) throw new Error(`realclient: ${build.reason}`);

  const started = preciseNow();
  const timeoutMs = o.timeoutMs ?? 30_000;
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const agent = spawn('unshare', ['--net', '--', 'setpriv', '--pdeathsig', 'KILL', '--', process.execPath, ...agentCommand], {
    cwd: repoRoot,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let agentStderr = '';
  agent.stderr.on('data', (b: Buffer) => (agentStderr += b.toString()));
  agent.stdin.on('error', () => undefined);
  const toAgent = (m: ToAgent): void => {
    if (agent.stdin.writable) agent.stdin.write(`${JSON.stringify(m)}\n`);
  };
  const agentGone = new Promise<void>((resolve) => agent.once('close', () => resolve()));
  const run = new Run(plan, toAgent);

  const finished = new Promise<Extract<FromAgent, { kind: 'exit' }>>((resolve, reject) => {
    const timer = setTimeout(() => {
      agent.kill('SIGKILL');
      reject(new Error(`realclient: the ${o.libc} lookup of ${o.name} did not end within ${timeoutMs} ms (queries so far: ${run.recorded.length})`));
    }, timeoutMs);
    agent.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`realclient: starting the namespace agent: ${e.message}`));
    });
    void agentGone.then(() => {
      clearTimeout(timer);
      reject(new Error(`realclient: the namespace agent ended early: ${agentStderr.trim()}`));
    });
    createInterface({ input: agent.stdout }).on('line', (line) => {
      let m: FromAgent;
      try {
        m = JSON.parse(line) as FromAgent;
      } catch {
        clearTimeout(timer);
        reject(new Error(`realclient: the namespace agent wrote ${JSON.stringify(line)}`));
        return;
      }
      switch (m.kind) {
        case 'query':
          run.onQuery(m);
          break;
        case 'tcp-closed':
          run.onTcpClosed(m.conn);
          break;
        case 'started':
          o.onStarted?.({ agent: agent.pid ?? -1, client: m.pid });
          break;
        case 'listening':
          break;
        case 'exit':
          clearTimeout(timer);
          resolve(m);
          break;
        case 'fatal':
          clearTimeout(timer);
          reject(new Error(`realclient: ${m.message}`));
          break;
      }
    });
  });
  toAgent({ kind: 'start', config: agentConfig(o, plan) });

  try {
    const exit = await finished;
    if (exit.code !== 0 && exit.code !== 2) {
      throw new Error(`realclient: the ${o.libc} client failed (${exit.signal ?? `exit ${exit.code}`}): ${exit.stderr.trim()}`);
    }
    const out = parseClientOutput(exit.stdout, exit.code);
    await run.drain(DRAIN_MS);
    const queries = run.recorded.map(({ query }) => ({
      ...query,
      atMs: query.sentAt - out.startMs,
      answeredAtMs: query.answeredAtMs === null ? null : query.answeredAtMs - out.startMs,
    }));
    return {
      libc: o.libc,
      name: o.name,
      family: o.family ?? 'unspec',
      status: out.status,
      eai: out.eai,
      addresses: out.addresses,
      queries,
      clientMs: out.endMs - out.startMs,
      runMs: preciseNow() - started,
      nameservers: plan.nameservers,
      stderr: exit.stderr,
    };
  } finally {
    run.close();
    agent.stdin.end();
    // A process that never started has nothing to wait for (and may never report 'close').
    if (agent.pid !== undefined) {
      const killer = setTimeout(() => agent.kill('SIGKILL'), 2000);
      await agentGone;
      clearTimeout(killer);
    }
  }
}
