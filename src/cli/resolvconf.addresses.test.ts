// The addresses `kdns resolvconf` takes (--cluster-dns, --nodecache-ip, --node-ip) read as the
// kubelet reads its --cluster-dns (Go's ParseIPSloppy) and written as it writes them (Go's
// net.IP String()): `FD00:0:0:0:0:0:0:A` becomes `nameserver fd00::a`. Run in-process through
// commander with captured I/O.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { kubeletIPString } from '../poddns/kubeletip.js';
import { register } from './resolvconf.js';
import { runCli } from '../../test/util/cli.js';
import type { CliRun } from '../../test/util/cli.js';

const stringRows: Array<{ given: string; want: string | undefined }> = [
  { given: 'FD00:0:0:0:0:0:0:A', want: 'fd00::a' },
  { given: 'fd00::a', want: 'fd00::a' },
  { given: '2001:DB8:0:0:1:0:0:1', want: '2001:db8::1:0:0:1' }, // the first of two equal runs
  { given: '2001:db8:0:1:0:0:0:1', want: '2001:db8:0:1::1' }, // the longest run; one zero group stays
  { given: '0:0:0:0:0:0:0:0', want: '::' },
  { given: '::ffff:10.96.0.10', want: '10.96.0.10' }, // IPv4-mapped is written as IPv4
  { given: '::FFFF:A60:A', want: '10.96.0.10' },
  { given: 'fd00::10.96.0.10', want: 'fd00::a60:a' },
  { given: '10.96.0.10', want: '10.96.0.10' },
  { given: '010.096.000.010', want: '10.96.0.10' }, // ParseIPSloppy: leading zeros are decimal
  { given: 'fe80::1%eth0', want: undefined }, // no zone
  { given: '[fd00::a]', want: undefined },
  { given: '10.96.0.0/12', want: undefined },
  { given: '10.96.0', want: undefined },
  { given: '256.1.1.1', want: undefined },
];

for (const row of stringRows) {
  test(`kubeletIPString(${JSON.stringify(row.given)}) → ${JSON.stringify(row.want)}`, () => {
    assert.equal(kubeletIPString(row.given), row.want);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'kdns-resolvconf-addresses-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const pod = (policy: string): string => `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ns1}
spec:
  dnsPolicy: ${policy}
  containers: [{name: c, image: nginx}]
`;
const CLUSTER_FIRST = file('clusterfirst.yaml', pod('ClusterFirst'));
const AUTOPATH = file('autopath.yaml', pod('ClusterFirstWithAutopath'));
const DEFAULT = file('default.yaml', pod('Default'));
const HOST = file('host.conf', 'nameserver 192.0.2.53\n');

function kdns(args: string[]): Promise<CliRun> {
  return runCli([register], ['resolvconf', ...args]);
}

const cliRows: Array<{ what: string; args: string[]; code: number; out: string; err: string }> = [
  {
    what: '--cluster-dns in full IPv6 form is written canonically',
    args: ['-f', CLUSTER_FIRST, '--host-resolv-conf', HOST, '--cluster-dns', 'FD00:0:0:0:0:0:0:A'],
    code: 0,
    out: 'search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver fd00::a\noptions ndots:5\n',
    err: '',
  },
  {
    what: 'every --cluster-dns address, IPv4 leading zeros and IPv4-mapped included',
    args: ['-f', CLUSTER_FIRST, '--host-resolv-conf', HOST, '--cluster-dns', '010.096.000.010, ::FFFF:10.96.0.11 ,FD00::0:B'],
    code: 0,
    out: 'search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\nnameserver 10.96.0.11\nnameserver fd00::b\noptions ndots:5\n',
    err: '',
  },
  {
    what: '--nodecache-ip is written canonically too',
    args: ['-f', AUTOPATH, '--host-resolv-conf', HOST, '--cluster-dns', 'FD00::A', '--nodecache-ip', 'FD00:0:0:0:0:0:A9FE:140A'],
    code: 0,
    out: 'search search.ns1.cluster.local.ap.k8s.io\nnameserver fd00::a9fe:140a\nnameserver fd00::a\noptions ndots:5\n',
    err: '',
  },
  {
    what: '--node-ip in any IPv6 spelling picks ::1 without a host file',
    args: ['-f', DEFAULT, '--host-resolv-conf', '', '--node-ip', 'FD00:0:0:0:0:0:0:1'],
    code: 0,
    out: 'search .\nnameserver ::1\n',
    err: '',
  },
  {
    what: 'an address with a zone is refused, as the kubelet refuses it',
    args: ['-f', CLUSTER_FIRST, '--host-resolv-conf', HOST, '--cluster-dns', 'fe80::a%eth0'],
    code: 2,
    out: '',
    err: 'kdns resolvconf: --cluster-dns: "fe80::a%eth0" is not an IP address\n',
  },
  {
    what: 'a bad --nodecache-ip is named',
    args: ['-f', AUTOPATH, '--host-resolv-conf', HOST, '--cluster-dns', '10.96.0.10', '--nodecache-ip', '169.254.20'],
    code: 2,
    out: '',
    err: 'kdns resolvconf: --nodecache-ip: "169.254.20" is not an IP address\n',
  },
];

for (const row of cliRows) {
  test(`kdns resolvconf: ${row.what}`, async () => {
    assert.deepEqual(await kdns(row.args), { code: row.code, out: row.out, err: row.err });
  });
}
