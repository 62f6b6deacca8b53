// The rewrite plugin: runs the block's rules over the question, passes the rewritten request on,
// and on the way back puts the client's question back and applies the response rules (names,
// values, TTLs, RCODE), last rule first. A query no rule matches costs one comparison per rule
// and goes on untouched.

import { isValidDomainName } from '../../lib/dns/name.js';
import type { MXData, Message, NameData, ResourceRecord, SOAData, SRVData } from '../../lib/dns/types.js';
import { RCode, RRType } from '../../lib/dns/types.js';
import { PluginError, type MaybePromise, type Next, type Plugin } from '../../server/plugin.js';
import { errorReply, questionOf, type Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { ResponseRule, RewriteState, Rule } from './rules.js';

export class RewritePlugin implements Plugin {
  readonly name = 'rewrite';
  /** Every `rewrite` of the block, in Corefile order (setup adds them). */
  readonly rules: Rule[] = [];

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const rules = this.rules;
    if (req.query.qdcount !== 1) return next(req);
    let s: RewriteState | undefined;
    let responses: ResponseRule[] | undefined;
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i] as Rule;
      s ??= stateOf(req);
      const out = rule.apply(s);
      if (out === undefined) continue;
      responses = responses ? responses.concat(out) : [...out];
      if (rule.mode === 'stop') break;
    }
    if (s === undefined || responses === undefined) return next(req);
    return this.forward(req, s, responses, next);
  }

  private forward(req: DnsRequest, s: RewriteState, responses: readonly ResponseRule[], next: Next): MaybePromise<Reply | undefined> {
    let sub = req;
    if (s.qname !== req.qname || s.qtype !== req.qtype || s.qclass !== req.qclass || s.ednsCopied) {
      if (!isValidDomainName(s.qname)) return invalidName(req, s.qname);
      try {
        sub = req.derive(s.qname, s.qtype, s.edns, s.qclass);
      } catch {
        return invalidName(req, s.qname);
      }
    }
    if (sub === req && responses.length === 0) return next(req);
    const cnames = responses.filter((r) => r.kind === 'cname');
    const out = next(sub);
    if (cnames.length > 0) return Promise.resolve(out).then((reply) => chaseCnames(sub, revertReply(req, reply, responses, sub !== req), cnames, next));
    if (out instanceof Promise) return out.then((reply) => revertReply(req, reply, responses, sub !== req));
    return revertReply(req, out, responses, sub !== req);
  }
}

/**
 * `cname` rules, last first: the first CNAME answer whose target a rule maps gets the new
 * target, the CNAMEs before it stay, and what the rest of the chain answers for the new target
 * replaces the records after it (CoreDNS looks it up through the whole server).
 */
async function chaseCnames(sub: DnsRequest, reply: Reply | undefined, rules: readonly ResponseRule[], next: Next): Promise<Reply | undefined> {
  if (reply === undefined) return undefined;
  for (let r = rules.length - 1; r >= 0; r--) {
    const rule = rules[r] as ResponseRule;
    if (rule.kind !== 'cname') continue;
    const answers = reply.view().answers;
    const at = answers.findIndex((rr) => rr.type === RRType.CNAME && rule.map((rr.data as NameData).target) !== undefined);
    if (at < 0) continue;
    const cname = answers[at] as ResourceRecord;
    const target = rule.map((cname.data as NameData).target) as string;
    let found: Reply | undefined;
    try {
      found = await next(sub.derive(target));
    } catch {
      continue; // the answer as it was is still an answer
    }
    if (found === undefined) continue;
    const up = found.view();
    const msg = reply.edit();
    msg.answers = [...answers.slice(0, at).filter((rr) => rr.type === RRType.CNAME), { ...cname, data: { target } }, ...up.answers];
    msg.tc = up.tc;
  }
  return reply;
}

function stateOf(req: DnsRequest): RewriteState {
  return { req, name: req.name, qname: req.qname, qtype: req.qtype, qclass: req.qclass, edns: req.edns, ednsCopied: false };
}

function invalidName(req: DnsRequest, name: string): Reply {
  return errorReply(req, RCode.SERVFAIL, new PluginError('rewrite', RCode.SERVFAIL, `invalid name after rewrite: ${name}`));
}

/** The reply as the client must see it: its own question, response rules applied. */
export function revertReply(req: DnsRequest, reply: Reply | undefined, rules: readonly ResponseRule[], restoreQuestion: boolean): Reply | undefined {
  if (reply === undefined) return undefined;
  // cname rules change the reply only when they find their CNAME (chaseCnames): keep the bytes.
  if (!restoreQuestion && rules.every((r) => r.kind === 'cname')) return reply;
  const msg = reply.edit();
  if (restoreQuestion) {
    if (msg.questions.length === 0) msg.questions = [questionOf(req)];
    else msg.questions[0] = questionOf(req);
  }
  if (rules.length > 0) applyResponseRules(msg, rules);
  reply.syncRcode();
  return reply;
}

/** Applies the rules to every record (authority, answer, additional) and to the RCODE; last rule first. */
export function applyResponseRules(msg: Message, rules: readonly ResponseRule[]): void {
  for (const section of [msg.authority, msg.answers, msg.additional]) {
    for (let i = 0; i < section.length; i++) {
      let rr = section[i] as ResourceRecord;
      for (let r = rules.length - 1; r >= 0; r--) rr = rewriteRecord(rr, rules[r] as ResponseRule);
      section[i] = rr;
    }
  }
  for (let r = rules.length - 1; r >= 0; r--) {
    const rule = rules[r] as ResponseRule;
    if (rule.kind === 'rcode' && msg.rcode === rule.from) msg.rcode = rule.to;
  }
}

/** The record with the rule applied: a new object when it changes (records may be shared with a plugin's cache). */
function rewriteRecord(rr: ResourceRecord, rule: ResponseRule): ResourceRecord {
  switch (rule.kind) {
    case 'name': {
      const name = rule.rewrite(rr.name);
      return name === rr.name ? rr : { ...rr, name };
    }
    case 'value':
      return rewriteValue(rr, rule.rewrite);
    case 'ttl': {
      const ttl = rr.ttl < rule.min ? rule.min : rr.ttl > rule.max ? rule.max : rr.ttl;
      return ttl === rr.ttl ? rr : { ...rr, ttl };
    }
    case 'rcode':
    case 'cname':
      return rr;
  }
}

/** The domain name a record points at (CNAME, DNAME, NS, PTR target; MX exchange; SRV target; SOA mname). */
function rewriteValue(rr: ResourceRecord, rewrite: (s: string) => string): ResourceRecord {
  switch (rr.type) {
    case RRType.CNAME:
    case RRType.DNAME:
    case RRType.NS:
    case RRType.PTR: {
      const d = rr.data as NameData;
      const target = rewrite(d.target);
      return target === d.target ? rr : { ...rr, data: { target } };
    }
    case RRType.MX: {
      const d = rr.data as MXData;
      const exchange = rewrite(d.exchange);
      return exchange === d.exchange ? rr : { ...rr, data: { ...d, exchange } };
    }
    case RRType.SRV: {
      const d = rr.data as SRVData;
      const target = rewrite(d.target);
      return target === d.target ? rr : { ...rr, data: { ...d, target } };
    }
    case RRType.SOA: {
      const d = rr.data as SOAData;
      const mname = rewrite(d.mname);
      return mname === d.mname ? rr : { ...rr, data: { ...d, mname } };
    }
    default:
      return rr;
  }
}
