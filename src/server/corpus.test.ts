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
import { startTestServer, type TestServer } from '../testutil/server.js';
import { freePort } from '../testutil/net.js';
import { dig, answers } from '../testutil/dig.js';

const here = fileURLToPath(new URL('.', import.meta.url));
// Compiled tests run from dist/: the data stays in src/.
const corpusDir = join(here.replace(/\/dist\//, '/src/'), 'testdata', 'corefiles');
const clusterDir = join(here.replace(/\/dist\//, '/src/'), '..', 'plugins', 'kubernetes', 'testdata', 'cluster');

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
