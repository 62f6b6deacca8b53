// The resolv.conf model shared by the host-file parser, the per-policy computation and the
// query-amplification model: three lists, exactly what the kubelet hands to the container runtime.

export interface ResolvConf {
  nameservers: string[];
  searches: string[];
  options: string[];
}

export interface HostFileProblem {
  /** 1-based line of the host file. */
  line: number;
  message: string;
}

export interface HostFileResult {
  config: ResolvConf;
  errors: HostFileProblem[];
}

/** The kubelet refuses host files larger than this (it reads at most 10 MiB). */
export const MAX_HOST_FILE_BYTES = 10 * 1024 * 1024;

export function emptyResolvConf(): ResolvConf {
  return { nameservers: [], searches: [], options: [] };
}

export function copyResolvConf(c: ResolvConf): ResolvConf {
  return { nameservers: [...c.nameservers], searches: [...c.searches], options: [...c.options] };
}

/**
 * Parses the node's resolv.conf the way the kubelet does (not the way libc does): only lines
 * starting with `#` are comments, nameservers accumulate, the last `search` line wins (`.`
 * dropped, trailing dots trimmed so `a.com` and `a.com.` count once), and every `options`
 * line merges into the previous ones by option name. A `nameserver` line without an address
 * is an error, which makes the kubelet refuse to create the pod sandbox.
 */
export function parseHostResolvConf(text: string): HostFileResult {
  const config = emptyResolvConf();
  const errors: HostFileProblem[] = [];
  if (Buffer.byteLength(text, 'utf8') > MAX_HOST_FILE_BYTES) {
    errors.push({ line: 0, message: `file is larger than ${MAX_HOST_FILE_BYTES} bytes` });
    return { config, errors };
  }
  text.split('\n').forEach((raw, i) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#')) return;
    const fields = trimmed.split(/\s+/).filter((f) => f !== '');
    const keyword = fields[0];
    if (keyword === 'nameserver') {
      const address = fields[1];
      if (address === undefined) errors.push({ line: i + 1, message: 'nameserver line has no address' });
      else config.nameservers.push(address);
    } else if (keyword === 'search') {
      config.searches = fields
        .slice(1)
        .filter((s) => s !== '.')
        .map(trimTrailingDot);
    } else if (keyword === 'options') {
      config.options = mergeOptionStrings(config.options, fields.slice(1));
    }
  });
  return { config, errors };
}

function trimTrailingDot(s: string): string {
  return s.endsWith('.') ? s.slice(0, -1) : s;
}

/** `ndots:5` → `ndots`; `rotate` → `rotate`. Options are keyed by the part before the first colon. */
export function optionName(option: string): string {
  const colon = option.indexOf(':');
  return colon < 0 ? option : option.slice(0, colon);
}

/**
 * Merges options by name: a later option replaces an earlier one of the same name where that
 * one stood, new names go to the end. The kubelet merges through a Go map, so its order is
 * random; keeping first-appearance order makes our output stable and is the only difference.
 */
export function mergeOptionStrings(existing: readonly string[], added: readonly string[]): string[] {
  const out: string[] = [];
  const at = new Map<string, number>();
  for (const option of [...existing, ...added]) {
    const name = optionName(option);
    const index = at.get(name);
    if (index === undefined) {
      at.set(name, out.length);
      out.push(option);
    } else {
      out[index] = option;
    }
  }
  return out;
}

/** Drops later copies of a value, keeping the first (the kubelet's omitDuplicates). */
export function omitDuplicates(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * The file the container runtime writes from the kubelet's DNS config: containerd (and CRI-O)
 * write the `search` line, then one `nameserver` line per server, then the `options` line,
 * and leave out any of them that would be empty.
 */
export function renderResolvConf(c: ResolvConf): string {
  let out = '';
  if (c.searches.length > 0) out += `search ${c.searches.join(' ')}\n`;
  for (const ns of c.nameservers) out += `nameserver ${ns}\n`;
  if (c.options.length > 0) out += `options ${c.options.join(' ')}\n`;
  return out;
}
