// acl: allow, block (REFUSED), filter (empty NOERROR) or drop (no reply) queries by their type
// and the client's address. Rules are tried in the order written; the first that matches a
// query decides, and a query no rule matches is allowed.

import { parseIP } from '../../dns/ip.js';
import { isSubdomain } from '../../dns/name.js';
import { RCode, type Message } from '../../dns/types.js';
import type { Counter } from '../../server/promclient.js';
import type { Next, Plugin } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { inSubnet, type Subnet } from '../loadbalance/prefer.js';

export type AclAction = 'allow' | 'block' | 'filter' | 'drop';

export interface AclPolicy {
  action: AclAction;
  /** Query types matched; undefined = every type. */
  types?: ReadonlySet<number>;
  /** Client networks matched; undefined = every client. */
  nets?: readonly Subnet[];
}

export interface AclRule {
  /** Zones the rule applies to (absolute, lower-case); ['.'] = all. */
  zones: readonly string[];
  policies: readonly AclPolicy[];
}

/** RFC 8914 extended error codes CoreDNS attaches. */
const EDE_OPTION = 15;
const EDE_BLOCKED = 15;
const EDE_FILTERED = 17;

export interface AclCounters {
  blocked: Counter<'server' | 'zone' | 'view'>;
  filtered: Counter<'server' | 'zone' | 'view'>;
  dropped: Counter<'server' | 'zone' | 'view'>;
  allowed: Counter<'server' | 'view'>;
}

function matches(p: AclPolicy, qtype: number, client: Uint8Array | undefined): boolean {
  if (p.types && !p.types.has(qtype)) return false;
  if (!p.nets) return true;
  return client !== undefined && p.nets.some((n) => inSubnet(n, client, 0, client.length));
}

/** The action for a query: the first matching policy of the first rule whose zone holds the name; allow when none. */
export function decide(rules: readonly AclRule[], name: string, qtype: number, clientAddress: string): { action: AclAction; zone?: string } {
  const client = parseIP(clientAddress.startsWith('::ffff:') && clientAddress.includes('.') ? clientAddress.slice(7) : clientAddress);
  for (const rule of rules) {
    const zone = rule.zones.filter((z) => isSubdomain(name, z)).sort((a, b) => b.length - a.length)[0];
    if (zone === undefined) continue;
    const policy = rule.policies.find((p) => matches(p, qtype, client ?? undefined));
    if (!policy) continue;
    if (policy.action === 'allow') return { action: 'allow' };
    return { action: policy.action, zone };
  }
  return { action: 'allow' };
}

function withEde(m: Message, code: number): Message {
  const info = Buffer.alloc(2);
  info.writeUInt16BE(code);
  m.edns = { udpSize: 4096, version: 0, do: true, zFlags: 0, options: [{ code: EDE_OPTION, data: info }] };
  return m;
}

export class AclPlugin implements Plugin {
  readonly name = 'acl';

  constructor(
    readonly rules: AclRule[],
    private readonly counters: AclCounters,
    private readonly server: string,
  ) {}

  serve(req: DnsRequest, next: Next): ReturnType<Next> {
    const { action, zone = '.' } = decide(this.rules, req.name, req.qtype, req.client.remoteAddress);
    const labels = { server: this.server, zone, view: '' };
    switch (action) {
      case 'allow':
        this.counters.allowed.inc({ server: this.server, view: '' });
        return next(req);
      case 'block':
        this.counters.blocked.inc(labels);
        return Reply.of(withEde(responseFor(req, RCode.REFUSED), EDE_BLOCKED));
      case 'filter':
        this.counters.filtered.inc(labels);
        return Reply.of(withEde(responseFor(req, RCode.NOERROR), EDE_FILTERED));
      case 'drop': {
        this.counters.dropped.inc(labels);
        const r = Reply.of(responseFor(req, RCode.NOERROR));
        r.dropped = true;
        return r;
      }
    }
  }
}
