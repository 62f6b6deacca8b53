// The DNS message model shared by every part of kdns.
//
// Names are presentation-format strings, always absolute (trailing dot; the root is "."),
// with the case they had on the wire. Labels holding a dot, a backslash or a byte outside
// printable ASCII are escaped as in zone files (`\.`, `\\`, `\DDD`), so every name
// round-trips byte-exact. Compare names with the helpers in ./name.ts, never with ===.

export const RRType = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  HINFO: 13,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  DNAME: 39,
  OPT: 41,
  DS: 43,
  IXFR: 251,
  AXFR: 252,
  ANY: 255,
} as const;

export const DnsClass = {
  IN: 1,
  CH: 3,
  HS: 4,
  NONE: 254,
  ANY: 255,
} as const;

export const Opcode = {
  QUERY: 0,
  IQUERY: 1,
  STATUS: 2,
  NOTIFY: 4,
  UPDATE: 5,
} as const;

export const RCode = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  YXDOMAIN: 6,
  YXRRSET: 7,
  NXRRSET: 8,
  NOTAUTH: 9,
  NOTZONE: 10,
  BADVERS: 16,
} as const;

/** A and AAAA: the address in its usual text form ("10.0.0.1", "2001:db8::1"). */
export interface AddressData {
  address: string;
}
/** CNAME, NS, PTR, DNAME: one domain name. */
export interface NameData {
  target: string;
}
export interface SOAData {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}
export interface MXData {
  preference: number;
  exchange: string;
}
/** TXT: each character-string as a binary ("latin1") JS string, so any byte round-trips. */
export interface TXTData {
  strings: string[];
}
/** HINFO: two character-strings, binary JS strings as for TXT. */
export interface HINFOData {
  cpu: string;
  os: string;
}
export interface SRVData {
  priority: number;
  weight: number;
  port: number;
  target: string;
}
/** Any other type (RFC 3597): RDATA kept as the bytes it was. */
export interface OpaqueData {
  raw: Uint8Array;
}

export type RData = AddressData | NameData | SOAData | MXData | TXTData | HINFOData | SRVData | OpaqueData;

export interface ResourceRecord {
  name: string;
  type: number;
  class: number;
  ttl: number;
  data: RData;
}

export interface Question {
  name: string;
  type: number;
  class: number;
}

export interface EdnsOption {
  code: number;
  data: Uint8Array;
}

/** The OPT pseudo-record, lifted out of the additional section. */
export interface Edns {
  /** Requestor's UDP payload size (the OPT CLASS field). */
  udpSize: number;
  version: number;
  /** DNSSEC OK bit. */
  do: boolean;
  /** The other 15 bits of the OPT flags field, kept for round-tripping. */
  zFlags: number;
  options: EdnsOption[];
}

export interface Message {
  id: number;
  qr: boolean;
  opcode: number;
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  /** The reserved Z bit; kept for round-tripping. */
  z: boolean;
  ad: boolean;
  cd: boolean;
  /** Full 12-bit RCODE: the low 4 bits travel in the header, the upper 8 in the OPT record. */
  rcode: number;
  questions: Question[];
  answers: ResourceRecord[];
  authority: ResourceRecord[];
  /** Additional records without the OPT pseudo-record (see `edns`). */
  additional: ResourceRecord[];
  edns?: Edns;
}

/**
 * What the hot path needs from a query, read without building the full message:
 * the header, the single question and the OPT record (when the rest of the message is well formed).
 */
export interface ParsedQuery {
  id: number;
  /** The 16-bit flags word as received. */
  flags: number;
  opcode: number;
  rd: boolean;
  cd: boolean;
  qdcount: number;
  /** Question name in presentation form, case preserved, absolute. */
  qname: string;
  /** Lower-cased qname: the lookup key. */
  name: string;
  qtype: number;
  qclass: number;
  /** Offset just past the question section (where answers would start). */
  questionEnd: number;
  edns?: Edns;
}
