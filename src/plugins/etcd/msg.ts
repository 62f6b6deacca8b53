// SkyDNS's message format: a JSON document per etcd key, the key spelling the DNS name backwards
// under a prefix (`/skydns/local/skydns/web/x1` is web.skydns.local.). The mapping and the
// grouping rules are CoreDNS's (plugin/etcd/msg).

export interface SkyService {
  /** An IP address, or a name (then the record is a CNAME, SRV/MX target…). */
  readonly host: string;
  readonly port: number;
  /** SRV priority, MX preference; 10 when unset. */
  readonly priority: number;
  readonly weight: number;
  readonly text: string;
  /** An MX record (priority is the preference). */
  readonly mail: boolean;
  readonly ttl: number;
  /** Labels cut from the left of an SRV/MX/NS target built from the key. */
  readonly targetStrip: number;
  readonly group: string;
  /** The etcd key the service was read from. */
  readonly key: string;
}

export const DEFAULT_PRIORITY = 10;

/** Labels of an absolute name, root → empty list ("a.b." → ["a", "b"]). */
function labelsOf(name: string): string[] {
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  return trimmed === '' ? [] : trimmed.split('.');
}

/** Joins path parts as Go's path.Join does for these inputs: one slash between, none trailing. */
function joinPath(parts: readonly string[]): string {
  const joined = parts.filter((p) => p !== '').join('/');
  return `/${joined.replace(/\/+/g, '/').replace(/^\/|\/$/g, '')}`;
}

/** The etcd key of a name: `/PREFIX/` then its labels, last first. */
export function pathOf(name: string, prefix: string): string {
  return joinPath([prefix, ...labelsOf(name).reverse()]);
}

/**
 * pathOf, but stopping at the first `*` or `any` label (counted from the right): the prefix
 * under which every match of the wildcard lies. The flag says a wildcard was found.
 */
export function pathWithWildcard(name: string, prefix: string): { path: string; star: boolean } {
  const labels = labelsOf(name).reverse();
  const at = labels.findIndex((l) => l === '*' || l === 'any');
  if (at < 0) return { path: joinPath([prefix, ...labels]), star: false };
  return { path: joinPath([prefix, ...labels.slice(0, at)]), star: true };
}

/** The name a key stands for (the inverse of pathOf for a one-element prefix). */
export function domainOf(key: string): string {
  const parts = key.split('/');
  if (parts[parts.length - 1] === '') parts.pop();
  const labels = parts.slice(2).reverse();
  return labels.length === 0 ? '.' : `${labels.join('.')}.`;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0;
}

/** Reads one key's JSON; a string says what is wrong with it. */
export function parseService(key: string, json: string): SkyService | string {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (e) {
    return `${key}: ${(e as Error).message}`;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return `${key}: not a JSON object`;
  const o = v as Record<string, unknown>;
  const str = (f: string): string => (typeof o[f] === 'string' ? (o[f] as string) : '');
  return {
    host: str('host'),
    port: num(o['port']),
    priority: num(o['priority']) || DEFAULT_PRIORITY,
    weight: num(o['weight']),
    text: str('text'),
    mail: o['mail'] === true,
    ttl: Math.max(0, num(o['ttl'])),
    targetStrip: Math.max(0, num(o['targetstrip'])),
    group: str('group'),
    key,
  };
}

/**
 * SkyDNS groups: among the services found for a name, those of the group named by the
 * shallowest keys (and every service without a group) are kept; when two groups meet at that
 * depth, or the shallowest services have no group, everything is kept.
 */
export function group(sx: readonly SkyService[]): readonly SkyService[] {
  const first = sx[0];
  if (!first) return sx;
  let name = first.group;
  let depth = slashes(first.key);
  const depths = sx.map((s) => slashes(s.key));
  for (let i = 0; i < sx.length; i++) {
    const d = depths[i] as number;
    if (d < depth) {
      const s = sx[i] as SkyService;
      if (s.group === '') break;
      depth = d;
      name = s.group;
    }
  }
  if (name === '') return sx;
  const out: SkyService[] = [];
  for (let i = 0; i < sx.length; i++) {
    const s = sx[i] as SkyService;
    if (s.group === '') {
      out.push(s);
      continue;
    }
    if (depths[i] === depth && s.group !== name) return sx;
    if (s.group === name) out.push(s);
  }
  return out;
}

function slashes(key: string): number {
  let n = 0;
  for (const c of key) if (c === '/') n++;
  return n;
}

/** Cuts `count` labels from the left of a name; all of them (or more) leaves it whole. */
export function targetStrip(name: string, count: number): string {
  const labels = labelsOf(name);
  if (count <= 0 || count >= labels.length) return name;
  return `${labels.slice(count).join('.')}.`;
}

/** TXT character-strings of at most 255 octets. */
export function split255(text: string): string[] {
  if (text.length < 255) return [text];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 255) out.push(text.slice(i, i + 255));
  return out;
}
