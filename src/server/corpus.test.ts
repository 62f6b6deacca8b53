// The Corefiles real clusters run (kubeadm, k3s, AKS with coredns-custom, EKS, the Helm chart,
// OpenShift's operator, NodeLocal DNSCache, RKE2, kube-dns-style stub domains) and common users'
// additions: each loads with `kdns corefile check`'s code path, and a few are served and asked
// with dig. The files are under testdata/corefiles/, each citing where it comes from.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { hostname, tmpdir } from 'node:os';
import { checkCorefile, describeListens } from './check.js';
import { createLogger } from './log.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { freePort } from '../../test/util/net.js';
import { dig, answers } from '../../test/util/dig.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const corpusDir = join(here, 'testdata', 'corefiles');
const clusterDir = join(here, '..', 'plugins', 'kubernetes', 'testdata', 'cluster');

const corpus: Array<{ file: string; listens: string; blocks: number }> = [
  { file: 'kubeadm.Corefile', blocks: 1, listens: 'dns://:53 (1 zone)' },
  { file: 'k3s.Corefile', blocks: 1, listens: 'dns://:53 (1 zone)' },
  { file: 'aks/Corefile', blocks: 5, listens: 'dns://:53 (5 zones)' },
  { file: 'eks.Corefile', blocks: 1, listens: 'dns://:53 (1 zone)' },
  { file: 'helm-chart.Corefile', blocks: 1, listens: 'dns://:53 (1 zone)' },
  { file: 'openshift.Corefile', blocks: 3, listens: 'dns://:5353 (4 zones)' },
  { file: 'nodelocaldns.Corefile', blocks: 4, listens: 'dns://169.254.20.10:53 (4 zones), dns://10.96.0.10:53 (4 zones)' },
  { file: 'rke2.Corefile', blocks: 1, listens: 'dns://:53 (1 zone)' },
  { file: 'gke-stubdomains.Corefile', blocks: 2, listens: 'dns://:53 (2 zones)' },
  { file: 'additions.Corefile', blocks: 1, listens: 'dns://:53 (1 zone)' },
];

describe('Corefile corpus: every file loads', () => {
  for (const c of corpus) {
    test(c.file, async () => {
      const path = join(corpusDir, c.file);
      const result = await checkCorefile(path, readFileSync(path, 'utf8'), { defaultPort: 53, clusterDir }, createLogger(() => undefined));
      assert.deepEqual({ blocks: result.blocks, listens: describeListens(result.listens) }, { blocks: c.blocks, listens: c.listens });
    });
  }
});

/**
 * A corpus Corefile made runnable in a test: its DNS port becomes a free one on 127.0.0.1, the
 * fixed HTTP ports of health/ready/prometheus become free ones, and /etc/resolv.conf becomes
 * one naming only loopback (the loop plugin's probe must not leave the machine).
 */
async function runnable(text: string, dnsPort: number, resolvConf: string): Promise<string> {
  const port = async (): Promise<string> => `127.0.0.1:${await freePort()}`;
  let out = text.replace(/^[^\s#].*\{$/gm, (keys) => keys.replace(/:(53|5353)\b/g, `:${dnsPort}`));
  const lines = out.split('\n');
  for (const [i, line] of lines.entries()) {
    const m = /^(\s+)(health|ready|prometheus)\b[^{]*(\{)?$/.exec(line);
    if (m) lines[i] = `${m[1]}${m[2]} ${await port()} ${m[3] ?? ''}`;
  }
  out = lines.join('\n');
  out = out.replace(/^(\S.*\{)$/gm, '$1\n    bind 127.0.0.1');
  return out.replaceAll('/etc/resolv.conf', resolvConf);
}

describe('Corefile corpus: served and asked with dig', () => {
  const cases: Array<{ file: string; ask: Array<{ name: string; type: string; args?: string[]; want: string }> }> = [
    {
      file: 'kubeadm.Corefile',
      ask: [
        { name: 'kubernetes.default.svc.cluster.local', type: 'A', want: 'NOERROR A 10.96.0.1' },
        { name: '1.0.96.10.in-addr.arpa', type: 'PTR', want: 'NOERROR PTR kubernetes.default.svc.cluster.local.' },
        { name: 'nothere.default.svc.cluster.local', type: 'A', want: 'NXDOMAIN' },
      ],
    },
    {
      file: 'openshift.Corefile',
      ask: [
        { name: 'kubernetes.default.svc.cluster.local', type: 'A', want: 'NOERROR A 10.96.0.1' },
        { name: 'hostname.bind', type: 'TXT', args: ['-c', 'CH'], want: `NOERROR TXT "${hostname()}"` },
      ],
    },
    {
      file: 'additions.Corefile',
      ask: [
        { name: 'kubernetes.default.svc.cluster.local', type: 'A', want: 'NOERROR A 10.96.0.1' },
        { name: 'localhost', type: 'A', want: 'NOERROR A 127.0.0.1' },
        { name: 'localhost.default.svc.cluster.local', type: 'AAAA', want: 'NOERROR AAAA ::1' },
        { name: 'kubernetes.default.svc.cluster.local', type: 'ANY', want: 'REFUSED' },
      ],
    },
  ];
  // Only names answered on the machine are asked: the stub zones forward to addresses off it.
  for (const c of cases) {
    describe(c.file, () => {
      let srv: TestServer;
      before(async () => {
        const dnsPort = await freePort();
        const resolvConf = join(tmpdir(), `kdns-corpus-resolv-${process.pid}-${dnsPort}.conf`);
        writeFileSync(resolvConf, 'nameserver 127.0.0.1\n');
        const text = await runnable(readFileSync(join(corpusDir, c.file), 'utf8'), dnsPort, resolvConf);
        srv = await startTestServer(text, { clusterDir, port: dnsPort });
      });
      after(() => srv?.stop());
      for (const q of c.ask) {
        test(`${q.name} ${q.type}`, async () => {
          const r = await dig(q.name, q.type, { port: srv.port, args: q.args });
          assert.equal([r.status, ...answers(r)].join(' '), q.want);
        });
      }
    });
  }
});

/** The error checkCorefile gives for `text` (read as "Corefile"), or "OK". */
async function verdict(text: string): Promise<string> {
  try {
    await checkCorefile('Corefile', text, { defaultPort: 53 }, createLogger(() => undefined));
    return 'OK';
  } catch (e) {
    return (e as Error).message;
  }
}

// Users' additions from CoreDNS's plugin READMEs and setup tests (cases transcribed from
// plugin/{nsid,metadata,pprof,cancel,root,timeouts,minimal}/setup_test.go).
describe('Corefile corpus: common additions load, bad values name their line', () => {
  const cases: Array<{ corefile: string; want: string }> = [
    { corefile: '. {\n    minimal\n}', want: 'OK' },
    { corefile: '. {\n    minimal extra\n}', want: 'Corefile:2: wrong argument count for "minimal": expected no arguments, got 1' },
    { corefile: '. {\n    nsid\n}', want: 'OK' },
    { corefile: '. {\n    nsid "ps0"\n}', want: 'OK' },
    { corefile: '. {\n    nsid "tf 2"\n}', want: 'OK' },
    { corefile: '. {\n    nsid\n    nsid\n}', want: 'Corefile:3: nsid can only be used once per server block' },
    { corefile: '. {\n    metadata\n}', want: 'OK' },
    { corefile: '. {\n    metadata example.com. net.\n}', want: 'OK' },
    { corefile: '. {\n    metadata example.com. {\n        some_param\n    }\n}', want: 'Corefile:2: "metadata" does not take a block' },
    { corefile: '. {\n    metadata\n    metadata\n}', want: 'Corefile:3: metadata can only be used once per server block' },
    { corefile: '. {\n    pprof\n}', want: 'OK' },
    { corefile: '. {\n    pprof 1.2.3.4:1234\n}', want: 'OK' },
    { corefile: '. {\n    pprof :1234\n}', want: 'OK' },
    { corefile: '. {\n    pprof :1234 -1\n}', want: 'Corefile:2: wrong argument count for "pprof": expected at most 1, got 2' },
    { corefile: '. {\n    pprof /foo\n}', want: 'Corefile:2: invalid pprof address "/foo" (expected HOST:PORT)' },
    { corefile: '. {\n    pprof {\n        block\n    }\n}', want: 'OK' },
    { corefile: '. {\n    pprof {\n        block 20\n    }\n}', want: 'OK' },
    { corefile: '. {\n    pprof {\n        block 20 30\n    }\n}', want: 'Corefile:3: wrong argument count for "block": expected at most 1, got 2' },
    { corefile: '. {\n    pprof {\n        block invalid\n    }\n}', want: 'Corefile:3: invalid block rate: "invalid" is not an integer' },
    { corefile: '. {\n    pprof\n    pprof\n}', want: 'Corefile:3: pprof can only be used once per server block' },
    { corefile: '. {\n    cancel\n}', want: 'OK' },
    { corefile: '. {\n    cancel 2s\n}', want: 'OK' },
    { corefile: '. {\n    cancel 5 foo\n}', want: 'Corefile:2: wrong argument count for "cancel": expected at most 1, got 2' },
    { corefile: '. {\n    cancel -1s\n}', want: 'Corefile:2: cancel timeout must be at least 1ms, got -1s' },
    { corefile: '. {\n    root /tmp\n}', want: 'OK' },
    { corefile: '. {\n    root\n}', want: 'Corefile:2: wrong argument count for "root": expected 1, got 0' },
    { corefile: '. {\n    timeouts {\n        read 30s\n        write 20s\n        idle 60s\n    }\n}', want: 'OK' },
    { corefile: '. {\n    timeouts {\n        idle 1h\n    }\n}', want: 'OK' },
    { corefile: '. {\n    timeouts\n}', want: 'Corefile:2: timeouts needs a block with at least one of read, write, idle or maxtcpqueries' },
    { corefile: '. {\n    timeouts {\n        read 0s\n    }\n}', want: 'Corefile:3: timeouts read must be at least 1s, got 0s' },
    { corefile: '. {\n    timeouts {\n        write 25h\n    }\n}', want: 'Corefile:3: timeouts write must be at most 24h0m0s, got 25h' },
    { corefile: '. {\n    timeouts {\n        reed 30s\n    }\n}', want: 'Corefile:3: unknown property "reed" in timeouts block' },
  ];
  for (const c of cases) {
    test(c.corefile.split('\n').slice(1, -1).join(' ⏎ ').trim(), async () => {
      assert.equal(await verdict(c.corefile), c.want);
    });
  }
});
