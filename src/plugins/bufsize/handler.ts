// Caps the EDNS0 UDP size of queries, so that neither the answers sent back nor the queries
// a later plugin (forward) sends upstream ask for datagrams large enough to be fragmented.

import { skipName } from '../../lib/dns/wire.js';
import type { Next, Plugin } from '../../server/plugin.js';
import type { DnsRequest } from '../../server/request.js';

export const DEFAULT_BUFSIZE = 1232;
export const MIN_BUFSIZE = 512;
export const MAX_BUFSIZE = 4096;

const OPT_TYPE = 41;

/**
 * Where the CLASS field (= UDP size) of the query's OPT record sits in `raw`, or -1.
 * Walks the records after the question: a query normally has just the OPT, so this is one step.
 */
export function optSizeOffset(raw: Uint8Array, questionEnd: number): number {
  if (raw.length < 12) return -1;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const records = view.getUint16(6) + view.getUint16(8) + view.getUint16(10);
  let p = questionEnd;
  for (let i = 0; i < records; i++) {
    p = skipName(raw, p);
    if (p < 0 || p + 10 > raw.length) return -1;
    if (view.getUint16(p) === OPT_TYPE) return p + 2;
    p += 10 + view.getUint16(p + 8);
  }
  return -1;
}

/** Lowers the request's advertised size (parsed and raw form) and its response limit to `size`. */
export function capBufsize(req: DnsRequest, size: number): void {
  const edns = req.query.edns;
  if (!edns || edns.udpSize <= size) return;
  edns.udpSize = size;
  const at = optSizeOffset(req.raw, req.query.questionEnd);
  if (at >= 0) req.raw.writeUInt16BE(size, at);
  req.maxUdpSize = Math.min(req.maxUdpSize, Math.max(MIN_BUFSIZE, size));
}

export class BufsizePlugin implements Plugin {
  readonly name = 'bufsize';

  constructor(readonly size: number = DEFAULT_BUFSIZE) {}

  serve(req: DnsRequest, next: Next): ReturnType<Next> {
    capBufsize(req, this.size);
    return next(req);
  }
}
