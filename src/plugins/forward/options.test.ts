import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCorefileError, directiveIn } from '../../../test/util/corefile.js';
import { parseForward, type ForwardOptions } from './options.js';

const FILES: Record<string, string> = {
  '/etc/resolv.conf': '# generated\nsearch svc.cluster.local\nnameserver 10.0.0.10\nnameserver fe80::1%eth0 ; link-local\noptions ndots:5\n',
  '/empty.conf': 'search x\n',
  '/certs/cert.pem': 'CERT',
  '/certs/key.pem': 'KEY',
  '/certs/ca.pem': 'CA',
};

function parse(body: string): ForwardOptions {
  const read = (p: string): Buffer | undefined => (FILES[p] === undefined ? undefined : Buffer.from(FILES[p] as string));
  return parseForward(directiveIn(body, '.:53'), read, (p) => (p.startsWith('/') ? p : `/${p}`));
}

describe('forward options', () => {
  const good: Array<{ corefile: string; want: Partial<ForwardOptions> }> = [
    {
      corefile: 'forward . 127.0.0.1',
      want: {
        from: '.',
        upstreams: [{ scheme: 'dns', host: '127.0.0.1', port: 53 }],
        policy: 'random',
        maxFails: 2,
        expireMs: 10_000,
        maxConcurrent: 0,
        maxAgeMs: 0,
        maxTcpQueries: 0,
        readTimeoutMs: 2000,
        maxIdleConns: 0,
        maxConnectAttempts: undefined,
        sourceAddress: undefined,
        dohMethod: 'POST',
        nextOnNodata: false,
        failover: [],
      },
    },
    // CoreDNS 1.14's options (issue #26).
    { corefile: 'forward . 127.0.0.1 {\n read_timeout 10s\n}', want: { readTimeoutMs: 10_000 } },
    { corefile: 'forward . 127.0.0.1 {\n read_timeout 250ms\n}', want: { readTimeoutMs: 250 } },
    { corefile: 'forward . 127.0.0.1 {\n max_idle_conns 4\n}', want: { maxIdleConns: 4 } },
    { corefile: 'forward . 127.0.0.1 {\n max_idle_conns 0\n}', want: { maxIdleConns: 0 } },
    { corefile: 'forward . 127.0.0.1 {\n max_connect_attempts 3\n}', want: { maxConnectAttempts: 3 } },
    { corefile: 'forward . 127.0.0.1 {\n max_connect_attempts 0\n}', want: { maxConnectAttempts: 0 } },
    { corefile: 'forward . 127.0.0.1 {\n source_address 127.0.0.2\n}', want: { sourceAddress: '127.0.0.2' } },
    { corefile: 'forward . [::1]:53 {\n source_address ::1\n}', want: { sourceAddress: '::1' } },
    { corefile: 'forward . 127.0.0.1 {\n source_address ::ffff:192.0.2.1\n}', want: { sourceAddress: '192.0.2.1' } },
    { corefile: 'forward . 127.0.0.1 {\n failover ServFail Refused\n}', want: { failover: [2, 5] } },
    { corefile: 'forward . 127.0.0.1 {\n next_on_nodata\n}', want: { nextOnNodata: true } },
    { corefile: 'forward . 127.0.0.1 {\n failover SERVFAIL refused\n}', want: { failover: [2, 5] } },
    { corefile: 'forward . https://127.0.0.1 {\n doh_method GET\n}', want: { dohMethod: 'GET', upstreams: [{ scheme: 'https', host: '127.0.0.1', port: 443 }] } },
    {
      corefile: 'forward . https://9.9.9.9 https://[2620:fe::fe]:8443 https://1.1.1.1%cloudflare-dns.com',
      want: {
        upstreams: [
          { scheme: 'https', host: '9.9.9.9', port: 443 },
          { scheme: 'https', host: '2620:fe::fe', port: 8443 },
          { scheme: 'https', host: '1.1.1.1', port: 443, serverName: 'cloudflare-dns.com' },
        ],
      },
    },
    {
      corefile: 'forward . tls://9.9.9.9%dns.quad9.net tls://9.9.9.9%dns.quad9.net:10853 tls://[2620:fe::fe%dns.quad9.net]:853 tls://[2620:fe::9]%dns.quad9.net tls://2620:fe::10%dns.quad9.net',
      want: {
        upstreams: [
          { scheme: 'tls', host: '9.9.9.9', port: 853, serverName: 'dns.quad9.net' },
          { scheme: 'tls', host: '9.9.9.9', port: 10853, serverName: 'dns.quad9.net' },
          { scheme: 'tls', host: '2620:fe::fe', port: 853, serverName: 'dns.quad9.net' },
          { scheme: 'tls', host: '2620:fe::9', port: 853, serverName: 'dns.quad9.net' },
          { scheme: 'tls', host: '2620:fe::10', port: 853, serverName: 'dns.quad9.net' },
        ],
      },
    },
    { corefile: 'forward . 127.0.0.1 {\n max_age 30s\n maxtcpqueries 100\n}', want: { maxAgeMs: 30_000, maxTcpQueries: 100 } },
    { corefile: 'forward . 127.0.0.1 {\n expire 10s\n max_age 10s\n}', want: { maxAgeMs: 10_000 } },
    { corefile: 'forward . 127.0.0.1 {\n max_age 0s\n}', want: { maxAgeMs: 0 } },
    { corefile: 'forward . 127.0.0.1 {\n expire 0s\n max_age 1s\n}', want: { maxAgeMs: 1000, expireMs: 0 } },
    { corefile: 'forward . 127.0.0.1 {\n maxtcpqueries -1\n}', want: { maxTcpQueries: 0 } },
    { corefile: 'forward . 127.0.0.1 {\n maxtcpqueries 1\n}', want: { maxTcpQueries: 1 } },
    {
      corefile: 'forward Example.ORG 127.0.0.1:5300 [::1]:5301 ::2 dns://10.0.0.1 tls://9.9.9.9 tls://[2620:fe::fe]:8853',
      want: {
        from: 'example.org.',
        upstreams: [
          { scheme: 'dns', host: '127.0.0.1', port: 5300 },
          { scheme: 'dns', host: '::1', port: 5301 },
          { scheme: 'dns', host: '::2', port: 53 },
          { scheme: 'dns', host: '10.0.0.1', port: 53 },
          { scheme: 'tls', host: '9.9.9.9', port: 853 },
          { scheme: 'tls', host: '2620:fe::fe', port: 8853 },
        ],
      },
    },
    {
      corefile: 'forward . /etc/resolv.conf',
      want: {
        upstreams: [
          { scheme: 'dns', host: '10.0.0.10', port: 53 },
          { scheme: 'dns', host: 'fe80::1', port: 53 },
        ],
      },
    },
    { corefile: 'forward 10.0.0.0/24 127.0.0.1', want: { from: '0.0.10.in-addr.arpa.' } },
    {
      corefile: `forward . 127.0.0.1 {
  except foo.com Bar.org
  force_tcp
  prefer_udp
  expire 30s
  max_fails 0
  policy round_robin
  health_check 2s no_rec domain example.com
  max_concurrent 1000
  next NXDOMAIN servfail
  failfast_all_unhealthy_upstreams
  tls_servername dns.example
  tls /certs/cert.pem /certs/key.pem /certs/ca.pem
}`,
      want: {
        except: ['foo.com.', 'bar.org.'],
        forceTcp: true,
        preferUdp: true,
        expireMs: 30_000,
        maxFails: 0,
        policy: 'round_robin',
        healthCheck: { intervalMs: 2000, recursionDesired: false, domain: 'example.com.' },
        maxConcurrent: 1000,
        next: [3, 2],
        failfastAllUnhealthy: true,
        tlsServername: 'dns.example',
        tls: { cert: Buffer.from('CERT'), key: Buffer.from('KEY'), ca: Buffer.from('CA') },
      },
    },
    { corefile: 'forward . tls://1.1.1.1 {\n tls /certs/ca.pem\n}', want: { tls: { ca: Buffer.from('CA') } } },
    { corefile: 'forward . tls://1.1.1.1 {\n tls\n}', want: { tls: {} } },
    { corefile: 'forward . 127.0.0.1 {\n health_check 100ms\n}', want: { healthCheck: { intervalMs: 100, recursionDesired: true, domain: '.' } } },
    {
      corefile: `forward . ${Array.from({ length: 15 }, (_, i) => `127.0.0.${i + 1}`).join(' ')}`,
      want: { upstreams: Array.from({ length: 15 }, (_, i) => ({ scheme: 'dns' as const, host: `127.0.0.${i + 1}`, port: 53 })) },
    },
  ];
  for (const c of good) {
    it(`accepts ${JSON.stringify(c.corefile.split('\n')[0])}${c.corefile.includes('\n') ? ' {…}' : ''}`, () => {
      const got = parse(c.corefile);
      for (const [k, v] of Object.entries(c.want)) assert.deepEqual(got[k as keyof ForwardOptions], v, k);
    });
  }

  // The Corefile opens with ".:53 {" on line 1, so the directive is on line 2.
  const bad: Array<{ corefile: string; error: string }> = [
    { corefile: 'forward .', error: 'Corefile:2: wrong argument count for "forward": expected FROM and at least one TO, got 1' },
    { corefile: 'forward', error: 'Corefile:2: wrong argument count for "forward": expected FROM and at least one TO, got 0' },
    { corefile: 'forward . dns.google', error: 'Corefile:2: invalid upstream "dns.google" for "forward": not an IP address or file' },
    { corefile: 'forward . 127.0.0.1:0', error: 'Corefile:2: invalid upstream "127.0.0.1:0" for "forward": invalid port "0"' },
    { corefile: 'forward . 127.0.0.1:70000', error: 'Corefile:2: invalid upstream "127.0.0.1:70000" for "forward": invalid port "70000"' },
    { corefile: 'forward . [::1', error: 'Corefile:2: invalid upstream "[::1" for "forward": missing "]"' },
    { corefile: 'forward . [10.0.0.1]:53', error: 'Corefile:2: invalid upstream "[10.0.0.1]:53" for "forward": "10.0.0.1" is not an IPv6 address' },
    { corefile: 'forward . quic://1.1.1.1', error: 'Corefile:2: invalid upstream "quic://1.1.1.1" for "forward": transport quic:// is not supported by kdns (use dns://, tls:// or https://)' },
    { corefile: 'forward . https://1.1.1.1/dns-query', error: 'Corefile:2: invalid upstream "https://1.1.1.1/dns-query" for "forward": paths are not allowed in https:// upstreams (kdns asks /dns-query)' },
    { corefile: 'forward . https://dns.google', error: 'Corefile:2: invalid upstream "https://dns.google" for "forward": "dns.google" is not an IP address' },
    { corefile: 'forward . tls://9.9.9.9%', error: 'Corefile:2: invalid upstream "tls://9.9.9.9%" for "forward": empty TLS server name after "%"' },
    { corefile: 'forward . tls://9.9.9.9%bad..name', error: 'Corefile:2: invalid upstream "tls://9.9.9.9%bad..name" for "forward": "bad..name" is not a valid TLS server name' },
    { corefile: 'forward . 9.9.9.9%dns.quad9.net', error: 'Corefile:2: invalid upstream "9.9.9.9%dns.quad9.net" for "forward": a %NAME (TLS server name) is only for tls:// and https:// upstreams' },
    { corefile: 'forward . dns://9.9.9.9%dns.quad9.net', error: 'Corefile:2: invalid upstream "dns://9.9.9.9%dns.quad9.net" for "forward": a %NAME (TLS server name) is only for tls:// and https:// upstreams' },
    {
      corefile: 'forward . tls://9.9.9.9%dns.quad9.net {\n tls_servername other.example\n}',
      error: 'Corefile:3: tls_servername "other.example" and the upstream\'s own server name "dns.quad9.net" (tls://9.9.9.9) are both set; keep one',
    },
    { corefile: 'forward . 127.0.0.1 {\n read_timeout 0s\n}', error: 'Corefile:3: read_timeout must be at least 1ms, got 0s' },
    { corefile: 'forward . 127.0.0.1 {\n read_timeout -2s\n}', error: 'Corefile:3: read_timeout must be at least 1ms, got -2s' },
    { corefile: 'forward . 127.0.0.1 {\n read_timeout\n}', error: 'Corefile:3: wrong argument count for "read_timeout": expected 1, got 0' },
    { corefile: 'forward . 127.0.0.1 {\n max_idle_conns -1\n}', error: 'Corefile:3: max_idle_conns must be at least 0, got -1' },
    { corefile: 'forward . 127.0.0.1 {\n max_idle_conns lots\n}', error: 'Corefile:3: invalid max_idle_conns: "lots" is not an integer' },
    { corefile: 'forward . 127.0.0.1 {\n max_connect_attempts -1\n}', error: 'Corefile:3: max_connect_attempts must be at least 0, got -1' },
    { corefile: 'forward . 127.0.0.1 {\n source_address eth0\n}', error: 'Corefile:3: invalid argument "eth0" for "source_address": not an IP address' },
    { corefile: 'forward . 127.0.0.1 {\n source_address\n}', error: 'Corefile:3: wrong argument count for "source_address": expected 1, got 0' },
    {
      corefile: 'forward . 127.0.0.1 [::1]:53 {\n source_address 127.0.0.2\n}',
      error: 'Corefile:3: source_address 127.0.0.2 is IPv4, but upstream ::1 is not: it could never be reached',
    },
    { corefile: 'forward . 127.0.0.1 {\n next_on_nodata yes\n}', error: 'Corefile:3: wrong argument count for "next_on_nodata": expected no arguments, got 1' },
    { corefile: 'forward . 127.0.0.1 {\n failover\n}', error: 'Corefile:3: wrong argument count for "failover": expected at least 1, got 0' },
    { corefile: 'forward . 127.0.0.1 {\n failover NOERROR\n}', error: 'Corefile:3: invalid argument "NOERROR" for "failover": NOERROR cannot be used in failover' },
    { corefile: 'forward . 127.0.0.1 {\n failover SERVFAIL BOGUS\n}', error: 'Corefile:3: invalid argument "BOGUS" for "failover": not an RCODE name (such as NXDOMAIN, SERVFAIL, REFUSED)' },
    { corefile: 'forward . https://127.0.0.1 {\n doh_method get\n}', error: 'Corefile:3: invalid argument "get" for "doh_method": expected GET or POST' },
    { corefile: 'forward . https://127.0.0.1 {\n doh_method PUT\n}', error: 'Corefile:3: invalid argument "PUT" for "doh_method": expected GET or POST' },
    { corefile: 'forward . /empty.conf', error: 'Corefile:2: invalid upstream "/empty.conf" for "forward": no nameserver lines in this resolv.conf' },
    { corefile: 'forward a..b 127.0.0.1', error: 'Corefile:2: invalid FROM zone "a..b": not a valid domain name' },
    { corefile: 'forward 10.0.0.0/99 127.0.0.1', error: 'Corefile:2: invalid FROM zone "10.0.0.0/99": not a valid CIDR' },
    {
      corefile: `forward . ${Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 1}`).join(' ')}`,
      error: 'Corefile:2: more than 15 upstreams configured for "forward": 16',
    },
    { corefile: 'forward . 127.0.0.1 {\n polcy random\n}', error: 'Corefile:3: unknown property "polcy" in forward block' },
    { corefile: 'forward . 127.0.0.1 {\n policy fastest\n}', error: 'Corefile:3: invalid argument "fastest" for "policy": unknown policy (expected random, round_robin, sequential)' },
    { corefile: 'forward . 127.0.0.1 {\n policy\n}', error: 'Corefile:3: wrong argument count for "policy": expected 1, got 0' },
    { corefile: 'forward . 127.0.0.1 {\n max_fails -1\n}', error: 'Corefile:3: max_fails must be at least 0, got -1' },
    { corefile: 'forward . 127.0.0.1 {\n max_fails two\n}', error: 'Corefile:3: invalid max_fails: "two" is not an integer' },
    { corefile: 'forward . 127.0.0.1 {\n max_concurrent -5\n}', error: 'Corefile:3: max_concurrent must be at least 0, got -5' },
    { corefile: 'forward . 127.0.0.1 {\n expire soon\n}', error: 'Corefile:3: invalid duration for expire: "soon" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { corefile: 'forward . 127.0.0.1 {\n expire -1s\n}', error: 'Corefile:3: expire must be at least 0s, got -1s' },
    { corefile: 'forward . 127.0.0.1 {\n health_check 0s\n}', error: 'Corefile:3: health_check must be at least 1ms, got 0s' },
    { corefile: 'forward . 127.0.0.1 {\n health_check 1s rec\n}', error: 'Corefile:3: invalid argument "rec" for "health_check": expected no_rec or domain NAME' },
    { corefile: 'forward . 127.0.0.1 {\n health_check 1s domain\n}', error: 'Corefile:3: health_check domain needs a name' },
    { corefile: 'forward . 127.0.0.1 {\n health_check\n}', error: 'Corefile:3: wrong argument count for "health_check": expected at least 1, got 0' },
    { corefile: 'forward . 127.0.0.1 {\n force_tcp yes\n}', error: 'Corefile:3: wrong argument count for "force_tcp": expected no arguments, got 1' },
    { corefile: 'forward . 127.0.0.1 {\n except\n}', error: 'Corefile:3: wrong argument count for "except": expected at least 1, got 0' },
    { corefile: 'forward . 127.0.0.1 {\n next NOPE\n}', error: 'Corefile:3: invalid argument "NOPE" for "next": not an RCODE name (such as NXDOMAIN, SERVFAIL, REFUSED)' },
    { corefile: 'forward . 127.0.0.1 {\n tls /certs/missing.pem\n}', error: 'Corefile:3: cannot read TLS file "/certs/missing.pem"' },
    { corefile: 'forward . 127.0.0.1 {\n tls a b c d\n}', error: 'Corefile:3: wrong argument count for "tls": expected at most 3, got 4' },
    { corefile: 'forward . 127.0.0.1 {\n tls_servername\n}', error: 'Corefile:3: wrong argument count for "tls_servername": expected 1, got 0' },
    { corefile: 'forward . 127.0.0.1 {\n max_age -1s\n}', error: 'Corefile:3: max_age must be at least 0s, got -1s' },
    { corefile: 'forward . 127.0.0.1 {\n max_age forever\n}', error: 'Corefile:3: invalid duration for max_age: "forever" (expected a Go duration such as 500ms, 5s or 1m30s)' },
    { corefile: 'forward . 127.0.0.1 {\n max_age\n}', error: 'Corefile:3: wrong argument count for "max_age": expected 1, got 0' },
    { corefile: 'forward . 127.0.0.1 {\n max_age 5s\n}', error: 'Corefile:3: max_age (5s) must not be less than expire (10s)' },
    { corefile: 'forward . 127.0.0.1 {\n max_age 20s\n expire 30s\n}', error: 'Corefile:3: max_age (20s) must not be less than expire (30s)' },
    { corefile: 'forward . 127.0.0.1 {\n maxtcpqueries 0\n}', error: 'Corefile:3: maxtcpqueries must be -1 (no limit) or a positive integer, got 0' },
    { corefile: 'forward . 127.0.0.1 {\n maxtcpqueries -2\n}', error: 'Corefile:3: maxtcpqueries must be -1 (no limit) or a positive integer, got -2' },
    { corefile: 'forward . 127.0.0.1 {\n maxtcpqueries many\n}', error: 'Corefile:3: invalid maxtcpqueries: "many" is not an integer' },
    { corefile: 'forward . 127.0.0.1 {\n maxtcpqueries 1 2\n}', error: 'Corefile:3: wrong argument count for "maxtcpqueries": expected 1, got 2' },
    { corefile: 'forward . 127.0.0.1 {\n max_fails 1\n max_fails 2\n}', error: 'Corefile:4: duplicate property "max_fails" in forward block' },
    { corefile: 'forward . 127.0.0.1 {\n policy random {\n }\n}', error: 'Corefile:3: "policy" does not take a block' },
  ];
  for (const c of bad) {
    it(`rejects ${JSON.stringify(c.corefile.replace(/\n/g, ' '))}`, () => {
      assertCorefileError(() => parse(c.corefile), c.error);
    });
  }
});
