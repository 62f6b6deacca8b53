// Address and name syntax for the DNS resource, written once as regular expressions so the same
// text goes into the CRD (the API server checks it with Go's RE2) and into kdns's own validator.
// Every pattern therefore sticks to what both RE2 and JavaScript accept: no lookaround, no
// backreferences, anchored with ^…$.

const DEC_OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4 = `${DEC_OCTET}(\\.${DEC_OCTET}){3}`;
const H16 = '[0-9a-fA-F]{1,4}';
const LS32 = `(${H16}:${H16}|${IPV4})`;

/** `n` to `m` repetitions of "h16:" as a group ("" when m is 0). */
function h16Colons(min: number, max: number): string {
  if (max === 0) return '';
  return min === max ? `(${H16}:){${min}}` : `(${H16}:){${min},${max}}`;
}

/** The RFC 3986 IPv6address grammar, one alternative per position of "::". */
function ipv6Pattern(): string {
  const alternatives = [`${h16Colons(6, 6)}${LS32}`, `::${h16Colons(5, 5)}${LS32}`];
  // [ *k( h16 ":" ) h16 ] "::" followed by (right) groups, for k = 0..6.
  const rights: Array<[number, string]> = [
    [4, `${h16Colons(4, 4)}${LS32}`],
    [3, `${h16Colons(3, 3)}${LS32}`],
    [2, `${h16Colons(2, 2)}${LS32}`],
    [1, `${H16}:${LS32}`],
    [0, LS32],
    [0, H16],
    [0, ''],
  ];
  rights.forEach(([, right], k) => {
    const left = k === 0 ? `(${H16})?` : `(${h16Colons(0, k)}${H16})?`;
    alternatives.push(`${left}::${right}`);
  });
  return `(${alternatives.join('|')})`;
}

const IPV6 = ipv6Pattern();
const PORT = '([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';

/** An IPv4 or IPv6 address, no port. */
export const IP_ADDRESS_PATTERN = `^(${IPV4}|${IPV6})$`;
/** `IPv4`, `IPv4:port`, `IPv6` or `[IPv6]:port`, port 1–65535. */
export const IP_WITH_PORT_PATTERN = `^(${IPV4}(:${PORT})?|${IPV6}|\\[${IPV6}\\]:${PORT})$`;

const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
/** RFC 1123 subdomain as Kubernetes spells it: lower-case labels, at most 253 characters (checked apart). */
export const DNS_SUBDOMAIN_PATTERN = `^${DNS_LABEL}(\\.${DNS_LABEL})*$`;
export const DNS_SUBDOMAIN_MAX_LENGTH = 253;

/** RFC 6335 service name: lower-case letters, digits and single inner hyphens (the letter rule is checked apart). */
export const SERVICE_NAME_PATTERN = '^[a-z0-9]([a-z0-9]|-[a-z0-9])*$';
export const SERVICE_NAME_MAX_LENGTH = 15;

/** Label keys: optional DNS-subdomain prefix and "/", then a name of at most 63 characters. */
export const LABEL_KEY_PATTERN = `^(${DNS_LABEL}(\\.${DNS_LABEL})*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`;
export const LABEL_VALUE_PATTERN = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
export const LABEL_VALUE_MAX_LENGTH = 63;

/** Go's time.ParseDuration syntax, as metav1.Duration accepts it. */
export const GO_DURATION_PATTERN = '^(0|([0-9]+(\\.[0-9]+)?(ns|us|µs|μs|ms|s|m|h))+)$';

const ipWithPort = new RegExp(IP_WITH_PORT_PATTERN);
const ipOnly = new RegExp(IP_ADDRESS_PATTERN);
const subdomain = new RegExp(DNS_SUBDOMAIN_PATTERN);

export function isIPAddress(s: string): boolean {
  return ipOnly.test(s);
}

export function isIPWithOptionalPort(s: string): boolean {
  return ipWithPort.test(s);
}

export function isDNSSubdomain(s: string): boolean {
  return s.length <= DNS_SUBDOMAIN_MAX_LENGTH && subdomain.test(s);
}

export interface HostPort {
  host: string;
  port?: number;
}

/** Splits `IP`, `IP:port`, `[IPv6]:port`. Only meaningful for strings that passed isIPWithOptionalPort. */
export function splitHostPort(s: string): HostPort {
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    return { host: s.slice(1, end), port: Number(s.slice(end + 2)) };
  }
  const colons = s.split(':').length - 1;
  if (colons === 1) {
    const [host, port] = s.split(':') as [string, string];
    return { host, port: Number(port) };
  }
  return { host: s };
}

/** `host:port` with brackets around IPv6, the form CoreDNS's forward takes; bare host when no port. */
export function joinHostPort(host: string, port?: number): string {
  if (port === undefined) return host;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** True when `name` is `domain` or below it (both relative, lower-case, no trailing dot). */
export function isSameOrSubdomain(name: string, domain: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, '');
  const d = domain.toLowerCase().replace(/\.$/, '');
  return n === d || n.endsWith(`.${d}`);
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

/** Seconds in a Go duration string ("1h30m", "0.5s"); undefined when it is not one. */
export function parseGoDurationSeconds(s: string): number | undefined {
  if (!new RegExp(GO_DURATION_PATTERN).test(s)) return undefined;
  if (s === '0') return 0;
  let total = 0;
  for (const m of s.matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|µs|μs|ms|s|m|h)/g)) {
    total += Number(m[1]) * (DURATION_UNITS[m[2]!] ?? 0);
  }
  return total;
}
