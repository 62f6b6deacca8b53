// A small DNS server for the rig: UDP and TCP on one loopback port, answering from a zone map
// and keeping a list of every query it got, with the address it came from. Messages are read and
// written with kdns's own codec (src/lib/dns/), so a UDP answer too large for the client gets TC with
// the records that fit, as the codec truncates for kdns itself.

import dgram from 'node:dgram';
import net from 'node:net';
import { DnsFormatError, decodeMessage, encodeMessage } from '../../../src/lib/dns/codec.js';
import { a, aaaa, cname, rcodeFromName, rcodeName, typeName } from '../../../src/lib/dns/rr.js';
import { DnsClass, Opcode, RCode, RRType, type Message, type ResourceRecord } from '../../../src/lib/dns/types.js';
import { isLoopback } from './plan.js';
import { frame, preciseNow, splitFrames } from './protocol.js';

/**
 * One name's data. A listed name exists: NOERROR, with the records of the asked type or none
 * (NODATA). `CNAME` is followed inside the map; `rcode` ("SERVFAIL", 2…) answers that code with
 * no records. A name not in the map is NXDOMAIN.
 */
export interface ZoneEntry {
  A?: readonly string[];
  AAAA?: readonly string[];
  CNAME?: string;
  rcode?: string | number;
}
/** Names (any case, trailing dot optional) to their data. */
export type Zone = Readonly<Record<string, ZoneEntry>>;

export interface RecordedQuery {
  /** Wall clock in ms since the epoch (fractional) when it arrived. */
  at: number;
  transport: 'udp' | 'tcp';
  /** The address it came from (the rig's `source`). */
  from: string;
  id: number;
  /** Without the trailing dot, case as received; null when the question could not be read. */
  qname: string | null;
  qtype: string | null;
  /** What the recorder answered; null when it could not answer at all (no header). */
  rcode: string | null;
}

export interface RecorderOptions {
  zone: Zone;
  /** Loopback address to listen on (default 127.0.0.1). */
  host?: string;
  /** Default 0: a port free for both UDP and TCP. */
  port?: number;
  /** TTL of every record (default 30). */
  ttl?: number;
}

export interface Recorder {
  address: string;
  port: number;
  /** `address:port` (`[::1]:port`), as runClient's `server` and `routes` take it. */
  server: string;
  /** Every query so far, in arrival order. */
  readonly queries: RecordedQuery[];
  clear(): void;
  setZone(zone: Zone): void;
  close(): Promise<void>;
}

const MAX_CNAME_CHAIN = 8;
/** The UDP size the recorder offers in its EDNS answers (the DNS flag day 2020 value). */
const EDNS_UDP_SIZE = 1232;
const CLASSIC_UDP_SIZE = 512;

function key(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function parseRcode(value: string | number, name: string): number {
  const code = typeof value === 'number' ? value : rcodeFromName(value);
  if (code === undefined || !Number.isInteger(code) || code < 0 || code > 15) throw new Error(`zone["${name}"].rcode: "${value}" is not an rcode`);
  return code;
}

/** Checks a zone map and indexes it by lower-case name without trailing dot. */
export function indexZone(zone: Zone): Map<string, ZoneEntry> {
  const index = new Map<string, ZoneEntry>();
  for (const [name, entry] of Object.entries(zone)) {
    for (const addr of entry.A ?? []) if (!net.isIPv4(addr)) throw new Error(`zone["${name}"].A: "${addr}" is not an IPv4 address`);
    for (const addr of entry.AAAA ?? []) if (!net.isIPv6(addr)) throw new Error(`zone["${name}"].AAAA: "${addr}" is not an IPv6 address`);
    if (entry.rcode !== undefined) parseRcode(entry.rcode, name);
    index.set(key(name), entry);
  }
  return index;
}

/** The answer's rcode and records for one question, by the rules of ZoneEntry. */
export function answerFromZone(index: ReadonlyMap<string, ZoneEntry>, qname: string, qtype: number, ttl: number): { rcode: number; answers: ResourceRecord[] } {
  const answers: ResourceRecord[] = [];
  let name = qname;
  for (let hop = 0; hop <= MAX_CNAME_CHAIN; hop++) {
    const entry = index.get(key(name));
    if (!entry) return { rcode: RCode.NXDOMAIN, answers };
    if (entry.rcode !== undefined) return { rcode: parseRcode(entry.rcode, name), answers };
    if (entry.CNAME !== undefined && qtype !== RRType.CNAME) {
      const target = entry.CNAME.endsWith('.') ? entry.CNAME : `${entry.CNAME}.`;
      answers.push(cname(name, ttl, target));
      name = target;
      continue;
    }
    if (qtype === RRType.A || qtype === RRType.ANY) for (const addr of entry.A ?? []) answers.push(a(name, ttl, addr));
    if (qtype === RRType.AAAA || qtype === RRType.ANY) for (const addr of entry.AAAA ?? []) answers.push(aaaa(name, ttl, addr));
    if (qtype === RRType.CNAME && entry.CNAME !== undefined) answers.push(cname(name, ttl, entry.CNAME.endsWith('.') ? entry.CNAME : `${entry.CNAME}.`));
    return { rcode: RCode.NOERROR, answers };
  }
  return { rcode: RCode.SERVFAIL, answers: [] };
}

function reply(query: Message, rcode: number, answers: ResourceRecord[]): Message {
  return {
    id: query.id,
    qr: true,
    opcode: query.opcode,
    aa: rcode === RCode.NOERROR || rcode === RCode.NXDOMAIN,
    tc: false,
    rd: query.rd,
    ra: true,
    z: false,
    ad: false,
    cd: query.cd,
    rcode,
    questions: query.questions,
    answers,
    authority: [],
    additional: [],
    ...(query.edns ? { edns: { udpSize: EDNS_UDP_SIZE, version: 0, do: false, zFlags: 0, options: [] } } : {}),
  };
}

/** A header-only FORMERR for a message that could not be decoded but whose ID is known. */
function formatError(id: number, flags: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt16BE(id, 0);
  out.writeUInt16BE(0x8000 | (flags & 0x7900) | 0x0080 | RCode.FORMERR, 2);
  return out;
}

/** Answers one wire query; `maxSize` is the UDP limit (undefined for TCP). */
function handle(
  wire: Buffer,
  index: ReadonlyMap<string, ZoneEntry>,
  ttl: number,
  maxSize: number | undefined,
): { answer: Buffer | undefined; id: number; qname: string | null; qtype: string | null; rcode: string | null } {
  let query: Message;
  try {
    query = decodeMessage(wire);
  } catch (e) {
    const id = wire.length >= 2 ? wire.readUInt16BE(0) : 0;
    if (e instanceof DnsFormatError && e.id !== undefined && e.flags !== undefined) {
      return { answer: formatError(e.id, e.flags), id: e.id, qname: null, qtype: null, rcode: 'FORMERR' };
    }
    return { answer: undefined, id, qname: null, qtype: null, rcode: null };
  }
  const q = query.questions[0];
  const qname = q ? (q.name === '.' ? '.' : q.name.replace(/\.$/, '')) : null;
  const qtype = q ? typeName(q.type) : null;
  let rcode: number;
  let answers: ResourceRecord[] = [];
  if (query.qr) return { answer: undefined, id: query.id, qname, qtype, rcode: null };
  if (query.opcode !== Opcode.QUERY) rcode = RCode.NOTIMP;
  else if (!q || query.questions.length !== 1) rcode = RCode.FORMERR;
  else if (q.class !== DnsClass.IN && q.class !== DnsClass.ANY) rcode = RCode.REFUSED;
  else ({ rcode, answers } = answerFromZone(index, q.name, q.type, ttl));
  const limit = maxSize === undefined ? undefined : query.edns ? Math.max(CLASSIC_UDP_SIZE, Math.min(query.edns.udpSize, EDNS_UDP_SIZE)) : CLASSIC_UDP_SIZE;
  const answer = encodeMessage(reply(query, rcode, answers), limit === undefined ? {} : { maxSize: limit });
  return { answer, id: query.id, qname, qtype, rcode: rcodeName(rcode) };
}

function bindUdp(host: string, port: number): Promise<dgram.Socket> {
  const socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4', ipv6Only: net.isIPv6(host) });
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve(socket);
    });
  });
}

function listenTcp(server: net.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, ipv6Only: net.isIPv6(host) }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Starts a recorder; on port 0 it takes a port free for both UDP and TCP. */
export async function startRecorder(opts: RecorderOptions): Promise<Recorder> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host)) throw new Error(`host: ${host} is not a loopback address`);
  const ttl = opts.ttl ?? 30;
  let index = indexZone(opts.zone);
  const queries: RecordedQuery[] = [];
  const connections = new Set<net.Socket>();

  const tcp = net.createServer((socket) => {
    connections.add(socket);
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      const { messages, rest } = splitFrames(Buffer.concat([pending, chunk]));
      pending = Buffer.from(rest);
      for (const wire of messages) {
        const at = preciseNow();
        const r = handle(wire, index, ttl, undefined);
        queries.push({ at, transport: 'tcp', from: socket.remoteAddress ?? '', id: r.id, qname: r.qname, qtype: r.qtype, rcode: r.rcode });
        if (r.answer) socket.write(frame(r.answer));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => connections.delete(socket));
  });

  let udp: dgram.Socket | undefined;
  for (let attempt = 0; udp === undefined; attempt++) {
    const candidate = await bindUdp(host, opts.port ?? 0);
    try {
      await listenTcp(tcp, host, candidate.address().port);
      udp = candidate;
    } catch (e) {
      candidate.close();
      // With port 0 the UDP port taken may be busy for TCP: try another; a given port is final.
      if (opts.port !== undefined && opts.port !== 0) throw e;
      if (attempt >= 20) throw new Error(`no port free for both UDP and TCP on ${host}`);
    }
  }
  const socket = udp;
  socket.on('message', (wire, rinfo) => {
    const at = preciseNow();
    const r = handle(wire, index, ttl, CLASSIC_UDP_SIZE);
    queries.push({ at, transport: 'udp', from: rinfo.address, id: r.id, qname: r.qname, qtype: r.qtype, rcode: r.rcode });
    if (r.answer) socket.send(r.answer, rinfo.port, rinfo.address);
  });

  const port = socket.address().port;
  return {
    address: host,
    port,
    server: net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`,
    queries,
    clear: () => void queries.splice(0),
    setZone: (zone) => void (index = indexZone(zone)),
    close: async () => {
      for (const c of connections) c.destroy();
      await Promise.all([new Promise<void>((r) => tcp.close(() => r())), new Promise<void>((r) => socket.close(() => r()))]);
    },
  };
}
