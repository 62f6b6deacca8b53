// The node cache's configuration: the Corefile rendered from flags and the flags' errors (the
// DaemonSet in deploy/nodecache/ is checked with the other manifests, test/deploy/).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCorefile } from '../lib/corefile/parser.js';
import { defaultSettings, renderNodeCacheCorefile, type NodeCacheSettings } from './corefile.js';
import { FlagError, settingsFromFlags, type NodecacheFlags } from './flags.js';

const DEFAULT_TEXT = `# kdns nodecache: NodeLocal DNSCache's configuration, plus ap.k8s.io for ClusterFirstWithAutopath pods.
# Cluster names (and ap.k8s.io names, with the pod's search paths attached) go to the cluster DNS
# over TCP, on connections renewed often enough to reach every replica; other names to the
# node's upstreams. Everything is cached.
cluster.local:53 {
    errors
    cache {
        success 9984 30
        denial 9984 5
    }
    loop
    bind 169.254.20.10
    forward . 10.96.0.10 {
        force_tcp
        max_age 30s
        maxtcpqueries 50
    }
    prometheus 169.254.20.10:9253
    health 169.254.20.10:8080
}
in-addr.arpa:53 {
    errors
    cache 30
    loop
    bind 169.254.20.10
    forward . 10.96.0.10 {
        force_tcp
        max_age 30s
        maxtcpqueries 50
    }
    prometheus 169.254.20.10:9253
}
ip6.arpa:53 {
    errors
    cache 30
    loop
    bind 169.254.20.10
    forward . 10.96.0.10 {
        force_tcp
        max_age 30s
        maxtcpqueries 50
    }
    prometheus 169.254.20.10:9253
}
ap.k8s.io:53 {
    errors
    cache {
        success 9984 30
        denial 9984 5
    }
    loop
    bind 169.254.20.10
    searchpath /etc/resolv.conf
    forward . 10.96.0.10 {
        force_tcp
        max_age 30s
        maxtcpqueries 50
    }
    prometheus 169.254.20.10:9253
}
.:53 {
    errors
    cache 30
    loop
    bind 169.254.20.10
    forward . /etc/resolv.conf
    prometheus 169.254.20.10:9253
}
`;

describe('renderNodeCacheCorefile', () => {
  test('the shipped configuration, with its defaults', () => {
    assert.equal(renderNodeCacheCorefile(defaultSettings('10.96.0.10')), DEFAULT_TEXT);
  });

  const cases: Array<{ name: string; settings: NodeCacheSettings; lines: string[] }> = [
    {
      name: 'two local addresses (link-local and the kube-dns IP): both bound, health on the first',
      settings: defaultSettings('10.96.0.10', ['169.254.20.10', '10.96.0.10']),
      lines: ['    bind 169.254.20.10 10.96.0.10', '    health 169.254.20.10:8080'],
    },
    {
      name: 'an IPv6 local address is bracketed in host:port',
      settings: defaultSettings('[fd00::a]:53', ['fd00::20:10']),
      lines: ['    bind fd00::20:10', '    health [fd00::20:10]:8080', '    prometheus [fd00::20:10]:9253', '    forward . [fd00::a]:53 {'],
    },
    {
      name: 'another option code goes into the searchpath block',
      settings: { ...defaultSettings('10.96.0.10'), optionCode: 65100 },
      lines: ['    searchpath /etc/resolv.conf {', '        edns_option 65100'],
    },
    {
      name: 'domain, port and upstreams',
      settings: { ...defaultSettings('10.96.0.10'), clusterDomain: 'k8s.example', port: 1053, upstreams: ['192.0.2.1', '192.0.2.2:5353'] },
      lines: ['k8s.example:1053 {', 'ap.k8s.io:1053 {', '.:1053 {', '    forward . 192.0.2.1 192.0.2.2:5353'],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const text = renderNodeCacheCorefile(c.settings);
      const lines = text.split('\n');
      for (const l of c.lines) assert.ok(lines.includes(l), `missing line ${JSON.stringify(l)} in:\n${text}`);
      // Whatever the settings, the result parses as a Corefile.
      assert.equal(parseCorefile(text, { file: 'Corefile' }).length, 5);
    });
  }
});

const FLAGS: NodecacheFlags = {
  localIp: '169.254.20.10',
  port: '53',
  clusterDns: '10.96.0.10',
  clusterDomain: 'cluster.local',
  upstream: [],
  resolvConf: '/etc/resolv.conf',
  ednsOption: '65534',
  interface: 'nodelocaldns',
};

describe('settingsFromFlags', () => {
  test('defaults give the shipped configuration', () => {
    assert.deepEqual(settingsFromFlags(FLAGS), defaultSettings('10.96.0.10'));
  });
  test('every flag lands in its setting', () => {
    const s = settingsFromFlags({
      ...FLAGS,
      localIp: '127.0.0.1, 127.0.0.2',
      port: '1053',
      clusterDns: '127.0.0.1:5353',
      clusterDomain: 'k8s.example.',
      upstream: ['192.0.2.1', '192.0.2.2:53'],
      resolvConf: '/node/resolv.conf',
      health: '127.0.0.1:18080',
      metrics: '127.0.0.1:19253',
      ednsOption: '65001',
    });
    assert.deepEqual(s, {
      localIPs: ['127.0.0.1', '127.0.0.2'],
      port: 1053,
      clusterDNS: '127.0.0.1:5353',
      clusterDomain: 'k8s.example',
      upstreams: ['192.0.2.1', '192.0.2.2:53'],
      nodeResolvConf: '/node/resolv.conf',
      health: '127.0.0.1:18080',
      metrics: '127.0.0.1:19253',
      optionCode: 65001,
    });
  });
  const bad: Array<{ name: string; flags: Partial<NodecacheFlags>; message: string }> = [
    { name: 'no cluster DNS', flags: { clusterDns: undefined }, message: '--cluster-dns is required (the cluster DNS service address, IP or IP:PORT) unless --conf is given' },
    { name: 'a cluster DNS that is a name', flags: { clusterDns: 'kube-dns' }, message: '--cluster-dns: "kube-dns": not an IP address or file' },
    { name: 'a local address that is no IP', flags: { localIp: '169.254.20.10,nodelocal' }, message: '--local-ip: "nodelocal" is not an IP address' },
    { name: 'no local address', flags: { localIp: ' , ' }, message: '--local-ip: at least one address is needed' },
    { name: 'a port out of range', flags: { port: '70000' }, message: '--port: "70000" is not a number from 1 to 65535' },
    { name: 'an upstream with a bad port', flags: { upstream: ['192.0.2.1:x'] }, message: '--upstream: "192.0.2.1:x": invalid port "x"' },
    { name: 'an option code outside the local range', flags: { ednsOption: '15' }, message: '--edns-option: "15" is not a number from 65001 to 65534' },
    { name: 'a cluster domain with a space', flags: { clusterDomain: 'cluster local' }, message: '--cluster-domain: "cluster local" is not a domain name' },
  ];
  for (const c of bad) {
    test(`usage error: ${c.name}`, () => {
      assert.throws(
        () => settingsFromFlags({ ...FLAGS, ...c.flags }),
        (e: unknown) => e instanceof FlagError && e.message === c.message,
      );
    });
  }
});
