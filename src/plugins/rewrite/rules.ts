// The rewrite rule language: one rule per `rewrite` directive, parsed from its words into an
// object that changes the question (name, type, class, EDNS0 options) of a request in flight
// and says which response rules must run on the reply. Semantics follow CoreDNS's README:
// names are matched lower-cased; FROM and TO of every match type but `regex` are made
// absolute; rules run in Corefile order, `stop` (the default) ends the list once a rule applied.

import { fqdn, lowerName } from '../../lib/dns/name.js';
import { parseIP } from '../../lib/dns/ip.js';
import { classFromName, rcodeFromName, typeFromName } from '../../lib/dns/rr.js';
import type { Edns, EdnsOption } from '../../lib/dns/types.js';
import type { DnsRequest } from '../../server/request.js';
import { compileGoRegExp, expandGroups, groupReferences, submatch, type GoRegExp } from '../pkg/goregexp.js';

export type Mode = 'stop' | 'continue';

/** The question as the rules have made it so far. */
export interface RewriteState {
  readonly req: DnsRequest;
  /** Current question name, lower-cased: what rules match against. */
  name: string;
  /** Current question name as it will be sent on. */
  qname: string;
  qtype: number;
  qclass: number;
  /** Current OPT record; a private copy once an edns0 rule touched it. */
  edns: Edns | undefined;
  ednsCopied: boolean;
}

/** A change made to the reply on its way back. */
export type ResponseRule =
  | { readonly kind: 'name' | 'value'; readonly rewrite: StringRewriter }
  | { readonly kind: 'ttl'; readonly min: number; readonly max: number }
  | { readonly kind: 'rcode'; readonly from: number; readonly to: number }
  /** A CNAME answer whose target `map` gives a new one is re-resolved under that name. */
  | { readonly kind: 'cname'; readonly map: (target: string) => string | undefined };

export type StringRewriter = (s: string) => string;

export interface Rule {
  readonly mode: Mode;
  /** Changes `s` and returns the response rules to apply, or undefined when the rule did not match. */
  apply(s: RewriteState): readonly ResponseRule[] | undefined;
}

/** A rule's words are wrong: `arg` is the index (into the words) of the culprit, when one is. */
export class RuleError extends Error {
  constructor(
    message: string,
    readonly arg?: number,
  ) {
    super(message);
  }
}

const NONE: readonly ResponseRule[] = [];

/** CoreDNS's plugin.Name(x).Normalize(): absolute and lower-case. */
function normalize(s: string): string {
  return lowerName(fqdn(s));
}

function compile(pattern: string, arg: number): GoRegExp {
  try {
    return compileGoRegExp(pattern);
  } catch (e) {
    throw new RuleError((e as Error).message, arg);
  }
}

/** Compiles FROM and checks that TO uses no more `{N}` groups than FROM has. */
function regexPair(from: string, to: string, arg: number): GoRegExp {
  const re = compile(from, arg);
  if (groupReferences(to) > re.groups) {
    throw new RuleError(`the rewrite pattern ${JSON.stringify(to)} uses more groups than the matching pattern ${JSON.stringify(from)} has`, arg + 1);
  }
  return re;
}

// ---- string rewriters (response names and values) ----------------------------------------

function regexRewriter(re: GoRegExp, to: string): StringRewriter {
  return (s) => {
    const groups = submatch(re, s);
    return groups ? expandGroups(to, groups) : s;
  };
}

/** `from` itself, or a name ending in `.from`, gets `to` in its place. */
function remapRewriter(from: string, to: string): StringRewriter {
  return (s) => {
    if (s === from) return to;
    const i = s.length - from.length;
    if (i > 0 && s[i - 1] === '.' && s.endsWith(from)) return s.slice(0, i) + to;
    return s;
  };
}

function suffixRewriter(suffix: string, to: string): StringRewriter {
  return (s) => (s.endsWith(suffix) ? s.slice(0, s.length - suffix.length) + to : s);
}

function nameAndValue(rewrite: StringRewriter): ResponseRule[] {
  return [
    { kind: 'name', rewrite },
    { kind: 'value', rewrite },
  ];
}

// ---- name matching (shared by name, ttl and rcode rules) -----------------------------------

export type MatchType = 'exact' | 'prefix' | 'suffix' | 'substring' | 'regex';
const MATCH_TYPES: readonly string[] = ['exact', 'prefix', 'suffix', 'substring', 'regex'];

type NameTest = (name: string) => boolean;

function nameTest(type: MatchType, from: string, arg: number): NameTest {
  switch (type) {
    case 'exact': {
      const f = normalize(from);
      return (n) => n === f;
    }
    case 'prefix': {
      const f = normalize(from);
      return (n) => n.startsWith(f);
    }
    case 'suffix': {
      const f = normalize(from);
      return (n) => n.endsWith(f);
    }
    case 'substring': {
      const f = normalize(from);
      return (n) => n.includes(f);
    }
    case 'regex': {
      const re = compile(from, arg);
      return (n) => re.regex.test(n);
    }
  }
}

// ---- name rules ----------------------------------------------------------------------------

function setName(s: RewriteState, name: string): void {
  s.qname = name;
  s.name = lowerName(name);
}

/** Makes the rewritten name, or undefined when the name does not match. */
type NameMapper = (name: string) => string | undefined;

class NameRule implements Rule {
  constructor(
    readonly mode: Mode,
    private readonly map: NameMapper,
    /** Map the answer back from the new name to the asked one (`answer auto`; always for exact). */
    private readonly auto: boolean,
    private readonly fixed: readonly ResponseRule[],
  ) {}

  apply(s: RewriteState): readonly ResponseRule[] | undefined {
    const asked = s.name;
    const next = this.map(asked);
    if (next === undefined) return undefined;
    setName(s, next);
    if (!this.auto) return this.fixed;
    return [...nameAndValue(remapRewriter(next, asked)), ...this.fixed];
  }
}

function nameMapper(type: MatchType, from: string, to: string, re: GoRegExp | undefined): NameMapper {
  switch (type) {
    case 'exact':
      return (n) => (n === from ? to : undefined);
    case 'prefix':
      return (n) => (n.startsWith(from) ? to + n.slice(from.length) : undefined);
    case 'suffix':
      return (n) => (n.endsWith(from) ? n.slice(0, n.length - from.length) + to : undefined);
    case 'substring':
      return (n) => (n.includes(from) ? n.replaceAll(from, to) : undefined);
    case 'regex': {
      const r = re as GoRegExp;
      return (n) => {
        const groups = submatch(r, n);
        return groups ? expandGroups(to, groups) : undefined;
      };
    }
  }
}

/** `name [TYPE] FROM TO [answer auto | answer name FROM TO | answer value FROM TO]...`; `base` is the index of the first word. */
function parseNameRule(mode: Mode, args: readonly string[], base: number): Rule {
  if (args.length < 2) throw new RuleError('too few arguments for a name rule', base - 1);
  let type: MatchType;
  let from: string;
  let to: string;
  let fromArg = base;
  if (args.length === 2) {
    type = 'exact';
    from = normalize(args[0] as string);
    to = normalize(args[1] as string);
  } else {
    const t = (args[0] as string).toLowerCase();
    if (!MATCH_TYPES.includes(t)) {
      throw new RuleError(`name rule supports only exact, prefix, suffix, substring, and regex name matching, got ${JSON.stringify(args[0])}`, base);
    }
    type = t as MatchType;
    fromArg = base + 1;
    from = type === 'regex' ? (args[1] as string) : normalize(args[1] as string);
    to = normalize(args[2] as string);
  }
  const { auto, rules: answers } = args.length > 3 ? parseAnswerRules(args.slice(3), base + 3) : { auto: false, rules: [] };
  let re: GoRegExp | undefined;
  if (type === 'regex') re = regexPair(from, args[2] as string, fromArg);
  if (type === 'exact') compile(to, fromArg + 1); // CoreDNS checks TO as a pattern too
  const map = nameMapper(type, from, to, re);
  if (type === 'suffix') {
    // The answer for a suffix rewrite is mapped back suffix for suffix, fixed at setup.
    const fixed = auto ? [...nameAndValue(suffixRewriter(to, from)), ...answers] : answers;
    return new NameRule(mode, map, false, fixed);
  }
  // Answers to an exact rewrite are always mapped back.
  return new NameRule(mode, map, auto || type === 'exact', answers);
}

/** `answer auto`, `answer name FROM TO`, `answer value FROM TO`, repeated; `answer` may be left out after the first. */
function parseAnswerRules(args: readonly string[], base: number): { auto: boolean; rules: ResponseRule[] } {
  if (args.length < 2) throw new RuleError('invalid arguments for a name rule: expected "answer auto", "answer name FROM TO" or "answer value FROM TO"', base);
  let auto = false;
  let nameRules = 0;
  const rules: ResponseRule[] = [];
  let i = 0;
  let first = true;
  while (i < args.length) {
    if (first && args[i] !== 'answer') throw new RuleError(`unexpected ${JSON.stringify(args[i])} in a name rule: response rewrites begin with "answer"`, base + i);
    first = false;
    if (args[i] === 'answer') i++;
    const kind = args[i];
    if (kind === undefined) throw new RuleError('"answer" without a type (auto, name or value)', base + i - 1);
    i++;
    if (kind === 'auto') {
      auto = true;
      continue;
    }
    if (kind !== 'name' && kind !== 'value') throw new RuleError(`invalid type ${JSON.stringify(kind)} for an answer rule (expected auto, name or value)`, base + i - 1);
    if (args.length - i < 2) throw new RuleError(`answer ${kind} needs 2 arguments: FROM TO`, base + i - 1);
    const re = regexPair(args[i] as string, args[i + 1] as string, base + i);
    rules.push({ kind, rewrite: regexRewriter(re, normalize(args[i + 1] as string)) });
    if (kind === 'name') nameRules++;
    i += 2;
  }
  if (auto && nameRules > 0) throw new RuleError('"answer auto" cannot be combined with "answer name" rules', base);
  return { auto, rules };
}

// ---- type and class -------------------------------------------------------------------------

class FieldRule implements Rule {
  constructor(
    readonly mode: Mode,
    private readonly field: 'qtype' | 'qclass',
    private readonly from: number,
    private readonly to: number,
  ) {}

  apply(s: RewriteState): readonly ResponseRule[] | undefined {
    if (s[this.field] !== this.from) return undefined;
    s[this.field] = this.to;
    return NONE;
  }
}

function parseFieldRule(mode: Mode, field: 'type' | 'class', args: readonly string[], base: number): Rule {
  if (args.length !== 2) throw new RuleError(`${field} rules must have exactly two arguments: FROM TO`, base - 1);
  const lookup = field === 'type' ? typeFromName : classFromName;
  const [from, to] = args.map((a, i) => {
    const v = lookup(a);
    if (v === undefined || v === 0) throw new RuleError(`invalid ${field} ${JSON.stringify(a.toUpperCase())}`, base + i);
    return v;
  }) as [number, number];
  return new FieldRule(mode, field === 'type' ? 'qtype' : 'qclass', from, to);
}

// ---- ttl and rcode (response only) --------------------------------------------------------------

class ResponseOnlyRule implements Rule {
  private readonly rules: readonly ResponseRule[];
  constructor(
    readonly mode: Mode,
    private readonly test: NameTest,
    rule: ResponseRule,
  ) {
    this.rules = [rule];
  }

  apply(s: RewriteState): readonly ResponseRule[] | undefined {
    return this.test(s.name) ? this.rules : undefined;
  }
}

/** `[TYPE] NAME VALUE...`: the optional match type, the name, and the `values` words after it. */
function matchedRule(mode: Mode, field: string, args: readonly string[], base: number, values: number, make: (v: readonly string[], at: number) => ResponseRule): Rule {
  if (args.length < values + 1) throw new RuleError(`too few arguments for a ${field} rule`, base - 1);
  if (args.length > values + 2) throw new RuleError(`too many arguments for a ${field} rule`, base + values + 2);
  const typed = args.length === values + 2;
  const first = typed ? 2 : 1;
  const rule = make(args.slice(first), base + first);
  let type: MatchType = 'exact';
  if (typed) {
    const t = (args[0] as string).toLowerCase();
    if (!MATCH_TYPES.includes(t)) throw new RuleError(`${field} rule supports only exact, prefix, suffix, substring, and regex name matching`, base);
    type = t as MatchType;
  }
  return new ResponseOnlyRule(mode, nameTest(type, args[first - 1] as string, base + first - 1), rule);
}

const MAX_TTL = 2147483647;

/** `SECONDS`, `MIN-MAX`, `MIN-` or `-MAX`. */
export function parseTtlRange(v: string): { min: number; max: number } | undefined {
  const u32 = (t: string): number | undefined => (/^[0-9]+$/.test(t) && Number(t) <= 0xffffffff ? Number(t) : undefined);
  const parts = v.split('-');
  if (parts.length === 1) {
    const n = u32(v);
    return n === undefined ? undefined : { min: n, max: n };
  }
  if (parts.length !== 2) return undefined;
  const [lo, hi] = parts as [string, string];
  if (lo === '' && hi === '') return undefined;
  const min = lo === '' ? 0 : u32(lo);
  const max = hi === '' ? MAX_TTL : u32(hi);
  if (min === undefined || max === undefined || min > max) return undefined;
  return { min, max };
}

/** A number 0-23 or a mnemonic (NOERROR, NXDOMAIN, …). */
export function parseRcode(v: string): number | undefined {
  if (/^[0-9]+$/.test(v)) return Number(v) <= 23 ? Number(v) : undefined;
  const n = rcodeFromName(v);
  return n !== undefined && !/^RCODE/i.test(v) ? n : undefined;
}

// ---- edns0 -----------------------------------------------------------------------------------

type EdnsAction = 'set' | 'append' | 'replace' | 'unset';
const EDNS_ACTIONS: readonly string[] = ['set', 'append', 'replace', 'unset'];
export const NSID_CODE = 3;
export const SUBNET_CODE = 8;

/** The OPT of the request, copied on first change (a query without one gets one, as in CoreDNS). */
function ownOptions(s: RewriteState): EdnsOption[] {
  if (!s.ednsCopied) {
    const e = s.edns;
    s.edns = e ? { ...e, options: [...e.options] } : { udpSize: 4096, version: 0, do: false, zFlags: 0, options: [] };
    s.ednsCopied = true;
  }
  return (s.edns as Edns).options;
}

/** Data for the option, or undefined when there is none to give (the rule is then ignored). */
type OptionData = (s: RewriteState) => Uint8Array | undefined;

class EdnsRule implements Rule {
  constructor(
    readonly mode: Mode,
    private readonly action: EdnsAction,
    private readonly code: number,
    private readonly data: OptionData,
  ) {}

  apply(s: RewriteState): readonly ResponseRule[] | undefined {
    const options = ownOptions(s);
    if (this.action === 'unset') {
      for (let i = options.length - 1; i >= 0; i--) if ((options[i] as EdnsOption).code === this.code) options.splice(i, 1);
      return NONE;
    }
    const at = options.findIndex((o) => o.code === this.code);
    if (at >= 0) {
      // `append` adds only when no option of the code is there.
      if (this.action === 'append') return undefined;
      const data = this.data(s);
      if (data === undefined) return undefined;
      options[at] = { code: this.code, data };
      return NONE;
    }
    if (this.action === 'replace') return undefined;
    const data = this.data(s);
    if (data === undefined) return undefined;
    options.push({ code: this.code, data });
    return NONE;
  }
}

function u16(n: number): Uint8Array {
  return Uint8Array.of(n >> 8, n & 0xff);
}

/** The address bytes of a client or server address (an IPv4-mapped IPv6 address counts as IPv4). */
function addressBytes(text: string): Uint8Array | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text);
  return parseIP(mapped ? (mapped[1] as string) : text);
}

const VARIABLES: Record<string, OptionData> = {
  '{qname}': (s) => new TextEncoder().encode(s.qname),
  '{qtype}': (s) => u16(s.qtype),
  '{client_ip}': (s) => addressBytes(s.req.client.remoteAddress),
  '{server_ip}': (s) => addressBytes(s.req.client.localAddress),
  '{client_port}': (s) => u16(s.req.client.remotePort),
  '{server_port}': (s) => u16(s.req.client.localPort),
  '{protocol}': (s) => new TextEncoder().encode(s.req.transport),
};

function variableData(variable: string, arg: number): OptionData {
  const known = VARIABLES[variable];
  if (known) return known;
  const label = variable.slice(1, -1);
  const slash = label.indexOf('/');
  if (slash <= 0 || slash >= label.length - 1) throw new RuleError(`unsupported variable name ${JSON.stringify(variable)}`, arg);
  // Metadata another plugin left for this query; no value, no option.
  return (s) => {
    const v = s.req.metadata.get(label);
    return v ? new TextEncoder().encode(v) : undefined;
  };
}

function parseCode(text: string, arg: number): number {
  // Go's ParseUint with base 0: decimal, 0x hex, 0o/0 octal, 0b binary.
  const n = /^(0x[0-9a-f]+|0o?[0-7]+|0b[01]+|[1-9][0-9]*|0)$/i.test(text) ? Number(text.replace(/^0(?=[0-7])/, '0o')) : NaN;
  if (!Number.isInteger(n) || n > 0xffff) throw new RuleError(`invalid EDNS0 option code ${JSON.stringify(text)}`, arg);
  return n;
}

function parseLocalData(text: string, arg: number): Uint8Array {
  if (!text.startsWith('0x')) return new TextEncoder().encode(text);
  const hex = text.slice(2);
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new RuleError(`invalid hex data ${JSON.stringify(text)}`, arg);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

function parseMaskLength(text: string, max: number, family: string, arg: number): number {
  const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!(n <= max)) throw new RuleError(`invalid ${family} bit mask length ${JSON.stringify(text)} (0-${max})`, arg);
  return n;
}

/** ECS option data (RFC 7871) for the client's address cut to the family's prefix length. */
function subnetData(v4: number, v6: number): OptionData {
  return (s) => {
    const addr = addressBytes(s.req.client.remoteAddress);
    if (!addr) return undefined;
    const bits = addr.length === 4 ? v4 : v6;
    const bytes = Math.ceil(bits / 8);
    const out = new Uint8Array(4 + bytes);
    out[1] = addr.length === 4 ? 1 : 2;
    out[2] = bits;
    for (let i = 0; i < bytes; i++) {
      const keep = Math.min(8, bits - i * 8);
      out[4 + i] = (addr[i] as number) & ((0xff << (8 - keep)) & 0xff);
    }
    return out;
  };
}

/** `edns0 local|nsid|subnet set|append|replace|unset ...[revert]`. */
function parseEdnsRule(mode: Mode, args: readonly string[], base: number): Rule {
  if (args.length < 2) throw new RuleError('too few arguments for an EDNS0 rule', base - 1);
  const kind = (args[0] as string).toLowerCase();
  const action = (args[1] as string).toLowerCase();
  if (!EDNS_ACTIONS.includes(action)) throw new RuleError(`invalid EDNS0 action ${JSON.stringify(args[1])} (expected set, append, replace or unset)`, base + 1);
  let rest = args.slice(2);
  // `revert` is accepted: kdns never copies request options into the reply, so they are reverted anyway.
  if (action !== 'unset' && rest[rest.length - 1] === 'revert') rest = rest.slice(0, -1);
  const a = action as EdnsAction;
  const at = base + 2;
  switch (kind) {
    case 'local': {
      const want = a === 'unset' ? 1 : 2;
      if (rest.length !== want) throw new RuleError(a === 'unset' ? 'EDNS0 local unset takes exactly one argument: CODE' : 'EDNS0 local rules take CODE and DATA', base);
      const code = parseCode(rest[0] as string, at);
      if (a === 'unset') return new EdnsRule(mode, a, code, () => undefined);
      const data = rest[1] as string;
      if (data.startsWith('{') && data.endsWith('}')) return new EdnsRule(mode, a, code, variableData(data, at + 1));
      const bytes = parseLocalData(data, at + 1);
      return new EdnsRule(mode, a, code, () => bytes);
    }
    case 'nsid': {
      if (rest.length !== 0) throw new RuleError('EDNS0 nsid rules take no arguments', at);
      const empty = new Uint8Array(0);
      return new EdnsRule(mode, a, NSID_CODE, () => empty);
    }
    case 'subnet': {
      if (a === 'unset') {
        if (rest.length !== 0) throw new RuleError('EDNS0 subnet unset takes no arguments', at);
        return new EdnsRule(mode, a, SUBNET_CODE, () => undefined);
      }
      if (rest.length !== 2) throw new RuleError('EDNS0 subnet rules take IPv4 and IPv6 prefix lengths', base);
      const v4 = parseMaskLength(rest[0] as string, 32, 'IPv4', at);
      const v6 = parseMaskLength(rest[1] as string, 128, 'IPv6', at + 1);
      return new EdnsRule(mode, a, SUBNET_CODE, subnetData(v4, v6));
    }
    default:
      throw new RuleError(`invalid EDNS0 rule type ${JSON.stringify(args[0])} (expected local, nsid or subnet)`, base);
  }
}

// ---- cname ----------------------------------------------------------------------------------

class CnameRule implements Rule {
  private readonly rules: readonly ResponseRule[];
  constructor(
    readonly mode: Mode,
    map: (target: string) => string | undefined,
  ) {
    this.rules = [{ kind: 'cname', map }];
  }

  /** Applies to every query: what it changes is only known once the answer is there. */
  apply(): readonly ResponseRule[] {
    return this.rules;
  }
}

/** `cname [TYPE] FROM TO`: FROM and TO are lower-cased; for `exact` also made absolute. */
function parseCnameRule(mode: Mode, args: readonly string[], base: number): Rule {
  if (args.length !== 2 && args.length !== 3) throw new RuleError(`a cname rule takes [TYPE] FROM TO, got ${args.length} arguments`, base - 1);
  const typed = args.length === 3;
  const t = typed ? (args[0] as string).toLowerCase() : 'exact';
  if (!MATCH_TYPES.includes(t)) throw new RuleError(`unknown cname rewrite type ${JSON.stringify(args[0])}`, base);
  const type = t as MatchType;
  const fromArg = typed ? base + 1 : base;
  let from = (args[fromArg - base] as string).toLowerCase();
  let to = (args[fromArg - base + 1] as string).toLowerCase();
  if (type === 'exact') {
    from = normalize(from);
    to = normalize(to);
    return new CnameRule(mode, (target) => (target === from ? to : undefined));
  }
  const re = type === 'regex' ? compile(from, fromArg) : undefined;
  return new CnameRule(mode, nameMapper(type, from, to, re));
}

// ---- the rule -----------------------------------------------------------------------------------

/** One rule from its words (`[stop|continue] FIELD ...`). Throws RuleError. */
export function parseRule(words: readonly string[]): Rule {
  if (words.length === 0) throw new RuleError('no rule type specified for rewrite');
  const first = (words[0] as string).toLowerCase();
  let mode: Mode = 'stop';
  let at = 0;
  if (first === 'stop' || first === 'continue') {
    mode = first;
    at = 1;
    if (words.length < 2) throw new RuleError(`${first} rule must begin with a rule type`, 0);
  }
  const field = (words[at] as string).toLowerCase();
  const args = words.slice(at + 1);
  const base = at + 1;
  switch (field) {
    case 'name':
      return parseNameRule(mode, args, base);
    case 'answer':
      throw new RuleError('response rewrites must begin with a name rule', at);
    case 'type':
    case 'class':
      return parseFieldRule(mode, field, args, base);
    case 'ttl':
      return matchedRule(mode, 'ttl', args, base, 1, ([v], i) => {
        const range = parseTtlRange(v as string);
        if (!range) throw new RuleError(`invalid TTL ${JSON.stringify(v)} for a ttl rule (expected SECONDS or MIN-MAX)`, i);
        return { kind: 'ttl', ...range };
      });
    case 'rcode':
      return matchedRule(mode, 'rcode', args, base, 2, ([f, t], i) => {
        const from = parseRcode(f as string);
        if (from === undefined) throw new RuleError(`invalid matching RCODE ${JSON.stringify(f)} for a rcode rule`, i);
        const to = parseRcode(t as string);
        if (to === undefined) throw new RuleError(`invalid replacement RCODE ${JSON.stringify(t)} for a rcode rule`, i + 1);
        return { kind: 'rcode', from, to };
      });
    case 'edns0':
      return parseEdnsRule(mode, args, base);
    case 'cname':
      return parseCnameRule(mode, args, base);
    default:
      throw new RuleError(`invalid rule type ${JSON.stringify(words[at])}`, at);
  }
}
