// The node-local-dns ConfigMap's template rendered as node-cache renders it (every placeholder
// node-cache fills in, IPv4, IPv6 and dual-stack local addresses), and the kube-dns ConfigMap
// read as node-cache reads it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { STOCK_TEMPLATE } from '../../test/util/manifests.js';
import { EMPTY_KUBE_DNS_CONFIG, PillarError, parseKubeDnsConfig, renderTemplate, serviceHostEnv, type KubeDnsConfig, type PillarValues } from './pillars.js';

const values = (kubeDns: KubeDnsConfig = EMPTY_KUBE_DNS_CONFIG, clusterDNS: string | null = '10.96.0.11', more: Partial<PillarValues> = {}): PillarValues => ({
  localIPs: ['169.254.20.10', '10.96.0.10'],
  port: 53,
  clusterDNS: clusterDNS ?? undefined,
  kubeDns,
  prometheusEndpoint: ':9253',
  ...more,
});

describe('renderTemplate', () => {
  test('the stock template: cluster DNS from the upstream Service, the rest to /etc/resolv.conf', () => {
    const out = renderTemplate(STOCK_TEMPLATE, values());
    assert.equal(out, STOCK_TEMPLATE.replaceAll('__PILLAR__CLUSTER__DNS__', '10.96.0.11').replace('__PILLAR__UPSTREAM__SERVERS__', '/etc/resolv.conf'));
  });

  const cases: Array<{ name: string; template: string; kubeDns?: KubeDnsConfig; more?: Partial<PillarValues>; want: string }> = [
    {
      name: 'local addresses and the DNS server placeholder (IPVS-mode templates keep them)',
      template: 'bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__\nhealth __PILLAR__LOCAL__DNS__:8080\n',
      want: 'bind 169.254.20.10 10.96.0.10 \nhealth 169.254.20.10 10.96.0.10:8080\n',
    },
    {
      name: 'upstreamNameservers replace the TCP forward of "." with UDP ones',
      template: '.:53 {\n    forward . __PILLAR__UPSTREAM__SERVERS__ {\n            force_tcp\n    }\n}\n',
      kubeDns: { stubDomains: {}, upstreamNameservers: ['10.0.0.53', '10.0.0.54:5353'] },
      want: '.:53 {\n    forward . 10.0.0.53 10.0.0.54:5353\n}\n',
    },
    {
      name: 'upstreamNameservers in a UDP forward: put in place',
      template: '    forward . __PILLAR__UPSTREAM__SERVERS__\n',
      kubeDns: { stubDomains: {}, upstreamNameservers: ['10.0.0.53'] },
      want: '    forward . 10.0.0.53\n',
    },
    {
      name: 'stubDomains: one block each, sorted, on the local addresses',
      template: '',
      kubeDns: { stubDomains: { 'corp.example': ['10.0.0.7'], 'acme.local': ['10.0.0.8', '10.0.0.9'] }, upstreamNameservers: [] },
      want:
        '\nacme.local:53 {\n    errors\n    cache 30\n    bind 169.254.20.10 10.96.0.10\n    forward . 10.0.0.8 10.0.0.9\n}\n' +
        '\ncorp.example:53 {\n    errors\n    cache 30\n    bind 169.254.20.10 10.96.0.10\n    forward . 10.0.0.7\n}\n',
    },
    {
      name: '__PROMETHEUS__ENDPOINT__: the default of -prometheus-listen-address',
      template: '.:53 {\n    prometheus __PROMETHEUS__ENDPOINT__\n}\n',
      want: '.:53 {\n    prometheus :9253\n}\n',
    },
    {
      name: '__PROMETHEUS__ENDPOINT__: the address -prometheus-listen-address gives, in every block',
      template: 'a:53 {\n    prometheus __PROMETHEUS__ENDPOINT__\n}\nb:53 {\n    prometheus __PROMETHEUS__ENDPOINT__\n}\n',
      more: { prometheusEndpoint: '169.254.20.10:9253' },
      want: 'a:53 {\n    prometheus 169.254.20.10:9253\n}\nb:53 {\n    prometheus 169.254.20.10:9253\n}\n',
    },
    {
      name: 'dual-stack: both families\' local addresses where the template binds, and IPv6 cluster DNS',
      template: 'bind __PILLAR__LOCAL__DNS__ __PILLAR__DNS__SERVER__\nforward . __PILLAR__CLUSTER__DNS__\n',
      more: { localIPs: ['169.254.20.10', 'fd00::10', '10.96.0.10', 'fd00:10:96::a'], clusterDNS: 'fd00:10:96::b' },
      want: 'bind 169.254.20.10 fd00::10 10.96.0.10 fd00:10:96::a \nforward . fd00:10:96::b\n',
    },
    {
      name: 'dual-stack: a stub domain\'s block binds both families',
      template: '',
      kubeDns: { stubDomains: { 'acme.local': ['10.0.0.8'] }, upstreamNameservers: [] },
      more: { localIPs: ['169.254.20.10', 'fd00::10'] },
      want: '\nacme.local:53 {\n    errors\n    cache 30\n    bind 169.254.20.10 fd00::10\n    forward . 10.0.0.8\n}\n',
    },
    {
      name: 'the cluster domain\'s placeholder is the install instructions\' sed, not node-cache\'s: left as written',
      template: '__PILLAR__DNS__DOMAIN__:53 {\n    errors\n}\n',
      want: '__PILLAR__DNS__DOMAIN__:53 {\n    errors\n}\n',
    },
  ];
  for (const c of cases) test(c.name, () => assert.equal(renderTemplate(c.template, values(c.kubeDns, '10.96.0.11', c.more)), c.want));

  test('the cluster DNS placeholder with no upstream Service IP is an error, not a Corefile with a hole', () => {
    assert.throws(() => renderTemplate(STOCK_TEMPLATE, values(EMPTY_KUBE_DNS_CONFIG, null)), { name: 'PillarError', message: "__PILLAR__CLUSTER__DNS__ is used but the upstream Service's IP is unknown" });
  });
  test('a template without it does not need the Service', () => {
    assert.equal(renderTemplate('. {\n    whoami\n}\n', values(EMPTY_KUBE_DNS_CONFIG, null)), '. {\n    whoami\n}\n');
  });
});

describe('parseKubeDnsConfig', () => {
  const ok: Array<{ name: string; files: Record<string, string>; want: KubeDnsConfig }> = [
    { name: 'empty ConfigMap', files: {}, want: { stubDomains: {}, upstreamNameservers: [] } },
    {
      name: 'both keys',
      files: { stubDomains: '{"acme.local": ["1.2.3.4"], "corp": ["10.0.0.1:5353"]}', upstreamNameservers: '["8.8.8.8", "tls://9.9.9.9"]', federations: '{"x": "y.z"}' },
      want: { stubDomains: { 'acme.local': ['1.2.3.4'], corp: ['10.0.0.1:5353'] }, upstreamNameservers: ['8.8.8.8', 'tls://9.9.9.9'] },
    },
  ];
  for (const c of ok) test(c.name, () => assert.deepEqual(parseKubeDnsConfig(new Map(Object.entries(c.files))), c.want));

  const bad: Array<{ name: string; files: Record<string, string>; error: string | RegExp }> = [
    { name: 'stubDomains not JSON', files: { stubDomains: '{acme' }, error: /^stubDomains: .*JSON/ },
    { name: 'stubDomains a list', files: { stubDomains: '["x"]' }, error: 'stubDomains: must be a JSON object of domain → nameservers' },
    { name: 'bad domain', files: { stubDomains: '{"Bad_Domain": ["1.2.3.4"]}' }, error: 'stubDomains: invalid domain name: "Bad_Domain"' },
    { name: 'nameserver a host name', files: { upstreamNameservers: '["dns.google"]' }, error: 'upstreamNameservers: "dns.google": not an IP address or file' },
    { name: 'nameservers not a list of strings', files: { upstreamNameservers: '[53]' }, error: 'upstreamNameservers: must be a list of strings' },
    { name: 'unsupported transport', files: { stubDomains: '{"a.b": ["https://1.2.3.4"]}' }, error: 'stubDomains["a.b"]: "https://1.2.3.4": transport https:// is not supported by kdns (use dns:// or tls://)' },
  ];
  for (const c of bad) {
    test(`invalid: ${c.name}`, () => {
      assert.throws(() => parseKubeDnsConfig(new Map(Object.entries(c.files))), (e: unknown) => {
        assert.ok(e instanceof PillarError);
        if (typeof c.error === 'string') assert.equal(e.message, c.error);
        else assert.match(e.message, c.error);
        return true;
      });
    });
  }
});

describe('serviceHostEnv', () => {
  const envs: Array<[string, string]> = [
    ['kube-dns', 'KUBE_DNS_SERVICE_HOST'],
    ['kube-dns-upstream', 'KUBE_DNS_UPSTREAM_SERVICE_HOST'],
    ['coredns', 'COREDNS_SERVICE_HOST'],
  ];
  for (const [svc, env] of envs) test(`${svc} → ${env}`, () => assert.equal(serviceHostEnv(svc), env));
});
