// acl: allow, block (REFUSED), filter (empty NOERROR) or drop (no reply) queries by their type
// and the client's address. Rules are tried in the order written; the first that matches a
// query decides, and a query no rule matches is allowed.
//
// What acl judges, so that no client gets data of a name it is refused (README "Order"):
//  - every question that reaches it: rewrite and autopath run before it, so the names they
//    look up in the client's place are judged, and cache runs after it;
//  - the question as the client asked it, ahead of rewrite and autopath (the chain calls
//    judgeAhead there);
//  - the names in an allowed answer: records of a name the client is refused (a CNAME chain a
//    plugin behind followed, an answer the cache kept for another client) are withheld.

import { parseIP } from '../../lib/dns/ip.js';
import { isSubdomain, lowerName } from '../../lib/dns/name.js';
import { RCode, RRType, type Message, type ResourceRecord } from '../../lib/dns/types.js';
import { readU16, skipName } from '../../lib/dns/wire.js';
import type { Counter } from '../../server/promclient.js';
import type { MaybePromise, Next, Plugin } from '../../server/plugin.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { inSubnet, type Subnet } from '../pkg/subnet.js';

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

/** A compression pointer to offset 12: the question's name, as answers about it spell their owner. */
const OWNER_IS_QUESTION = 0xc00c;

/**
 * True when every record of the answer and additional sections is owned by the question's name
 * (spelled as a pointer to it) or is OPT: then the reply holds no other name's data and needs
 * no look. Most answers are such (one name, its records); a CNAME chain or glue is not.
 */
export function ownedByQuestionOnly(wire: Uint8Array): boolean {
  if (wire.length < 12 || readU16(wire, 4) !== 1) return false;
  const an = readU16(wire, 6);
  const ns = readU16(wire, 8);
  const ar = readU16(wire, 10);
  let p = skipName(wire, 12);
  if (p < 0) return false;
  p += 4;
  for (let i = 0; i < an + ns + ar; i++) {
    const owner = p;
    p = skipName(wire, p);
    if (p < 0 || p + 10 > wire.length) return false;
    const counted = i < an || i >= an + ns;
    const own = p - owner === 2 && readU16(wire, owner) === OWNER_IS_QUESTION;
    const opt = p - owner === 1 && readU16(wire, p) === RRType.OPT;
    if (counted && !own && !opt) return false;
    p += 10 + readU16(wire, p + 8);
  }
  return true;
}

/**
 * The reply without the data of names this client is refused: the answer stops before the first
 * record of such a name (the rest of a CNAME chain is that name's), additional records of such
 * names go. When the answer was cut, the authority section (the refused zone's SOA or NS) goes
 * too and an NXDOMAIN (the refused name's) becomes NOERROR. Undefined when nothing is withheld.
 */
export function withholdRefused(msg: Message, question: string, refused: (name: string, qtype: number) => boolean, qtype: number): Message | undefined {
  // An answer record is what the client would get asking its owner the question's type; glue,
  // asking its owner the record's own type.
  const refusedOwner = (rr: ResourceRecord, type: number): boolean => {
    const owner = lowerName(rr.name);
    return owner !== question && refused(owner, type);
  };
  const cut = msg.answers.findIndex((rr) => refusedOwner(rr, qtype));
  const glueRefused = msg.additional.some((rr) => refusedOwner(rr, rr.type));
  if (cut < 0 && !glueRefused) return undefined;
  const additional = glueRefused ? msg.additional.filter((rr) => !refusedOwner(rr, rr.type)) : msg.additional;
  if (cut < 0) return { ...msg, additional };
  return { ...msg, rcode: msg.rcode === RCode.NXDOMAIN ? RCode.NOERROR : msg.rcode, answers: msg.answers.slice(0, cut), authority: [], additional };
}

export class AclPlugin implements Plugin {
  readonly name = 'acl';
  /**
   * Requests already judged and allowed: a request judged ahead of rewrite and autopath that
   * they pass on unchanged reaches acl's own place in the chain as the same object.
   */
  private readonly judged = new WeakSet<DnsRequest>();

  constructor(
    readonly rules: AclRule[],
    private readonly counters: AclCounters,
    private readonly server: string,
  ) {}

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    if (this.judged.has(req)) return next(req);
    return this.judge(req, next);
  }

  /**
   * Judges the question as the client asked it, before a plugin ahead of acl (rewrite,
   * autopath) asks another in its place. The chain calls this at the first such plugin.
   */
  judgeAhead(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    return this.judge(req, next);
  }

  private judge(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const client = req.client.remoteAddress;
    const { action, zone = '.' } = decide(this.rules, req.name, req.qtype, client);
    const labels = { server: this.server, zone, view: '' };
    switch (action) {
      case 'allow': {
        this.counters.allowed.inc({ server: this.server, view: '' });
        this.judged.add(req);
        const out = next(req);
        if (out instanceof Promise) return out.then((reply) => this.withheld(req, reply, client));
        return this.withheld(req, out, client);
      }
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

  /** An allowed question's reply, less the records of other names this client is refused. */
  private withheld(req: DnsRequest, reply: Reply | undefined, client: string): Reply | undefined {
    if (reply === undefined || reply.dropped) return reply;
    const wire = reply.wire;
    if (wire !== undefined && ownedByQuestionOnly(wire)) return reply;
    const refused = (name: string, qtype: number): boolean => decide(this.rules, name, qtype, client).action !== 'allow';
    const msg = withholdRefused(reply.view(), req.name, refused, req.qtype);
    if (msg === undefined) return reply;
    // A new reply: the message may be shared with the cache of the plugin that made it.
    const out = Reply.of(msg);
    out.plugin = reply.plugin;
    if (reply.error) out.error = reply.error;
    return out;
  }
}
