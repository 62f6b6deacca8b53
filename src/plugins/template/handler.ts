// The template plugin: answers queries whose name matches a template's regular expressions with
// records built from Go-style templates, parsed as zone-file lines. Templates of a block are
// tried in Corefile order; the first whose zone, class, type and regex match answers.

import type { Counter } from 'prom-client';
import { isSubdomain } from '../../lib/dns/name.js';
import { className, classFromName, rrToString, typeName, rcodeName } from '../../lib/dns/rr.js';
import { DnsClass, RCode, RRType, type Message, type NameData, type ResourceRecord } from '../../lib/dns/types.js';
import { parseZoneFile } from '../../lib/dns/zonefile.js';
import { PluginError, type MaybePromise, type Next, type Plugin } from '../../server/plugin.js';
import { Reply, errorReply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { submatch, type GoRegExp } from '../pkg/goregexp.js';
import { type CompiledTemplate, type TemplateStruct, type TemplateValue } from './gotemplate.js';

export type Section = 'answer' | 'additional' | 'authority';

export interface TemplateConfig {
  /** Query class and type it answers (ANY = all). */
  qclass: number;
  qtype: number;
  /** Zones it answers for (absolute, lower-case). */
  zones: string[];
  /** The names it answers; the first that matches wins. Default `.*`. */
  regex: GoRegExp[];
  answer: CompiledTemplate[];
  additional: CompiledTemplate[];
  authority: CompiledTemplate[];
  rcode: number;
  /** Zones where a name no regex matches goes on; undefined = fallthrough off ([] = every zone). */
  fallthrough?: string[];
  /** Extended DNS error (RFC 8914) to attach. */
  ederror?: { code: number; reason: string };
}

export interface TemplateMetrics {
  matches: Counter<'server' | 'zone' | 'view' | 'class' | 'type'>;
  templateFailures: Counter<'server' | 'zone' | 'view' | 'class' | 'type' | 'section' | 'template'>;
  rrFailures: Counter<'server' | 'zone' | 'view' | 'class' | 'type' | 'section' | 'template'>;
}

const EDE_OPTION = 15;

/** What a matched query gives the templates. */
interface MatchData {
  zone: string;
  classText: string;
  typeText: string;
  data: TemplateStruct;
}

export class TemplatePlugin implements Plugin {
  readonly name = 'template';
  /** Every `template` of the block, in Corefile order (setup adds them). */
  readonly templates: TemplateConfig[] = [];

  constructor(private readonly deps: { metrics?: TemplateMetrics; server: string }) {}

  serve(req: DnsRequest, next: Next): MaybePromise<Reply | undefined> {
    const q = req.query;
    if (q.qdcount !== 1) return next(req);
    for (const t of this.templates) {
      const zone = matchZone(req.name, t.zones);
      if (zone === undefined) continue;
      if (t.qclass !== DnsClass.ANY && q.qclass !== DnsClass.ANY && q.qclass !== t.qclass) continue;
      if (t.qtype !== RRType.ANY && q.qtype !== RRType.ANY && q.qtype !== t.qtype) continue;
      const m = matchName(req, t, zone);
      if (m === undefined) {
        if (fallsThrough(req.name, t.fallthrough)) continue;
        return errorReply(req, RCode.SERVFAIL);
      }
      this.deps.metrics?.matches.inc({ server: this.deps.server, zone: m.zone, view: '', class: m.classText, type: m.typeText });
      return this.answer(req, t, m, next);
    }
    return next(req);
  }

  private answer(req: DnsRequest, t: TemplateConfig, m: MatchData, next: Next): MaybePromise<Reply | undefined> {
    if (t.rcode === RCode.SERVFAIL) return errorReply(req, RCode.SERVFAIL);
    const msg = responseFor(req, t.rcode, true);
    const built: Record<Section, ResourceRecord[]> = { answer: [], additional: [], authority: [] };
    for (const section of ['answer', 'additional', 'authority'] as const) {
      for (const tmpl of t[section]) {
        const rr = this.record(tmpl, section, m);
        if (rr instanceof Error) return errorReply(req, RCode.SERVFAIL, new PluginError('template', RCode.SERVFAIL, rr.message));
        built[section].push(rr);
      }
    }
    msg.answers = built.answer;
    msg.additional = built.additional;
    msg.authority = built.authority;
    if (t.ederror) {
      const text = Buffer.from(t.ederror.reason, 'utf8');
      const data = new Uint8Array(2 + text.length);
      data[0] = t.ederror.code >> 8;
      data[1] = t.ederror.code & 0xff;
      data.set(text, 2);
      msg.edns = { udpSize: 4096, version: 0, do: false, zFlags: 0, options: [{ code: EDE_OPTION, data }] };
    }
    const chase = (req.qtype === RRType.A || req.qtype === RRType.AAAA) && msg.answers.some((rr) => rr.type === RRType.CNAME);
    return chase ? this.chaseTargets(req, msg, next) : Reply.of(msg);
  }

  /** A CNAME answer to an A/AAAA query gets the target's records from the rest of the chain, as CoreDNS's upstream lookup. */
  private async chaseTargets(req: DnsRequest, msg: Message, next: Next): Promise<Reply> {
    const out: ResourceRecord[] = [];
    for (const rr of msg.answers) {
      out.push(rr);
      if (rr.type !== RRType.CNAME) continue;
      try {
        const up = await next(req.derive((rr.data as NameData).target));
        if (up && up.rcode === RCode.NOERROR) {
          const view = up.view();
          out.push(...view.answers);
          if (view.tc) msg.tc = true;
        }
      } catch {
        // The CNAME alone is still a good answer.
      }
    }
    msg.answers = out;
    return Reply.of(msg);
  }

  private record(tmpl: CompiledTemplate, section: Section, m: MatchData): ResourceRecord | Error {
    const labels = { server: this.deps.server, zone: m.zone, view: '', class: m.classText, type: m.typeText, section, template: tmpl.source };
    let text: string;
    try {
      text = tmpl.execute(m.data);
    } catch (e) {
      this.deps.metrics?.templateFailures.inc(labels);
      return e as Error;
    }
    try {
      return parseRecord(text, section);
    } catch (e) {
      this.deps.metrics?.rrFailures.inc(labels);
      return e as Error;
    }
  }
}

/**
 * One record in zone-file syntax, relative names under the root, TTL 3600 when none is given
 * (as miekg/dns's NewRR). The zone-file parser takes class IN only; a record of another class
 * (a CH TXT answer, say) is parsed as IN and given its class back.
 */
export function parseRecord(text: string, section: Section): ResourceRecord {
  const fields = text.trim().split(/\s+/);
  const at = fields.slice(1, 3).findIndex((f) => {
    const c = classFromName(f);
    return c !== undefined && c !== DnsClass.IN;
  });
  const klass = at >= 0 ? (classFromName(fields[at + 1] as string) as number) : DnsClass.IN;
  const line = at < 0 ? text : text.replace(at === 0 ? /^(\s*\S+\s+)\S+/ : /^(\s*\S+\s+\S+\s+)\S+/, '$1IN');
  const [first] = parseZoneFile(Buffer.from(line, 'utf8').toString('latin1'), { origin: '.', file: section });
  if (!first) throw new Error(`${section}: template gave no record: ${JSON.stringify(text)}`);
  return klass === DnsClass.IN ? first.rr : { ...first.rr, class: klass };
}

/** The longest of `zones` that contains `name`. */
function matchZone(name: string, zones: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const z of zones) if (isSubdomain(name, z) && (best === undefined || z.length > best.length)) best = z;
  return best;
}

function fallsThrough(name: string, zones: readonly string[] | undefined): boolean {
  if (zones === undefined) return false;
  return zones.length === 0 || zones.some((z) => isSubdomain(name, z));
}

function matchName(req: DnsRequest, t: TemplateConfig, zone: string): MatchData | undefined {
  for (const re of t.regex) {
    const groups = submatch(re, req.name);
    if (!groups) continue;
    const group = new Map<string, TemplateValue>();
    groups.forEach((g, i) => group.set(String(i), g));
    groups.forEach((g, i) => {
      const n = re.names[i];
      if (n) group.set(n, g);
    });
    const classText = className(req.qclass !== DnsClass.ANY ? req.qclass : t.qclass);
    const typeText = typeName(req.qtype !== RRType.ANY ? req.qtype : t.qtype);
    const question: TemplateStruct = {
      Name: req.qname,
      Qtype: req.qtype,
      Qclass: req.qclass,
      String: () => `;${req.qname}\t${className(req.qclass)}\t ${typeName(req.qtype)}`,
    };
    const message: TemplateStruct = {
      Id: req.id,
      Opcode: req.query.opcode,
      RecursionDesired: req.query.rd,
      CheckingDisabled: req.query.cd,
      Question: [question],
      String: () => messageText(req),
    };
    const data: TemplateStruct = {
      Zone: zone,
      Name: req.name,
      Regex: re.regex.source,
      Class: classText,
      Type: typeText,
      Match: groups,
      Group: group,
      Message: message,
      Question: question,
      Remote: req.client.remoteAddress,
      Var: new Map(),
      Meta: (key) => (typeof key === 'string' ? (req.metadata.get(key) ?? '') : ''),
    };
    return { zone, classText, typeText, data };
  }
  return undefined;
}

/** The query as dig shows a message (Go's dns.Msg String). */
function messageText(req: DnsRequest): string {
  const m = req.message();
  const flags = [m.rd && 'rd', m.cd && 'cd', m.ad && 'ad'].filter(Boolean).join(' ');
  const lines = [
    `;; opcode: QUERY, status: ${rcodeName(m.rcode)}, id: ${m.id}`,
    `;; flags: ${flags}; QUERY: ${m.questions.length}, ANSWER: ${m.answers.length}, AUTHORITY: ${m.authority.length}, ADDITIONAL: ${m.additional.length + (m.edns ? 1 : 0)}`,
    '',
    ';; QUESTION SECTION:',
    ...m.questions.map((q) => `;${q.name}\t${className(q.class)}\t ${typeName(q.type)}`),
  ];
  if (m.additional.length > 0) lines.push('', ';; ADDITIONAL SECTION:', ...m.additional.map(rrToString));
  return lines.join('\n') + '\n';
}
