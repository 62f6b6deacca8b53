// A small stub-resolver client: one question to one server, over UDP, retried over TCP when the
// reply is truncated. Node's own resolver (c-ares) would do, but it hides the RCODE, and
// node-resolver must tell "the service has no address" (NXDOMAIN, NODATA: remove the entry)
// from "DNS is not answering" (timeout, SERVFAIL: keep the stale entry).

import dgram from 'node:dgram';
import net from 'node:net';
import { randomInt } from 'node:crypto';
import { decodeMessage } from '../lib/dns/codec.js';
import { nameEquals, nameToWire } from '../lib/dns/name.js';
import { buildQuery } from '../lib/dns/wire.js';
import { DnsClass, RCode, RRType } from '../lib/dns/types.js';
import type { AddressData, Message, NameData } from '../lib/dns/types.js';

export interface Nameserver {
  host: string;
  port: number;
}

export type AddressType = 'A' | 'AAAA';

export interface LookupAnswer {
  rcode: number;
  /** Addresses for the name (following CNAMEs inside the reply), in reply order. */
  addresses: string[];
}

export interface LookupOptions {
  /** Per attempt. Default 2000 ms. */
  timeoutMs?: number;
  /** UDP attempts before giving up. Default 2. */
  attempts?: number;
}

/** The server did not answer usably: timeout, refused connection, garbage. */
export class LookupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LookupError';
  }
}

const EDNS_UDP_SIZE = 1232;

function query(name: string, type: AddressType): { id: number; wire: Buffer } {
  const id = randomInt(0, 0x10000);
  return { id, wire: buildQuery(nameToWire(name), RRType[type], DnsClass.IN, { id, ednsUdpSize: EDNS_UDP_SIZE }) };
}

/** The reply to our question, or undefined for a stray packet (wrong ID or question: ignore it). */
function matchReply(buf: Buffer, id: number, name: string, type: AddressType): Message | undefined {
  let msg: Message;
  try {
    msg = decodeMessage(buf);
  } catch {
    return undefined;
  }
  if (!msg.qr || msg.id !== id) return undefined;
  const q = msg.questions[0];
  if (msg.questions.length !== 1 || !q || q.type !== RRType[type] || !nameEquals(q.name, name)) return undefined;
  return msg;
}

/** Addresses of `name`, following the CNAME chain the server put in the answer. */
export function addressesIn(msg: Message, name: string, type: AddressType): string[] {
  let owner = name;
  const seen = new Set<string>();
  for (;;) {
    const cname = msg.answers.find((rr) => rr.type === RRType.CNAME && nameEquals(rr.name, owner));
    if (!cname || seen.has(owner.toLowerCase())) break;
    seen.add(owner.toLowerCase());
    owner = (cname.data as NameData).target;
  }
  return msg.answers.filter((rr) => rr.type === RRType[type] && nameEquals(rr.name, owner)).map((rr) => (rr.data as AddressData).address);
}

function udpExchange(ns: Nameserver, name: string, type: AddressType, timeoutMs: number): Promise<Message> {
  const { id, wire } = query(name, type);
  return new Promise((resolve, reject) => {
    const sock = dgram.createSocket(net.isIPv6(ns.host) ? 'udp6' : 'udp4');
    let settled = false;
    const done = (err: Error | undefined, msg?: Message): void => {
      // Once only: closing a closed socket throws.
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(msg!);
    };
    const timer = setTimeout(() => done(new LookupError(`no reply from ${ns.host}:${ns.port} within ${timeoutMs} ms`)), timeoutMs);
    sock.on('error', (e) => done(new LookupError(`${ns.host}:${ns.port}: ${e.message}`)));
    sock.on('message', (buf) => {
      const msg = matchReply(buf, id, name, type);
      if (msg) done(undefined, msg);
    });
    // With a callback, a send that cannot go (no route, no IPv6 here) fails now, not at the timeout.
    sock.send(wire, ns.port, ns.host, (err) => {
      if (err) done(new LookupError(`${ns.host}:${ns.port}: ${err.message}`));
    });
  });
}

function tcpExchange(ns: Nameserver, name: string, type: AddressType, timeoutMs: number): Promise<Message> {
  const { id, wire } = query(name, type);
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: ns.host, port: ns.port });
    let data = Buffer.alloc(0);
    const done = (err: Error | undefined, msg?: Message): void => {
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(msg!);
    };
    const timer = setTimeout(() => done(new LookupError(`no TCP reply from ${ns.host}:${ns.port} within ${timeoutMs} ms`)), timeoutMs);
    sock.on('error', (e) => done(new LookupError(`${ns.host}:${ns.port} (TCP): ${e.message}`)));
    sock.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(wire.length);
      sock.write(Buffer.concat([len, wire]));
    });
    sock.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (data.length < 2 || data.length < 2 + data.readUInt16BE(0)) return;
      const msg = matchReply(data.subarray(2, 2 + data.readUInt16BE(0)), id, name, type);
      done(msg ? undefined : new LookupError(`${ns.host}:${ns.port} (TCP): reply does not match the question`), msg);
    });
    sock.on('end', () => done(new LookupError(`${ns.host}:${ns.port} (TCP): connection closed before a reply`)));
  });
}

/** Asks `ns` for the A or AAAA records of `name` (absolute). Throws LookupError when it gets no usable reply. */
export async function lookup(name: string, type: AddressType, ns: Nameserver, opts: LookupOptions = {}): Promise<LookupAnswer> {
  const timeoutMs = opts.timeoutMs ?? 2000;
  const attempts = opts.attempts ?? 2;
  let last: Error = new LookupError('no attempt made');
  for (let i = 0; i < attempts; i++) {
    try {
      let msg = await udpExchange(ns, name, type, timeoutMs);
      if (msg.tc) msg = await tcpExchange(ns, name, type, timeoutMs);
      return { rcode: msg.rcode, addresses: msg.rcode === RCode.NOERROR ? addressesIn(msg, name, type) : [] };
    } catch (e) {
      last = e as Error;
    }
  }
  throw last;
}
