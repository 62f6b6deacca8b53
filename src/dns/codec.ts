// CONTRACT STUB — the wire-format helper replaces the bodies; the signatures are the contract.
import type { Message, ParsedQuery } from './types.js';

/**
 * A message that cannot be decoded. `header`/`question` say how far decoding got, so the
 * server can answer FORMERR when it knows the ID and question, and drop the packet otherwise.
 */
export class DnsFormatError extends Error {
  constructor(
    message: string,
    readonly id?: number,
    readonly flags?: number,
    readonly questionEnd?: number,
  ) {
    super(message);
    this.name = 'DnsFormatError';
  }
}

export interface EncodeOptions {
  /** Largest size allowed (UDP limit). Larger messages are cut at a whole-RR boundary and TC set. */
  maxSize?: number;
  /** Name compression (default true). */
  compress?: boolean;
}

/** Decodes a full message. Throws DnsFormatError on anything malformed. */
export function decodeMessage(buf: Uint8Array): Message {
  void buf;
  throw new Error('not implemented');
}

/** Encodes a message (compressing names). Never throws for a well-typed Message except on invalid names/addresses. */
export function encodeMessage(msg: Message, opts?: EncodeOptions): Buffer {
  void msg;
  void opts;
  throw new Error('not implemented');
}

/** Fast path: header + question + OPT. Throws DnsFormatError like decodeMessage. */
export function parseQuery(buf: Uint8Array): ParsedQuery {
  void buf;
  throw new Error('not implemented');
}
