// Test support: real upstream servers (BIND's named from Debian's bind9 package) started on
// loopback ports, and the two scripted responders for faults no real server can be told to
// produce. Used by the tests of dnsclient, forward, cache, loop, node-resolver and the operator;
// nothing here is imported by code that serves queries.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './net.js';

/** Why a test must skip: a missing binary outside CI. In CI (CI=true) every test runs. */
export function missing(binary: string, debianPackage: string): string | undefined {
  if (process.env.CI === 'true') return undefined;
  const found = spawnSync('sh', ['-c', `command -v ${binary} || test -x /usr/sbin/${binary}`]).status === 0;
  return found ? undefined : `needs ${binary} (Debian package ${debianPackage})`;
}

/** One query as named's query log shows it. */
export interface LoggedQuery {
  /** The address the query came from. */
  client: string;
  name: string;
  type: string;
  /** named's flag string: "+" recursion desired, "E(0)" EDNS, "T" TCP, "D" DO, "C" CD. */
  flags: string;
  tcp: boolean;
  clientPort: number;
  at: number;
}

const QUERY_LINE = /client @\S+ ([0-9a-f.:]+)#(\d+) \([^)]*\): query: (\S+) \S+ (\S+) (\S+)/;

export function parseQueryLog(line: string, at = Date.now()): LoggedQuery | undefined {
  const m = QUERY_LINE.exec(line);
  if (!m) return undefined;
  const flags = m[5] as string;
  return { client: m[1] as string, name: (m[3] as string).toLowerCase(), type: m[4] as string, flags, tcp: flags.includes('T'), clientPort: Number(m[2]), at };
}

export interface NamedOptions {
  /** Zone origin (no trailing dot) → zone file text. */
  zones: Record<string, string>;
  port: number;
  /** Also serve DNS over TLS on this port with the given PEM key and certificate. */
  tls?: { port: number; keyPem: string; certPem: string };
  /** Extra lines for the options block. */
  options?: string;
  /** Be a forwarding resolver (`forward only`) to this port on 127.0.0.1 instead of answering recursion-less. */
  forwardTo?: number;
  /**
   * named's minimal-responses. Default "no": authority and additional sections filled as a real
   * upstream fills them. "no-auth-recursive" is BIND's own default.
   */
  minimalResponses?: 'no' | 'yes' | 'no-auth' | 'no-auth-recursive';
  /** Run named inside this network namespace (a /proc/<pid>/ns/net path, see netns.ts). */
  netns?: string;
  /** Zones named is a secondary of: transferred (AXFR/IXFR) from 127.0.0.1 on `primaryPort`, refreshed on NOTIFY. */
  secondaries?: { zones: readonly string[]; primaryPort: number };
}

/** A running named; `stop()` kills it, `start()` brings it back on the same ports. */
export class NamedUpstream {
  readonly dir: string;
  /** Every query named logged, in order. */
  readonly queries: LoggedQuery[] = [];
  private child?: ChildProcess;
  private stderrTail = '';

  constructor(readonly opts: NamedOptions) {
    this.dir = mkdtempSync(join(tmpdir(), 'kdns-named-'));
    this.writeConfig(opts.zones);
  }

  /** named.conf and one file per zone in the scratch directory. */
  private writeConfig(zones: Record<string, string>): void {
    const opts = this.opts;
    const zoneDecls: string[] = [];
    for (const [origin, text] of Object.entries(zones)) {
      const file = join(this.dir, `${origin || 'root'}.zone`);
      writeFileSync(file, text);
      zoneDecls.push(`zone "${origin || '.'}" { type primary; file "${file}"; };`);
    }
    for (const origin of opts.secondaries?.zones ?? []) {
      zoneDecls.push(`zone "${origin}" { type secondary; primaries { 127.0.0.1 port ${opts.secondaries?.primaryPort}; }; file "${join(this.dir, `${origin}.db`)}"; };`);
    }
    let tlsDecl = '';
    let tlsListen = '';
    if (opts.tls) {
      writeFileSync(join(this.dir, 'key.pem'), opts.tls.keyPem);
      writeFileSync(join(this.dir, 'cert.pem'), opts.tls.certPem);
      tlsDecl = `tls local-tls { key-file "${join(this.dir, 'key.pem')}"; cert-file "${join(this.dir, 'cert.pem')}"; };`;
      tlsListen = `listen-on port ${opts.tls.port} tls local-tls { 127.0.0.1; };`;
    }
    writeFileSync(
      join(this.dir, 'named.conf'),
      `controls { };
${tlsDecl}
options {
  directory "${this.dir}";
  pid-file none;
  listen-on port ${opts.port} { 127.0.0.1; };
  ${tlsListen}
  listen-on-v6 { none; };
  ${opts.forwardTo === undefined ? 'recursion no;' : `recursion yes;\n  allow-recursion { 127.0.0.0/8; };\n  forward only;\n  forwarders { 127.0.0.1 port ${opts.forwardTo}; };`}
  dnssec-validation no;
  notify no;
  querylog yes;
  minimal-responses ${opts.minimalResponses ?? 'no'};
  ${opts.options ?? ''}
};
${zoneDecls.join('\n')}
`,
    );
  }

  get port(): number {
    return this.opts.port;
  }

  get address(): string {
    return `127.0.0.1:${this.opts.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Starts named and resolves once it has loaded its zones and opened its listeners. */
  async start(timeoutMs = 10_000): Promise<void> {
    if (this.child) return;
    const args = ['-g', '-n', '1', '-c', join(this.dir, 'named.conf')];
    // nsenter execs named, so killing the child kills named.
    const child = this.opts.netns ? spawn('nsenter', [`--net=${this.opts.netns}`, 'named', ...args], { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn('named', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    let partial = '';
    let ready!: () => void;
    const isReady = new Promise<void>((r) => (ready = r));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        this.stderrTail = (this.stderrTail + line + '\n').slice(-4000);
        const q = parseQueryLog(line);
        if (q) this.queries.push(q);
        else if (line.endsWith(' running')) ready();
      }
    });
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`named exited (${code}):\n${this.stderrTail}`))));
    exited.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const tooSlow = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`named did not start within ${timeoutMs} ms:\n${this.stderrTail}`)), timeoutMs);
    });
    try {
      await Promise.race([isReady, exited, tooSlow]);
    } catch (e) {
      await this.stop();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kills named (SIGKILL: an abrupt death, as in the fault tests) and waits until it is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGKILL');
      await gone;
    }
  }

  /** Stops named, rewrites its zones when given (a changed answer, as after a Service IP change), and starts it again on the same ports. */
  async restart(zones?: Record<string, string>): Promise<void> {
    await this.stop();
    if (zones) this.writeConfig(zones);
    await this.start();
  }

  /** Stops and removes the scratch directory. */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Queries logged for `name` (lower-case, absolute or not). */
  queriesFor(name: string): LoggedQuery[] {
    const n = name.replace(/\.$/, '').toLowerCase();
    return this.queries.filter((q) => q.name.replace(/\.$/, '') === n);
  }
}

export function namedUpstream(opts: NamedOptions): NamedUpstream {
  return new NamedUpstream(opts);
}

/** Zone text from records ("www IN A 10.0.0.1" lines), with SOA and NS filled in. */
export function zoneFile(records: string): string {
  return `$TTL 5\n@ IN SOA ns root 1 60 60 600 5\n@ IN NS ns\nns IN A 127.0.0.1\n${records}\n`;
}

/** A running named from `startNamed`; its zones are given as records only. */
export interface NamedServer {
  port: number;
  dir: string;
  /** Rewrites the zones and restarts named on the same port (a changed answer, as after a Service IP change). */
  restart(zones?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts named on `port` (pick one with freePort) for `zones` (origin → records, SOA and NS
 * filled in by zoneFile), with BIND's default minimal responses: the plain authoritative server
 * node-resolver, the operator's forwarding and the node cache are tested against.
 */
export async function startNamed(port: number, zones: Record<string, string>): Promise<NamedServer> {
  const full = (z: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(z).map(([origin, records]) => [origin, zoneFile(records)]));
  const named = new NamedUpstream({ port, zones: full(zones), minimalResponses: 'no-auth-recursive' });
  await named.start();
  return { port, dir: named.dir, restart: (next) => named.restart(next && full(next)), stop: () => named.stop() };
}

/**
 * The zone most tests forward to. TTLs are chosen per test: `short` expires within the test,
 * `txt-big` does not fit 512 bytes, `multi` has four addresses to shuffle.
 */
export function exampleZone(origin = 'example.test'): string {
  const big = Array.from({ length: 12 }, (_, i) => `txt-big IN TXT "${String(i).padStart(2, '0')}-${'x'.repeat(60)}"`);
  return [
    '$TTL 300',
    `@ IN SOA ns.${origin}. hostmaster.${origin}. 1 3600 600 86400 30`,
    '@ IN NS ns',
    'ns IN A 127.0.0.1',
    'www IN A 192.0.2.1',
    'www IN AAAA 2001:db8::1',
    'multi IN A 192.0.2.11',
    'multi IN A 192.0.2.12',
    'multi IN A 192.0.2.13',
    'multi IN A 192.0.2.14',
    'short 2 IN A 192.0.2.2',
    'mx IN MX 10 mail1',
    'mx IN MX 20 mail2',
    'mail1 IN A 192.0.2.21',
    'mail2 IN A 192.0.2.22',
    'alias IN CNAME www',
    ...big,
    '*.wild IN A 192.0.2.99',
    '',
  ].join('\n');
}

/** A root zone for upstreams that must answer the `. IN NS` health check authoritatively. */
export function rootZone(): string {
  return ['$TTL 300', '. IN SOA ns.root. hostmaster.root. 1 3600 600 86400 30', '. IN NS ns.root.', 'ns.root. IN A 127.0.0.1', ''].join('\n');
}

/** A self-signed certificate for 127.0.0.1 and the name `dns.test` (openssl from Debian's openssl package). */
export function selfSignedCert(dir: string): { keyPem: string; certPem: string } {
  const key = join(dir, 'tls-key.pem');
  const cert = join(dir, 'tls-cert.pem');
  const r = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=dns.test', '-addext', 'subjectAltName=DNS:dns.test,IP:127.0.0.1', '-keyout', key, '-out', cert],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  return { keyPem: readFileSync(key, 'utf8'), certPem: readFileSync(cert, 'utf8') };
}

// ---- scripted responders ----------------------------------------------------------------

/** The query turned into an empty reply with the given extra flags and RCODE. */
export function bareReply(query: Buffer, extraFlags: number, rcode = 0): Buffer {
  // Keep header and question; drop anything after the question (OPT included).
  let p = 12;
  while (p < query.length && query[p] !== 0) p += (query[p] as number) + 1;
  const end = Math.min(query.length, p + 5);
  const out = Buffer.from(query.subarray(0, end));
  out.writeUInt16BE((query.readUInt16BE(2) & 0x7910) | 0x8000 | extraFlags | rcode, 2);
  out.writeUInt16BE(1, 4);
  out.writeUInt32BE(0, 6);
  out.writeUInt16BE(0, 10);
  return out;
}

export interface Scripted {
  port: number;
  /** Queries received over UDP and TCP. */
  udpQueries: number;
  tcpQueries: number;
  close(): Promise<void>;
}

/**
 * Scripted because no real server can be told to do it: answers every UDP query with an empty
 * truncated (TC) reply (after `udpDelayMs`), and relays TCP connections byte for byte to a real
 * server at `tcpTarget`.
 */
export async function truncatingUpstream(tcpTarget: number, udpDelayMs = 0): Promise<Scripted> {
  const udp = dgram.createSocket('udp4');
  const sockets = new Set<net.Socket>();
  const state: Scripted = {
    port: 0,
    udpQueries: 0,
    tcpQueries: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
  udp.on('message', (msg, rinfo) => {
    state.udpQueries++;
    const send = (): void => udp.send(bareReply(msg, 0x0200), rinfo.port, rinfo.address);
    if (udpDelayMs > 0) setTimeout(send, udpDelayMs);
    else send();
  });
  const tcp = net.createServer((c) => {
    sockets.add(c);
    const up = net.connect(tcpTarget, '127.0.0.1');
    sockets.add(up);
    c.on('data', (d) => {
      state.tcpQueries++;
      up.write(d);
    });
    up.pipe(c);
    const end = (): void => {
      c.destroy();
      up.destroy();
    };
    c.on('close', end);
    up.on('close', end);
    c.on('error', end);
    up.on('error', end);
  });
  state.port = await freePort();
  await new Promise<void>((r) => udp.bind(state.port, '127.0.0.1', () => r()));
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(state.port, '127.0.0.1', () => resolve());
  });
  return state;
}

/**
 * Scripted because no real server can be told to be slow on purpose: answers every UDP query
 * with an empty NOERROR reply after `delayMs`, and counts how many it holds at once.
 */
export async function slowUpstream(delayMs: number): Promise<Scripted & { maxHeld: number; held: number }> {
  const udp = dgram.createSocket('udp4');
  const timers = new Set<NodeJS.Timeout>();
  const state = {
    port: 0,
    udpQueries: 0,
    tcpQueries: 0,
    held: 0,
    maxHeld: 0,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      await new Promise<void>((r) => udp.close(() => r()));
    },
  };
  udp.on('message', (msg, rinfo) => {
    state.udpQueries++;
    state.held++;
    state.maxHeld = Math.max(state.maxHeld, state.held);
    const t = setTimeout(() => {
      timers.delete(t);
      state.held--;
      udp.send(bareReply(msg, 0x0400), rinfo.port, rinfo.address);
    }, delayMs);
    timers.add(t);
  });
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  state.port = udp.address().port;
  return state;
}

/** A named on a free loopback port serving exampleZone() as example.test, started. */
export async function startExampleUpstream(): Promise<NamedUpstream> {
  const named = new NamedUpstream({ port: await freePort(), zones: { 'example.test': exampleZone() } });
  await named.start();
  return named;
}
