// node-cache's command line (NodeLocal DNSCache's binary) turned into the drop-in app's
// parameters: every flag's default, a given value of each, and each bad value refused with an
// error naming its flag. Go's flag syntax itself (booleans, unknown flags) is src/cli/goflags.ts's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeCacheAppParams } from './app.js';
import { FlagError, nodeCacheParams, parseLocalIPs, settingsFromFlags, type NodeCacheFlagContext, type NodeCacheFlagValues } from './flags.js';

/** node-cache's defaults (kubernetes-sigs/node-local-dns cmd/node-cache/main.go), -localip as nodelocaldns.yaml gives it. */
const DEFAULTS: NodeCacheFlagValues = {
  localip: '169.254.20.10,10.96.0.10',
  upstreamsvc: 'kube-dns',
  basecorefile: '/etc/coredns/Corefile.base',
  conf: '',
  corefile: '/etc/Corefile',
  kubednscm: '',
  setupinterface: true,
  interfacename: 'nodelocaldns',
  setupiptables: true,
  skipteardown: false,
  'health-port': '8080',
  syncinterval: '60',
  'metrics-listen-address': '0.0.0.0:9353',
  'prometheus-listen-address': ':9253',
  reloadwithsignal: false,
};

const CONTEXT: NodeCacheFlagContext = { port: 53, env: { KUBE_DNS_SERVICE_HOST: '10.96.0.10', KUBE_DNS_UPSTREAM_SERVICE_HOST: '10.96.0.11' }, defaultKubeDnsDir: undefined };

const DEFAULT_PARAMS: NodeCacheAppParams = {
  localIPs: ['169.254.20.10', '10.96.0.10'],
  port: 53,
  healthPort: 8080,
  baseCorefile: '/etc/coredns/Corefile.base',
  corefile: '/etc/Corefile',
  kubeDnsDir: undefined,
  clusterDNS: '10.96.0.10',
  setupInterface: true,
  interfaceName: 'nodelocaldns',
  setupIptables: true,
  skipTeardown: false,
  syncIntervalMs: 60_000,
  metricsListen: '0.0.0.0:9353',
  prometheusListen: ':9253',
};

describe('nodeCacheParams: each flag', () => {
  test('the defaults', () => assert.deepEqual(nodeCacheParams(DEFAULTS, CONTEXT), DEFAULT_PARAMS));

  const cases: Array<{ name: string; flags?: Partial<NodeCacheFlagValues>; context?: Partial<NodeCacheFlagContext>; want: Partial<NodeCacheAppParams> }> = [
    { name: '-localip: one IPv4 address', flags: { localip: '169.254.20.10' }, want: { localIPs: ['169.254.20.10'] } },
    { name: '-localip: IPv6 only', flags: { localip: 'fd00::10,fd00:10:96::a' }, want: { localIPs: ['fd00::10', 'fd00:10:96::a'] } },
    { name: '-localip: dual-stack, both families in the order given', flags: { localip: '169.254.20.10,fd00::10,10.96.0.10,fd00:10:96::a' }, want: { localIPs: ['169.254.20.10', 'fd00::10', '10.96.0.10', 'fd00:10:96::a'] } },
    { name: '-localip: spaces around the commas', flags: { localip: '169.254.20.10, fd00::10' }, want: { localIPs: ['169.254.20.10', 'fd00::10'] } },
    { name: '-upstreamsvc: the ClusterIP from its _SERVICE_HOST variable', flags: { upstreamsvc: 'kube-dns-upstream' }, want: { clusterDNS: '10.96.0.11' } },
    { name: '-upstreamsvc: an IPv6 ClusterIP', flags: { upstreamsvc: 'kube-dns-upstream' }, context: { env: { KUBE_DNS_UPSTREAM_SERVICE_HOST: 'fd00:10:96::b' } }, want: { clusterDNS: 'fd00:10:96::b' } },
    { name: '-upstreamsvc: variable unset, left unknown (the template fails only if it needs it)', flags: { upstreamsvc: 'coredns' }, want: { clusterDNS: undefined } },
    { name: '-upstreamsvc: variable not an address, left unknown', context: { env: { KUBE_DNS_SERVICE_HOST: 'kube-dns.kube-system' } }, want: { clusterDNS: undefined } },
    { name: '-basecorefile', flags: { basecorefile: '/config/Corefile.tmpl' }, want: { baseCorefile: '/config/Corefile.tmpl' } },
    { name: '-conf: where the Corefile is written, before -corefile', flags: { conf: '/run/node-cache/Corefile', corefile: '/etc/other' }, want: { corefile: '/run/node-cache/Corefile' } },
    { name: '-corefile: when -conf is absent', flags: { corefile: '/run/Corefile' }, want: { corefile: '/run/Corefile' } },
    { name: '-kubednscm', flags: { kubednscm: '/config/kube-dns' }, want: { kubeDnsDir: '/config/kube-dns' } },
    { name: '-kubednscm empty: /etc/kube-dns when it exists', context: { defaultKubeDnsDir: '/etc/kube-dns' }, want: { kubeDnsDir: '/etc/kube-dns' } },
    { name: '-setupinterface=false', flags: { setupinterface: false }, want: { setupInterface: false } },
    { name: '-interfacename', flags: { interfacename: 'nodelocaldns6' }, want: { interfaceName: 'nodelocaldns6' } },
    { name: '-interfacename: 15 characters, the kernel\'s most', flags: { interfacename: 'abcdefghijklmno' }, want: { interfaceName: 'abcdefghijklmno' } },
    { name: '-setupiptables=false', flags: { setupiptables: false }, want: { setupIptables: false } },
    { name: '-skipteardown', flags: { skipteardown: true }, want: { skipTeardown: true } },
    { name: '-health-port', flags: { 'health-port': '8081' }, want: { healthPort: 8081 } },
    { name: '-syncinterval in seconds', flags: { syncinterval: '5' }, want: { syncIntervalMs: 5_000 } },
    { name: '-syncinterval as a Go duration', flags: { syncinterval: '1m30s' }, want: { syncIntervalMs: 90_000 } },
    { name: '-metrics-listen-address', flags: { 'metrics-listen-address': '169.254.20.10:9353' }, want: { metricsListen: '169.254.20.10:9353' } },
    { name: '-metrics-listen-address: IPv6', flags: { 'metrics-listen-address': '[fd00::10]:9353' }, want: { metricsListen: '[fd00::10]:9353' } },
    { name: '-prometheus-listen-address', flags: { 'prometheus-listen-address': '169.254.20.10:9253' }, want: { prometheusListen: '169.254.20.10:9253' } },
    { name: '-prometheus-listen-address: IPv6', flags: { 'prometheus-listen-address': '[fd00::10]:9253' }, want: { prometheusListen: '[fd00::10]:9253' } },
    { name: '-reloadwithsignal: accepted, nothing changes (kdns reloads in process)', flags: { reloadwithsignal: true }, want: {} },
    { name: '-dns.port: the port the rules and stub blocks use', context: { port: 1053 }, want: { port: 1053 } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = nodeCacheParams({ ...DEFAULTS, ...c.flags }, { ...CONTEXT, ...c.context });
      assert.deepEqual(got, { ...DEFAULT_PARAMS, ...c.want });
    });
  }
});

describe('nodeCacheParams: bad values name their flag', () => {
  const LINK_LOCAL = 'an IPv6 link-local address (fe80::/10), which a socket binds only with an interface and pods cannot reach; use a unique local address (fd00::/8)';
  const SERVICE = 'not a Service name (lowercase letters, digits and "-", starting with a letter, at most 63 characters)';
  const IFACE = 'not a network interface name (1-15 characters, no "/", ":" or whitespace)';
  const cases: Array<[Partial<NodeCacheFlagValues>, string]> = [
    [{ localip: '' }, 'invalid localip specified - ""'],
    [{ localip: '169.254.20.10,' }, 'invalid localip specified - ""'],
    [{ localip: 'nodelocal' }, 'invalid localip specified - "nodelocal"'],
    [{ localip: '169.254.20.10/32' }, 'invalid localip specified - "169.254.20.10/32"'],
    [{ localip: '169.254.20.10,fe80::169:254:20:10' }, `invalid localip specified - "fe80::169:254:20:10": ${LINK_LOCAL}`],
    [{ upstreamsvc: '' }, `invalid -upstreamsvc "": ${SERVICE}`],
    [{ upstreamsvc: 'Kube-DNS' }, `invalid -upstreamsvc "Kube-DNS": ${SERVICE}`],
    [{ upstreamsvc: 'kube-dns.kube-system' }, `invalid -upstreamsvc "kube-dns.kube-system": ${SERVICE}`],
    [{ basecorefile: '' }, 'invalid -basecorefile "": the template Corefile\'s path is needed'],
    [{ corefile: '' }, 'invalid -corefile "": a path to write the Corefile to is needed (or -conf)'],
    [{ interfacename: '' }, `invalid -interfacename "": ${IFACE}`],
    [{ interfacename: 'nodelocaldns-cache' }, `invalid -interfacename "nodelocaldns-cache": ${IFACE}`],
    [{ interfacename: 'node/local' }, `invalid -interfacename "node/local": ${IFACE}`],
    [{ interfacename: 'eth0:1' }, `invalid -interfacename "eth0:1": ${IFACE}`],
    [{ interfacename: '..' }, `invalid -interfacename "..": ${IFACE}`],
    [{ 'health-port': 'http' }, 'invalid healthcheck port specified - "http" (-health-port)'],
    [{ 'health-port': '0' }, 'invalid healthcheck port specified - "0" (-health-port)'],
    [{ 'health-port': '65536' }, 'invalid healthcheck port specified - "65536" (-health-port)'],
    [{ syncinterval: '0' }, 'invalid -syncinterval "0" (seconds, or a duration such as 1m)'],
    [{ syncinterval: 'soon' }, 'invalid -syncinterval "soon" (seconds, or a duration such as 1m)'],
    [{ 'metrics-listen-address': '9353' }, 'invalid -metrics-listen-address "9353": missing port in address (host:port, :port or [IPv6]:port)'],
    [{ 'metrics-listen-address': '0.0.0.0:metrics' }, 'invalid -metrics-listen-address "0.0.0.0:metrics": invalid port "metrics" (host:port, :port or [IPv6]:port)'],
    [{ 'prometheus-listen-address': '' }, 'invalid -prometheus-listen-address "": missing port in address (host:port, :port or [IPv6]:port)'],
    [{ 'prometheus-listen-address': 'fd00::10:9253' }, 'invalid -prometheus-listen-address "fd00::10:9253": too many colons in address (host:port, :port or [IPv6]:port)'],
    [{ 'prometheus-listen-address': ':99999' }, 'invalid -prometheus-listen-address ":99999": invalid port "99999" (host:port, :port or [IPv6]:port)'],
  ];
  for (const [flags, message] of cases) {
    test(`${JSON.stringify(flags)} → ${message}`, () => {
      assert.throws(
        () => nodeCacheParams({ ...DEFAULTS, ...flags }, CONTEXT),
        (e: unknown) => e instanceof FlagError && e.message === message,
      );
    });
  }
});

describe('parseLocalIPs', () => {
  const ok: Array<[string, string[]]> = [
    ['169.254.20.10', ['169.254.20.10']],
    ['169.254.20.10,10.96.0.10', ['169.254.20.10', '10.96.0.10']],
    ['fd00::a,fd00::b', ['fd00::a', 'fd00::b']],
    ['fd00::10,169.254.20.10', ['fd00::10', '169.254.20.10']],
  ];
  for (const [text, want] of ok) test(`"${text}"`, () => assert.deepEqual(parseLocalIPs(text), want));
});

describe('kdns nodecache --local-ip', () => {
  const flags = { localIp: '169.254.20.10', port: '53', clusterDns: '10.96.0.10', clusterDomain: 'cluster.local', resolvConf: '/etc/resolv.conf', ednsOption: '65534', interface: 'nodelocaldns' };
  test('dual-stack: both families listened on, health and metrics on the first', () => {
    const s = settingsFromFlags({ ...flags, localIp: 'fd00::10,169.254.20.10' });
    assert.deepEqual([s.localIPs, s.health, s.metrics], [['fd00::10', '169.254.20.10'], '[fd00::10]:8080', '[fd00::10]:9253']);
  });
  test('an IPv6 link-local address is refused, naming the flag', () => {
    assert.throws(
      () => settingsFromFlags({ ...flags, localIp: '169.254.20.10,fe80::10' }),
      (e: unknown) => e instanceof FlagError && e.message === '--local-ip: "fe80::10" is an IPv6 link-local address (fe80::/10), which a socket binds only with an interface and pods cannot reach; use a unique local address (fd00::/8)',
    );
  });
});
