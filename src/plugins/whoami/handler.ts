// Tells a client how the server sees it: its address (A or AAAA) and, as an SRV record under
// `_udp.`/`_tcp.` + the question name, its source port. Both go in the additional section and
// the answer section stays empty, exactly as CoreDNS's whoami does, so scripts written against
// CoreDNS read the same output.

import { isIPv4 } from 'node:net';
import { RRType, type ResourceRecord } from '../../lib/dns/types.js';
import type { Plugin } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { ClientInfo, DnsRequest } from '../../server/request.js';

const MAPPED_V4_PREFIX = '::ffff:';

/**
 * A client reaching a dual-stack (::) socket over IPv4 shows up as ::ffff:a.b.c.d; it is an
 * IPv4 client all the same, so it gets an A record.
 */
export function clientAddressRecord(owner: string, qclass: number, address: string): ResourceRecord {
  const lower = address.toLowerCase();
  const unmapped = lower.startsWith(MAPPED_V4_PREFIX) && isIPv4(lower.slice(MAPPED_V4_PREFIX.length)) ? lower.slice(MAPPED_V4_PREFIX.length) : address;
  // Strip an IPv6 zone ("fe80::1%eth0"): it is not part of the address on the wire.
  const bare = unmapped.split('%')[0] as string;
  const type = isIPv4(bare) ? RRType.A : RRType.AAAA;
  return { name: owner, type, class: qclass, ttl: 0, data: { address: bare } };
}

/** `_udp.<qname>` (or `_udp.` for the root): the port travels in an SRV record. */
export function transportRecord(qname: string, qclass: number, client: ClientInfo): ResourceRecord {
  const owner = qname === '.' ? `_${client.transport}.` : `_${client.transport}.${qname}`;
  return { name: owner, type: RRType.SRV, class: qclass, ttl: 0, data: { priority: 0, weight: 0, port: client.remotePort, target: '.' } };
}

export class WhoamiPlugin implements Plugin {
  readonly name = 'whoami';

  serve(req: DnsRequest): Reply {
    const msg = responseFor(req, 0, true);
    msg.additional.push(clientAddressRecord(req.qname, req.qclass, req.client.remoteAddress), transportRecord(req.qname, req.qclass, req.client));
    return Reply.of(msg);
  }
}
