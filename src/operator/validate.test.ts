import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatFieldError } from '../lib/cluster/field.js';
import { validateDNSResource } from './validate.js';

const dns = (spec: Record<string, unknown>, name = 'default'): Record<string, unknown> => ({
  apiVersion: 'operator.openshift.io/v1',
  kind: 'DNS',
  metadata: { name },
  spec,
});

const server = (name: string, zones: unknown[], forwardPlugin: Record<string, unknown> = { upstreams: ['1.1.1.1'] }): Record<string, unknown> => ({ name, zones, forwardPlugin });

interface Case {
  name: string;
  obj: unknown;
  clusterDomain?: string;
  want: string[];
}

const IP_DETAIL = 'must be an IPv4 or IPv6 address with an optional port (IP:port, [IPv6]:port; port 1-65535)';

const cases: Case[] = [
  { name: 'empty spec is the default DNS', obj: dns({}), want: [] },
  {
    name: 'both shapes, every field set, valid',
    obj: dns({
      pluginConfig: { forwardPlugins: [{ domain: 'foo.com', nameServers: ['1.1.1.1', '2.2.2.2:5353'], policy: 'RoundRobin' }] },
      servers: [server('bar', ['bar.com', 'a.foo.com'], { upstreams: ['[fd00::1]:53', 'fd00::2'], policy: 'Sequential', protocolStrategy: 'TCP', transportConfig: { transport: 'TLS', tls: { serverName: 'dns.bar.com', caBundle: { name: 'ca' } } } })],
      upstreamResolvers: { upstreams: [{ type: 'SystemResolvConf' }, { type: 'Network', address: '10.0.0.1', port: 5353 }], policy: 'Random' },
      cache: { positiveTTL: '1h30m', negativeTTL: '0.5s' },
      logLevel: 'Trace',
      operatorLogLevel: 'Debug',
      managementState: 'Managed',
      nodePlacement: { nodeSelector: { 'node-role.kubernetes.io/infra': '' }, tolerations: [{ key: 'dns-only', operator: 'Exists', effect: 'NoSchedule' }, { operator: 'Exists' }] },
    }),
    want: [],
  },
  { name: 'not an object', obj: 'DNS', want: ['<object>: Invalid value: "string": must be a DNS object (a mapping with apiVersion, kind, metadata and spec)'] },
  {
    name: 'wrong apiVersion and kind',
    obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'default' } },
    want: ['apiVersion: Invalid value: "v1": must be operator.openshift.io/v1', 'kind: Invalid value: "ConfigMap": must be DNS'],
  },
  { name: 'instance not named default', obj: dns({}, 'other'), want: ['metadata.name: Invalid value: "other": the operator manages only the DNS named "default"'] },
  {
    name: 'domain not a subdomain',
    obj: dns({ pluginConfig: { forwardPlugins: [{ domain: 'Foo_.com', nameServers: ['1.1.1.1'] }] } }),
    want: [`spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "Foo_.com": must be a lower-case RFC 1123 subdomain: labels of a-z, 0-9 and '-', starting and ending with a letter or digit, separated by '.'`],
  },
  {
    name: 'domain is the cluster domain',
    obj: dns({ pluginConfig: { forwardPlugins: [{ domain: 'cluster.local', nameServers: ['1.1.1.1'] }] } }),
    want: ['spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "cluster.local": must not be the cluster domain "cluster.local" or under it: the cluster answers those names itself'],
  },
  {
    name: 'zone under a configured cluster domain',
    obj: dns({ servers: [server('a', ['x.svc.example.org'])] }),
    clusterDomain: 'example.org',
    want: ['spec.servers[0].zones[0]: Invalid value: "x.svc.example.org": must not be the cluster domain "example.org" or under it: the cluster answers those names itself'],
  },
  {
    name: 'bad nameservers: octet, port 0, port too big, bracketless v6 port, hostname',
    obj: dns({ pluginConfig: { forwardPlugins: [{ domain: 'foo.com', nameServers: ['256.1.1.1', '1.1.1.1:0', '1.1.1.1:65536', '[::1]', 'dns.google'] }] } }),
    want: [0, 1, 2, 3, 4].map((i) => `spec.pluginConfig.forwardPlugins[0].nameServers[${i}]: Invalid value: ${JSON.stringify(['256.1.1.1', '1.1.1.1:0', '1.1.1.1:65536', '[::1]', 'dns.google'][i])}: ${IP_DETAIL}`),
  },
  {
    name: 'sixteen nameservers',
    obj: dns({ pluginConfig: { forwardPlugins: [{ domain: 'foo.com', nameServers: Array.from({ length: 16 }, (_, i) => `10.0.0.${i + 1}`) }] } }),
    want: ['spec.pluginConfig.forwardPlugins[0].nameServers: Too many: 16: must have at most 15 items'],
  },
  {
    name: 'policy outside its enum',
    obj: dns({ servers: [server('a', ['a.com'], { upstreams: ['1.1.1.1'], policy: 'random' })] }),
    want: ['spec.servers[0].forwardPlugin.policy: Unsupported value: "random": supported values: "Random", "RoundRobin", "Sequential"'],
  },
  {
    name: 'TLS without serverName',
    obj: dns({ servers: [server('a', ['a.com'], { upstreams: ['1.1.1.1'], transportConfig: { transport: 'TLS' } })] }),
    want: ['spec.servers[0].forwardPlugin.transportConfig.tls.serverName: Required value: TLS transport needs the name the upstreams present in their certificates'],
  },
  {
    name: 'TLS to the system resolv.conf',
    obj: dns({ upstreamResolvers: { upstreams: [{ type: 'SystemResolvConf' }], transportConfig: { transport: 'TLS', tls: { serverName: 'dns.example.com' } } } }),
    want: ['spec.upstreamResolvers.upstreams[0].type: Invalid value: "SystemResolvConf": TLS transport needs Network upstreams with IP addresses'],
  },
  {
    name: 'TLS with no upstreams at all',
    obj: dns({ upstreamResolvers: { transportConfig: { transport: 'TLS', tls: { serverName: 'dns.example.com' } } } }),
    want: ['spec.upstreamResolvers.upstreams: Required value: TLS transport needs Network upstreams with IP addresses; /etc/resolv.conf cannot be used with TLS'],
  },
  {
    name: 'Network upstream without address',
    obj: dns({ upstreamResolvers: { upstreams: [{ type: 'Network', port: 53 }] } }),
    want: ['spec.upstreamResolvers.upstreams[0].address: Required value: a Network upstream needs an address'],
  },
  {
    // What an OpenShift API server returns after defaulting: port 53 on the SystemResolvConf upstream, zero TTLs.
    name: 'a live OpenShift default DNS as kubectl get shows it',
    obj: {
      apiVersion: 'operator.openshift.io/v1',
      kind: 'DNS',
      metadata: { name: 'default', generation: 1, uid: 'a1b2', managedFields: [{ manager: 'dns-operator' }] },
      spec: {
        cache: { negativeTTL: '0s', positiveTTL: '0s' },
        logLevel: 'Normal',
        nodePlacement: {},
        operatorLogLevel: 'Normal',
        upstreamResolvers: { policy: 'Sequential', transportConfig: {}, upstreams: [{ port: 53, type: 'SystemResolvConf' }] },
      },
      status: { clusterDomain: 'cluster.local', clusterIP: '172.30.0.10', conditions: [] },
    },
    want: [],
  },
  {
    name: 'upstream port out of range',
    obj: dns({ upstreamResolvers: { upstreams: [{ type: 'Network', address: '1.1.1.1', port: 70000 }] } }),
    want: ['spec.upstreamResolvers.upstreams[0].port: Invalid value: 70000: must be less than or equal to 65535'],
  },
  {
    name: 'server names unique',
    obj: dns({ servers: [server('a', ['a.com']), server('a', ['b.com'])] }),
    want: ['spec.servers[1].name: Duplicate value: "a"'],
  },
  {
    name: 'zones unique across servers and proposal entries',
    obj: dns({ servers: [server('a', ['a.com']), server('b', ['b.com', 'a.com'])], pluginConfig: { forwardPlugins: [{ domain: 'b.com', nameServers: ['1.1.1.1'] }] } }),
    want: [
      'spec.servers[1].zones[1]: Duplicate value: "a.com": already forwarded by spec.servers[0].zones[0]',
      'spec.pluginConfig.forwardPlugins[0].domain: Duplicate value: "b.com": already forwarded by spec.servers[1].zones[0]',
    ],
  },
  {
    name: 'zone repeated inside one server',
    obj: dns({ servers: [server('a', ['a.com', 'a.com'])] }),
    want: ['spec.servers[0].zones[1]: Duplicate value: "a.com"'],
  },
  {
    name: 'proposal domain repeated',
    obj: dns({ pluginConfig: { forwardPlugins: [{ domain: 'a.com', nameServers: ['1.1.1.1'] }, { domain: 'a.com', nameServers: ['2.2.2.2'] }] } }),
    want: ['spec.pluginConfig.forwardPlugins[1].domain: Duplicate value: "a.com"'],
  },
  {
    name: 'server name syntax',
    obj: dns({ servers: [server('Foo', ['a.com']), server('123', ['b.com']), server('a-very-long-server-name', ['c.com'])] }),
    want: [
      `spec.servers[0].name: Invalid value: "Foo": must be an RFC 6335 service name: a-z, 0-9 and single '-' between them`,
      'spec.servers[1].name: Invalid value: "123": must contain at least one letter',
      'spec.servers[2].name: Too long: may not be longer than 15',
    ],
  },
  {
    name: 'required fields of a server',
    obj: dns({ servers: [{ name: 'a' }] }),
    want: ['spec.servers[0].zones: Required value', 'spec.servers[0].forwardPlugin: Required value'],
  },
  {
    name: 'misspelt field',
    obj: dns({ pluginConfig: { forwardPlugins: [{ domain: 'a.com', nameServers: ['1.1.1.1'], nameserver: ['2.2.2.2'] }] } }),
    want: ['spec.pluginConfig.forwardPlugins[0].nameserver: Forbidden: unknown field'],
  },
  {
    name: 'wrong types',
    obj: dns({ servers: 'foo', logLevel: 3 }),
    want: ['spec.servers: Invalid value: "foo": must be an array', 'spec.logLevel: Invalid value: 3: must be a string'],
  },
  {
    name: 'tolerations by the API server rules',
    obj: dns({ nodePlacement: { tolerations: [{ key: 'a', operator: 'Exists', value: 'x' }, { value: 'x' }, { key: 'b', tolerationSeconds: 5, effect: 'NoSchedule' }, { key: 'c', effect: 'Sometimes' }] } }),
    want: [
      "spec.nodePlacement.tolerations[0].value: Invalid value: \"x\": must be empty when `operator` is 'Exists'",
      'spec.nodePlacement.tolerations[1].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      "spec.nodePlacement.tolerations[2].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
      'spec.nodePlacement.tolerations[3].effect: Unsupported value: "Sometimes": supported values: "", "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ],
  },
  {
    name: 'node selector keys and values',
    obj: dns({ nodePlacement: { nodeSelector: { 'example.com/role': 'infra', 'bad key': 'x', role: 'no spaces' } } }),
    want: [
      `spec.nodePlacement.nodeSelector[role]: Invalid value: "no spaces": must be a label value: A-Z, a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit`,
      `spec.nodePlacement.nodeSelector[bad key]: Invalid value: "bad key": must be a label key: an optional DNS-subdomain prefix and '/', then a name of A-Z, a-z, 0-9, '-', '_', '.'`,
    ],
  },
  {
    name: 'cache durations',
    obj: dns({ cache: { positiveTTL: '10', negativeTTL: '5 minutes' } }),
    want: ['spec.cache.positiveTTL: Invalid value: "10": must be a duration such as 30s, 5m or 1h', 'spec.cache.negativeTTL: Invalid value: "5 minutes": must be a duration such as 30s, 5m or 1h'],
  },
];

for (const c of cases) {
  test(`validateDNSResource: ${c.name}`, () => {
    const opts = c.clusterDomain === undefined ? {} : { clusterDomain: c.clusterDomain };
    assert.deepEqual(validateDNSResource(c.obj, opts).map(formatFieldError), c.want);
  });
}
