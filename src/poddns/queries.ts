// A model of what glibc's and musl's getaddrinfo() send for one name, given a resolv.conf: how
// each library reads the file, the ndots rule, the search order, A and AAAA, which nameservers
// get each query, and where the search stops. Checked against the real libraries by the
// realclient tests (queries.realclient.test.ts); versions modelled: glibc 2.36, musl 1.2.3.

import { isIP } from 'node:net';

export type Libc = 'glibc' | 'musl';
export const LIBCS: readonly Libc[] = ['glibc', 'musl'];
export type QType = 'A' | 'AAAA';
/** What a server says about one name and type: records, the name without that type, no name. */
export type Outcome = 'answer' | 'nodata' | 'nxdomain';
/** A step's outcome: what the server said, or no usable answer at all (a malformed query). */
export type StepOutcome = Outcome | 'timeout';
/** Answers the model's questions about names (a cluster, a zone map, or "nothing exists"). */
export type NameOracle = (name: string, type: QType) => Outcome;
/** getaddrinfo's ai_family: AF_UNSPEC asks A and AAAA, AF_INET only A, AF_INET6 only AAAA. */
export type Family = 'unspec' | 'inet' | 'inet6';

/** What one library takes from a resolv.conf text. */
export interface ResolverView {
  libc: Libc;
  nameservers: string[];
  searches: string[];
  ndots: number;
  /** `attempts:` (sends per query before giving up) and `timeout:` (seconds). */
  attempts: number;
  timeout: number;
  /** glibc: `single-request`, `no-aaaa`, `no-tld-query`, `rotate`, … (musl reads only ndots/attempts/timeout). */
  flags: Set<string>;
  /** Things in the file the library ignores or that the model does not follow. */
  notes: string[];
}

export interface PredictedQuery {
  qname: string;
  qtype: QType;
  /** The nameserver this copy of the query goes to. */
  server: string;
  outcome: StepOutcome;
  /** The library sends bytes that are not a valid DNS question (musl 1.2.3 with `search .`). */
  malformed?: boolean;
}

/** One name the library tries (a search suffix, or the name as given) and all it sends for it. */
export interface LookupStep {
  qname: string;
  /** Why this name is tried: `search <domain>` or `as is`. */
  reason: string;
  queries: PredictedQuery[];
  /** answer if any type answered; nxdomain if any said so; else nodata; timeout if nothing usable came back. */
  outcome: StepOutcome;
}

/** resolved; the name exists without addresses; no such name; answered without DNS; EAI_AGAIN after the timeout. */
export type LookupResult = 'resolved' | 'nodata' | 'nxdomain' | 'local' | 'timeout';

export interface Prediction {
  libc: Libc;
  name: string;
  family: Family;
  view: ResolverView;
  steps: LookupStep[];
  /** Every query in the order the library sends it. */
  queries: PredictedQuery[];
  result: LookupResult;
  /** The name that answered, when resolved through DNS. */
  answeredBy?: string;
  /** How the ndots rule and the library's search order applied, in words. */
  explanation: string[];
}

const DEFAULT_NAMESERVER = '127.0.0.1';
const MAX_NAMESERVERS = 3;
const MAX_NDOTS = 15;
/** musl reads resolv.conf with a 256-byte line buffer and skips any line that does not fit. */
const MUSL_LINE_BUFFER = 256;

/** True when `line` starts with `keyword` followed by a space or tab (both libraries' test). */
function keywordIs(line: string, keyword: string): boolean {
  return line.startsWith(keyword) && (line[keyword.length] === ' ' || line[keyword.length] === '\t');
}

function words(text: string): string[] {
  return text.split(/[ \t\r\n]+/).filter((w) => w !== '');
}

/** C's atoi: leading digits (after an optional sign) or 0. */
function atoi(text: string): number {
  const m = /^[+-]?\d+/.exec(text);
  return m ? Number(m[0]) : 0;
}

/** glibc 2.36 res_init: keywords at column 0, `;`/`#` comments, first 3 valid nameservers, last search/domain line. */
export function glibcView(text: string): ResolverView {
  const view: ResolverView = { libc: 'glibc', nameservers: [], searches: [], ndots: 1, attempts: 2, timeout: 5, flags: new Set(), notes: [] };
  for (const line of text.split('\n')) {
    if (line.startsWith(';') || line.startsWith('#')) continue;
    if (keywordIs(line, 'domain')) view.searches = words(line.slice(6)).slice(0, 1);
    else if (keywordIs(line, 'search')) view.searches = words(line.slice(6));
    else if (keywordIs(line, 'nameserver')) {
      const address = words(line.slice(10))[0] ?? '';
      if (view.nameservers.length < MAX_NAMESERVERS && isIP(address.split('%')[0] ?? '') !== 0) view.nameservers.push(address);
    } else if (keywordIs(line, 'options')) {
      for (const option of words(line.slice(7))) {
        if (option.startsWith('ndots:')) view.ndots = Math.min(Math.max(atoi(option.slice(6)), 0), MAX_NDOTS);
        else if (option.startsWith('attempts:')) view.attempts = Math.min(Math.max(atoi(option.slice(9)), 1), 5);
        else if (option.startsWith('timeout:')) view.timeout = Math.min(Math.max(atoi(option.slice(8)), 1), 30);
        else view.flags.add(option.replace('no_tld_query', 'no-tld-query'));
      }
    }
  }
  if (view.flags.has('rotate')) view.notes.push('options rotate: glibc starts each query at the next nameserver; the model shows the first');
  return finishView(view);
}

/** musl 1.2.3 __get_resolv_conf: like glibc for what kubelet files hold, but lines of 255+ bytes are skipped whole. */
export function muslView(text: string): ResolverView {
  const view: ResolverView = { libc: 'musl', nameservers: [], searches: [], ndots: 1, attempts: 2, timeout: 5, flags: new Set(), notes: [] };
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const lastWithoutNewline = i === lines.length - 1;
    if (!lastWithoutNewline && Buffer.byteLength(line) + 1 > MUSL_LINE_BUFFER - 1) {
      view.notes.push(`musl skips a line of ${Buffer.byteLength(line)} characters (its limit is ${MUSL_LINE_BUFFER - 2}): ${line.slice(0, 30)}…`);
      return;
    }
    if (keywordIs(line, 'options')) {
      // musl looks each option up anywhere on the line and caps it: ndots 15, attempts 10, timeout 60.
      const number = (key: string): number | undefined => {
        const m = new RegExp(`${key}:(\\d+)`).exec(line);
        return m ? Number(m[1]) : undefined;
      };
      view.ndots = Math.min(number('ndots') ?? view.ndots, MAX_NDOTS);
      view.attempts = Math.max(Math.min(number('attempts') ?? view.attempts, 10), 1);
      view.timeout = Math.min(number('timeout') ?? view.timeout, 60);
    } else if (keywordIs(line, 'nameserver')) {
      const address = words(line.slice(10))[0] ?? '';
      if (view.nameservers.length < MAX_NAMESERVERS && isIP(address.split('%')[0] ?? '') !== 0) view.nameservers.push(address);
    } else if (keywordIs(line, 'domain') || keywordIs(line, 'search')) {
      view.searches = words(line.slice(6));
    }
  });
  return finishView(view);
}

function finishView(view: ResolverView): ResolverView {
  if (view.nameservers.length === 0) {
    view.nameservers.push(DEFAULT_NAMESERVER);
    view.notes.push(`no usable nameserver line: ${view.libc} asks ${DEFAULT_NAMESERVER}`);
  }
  return view;
}

export function resolverView(text: string, libc: Libc): ResolverView {
  return libc === 'glibc' ? glibcView(text) : muslView(text);
}

/** The query name as it goes on the wire: no trailing dot. Undefined when it cannot be encoded. */
function wireName(name: string): string | undefined {
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  if (n === '' || n.length > 253) return undefined;
  return n.split('.').every((label) => label.length > 0 && label.length <= 63) ? n : undefined;
}

function qtypesFor(view: ResolverView, family: Family): QType[] {
  if (family === 'inet') return ['A'];
  if (family === 'inet6') return ['AAAA'];
  return view.libc === 'glibc' && view.flags.has('no-aaaa') ? ['A'] : ['A', 'AAAA'];
}

/**
 * Builds the queries of one step in send order. glibc asks its first nameserver (it moves on
 * only when one fails to answer, which the oracle never does); musl asks all of them at once,
 * every type to every server.
 */
function step(view: ResolverView, qname: string, reason: string, types: QType[], oracle: NameOracle): LookupStep {
  const servers = view.libc === 'glibc' ? view.nameservers.slice(0, 1) : view.nameservers;
  const outcomes = new Map(types.map((t) => [t, oracle(qname.toLowerCase(), t)] as const));
  const queries = types.flatMap((qtype) => servers.map((server) => ({ qname, qtype, server, outcome: outcomes.get(qtype)! })));
  const all = [...outcomes.values()];
  const outcome: Outcome = all.includes('answer') ? 'answer' : all.includes('nxdomain') ? 'nxdomain' : 'nodata';
  return { qname, reason, queries, outcome };
}

function isLocalName(name: string): boolean {
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  return isIP(bare) !== 0 || bare.toLowerCase() === 'localhost';
}

export interface PredictOptions {
  family?: Family;
}

/** Predicts every query `getaddrinfo(name)` sends with this resolv.conf, and how it ends. */
export function predictLookup(resolvConfText: string, name: string, libc: Libc, oracle: NameOracle, opts: PredictOptions = {}): Prediction {
  const view = resolverView(resolvConfText, libc);
  const family = opts.family ?? 'unspec';
  const base = { libc, name, family, view };
  if (isLocalName(name)) {
    return { ...base, steps: [], queries: [], result: 'local', explanation: [`${name} is an address or localhost: answered without DNS`] };
  }
  const walk = libc === 'glibc' ? glibcSteps(view, name, qtypesFor(view, family), oracle) : muslSteps(view, name, qtypesFor(view, family), oracle);
  const { steps, result, explanation } = walk;
  const last = steps.at(-1);
  return {
    ...base,
    steps,
    queries: steps.flatMap((s) => s.queries),
    result,
    ...(result === 'resolved' && last ? { answeredBy: last.qname } : {}),
    explanation,
  };
}

interface Walk {
  steps: LookupStep[];
  result: LookupResult;
  explanation: string[];
}

function countDots(name: string): number {
  return name.split('.').length - 1;
}

/**
 * glibc res_search: with at least ndots dots (or a trailing dot) the name is tried as is first;
 * a trailing dot stops there. Otherwise, and after a failed first try, each search domain in
 * order; NXDOMAIN and NODATA both move on. Last, the name as is, unless already tried or the
 * root was on the search list (`search .`). A name it cannot encode ends the search.
 */
function glibcSteps(view: ResolverView, name: string, types: QType[], oracle: NameOracle): Walk {
  const steps: LookupStep[] = [];
  const explanation: string[] = [];
  const dots = countDots(name);
  const trailingDot = name.endsWith('.');
  let triedAsIs = false;
  let rootOnList = false;
  let searched = false;
  const done = (): Walk => {
    const result: LookupResult = steps.at(-1)?.outcome === 'answer' ? 'resolved' : steps.some((s) => s.outcome === 'nodata') ? 'nodata' : 'nxdomain';
    return { steps, result, explanation };
  };
  const tryName = (qname: string | undefined, reason: string): 'answer' | 'next' | 'stop' => {
    if (qname === undefined) {
      explanation.push(`${reason}: the name cannot be encoded, glibc stops the search`);
      return 'stop';
    }
    const s = step(view, qname, reason, types, oracle);
    steps.push(s);
    return s.outcome === 'answer' ? 'answer' : 'next';
  };
  if (dots >= view.ndots || trailingDot) {
    explanation.push(trailingDot ? `${name} ends with a dot: glibc asks it as is and nothing else` : `${name} has ${dots} dot(s) ≥ ndots ${view.ndots}: glibc tries it as is first`);
    const r = tryName(wireName(name), 'as is');
    triedAsIs = true;
    if (r === 'answer' || trailingDot || r === 'stop') return done();
  } else {
    explanation.push(`${name} has ${dots} dot(s) < ndots ${view.ndots}: glibc tries the search list first, then the name as is`);
  }
  for (const domain of view.searches) {
    searched = true;
    const suffix = domain.startsWith('.') ? domain.slice(1) : domain;
    if (suffix === '') rootOnList = true;
    const r = tryName(wireName(suffix === '' ? `${name}.` : `${name}.${suffix}`), `search ${domain}`);
    if (r === 'answer' || r === 'stop') return done();
  }
  const noTldQuery = view.flags.has('no-tld-query') && dots === 0 && searched;
  if (!triedAsIs && !rootOnList && !noTldQuery) tryName(wireName(name), 'as is');
  else if (rootOnList && !triedAsIs) explanation.push('the root (".") was on the search list, so the name as is was already asked');
  return done();
}

/** How musl 1.2.3's res_mkquery encodes a name: fine, refused (no query), or sent malformed. */
type MuslEncoding = { kind: 'ok'; qname: string } | { kind: 'refused' } | { kind: 'malformed'; qname: string };

/**
 * musl strips one trailing dot and refuses names over 253 characters or with an empty or
 * overlong label, except that a second trailing dot slips through: the last label is never
 * length-prefixed, so the query goes out unparseable (what `search .` produces).
 */
export function muslEncode(name: string): MuslEncoding {
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  if (n.length > 253) return { kind: 'refused' };
  const malformed = n.endsWith('.');
  const labels = (malformed ? n.slice(0, -1) : n).split('.');
  if (!labels.every((l) => l.length >= 1 && l.length <= 63)) return { kind: 'refused' };
  return malformed ? { kind: 'malformed', qname: n } : { kind: 'ok', qname: n };
}

/**
 * musl name_from_dns_search: with at least ndots dots (or a trailing dot) only the name as is
 * is asked, never the search list. Otherwise each search domain, then the name as is. NXDOMAIN
 * moves on; NODATA (the name exists without addresses) ends the lookup. Suffixes that would
 * make the name too long or unencodable are skipped without a query; a malformed query gets
 * no usable answer, is resent `attempts` times and the lookup fails after `timeout` seconds.
 */
function muslSteps(view: ResolverView, name: string, types: QType[], oracle: NameOracle): Walk {
  const steps: LookupStep[] = [];
  const explanation: string[] = [];
  const dots = countDots(name);
  const trailingDot = name.endsWith('.');
  const bare = trailingDot ? name.slice(0, -1) : name;
  if (bare === '' || bare.endsWith('.')) {
    explanation.push(`${name}: musl rejects an empty name or several trailing dots without asking`);
    return { steps, result: 'nxdomain', explanation };
  }
  const useSearch = dots < view.ndots && !trailingDot;
  explanation.push(
    trailingDot
      ? `${name} ends with a dot: musl asks it as is and nothing else`
      : useSearch
        ? `${name} has ${dots} dot(s) < ndots ${view.ndots}: musl tries the search list first, then the name as is`
        : `${name} has ${dots} dot(s) ≥ ndots ${view.ndots}: musl asks it as is and never uses the search list`,
  );
  const tryName = (candidate: string, reason: string): LookupResult | 'next' => {
    const encoded = muslEncode(candidate);
    if (encoded.kind === 'refused') return 'next';
    if (encoded.kind === 'malformed') {
      steps.push(malformedStep(view, encoded.qname, reason, types));
      explanation.push(
        `${reason}: musl sends "${encoded.qname}" unencodable, gets no usable answer, resends it ${view.attempts} time(s) and fails (EAI_AGAIN) after ${view.timeout} s`,
      );
      return 'timeout';
    }
    const s = step(view, encoded.qname, reason, types, oracle);
    steps.push(s);
    if (s.outcome === 'answer') return 'resolved';
    if (s.outcome === 'nodata') {
      explanation.push(`${encoded.qname} exists but has no address: musl stops here (glibc would go on)`);
      return 'nodata';
    }
    return 'next';
  };
  if (useSearch) {
    for (const domain of view.searches) {
      if (domain.length >= 256 - bare.length - 1) continue;
      const r = tryName(`${bare}.${domain}`, `search ${domain}`);
      if (r !== 'next') return { steps, result: r, explanation };
    }
  }
  const r = tryName(bare, 'as is');
  return { steps, result: r === 'next' ? 'nxdomain' : r, explanation };
}

/** Every copy musl sends of a query no server can parse: each attempt, each type, each server. */
function malformedStep(view: ResolverView, qname: string, reason: string, types: QType[]): LookupStep {
  const queries: PredictedQuery[] = [];
  for (let attempt = 0; attempt < view.attempts; attempt++) {
    for (const qtype of types) for (const server of view.nameservers) queries.push({ qname, qtype, server, outcome: 'timeout', malformed: true });
  }
  return { qname, reason, queries, outcome: 'timeout' };
}
