// Runs the real `dig` (bind9-dnsutils) and parses what it prints, so tests can assert on rcode,
// flags and sections the way a person reading dig's output would.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface DigRecord {
  name: string;
  ttl: number;
  class: string;
  type: string;
  /** RDATA as dig prints it (e.g. "10.0.0.1", "0 100 80 web.demo.svc.cluster.local."). */
  data: string;
}

export interface DigResult {
  /** "NOERROR", "NXDOMAIN", … */
  status: string;
  id: number;
  opcode: string;
  /** Header flags dig shows: qr, aa, tc, rd, ra, ad, cd. */
  flags: string[];
  answer: DigRecord[];
  authority: DigRecord[];
  additional: DigRecord[];
  /** EDNS line when the reply had OPT: { version, flags, udp }. */
  edns?: { version: number; flags: string[]; udp: number };
  /** Size of the reply in bytes (";; MSG SIZE rcvd"). */
  size: number;
  /** The whole output, for failure messages. */
  raw: string;
  /** "TCP" or "UDP", from ";; SERVER: ...(UDP)". */
  transport?: string;
}

export interface DigOptions {
  server?: string;
  port: number;
  /** Extra dig arguments: "+tcp", "+bufsize=512", "+ignore", "-c", "CH"… */
  args?: string[];
  /** Fail fast: dig's own timeout in seconds (default 2) and tries (default 1). */
  timeout?: number;
  tries?: number;
  /** Run dig inside this network namespace (a /proc/<pid>/ns/net path, see netns.ts). */
  netns?: string;
}

function parseRecord(line: string): DigRecord | undefined {
  const parts = line.split(/\s+/);
  if (parts.length < 4) return undefined;
  const [name, ttl, klass, type, ...rest] = parts as [string, string, string, string, ...string[]];
  return { name, ttl: Number(ttl), class: klass, type, data: rest.join(' ') };
}

export function parseDig(out: string): DigResult {
  const header = /opcode: (\w+), status: (\w+), id: (\d+)/.exec(out);
  if (!header) throw new Error(`dig gave no answer:\n${out}`);
  const flagsLine = /;; flags:([^;]*);/.exec(out);
  const flags = (flagsLine?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
  const result: DigResult = {
    status: header[2] as string,
    id: Number(header[3]),
    opcode: header[1] as string,
    flags,
    answer: [],
    authority: [],
    additional: [],
    size: Number(/MSG SIZE\s+rcvd: (\d+)/.exec(out)?.[1] ?? 0),
    raw: out,
    transport: /;; SERVER: .*\((UDP|TCP)\)/.exec(out)?.[1],
  };
  const edns = /; EDNS: version: (\d+), flags:([^;]*); udp: (\d+)/.exec(out);
  if (edns) result.edns = { version: Number(edns[1]), flags: (edns[2] ?? '').trim().split(/\s+/).filter(Boolean), udp: Number(edns[3]) };
  let section: DigRecord[] | undefined;
  for (const line of out.split('\n')) {
    if (line.startsWith(';; ANSWER SECTION')) section = result.answer;
    else if (line.startsWith(';; AUTHORITY SECTION')) section = result.authority;
    else if (line.startsWith(';; ADDITIONAL SECTION')) section = result.additional;
    else if (line.trim() === '' || line.startsWith(';')) {
      if (line.trim() === '') section = undefined;
    } else if (section) {
      const rec = parseRecord(line.trim());
      if (rec) section.push(rec);
    }
  }
  return result;
}

/** `dig @server -p port name type [args]` → parsed result. Throws when dig gets no reply. */
export async function dig(name: string, type: string, opts: DigOptions): Promise<DigResult> {
  const args = [
    `@${opts.server ?? '127.0.0.1'}`,
    '-p',
    String(opts.port),
    name,
    type,
    `+time=${opts.timeout ?? 2}`,
    `+tries=${opts.tries ?? 1}`,
    '+nocookie',
    ...(opts.args ?? []),
  ];
  try {
    const { stdout } = opts.netns ? await run('nsenter', [`--net=${opts.netns}`, 'dig', ...args], { timeout: 15_000 }) : await run('dig', args, { timeout: 15_000 });
    return parseDig(stdout);
  } catch (e) {
    const out = (e as { stdout?: string }).stdout ?? '';
    if (out.includes('status:')) return parseDig(out);
    throw new Error(`dig ${args.join(' ')} failed: ${out || (e as Error).message}`);
  }
}

/** Just the rdata of the answer section, sorted: the usual thing to compare. */
export function answers(r: DigResult): string[] {
  return r.answer.map((a) => `${a.type} ${a.data}`).sort();
}
