// From a zone's Answer to the reply the client gets: used by both `file` and `auto`, which
// answer from master files the same way (zone.ts) and differ only in how they find the files.

import type { Message } from '../../lib/dns/types.js';
import { DnsClass, RCode, RRType } from '../../lib/dns/types.js';
import type { MaybePromise, Next } from '../../server/plugin.js';
import { Reply, errorReply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { fallsThrough } from './fallthrough.js';
import type { Answer, Zone } from './zone.js';

/** The longest of `origins` (lower-case, absolute) that `name` is in or under. */
export function closestOrigin<T>(origins: ReadonlyMap<string, T>, name: string): string | undefined {
  let candidate: string | undefined = name;
  while (candidate !== undefined) {
    if (origins.has(candidate)) return candidate;
    candidate = parentOf(candidate);
  }
  return undefined;
}

/** One label up, escape-aware; undefined above the root. */
function parentOf(name: string): string | undefined {
  if (name === '.') return undefined;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 46 /* . */) return i === name.length - 1 ? '.' : name.slice(i + 1);
  }
  return '.';
}

/**
 * Answers `req` from `zone`. Zone transfers that reach a zone plugin are refused: `transfer`,
 * ahead of it in the chain, answers those it allows (as in CoreDNS). A name the
 * zone does not have goes on to the next plugin when `fallthrough` covers it. A CNAME chain
 * that leaves the zone is followed through the rest of the chain, as CoreDNS's upstream does.
 */
export function answerFromZone(zone: Zone, req: DnsRequest, next: Next, fallthrough: readonly string[] | undefined): MaybePromise<Reply | undefined> {
  if (req.qtype === RRType.AXFR || req.qtype === RRType.IXFR) return errorReply(req, RCode.REFUSED);
  const a = zone.lookup(req.name, req.qtype);
  if (a.nameError && fallsThrough(fallthrough, req.name)) return next(req);
  if (a.outOfZone !== undefined) return chase(req, next, a, a.outOfZone);
  return replyOf(req, a);
}

async function chase(req: DnsRequest, next: Next, a: Answer, target: string): Promise<Reply | undefined> {
  let upstream: Message | undefined;
  try {
    upstream = (await next(req.derive(target, req.qtype)))?.view();
  } catch {
    upstream = undefined;
  }
  if (!upstream) return replyOf(req, a);
  const answers = [...a.answers, ...upstream.answers];
  // RFC 6604 §3: the RCODE is the one of the last name in the chain.
  if (upstream.rcode === RCode.NXDOMAIN || upstream.rcode === RCode.SERVFAIL || (upstream.rcode === RCode.NOERROR && upstream.answers.length === 0)) {
    return replyOf(req, { ...a, rcode: upstream.rcode, answers, authority: upstream.rcode === RCode.SERVFAIL ? a.authority : upstream.authority, additional: [] });
  }
  return replyOf(req, { ...a, answers });
}

function replyOf(req: DnsRequest, a: Answer): Reply {
  const msg: Message = {
    ...responseFor(req, a.rcode, a.authoritative),
    answers: a.answers,
    authority: a.authority,
    additional: a.additional,
  };
  return Reply.of(msg);
}

/** Queries a zone plugin answers: class IN (and ANY), one question. */
export function isZoneQuery(req: DnsRequest): boolean {
  return (req.qclass === DnsClass.IN || req.qclass === DnsClass.ANY) && req.query.qdcount === 1;
}
