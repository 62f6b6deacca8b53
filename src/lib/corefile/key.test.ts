import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CorefileError, type ServerKey } from './ast.js';
import { keyPort, parseServerKey } from './key.js';

const V6_PREFIX_64 = '0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.';

const cases: Array<{ raw: string; want: ServerKey[] }> = [
  { raw: '.', want: [{ transport: 'dns', zone: '.', raw: '.' }] },
  { raw: '.:53', want: [{ transport: 'dns', zone: '.', port: 53, raw: '.:53' }] },
  { raw: 'example.org', want: [{ transport: 'dns', zone: 'example.org.', raw: 'example.org' }] },
  { raw: 'Example.ORG.:1053', want: [{ transport: 'dns', zone: 'example.org.', port: 1053, raw: 'Example.ORG.:1053' }] },
  { raw: 'cluster.local:0', want: [{ transport: 'dns', zone: 'cluster.local.', port: 0, raw: 'cluster.local:0' }] },
  { raw: 'dns://example.org:53', want: [{ transport: 'dns', zone: 'example.org.', port: 53, raw: 'dns://example.org:53' }] },
  { raw: 'tls://example.org', want: [{ transport: 'tls', zone: 'example.org.', raw: 'tls://example.org' }] },
  { raw: 'TLS://example.org', want: [{ transport: 'tls', zone: 'example.org.', raw: 'TLS://example.org' }] },
  { raw: 'https://.:8443', want: [{ transport: 'https', zone: '.', port: 8443, raw: 'https://.:8443' }] },
  { raw: 'grpc://example.org', want: [{ transport: 'grpc', zone: 'example.org.', raw: 'grpc://example.org' }] },
  { raw: 'quic://example.org:853', want: [{ transport: 'quic', zone: 'example.org.', port: 853, raw: 'quic://example.org:853' }] },
  { raw: '_tcp.example.org', want: [{ transport: 'dns', zone: '_tcp.example.org.', raw: '_tcp.example.org' }] },
  { raw: '10.0.0.0/24', want: [{ transport: 'dns', zone: '0.0.10.in-addr.arpa.', raw: '10.0.0.0/24' }] },
  { raw: '10.0.0.0/24:1053', want: [{ transport: 'dns', zone: '0.0.10.in-addr.arpa.', port: 1053, raw: '10.0.0.0/24:1053' }] },
  { raw: '10.0.0.9/24', want: [{ transport: 'dns', zone: '0.0.10.in-addr.arpa.', raw: '10.0.0.9/24' }] },
  { raw: '10.0.0.0/8', want: [{ transport: 'dns', zone: '10.in-addr.arpa.', raw: '10.0.0.0/8' }] },
  { raw: '0.0.0.0/0', want: [{ transport: 'dns', zone: 'in-addr.arpa.', raw: '0.0.0.0/0' }] },
  {
    raw: '10.0.0.0/23',
    want: [
      { transport: 'dns', zone: '0.0.10.in-addr.arpa.', raw: '10.0.0.0/23' },
      { transport: 'dns', zone: '1.0.10.in-addr.arpa.', raw: '10.0.0.0/23' },
    ],
  },
  { raw: 'tls://10.0.0.0/8:853', want: [{ transport: 'tls', zone: '10.in-addr.arpa.', port: 853, raw: 'tls://10.0.0.0/8:853' }] },
  { raw: 'fd00::/64', want: [{ transport: 'dns', zone: V6_PREFIX_64, raw: 'fd00::/64' }] },
  { raw: 'fd00::/64:1053', want: [{ transport: 'dns', zone: V6_PREFIX_64, port: 1053, raw: 'fd00::/64:1053' }] },
  {
    raw: 'fd00::/63',
    want: [
      { transport: 'dns', zone: '0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.', raw: 'fd00::/63' },
      { transport: 'dns', zone: '1.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.', raw: 'fd00::/63' },
    ],
  },
];

describe('parseServerKey', () => {
  for (const c of cases) {
    it(c.raw, () => {
      assert.deepEqual(parseServerKey(c.raw, 53), c.want);
    });
  }
});

const badCases: Array<{ raw: string; want: string }> = [
  { raw: '', want: 'Corefile:4: empty server block key' },
  { raw: 'example.org:', want: 'Corefile:4: invalid server block key "example.org:": missing port after ":"' },
  { raw: 'example.org:abc', want: 'Corefile:4: invalid server block key "example.org:abc": bad port "abc"' },
  { raw: 'example.org:65536', want: 'Corefile:4: invalid server block key "example.org:65536": port 65536 is out of range (0-65535)' },
  { raw: ':53', want: 'Corefile:4: invalid server block key ":53": missing zone (use "." for the root zone)' },
  { raw: 'dns://', want: 'Corefile:4: invalid server block key "dns://": missing zone (use "." for the root zone)' },
  {
    raw: 'foo://example.org',
    want: 'Corefile:4: invalid server block key "foo://example.org": unknown scheme "foo://" (use dns://, tls://, https://, grpc:// or quic://)',
  },
  { raw: '10.0.0.0/33', want: 'Corefile:4: invalid server block key "10.0.0.0/33": invalid CIDR "10.0.0.0/33"' },
  { raw: '10.0.0/24', want: 'Corefile:4: invalid server block key "10.0.0/24": invalid CIDR "10.0.0/24"' },
  { raw: 'example.org/24', want: 'Corefile:4: invalid server block key "example.org/24": invalid CIDR "example.org/24"' },
  { raw: '::1/128', want: 'Corefile:4: invalid server block key "::1/128": invalid CIDR "::1/128"' },
  { raw: 'fd00::1', want: 'Corefile:4: invalid server block key "fd00::1": "fd00::1" looks like an IPv6 address: a reverse zone is written as a CIDR, such as fd00::/64' },
  { raw: 'a:b:53', want: 'Corefile:4: invalid server block key "a:b:53": "a:b:53" looks like an IPv6 address: a reverse zone is written as a CIDR, such as fd00::/64' },
  { raw: '(snippet)', want: 'Corefile:4: invalid server block key "(snippet)": invalid character "(" in zone "(snippet)"' },
  { raw: 'a..b', want: 'Corefile:4: invalid server block key "a..b": zone "a..b" is not a valid domain name: it has an empty label' },
  {
    raw: `${'x'.repeat(64)}.org`,
    want: `Corefile:4: invalid server block key "${'x'.repeat(64)}.org": zone "${'x'.repeat(64)}.org" is not a valid domain name: label "${'x'.repeat(64)}" is longer than 63 characters`,
  },
  {
    raw: `${'a'.repeat(60)}.`.repeat(5),
    want: `Corefile:4: invalid server block key "${`${'a'.repeat(60)}.`.repeat(5)}": zone "${`${'a'.repeat(60)}.`.repeat(5)}" is not a valid domain name: it is longer than 255 octets (306)`,
  },
];

describe('parseServerKey: bad keys', () => {
  for (const c of badCases) {
    it(JSON.stringify(c.raw).slice(0, 40), () => {
      assert.throws(
        () => parseServerKey(c.raw, 53, { file: 'Corefile', line: 4 }),
        (e: unknown) => e instanceof CorefileError && e.message === c.want,
      );
    });
  }

  it('without a position the error names the Corefile only', () => {
    assert.throws(() => parseServerKey('a:b'), { message: 'Corefile: invalid server block key "a:b": bad port "b"' });
  });
});

const portCases: Array<{ name: string; key: Pick<ServerKey, 'transport' | 'port'>; want: number }> = [
  { name: 'dns without a port takes the default port', key: { transport: 'dns' }, want: 1053 },
  { name: 'dns with a port keeps it', key: { transport: 'dns', port: 5353 }, want: 5353 },
  { name: 'tls defaults to 853', key: { transport: 'tls' }, want: 853 },
  { name: 'quic defaults to 853', key: { transport: 'quic' }, want: 853 },
  { name: 'https defaults to 443', key: { transport: 'https' }, want: 443 },
  { name: 'grpc defaults to 443', key: { transport: 'grpc' }, want: 443 },
  { name: 'tls with a port keeps it', key: { transport: 'tls', port: 8853 }, want: 8853 },
];

describe('keyPort', () => {
  for (const c of portCases) {
    it(c.name, () => {
      assert.equal(keyPort(c.key, 1053), c.want);
    });
  }
});
