// Turns a plugin's Reply into the bytes the client gets: ID and QR set, the OPT record that an
// EDNS client is owed (and none for a client without EDNS), and truncation to the UDP limit.
// Idempotent: the bytes are cached on the reply, so log and prometheus can measure the size
// before the server sends it, without encoding twice.

import { encodeMessage } from '../lib/dns/codec.js';
import type { Edns } from '../lib/dns/types.js';
import { skipName } from '../lib/dns/wire.js';
import type { DnsRequest } from './request.js';
import type { Reply } from './reply.js';

/** Largest TCP message. */
const TCP_MAX = 65535;
/** The UDP size kdns advertises in its own OPT records (DNS flag day 2020). */
export const ADVERTISED_UDP_SIZE = 1232;

const OPT_TYPE = 41;

export function responseLimit(req: DnsRequest): number {
  return req.transport === 'udp' ? req.maxUdpSize : TCP_MAX;
}

/** The OPT a response to this request carries: our size, version 0, DO echoed (RFC 3225). */
export function responseEdns(req: DnsRequest, options: Edns['options'] = []): Edns | undefined {
  if (!req.edns) return undefined;
  return { udpSize: ADVERTISED_UDP_SIZE, version: 0, do: req.edns.do, zFlags: 0, options };
}

export function finalizeReply(req: DnsRequest, reply: Reply): Buffer {
  if (reply.finalWire) return reply.finalWire;
  const wire = reply.wire;
  const out = wire ? finalizeWire(req, wire) ?? encodeFromMessage(req, reply) : encodeFromMessage(req, reply);
  reply.finalWire = out;
  return out;
}

function encodeFromMessage(req: DnsRequest, reply: Reply): Buffer {
  const msg = reply.edit();
  msg.id = req.id;
  msg.qr = true;
  const upstreamOptions = msg.edns?.options ?? [];
  // Options a plugin added on purpose (e.g. extended errors) go out; the client's own stay behind.
  msg.edns = responseEdns(req, upstreamOptions);
  if (!msg.edns && msg.rcode > 15) msg.rcode = 2; // an extended RCODE cannot travel without OPT
  return encodeMessage(msg, { maxSize: responseLimit(req) });
}

/**
 * Fast path for replies made as bytes (cache hits, pre-encoded answers): patch the ID, fix up
 * the OPT record in place when that is cheap. Returns undefined when the bytes must be decoded
 * and re-encoded (too large for the client, or an OPT that must go away from the middle).
 */
function finalizeWire(req: DnsRequest, wire: Buffer): Buffer | undefined {
  if (wire.length < 12) return undefined;
  const opt = findOpt(wire);
  if (opt === null) return undefined; // malformed bytes: let the decoder say why
  let out = wire;
  if (req.edns) {
    if (opt === undefined) {
      out = appendOpt(wire, req.edns.do);
    } else {
      // CLASS field of OPT = advertised size; the DO bit lives in the TTL field's flags.
      out.writeUInt16BE(ADVERTISED_UDP_SIZE, opt.start + 3);
      const flags = out.readUInt16BE(opt.start + 7);
      out.writeUInt16BE(req.edns.do ? flags | 0x8000 : flags & 0x7fff, opt.start + 7);
    }
  } else if (opt !== undefined) {
    if (opt.end !== wire.length) return undefined;
    out = wire.subarray(0, opt.start);
    out.writeUInt16BE(out.readUInt16BE(10) - 1, 10);
  }
  out.writeUInt16BE(req.id, 0);
  out[2] = (out[2] as number) | 0x80;
  if (out.length > responseLimit(req)) return undefined;
  return out;
}

function appendOpt(wire: Buffer, dnssecOk: boolean): Buffer {
  const out = Buffer.allocUnsafe(wire.length + 11);
  wire.copy(out, 0);
  let p = wire.length;
  out[p++] = 0; // root owner
  out.writeUInt16BE(OPT_TYPE, p);
  out.writeUInt16BE(ADVERTISED_UDP_SIZE, p + 2);
  out.writeUInt32BE(dnssecOk ? 0x8000 : 0, p + 4);
  out.writeUInt16BE(0, p + 8);
  out.writeUInt16BE(out.readUInt16BE(10) + 1, 10);
  return out;
}

/**
 * Where the OPT record is: {start, end}, undefined when there is none, null when the bytes
 * do not parse.
 */
function findOpt(buf: Buffer): { start: number; end: number } | undefined | null {
  const qd = buf.readUInt16BE(4);
  const an = buf.readUInt16BE(6);
  const ns = buf.readUInt16BE(8);
  const ar = buf.readUInt16BE(10);
  if (ar === 0) return undefined;
  let p = 12;
  for (let i = 0; i < qd; i++) {
    p = skipName(buf, p);
    if (p < 0) return null;
    p += 4;
  }
  for (let i = 0; i < an + ns + ar; i++) {
    const start = p;
    p = skipName(buf, p);
    if (p < 0 || p + 10 > buf.length) return null;
    const type = buf.readUInt16BE(p);
    const end = p + 10 + buf.readUInt16BE(p + 8);
    if (end > buf.length) return null;
    if (type === OPT_TYPE && i >= an + ns) return { start, end };
    p = end;
  }
  return undefined;
}
