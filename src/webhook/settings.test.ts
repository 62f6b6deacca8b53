import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSettingsFile, resolveSettings } from './settings.js';
import type { SettingsFlags } from './settings.js';

interface Case {
  name: string;
  file: string;
  flags?: SettingsFlags;
  want?: unknown;
  errors?: string[];
}

const CASES: Case[] = [
  {
    name: 'the shipped nodecache settings',
    file: 'clusterDomain: cluster.local\nclusterDNS: [10.96.0.10]\nnodeCacheIP: 169.254.20.10\n',
    want: { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'], nodeCacheIP: '169.254.20.10' },
  },
  {
    name: 'an empty file takes everything from flags',
    file: '',
    flags: { clusterDNS: ['10.96.0.10'], nodeSearches: ['corp.example'] },
    want: { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'], nodeSearches: ['corp.example'] },
  },
  {
    name: 'flags win over the file',
    file: 'clusterDomain: k8s.example\nclusterDNS: [10.96.0.10]\n',
    flags: { clusterDomain: 'cluster.local', clusterDNS: ['10.0.0.10'] },
    want: { clusterDomain: 'cluster.local', clusterDNS: ['10.0.0.10'] },
  },
  {
    name: 'trailing dots are trimmed, IPv6 written as the kubelet writes it',
    file: 'clusterDomain: cluster.local.\nclusterDNS: ["FD00:0:0:0:0:0:0:A"]\nnodeSearches: [corp.example.]\n',
    want: { clusterDomain: 'cluster.local', clusterDNS: ['fd00::a'], nodeSearches: ['corp.example'] },
  },
  {
    name: 'IPv4-mapped and zero-padded addresses as the kubelet prints them',
    file: 'clusterDNS: ["::ffff:10.96.0.10", "010.096.000.011"]\n',
    want: { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10', '10.96.0.11'] },
  },
  {
    name: 'an empty nodeSearches list is configured (and $(HOST) expands to nothing)',
    file: 'clusterDNS: [10.96.0.10]\nnodeSearches: []\n',
    want: { clusterDomain: 'cluster.local', clusterDNS: ['10.96.0.10'], nodeSearches: [] },
  },
  { name: 'no cluster DNS anywhere', file: 'clusterDomain: cluster.local\n', errors: ["clusterDNS: required: the cluster DNS Service address (the kubelets' --cluster-dns)"] },
  { name: 'a cluster DNS that is not an address', file: 'clusterDNS: [kube-dns]\n', errors: ['clusterDNS[0]: "kube-dns" is not an IP address'] },
  { name: 'four cluster DNS addresses', file: 'clusterDNS: [10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4]\n', errors: ['clusterDNS: at most 3 addresses fit in a resolv.conf, got 4'] },
  { name: 'a bad node cache address', file: 'clusterDNS: [10.96.0.10]\nnodeCacheIP: 169.254.20\n', errors: ['nodeCacheIP: "169.254.20" is not an IP address'] },
  { name: 'an unknown key is named', file: 'clusterDNS: [10.96.0.10]\nnodeCacheIp: 169.254.20.10\n', errors: ['nodeCacheIp: unknown field (known: clusterDomain, clusterDNS, nodeCacheIP, nodeSearches)'] },
  { name: 'a string where a list belongs', file: 'clusterDNS: 10.96.0.10\n', errors: ['clusterDNS: must be a list of strings, not "10.96.0.10"'] },
  { name: 'not a mapping', file: '- 10.96.0.10\n', errors: ['must be a mapping of clusterDomain, clusterDNS, nodeCacheIP, nodeSearches'] },
  { name: 'not YAML', file: 'clusterDNS: [10.96.0.10\n', errors: ['not YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1:'] },
  {
    name: 'a node search path the API server would refuse',
    file: 'clusterDNS: [10.96.0.10]\nnodeSearches: [Corp_Example]\n',
    errors: [
      `nodeSearches[0]: Invalid value: "Corp_Example": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ],
  },
];

for (const c of CASES) {
  test(`webhook settings: ${c.name}`, () => {
    const parsed = parseSettingsFile(c.file);
    const resolved = parsed.errors.length > 0 ? { errors: parsed.errors } : resolveSettings(parsed.values, c.flags ?? {});
    if (c.errors !== undefined) {
      assert.deepEqual(resolved.errors, c.errors);
      assert.equal('settings' in resolved ? resolved.settings : undefined, undefined);
    } else {
      assert.deepEqual(resolved.errors, []);
      assert.deepEqual('settings' in resolved ? resolved.settings : undefined, c.want);
    }
  });
}
