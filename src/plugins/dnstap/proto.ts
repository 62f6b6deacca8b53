// The dnstap message (dnstap.proto, https://dnstap.info) in protobuf wire format, encoded by hand.
// Why not a protobuf library: kdns only ever writes two messages of a fixed, small schema
// (Dnstap and Message: a dozen scalar and bytes fields), which is ~60 lines of varints and
// length prefixes; a protobuf runtime would add a dependency, generated code and a schema
// compiler to the build for that, and be slower on the per-query path than writing the bytes.

/** Message.Type values kdns sends (dnstap.proto). */
export const MessageType = {
  CLIENT_QUERY: 5,
  CLIENT_RESPONSE: 6,
  FORWARDER_QUERY: 7,
  FORWARDER_RESPONSE: 8,
} as const;

export const SocketFamily = { INET: 1, INET6: 2 } as const;
export const SocketProtocol = { UDP: 1, TCP: 2, DOT: 3, DOH: 4 } as const;

/** Dnstap.Type: the only kind of payload there is. */
const DNSTAP_MESSAGE = 1;

export interface TapMessage {
  type: number;
  socketFamily?: number;
  socketProtocol?: number;
  /** 4 bytes (IPv4) or 16 (IPv6). */
  queryAddress?: Uint8Array;
  queryPort?: number;
  responseAddress?: Uint8Array;
  responsePort?: number;
  /** Unix time of the query: whole seconds and the nanoseconds past them. */
  queryTimeSec?: number;
  queryTimeNsec?: number;
  queryMessage?: Uint8Array;
  responseTimeSec?: number;
  responseTimeNsec?: number;
  responseMessage?: Uint8Array;
}

export interface TapPayload {
  identity?: Uint8Array;
  version?: Uint8Array;
  extra?: Uint8Array;
  message: TapMessage;
}

/** Appends protobuf fields to a growing list of byte chunks. */
class Writer {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;

  private push(b: Uint8Array): void {
    this.chunks.push(b);
    this.size += b.length;
  }

  private varintBytes(n: number): Uint8Array {
    const out: number[] = [];
    // Numbers here stay below 2^53 (times in seconds, ports, lengths): plain arithmetic is exact.
    let v = n;
    while (v >= 0x80) {
      out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    out.push(v);
    return Uint8Array.from(out);
  }

  /** Wire type 0 (varint): enums, uint32, uint64. */
  varint(field: number, value: number | undefined): this {
    if (value === undefined) return this;
    this.push(this.varintBytes(field * 8));
    this.push(this.varintBytes(value));
    return this;
  }

  /** Wire type 2 (length-delimited): bytes and embedded messages. */
  bytes(field: number, value: Uint8Array | undefined): this {
    if (value === undefined) return this;
    this.push(this.varintBytes(field * 8 + 2));
    this.push(this.varintBytes(value.length));
    this.push(value);
    return this;
  }

  /** Wire type 5 (32 bits, little-endian): fixed32. */
  fixed32(field: number, value: number | undefined): this {
    if (value === undefined) return this;
    this.push(this.varintBytes(field * 8 + 5));
    const b = Buffer.alloc(4);
    b.writeUInt32LE(value >>> 0);
    this.push(b);
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}

/** A dnstap.Message. Field numbers from dnstap.proto. */
export function encodeMessage(m: TapMessage): Buffer {
  return new Writer()
    .varint(1, m.type)
    .varint(2, m.socketFamily)
    .varint(3, m.socketProtocol)
    .bytes(4, m.queryAddress)
    .bytes(5, m.responseAddress)
    .varint(6, m.queryPort)
    .varint(7, m.responsePort)
    .varint(8, m.queryTimeSec)
    .fixed32(9, m.queryTimeNsec)
    .bytes(10, m.queryMessage)
    .varint(12, m.responseTimeSec)
    .fixed32(13, m.responseTimeNsec)
    .bytes(14, m.responseMessage)
    .finish();
}

/** A dnstap.Dnstap frame payload of type MESSAGE. */
export function encodeDnstap(p: TapPayload): Buffer {
  return new Writer().bytes(1, p.identity).bytes(2, p.version).bytes(3, p.extra).bytes(14, encodeMessage(p.message)).varint(15, DNSTAP_MESSAGE).finish();
}
