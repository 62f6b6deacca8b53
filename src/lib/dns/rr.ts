// Record constructors, the mnemonic tables (types, classes, rcodes) and dig-like text.

import type {
  AddressData,
  HINFOData,
  MXData,
  NameData,
  OpaqueData,
  ResourceRecord,
  SOAData,
  SRVData,
  TXTData,
} from './types.js';
import { DnsClass, RRType } from './types.js';

function record(name: string, type: number, ttl: number, data: ResourceRecord['data']): ResourceRecord {
  return { name, type, class: DnsClass.IN, ttl, data };
}

export function a(name: string, ttl: number, address: string): ResourceRecord {
  return record(name, RRType.A, ttl, { address });
}
export function aaaa(name: string, ttl: number, address: string): ResourceRecord {
  return record(name, RRType.AAAA, ttl, { address });
}
export function cname(name: string, ttl: number, target: string): ResourceRecord {
  return record(name, RRType.CNAME, ttl, { target });
}
export function ns(name: string, ttl: number, target: string): ResourceRecord {
  return record(name, RRType.NS, ttl, { target });
}
export function ptr(name: string, ttl: number, target: string): ResourceRecord {
  return record(name, RRType.PTR, ttl, { target });
}
export function dname(name: string, ttl: number, target: string): ResourceRecord {
  return record(name, RRType.DNAME, ttl, { target });
}
export function mx(name: string, ttl: number, preference: number, exchange: string): ResourceRecord {
  return record(name, RRType.MX, ttl, { preference, exchange });
}
/** `strings` are binary (latin1) character-strings of at most 255 octets each. */
export function txt(name: string, ttl: number, strings: string[]): ResourceRecord {
  return record(name, RRType.TXT, ttl, { strings });
}
export function srv(name: string, ttl: number, priority: number, weight: number, port: number, target: string): ResourceRecord {
  return record(name, RRType.SRV, ttl, { priority, weight, port, target });
}
export function hinfo(name: string, ttl: number, cpu: string, os: string): ResourceRecord {
  return record(name, RRType.HINFO, ttl, { cpu, os });
}
/** The SOA RDATA fields, as `soa()` takes them. */
export type SOAFields = SOAData;
export function soa(name: string, ttl: number, fields: SOAFields): ResourceRecord {
  return record(name, RRType.SOA, ttl, { ...fields });
}
/** Any type as RFC 3597 opaque RDATA. */
export function opaque(name: string, type: number, ttl: number, raw: Uint8Array, cls: number = DnsClass.IN): ResourceRecord {
  return { name, type, class: cls, ttl, data: { raw } };
}

// ---- mnemonics -------------------------------------------------------------------------------

// IANA "Resource Record (RR) TYPEs" registry, the types a user may meet or type.
const TYPE_NAMES: ReadonlyArray<readonly [number, string]> = [
  [1, 'A'], [2, 'NS'], [3, 'MD'], [4, 'MF'], [5, 'CNAME'], [6, 'SOA'], [7, 'MB'], [8, 'MG'], [9, 'MR'],
  [10, 'NULL'], [11, 'WKS'], [12, 'PTR'], [13, 'HINFO'], [14, 'MINFO'], [15, 'MX'], [16, 'TXT'],
  [17, 'RP'], [18, 'AFSDB'], [19, 'X25'], [20, 'ISDN'], [21, 'RT'], [22, 'NSAP'], [23, 'NSAP-PTR'],
  [24, 'SIG'], [25, 'KEY'], [26, 'PX'], [27, 'GPOS'], [28, 'AAAA'], [29, 'LOC'], [30, 'NXT'],
  [33, 'SRV'], [35, 'NAPTR'], [36, 'KX'], [37, 'CERT'], [39, 'DNAME'], [41, 'OPT'], [42, 'APL'],
  [43, 'DS'], [44, 'SSHFP'], [45, 'IPSECKEY'], [46, 'RRSIG'], [47, 'NSEC'], [48, 'DNSKEY'],
  [49, 'DHCID'], [50, 'NSEC3'], [51, 'NSEC3PARAM'], [52, 'TLSA'], [53, 'SMIMEA'], [55, 'HIP'],
  [59, 'CDS'], [60, 'CDNSKEY'], [61, 'OPENPGPKEY'], [62, 'CSYNC'], [63, 'ZONEMD'], [64, 'SVCB'],
  [65, 'HTTPS'], [99, 'SPF'], [108, 'EUI48'], [109, 'EUI64'], [249, 'TKEY'], [250, 'TSIG'],
  [251, 'IXFR'], [252, 'AXFR'], [253, 'MAILB'], [254, 'MAILA'], [255, 'ANY'], [256, 'URI'],
  [257, 'CAA'],
];
const typeToName = new Map<number, string>(TYPE_NAMES);
const nameToType = new Map<string, number>(TYPE_NAMES.map(([n, s]) => [s, n]));

/** "A" for 1; RFC 3597 "TYPE65280" for types without a mnemonic. */
export function typeName(type: number): string {
  return typeToName.get(type) ?? `TYPE${type}`;
}

/** The type number of a mnemonic or "TYPEnnn" (case-insensitive), or undefined. */
export function typeFromName(name: string): number | undefined {
  const upper = name.toUpperCase();
  return nameToType.get(upper) ?? genericNumber(upper, 'TYPE');
}

function genericNumber(upper: string, prefix: string): number | undefined {
  if (!upper.startsWith(prefix)) return undefined;
  const digits = upper.slice(prefix.length);
  if (!/^(0|[1-9][0-9]{0,4})$/.test(digits)) return undefined;
  const n = Number(digits);
  return n <= 0xffff ? n : undefined;
}

const CLASS_NAMES: ReadonlyArray<readonly [number, string]> = [
  [1, 'IN'], [3, 'CH'], [4, 'HS'], [254, 'NONE'], [255, 'ANY'],
];
const classToName = new Map<number, string>(CLASS_NAMES);
const nameToClass = new Map<string, number>(CLASS_NAMES.map(([n, s]) => [s, n]));

/** "IN" for 1; "CLASS42" for classes without a mnemonic. */
export function className(cls: number): string {
  return classToName.get(cls) ?? `CLASS${cls}`;
}

export function classFromName(name: string): number | undefined {
  const upper = name.toUpperCase();
  return nameToClass.get(upper) ?? genericNumber(upper, 'CLASS');
}

// 16 is BADVERS (OPT) and BADSIG (TSIG): a DNS server without TSIG only ever means BADVERS.
const RCODE_NAMES: ReadonlyArray<readonly [number, string]> = [
  [0, 'NOERROR'], [1, 'FORMERR'], [2, 'SERVFAIL'], [3, 'NXDOMAIN'], [4, 'NOTIMP'], [5, 'REFUSED'],
  [6, 'YXDOMAIN'], [7, 'YXRRSET'], [8, 'NXRRSET'], [9, 'NOTAUTH'], [10, 'NOTZONE'], [11, 'DSOTYPENI'],
  [16, 'BADVERS'], [17, 'BADKEY'], [18, 'BADTIME'], [19, 'BADMODE'], [20, 'BADNAME'], [21, 'BADALG'],
  [22, 'BADTRUNC'], [23, 'BADCOOKIE'],
];
const rcodeToName = new Map<number, string>(RCODE_NAMES);
const nameToRcode = new Map<string, number>(RCODE_NAMES.map(([n, s]) => [s, n]));

/** "NXDOMAIN" for 3; "RCODE12" for codes without a mnemonic. */
export function rcodeName(rcode: number): string {
  return rcodeToName.get(rcode) ?? `RCODE${rcode}`;
}

export function rcodeFromName(name: string): number | undefined {
  const upper = name.toUpperCase();
  return nameToRcode.get(upper) ?? genericNumber(upper, 'RCODE');
}

// ---- presentation ----------------------------------------------------------------------------

/** A character-string in zone-file quotes: `"` and `\` escaped, other bytes outside 0x20-0x7E as \DDD. */
export function quoteCharacterString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) out += '\\' + s[i];
    else if (c >= 0x20 && c <= 0x7e) out += s[i];
    else out += '\\' + String(c & 0xff).padStart(3, '0');
  }
  return out + '"';
}

function hex(raw: Uint8Array): string {
  let out = '';
  for (const b of raw) out += (b < 16 ? '0' : '') + b.toString(16).toUpperCase();
  return out;
}

/** The RDATA in presentation form (RFC 3597 `\# len hex` for opaque data). */
export function rdataToString(rr: ResourceRecord): string {
  const d = rr.data;
  if ((d as OpaqueData).raw instanceof Uint8Array) {
    const raw = (d as OpaqueData).raw;
    return raw.length === 0 ? '\\# 0' : `\\# ${raw.length} ${hex(raw)}`;
  }
  switch (rr.type) {
    case RRType.A:
    case RRType.AAAA:
      return (d as AddressData).address;
    case RRType.NS:
    case RRType.CNAME:
    case RRType.PTR:
    case RRType.DNAME:
      return (d as NameData).target;
    case RRType.SOA: {
      const s = d as SOAData;
      return `${s.mname} ${s.rname} ${s.serial} ${s.refresh} ${s.retry} ${s.expire} ${s.minimum}`;
    }
    case RRType.MX: {
      const m = d as MXData;
      return `${m.preference} ${m.exchange}`;
    }
    case RRType.SRV: {
      const s = d as SRVData;
      return `${s.priority} ${s.weight} ${s.port} ${s.target}`;
    }
    case RRType.TXT:
      return (d as TXTData).strings.map(quoteCharacterString).join(' ');
    case RRType.HINFO: {
      const h = d as HINFOData;
      return `${quoteCharacterString(h.cpu)} ${quoteCharacterString(h.os)}`;
    }
    default:
      return JSON.stringify(d);
  }
}

/** One dig-like line: "foo.example.\t30\tIN\tA\t10.0.0.1". */
export function rrToString(rr: ResourceRecord): string {
  return `${rr.name}\t${rr.ttl}\t${className(rr.class)}\t${typeName(rr.type)}\t${rdataToString(rr)}`;
}
