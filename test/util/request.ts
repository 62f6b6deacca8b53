// Queries and requests made by hand for plugin tests and benches: one question, RD set as a stub
// resolver sets it, nothing else unless asked. One builder, so a test names only what it checks.
import { Registry } from 'prom-client';
import { encodeMessage, parseQuery } from '../../src/lib/dns/codec.js';
import { message } from './dnstestkit.js';
import { DnsClass, type Edns, type Message, type ResourceRecord } from '../../src/lib/dns/types.js';
import { createLogger } from '../../src/server/log.js';
import type { BlockInfo, Shared } from '../../src/server/plugin.js';
import { DnsRequest, type ClientInfo } from '../../src/server/request.js';

export interface QueryOptions {
  /** Default 1. */
  id?: number;
  /** Default IN. */
  qclass?: number;
  /** Recursion desired; default true. */
  rd?: boolean;
  /** Checking disabled; default false. */
  cd?: boolean;
  /** An OPT record (see `edns()`); none by default. */
  edns?: Edns;
  /** Records in the additional section besides the OPT. */
  additional?: ResourceRecord[];
}

/** An empty response (QR and RD set, ID 0x1234); override what the test cares about. */
export { message as responseMessage } from './dnstestkit.js';

/** A query message for one question. */
export function queryMessage(name: string, type: number, opts: QueryOptions = {}): Message {
  return message({
    id: opts.id ?? 1,
    qr: false,
    rd: opts.rd ?? true,
    cd: opts.cd ?? false,
    questions: [{ name, type, class: opts.qclass ?? DnsClass.IN }],
    additional: opts.additional ?? [],
    ...(opts.edns ? { edns: opts.edns } : {}),
  });
}

/** The same query in wire form. */
export function queryWire(name: string, type: number, opts: QueryOptions = {}): Buffer {
  return encodeMessage(queryMessage(name, type, opts));
}

/** An OPT record: UDP size 1232 (the DNS flag day's), version 0, no DO, no options. */
export function edns(udpSize = 1232, over: Partial<Edns> = {}): Edns {
  return { udpSize, version: 0, do: false, zFlags: 0, options: [], ...over };
}

/** A UDP client on loopback. */
export const testClient: ClientInfo = { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 40000, localAddress: '127.0.0.1', localPort: 53 };

/** The request the server would make of these bytes from this client. */
/** `lent`: the bytes are the caller's to reuse once handling returns, as a TCP connection's are. */
export function requestOf(raw: Buffer, client?: Partial<ClientInfo>, lent = false): DnsRequest {
  return new DnsRequest(raw, parseQuery(raw), client ? { ...testClient, ...client } : testClient, undefined, lent);
}

export interface RequestOptions extends QueryOptions {
  /** What differs from `testClient`. */
  client?: Partial<ClientInfo>;
  /** The zone of the server block that took it; default '.'. */
  zone?: string;
}

/** A request for one question, as the server would hand it to the first plugin. */
export function testRequest(name: string, type: number, opts: RequestOptions = {}): DnsRequest {
  const req = requestOf(queryWire(name, type, opts), opts.client);
  if (opts.zone !== undefined) req.zone = opts.zone;
  return req;
}

/** Process-lifetime services for a plugin made outside a server: a fresh registry, a silent log. */
export function testShared(): Shared {
  const map = new Map<string, unknown>();
  return {
    metrics: new Registry(),
    log: createLogger(() => undefined),
    singleton<T>(key: string, create: () => T): T {
      if (!map.has(key)) map.set(key, create());
      return map.get(key) as T;
    },
  };
}

/** A server block for the given zones on port 53, with no plugins and no listen addresses. */
export function testBlock(zones: string[] = ['.'], over: Partial<BlockInfo> = {}): BlockInfo {
  return { keys: [], zones, port: 53, settings: { listenAddresses: [] }, plugins: [], file: 'Corefile', line: 1, ...over };
}
