// Autopath end to end with real resolvers. A cluster server (kdns serve: autopath, kubernetes
// over a fixture cluster, forward to a real BIND serving example.test and the node's search
// domain corp.test), the node cache in front of it (kdns nodecache, shipped configuration), and
// pods as a stock cluster with the kdns webhook admits them: a Deployment's pod asking for
// ClusterFirstWithAutopath with the annotation, created through a stock API server's admission
// path (test/util/webhookrig.ts), its resolv.conf the kubelet's for the admitted `None` pod;
// once with the node cache and the cluster DNS as nameservers, once with the one address a
// NodeLocal DNSCache-style cache holds for the cluster DNS; and ClusterFirst for comparison. Real glibc and musl getaddrinfo (test/util/realclient, in a network namespace)
// look names up; every query they send is counted at the relay. Then the node cache is gone: its
// address refuses (nothing listens), or is silent (packets dropped), the cluster DNS address
// behind it reaches the cluster server, and the answers must stay right; how long each lookup
// takes then is reported (test diagnostics).
//
// The measured table is the one in ./README.md (set KDNS_UPDATE_README=1 to rewrite it).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { register as registerResolvconf, type CliIO } from '../cli/resolvconf.js';
import { computePodDNS } from '../poddns/compute.js';
import type { PodSpec } from '../lib/cluster/types.js';
import { parseHostResolvConf, renderResolvConf } from '../poddns/resolvconf.js';
import { startWebhookRig } from '../../test/util/webhookrig.js';
import { createLogger } from '../server/log.js';
import { loadRealClient, type ClientResult, type Libc, type RealClientHarness, type Recorder } from '../../test/util/realclient.js';
import { startNamed, type NamedServer } from '../../test/util/upstream.js';
import { freePort } from '../../test/util/net.js';
import { startTestServer, type TestServer } from '../../test/util/server.js';
import { startNodeCache, type NodeCache } from './agent.js';
import { defaultSettings } from './corefile.js';

const REPO = new URL('../../', import.meta.url);
const FIXTURE = fileURLToPath(new URL('src/plugins/autopath/testdata/cluster', REPO));
const README = fileURLToPath(new URL('src/nodecache/README.md', REPO));
const IN_CI = process.env.CI === 'true';

const loaded = await loadRealClient();
const hasNamed = spawnSync('named', ['-v']).status === 0;
const skip = IN_CI ? false : loaded.harness === undefined ? loaded.skip : !hasNamed ? 'needs BIND: apt-get install bind9' : false;

/** The rig; under CI=true its absence fails the test with the reason. */
function rig(): RealClientHarness {
  assert.ok(loaded.harness, `realclient unavailable: ${loaded.reason}`);
  return loaded.harness;
}

// ---- the world ----
const EXAMPLE = ['www IN A 192.0.2.80', 'www IN AAAA 2001:db8::80', ...Array.from({ length: 40 }, (_, i) => `big IN A 192.0.2.${i + 1}`)].join('\n');
const CORP = 'printer IN A 192.0.2.99';
/** The node's resolv.conf: the kubelet's --resolv-conf, the node cache's and the cluster server's host search. */
const NODE_RESOLV = 'nameserver 192.0.2.53\nsearch corp.test\n';
const CLUSTER_DNS_IP = '10.96.0.10';
const NODECACHE_IP = '169.254.20.10';

type Policy = 'ClusterFirstWithAutopath' | 'ClusterFirst';
const POLICIES: readonly Policy[] = ['ClusterFirstWithAutopath', 'ClusterFirst'];
/** The pods of the table: autopath with the node cache then the cluster DNS, autopath with one address, ClusterFirst. */
type Pod = 'ClusterFirstWithAutopath' | 'ClusterFirstWithAutopath, one nameserver' | 'ClusterFirst';
const PODS: readonly Pod[] = ['ClusterFirstWithAutopath', 'ClusterFirstWithAutopath, one nameserver', 'ClusterFirst'];
const policyOf = (pod: Pod): Policy => (pod === 'ClusterFirst' ? 'ClusterFirst' : 'ClusterFirstWithAutopath');
const LIBCS: readonly Libc[] = ['glibc', 'musl'];

interface Lookup {
  name: string;
  what: string;
  addresses: string[];
  /** Queries the client sends (AF_UNSPEC) to one nameserver that answers, the same for glibc and musl. */
  queries: Record<Policy, number>;
}

const LOOKUPS: readonly Lookup[] = [
  { name: 'api', what: 'service in the pod\'s namespace', addresses: ['10.96.1.10'], queries: { ClusterFirstWithAutopath: 2, ClusterFirst: 2 } },
  { name: 'db.otherns', what: 'svc.otherns', addresses: ['10.96.2.20'], queries: { ClusterFirstWithAutopath: 2, ClusterFirst: 4 } },
  { name: 'db.otherns.svc', what: 'svc.otherns.svc', addresses: ['10.96.2.20'], queries: { ClusterFirstWithAutopath: 2, ClusterFirst: 6 } },
  { name: 'www.example.test', what: 'external name', addresses: ['192.0.2.80', '2001:db8::80'], queries: { ClusterFirstWithAutopath: 2, ClusterFirst: 10 } },
  { name: 'printer', what: 'name under the node\'s search path', addresses: ['192.0.2.99'], queries: { ClusterFirstWithAutopath: 2, ClusterFirst: 8 } },
  { name: 'nothing.example.test', what: 'name that exists nowhere', addresses: [], queries: { ClusterFirstWithAutopath: 4, ClusterFirst: 10 } },
];

type Phase = 'node cache' | 'node cache gone' | 'node cache silent';
const PHASES: readonly Phase[] = ['node cache', 'node cache gone', 'node cache silent'];
/** Which pods a phase concerns: a silent cache address matters only to a pod that lists it. */
const podsIn = (phase: Phase): readonly Pod[] => (phase === 'node cache silent' ? ['ClusterFirstWithAutopath'] : PODS);

/**
 * What the rig counts for one lookup. The two-nameserver autopath pod lists the node cache, then
 * the cluster DNS. While the node cache holds both addresses (as NodeLocal DNSCache does), glibc
 * asks the first only and musl sends every query to both at once: twice the queries. Once the
 * cache is gone, the queries the kernel refuses at its address never reach a listener and are not
 * counted; both libraries then get their answers from the cluster DNS. A silent cache address
 * reads every query and answers none: each is counted there and again at the cluster DNS. The
 * one-nameserver pod always sends one query per question.
 */
function expectedQueries(l: Lookup, pod: Pod, phase: Phase, libc: Libc): number {
  const twice = pod === 'ClusterFirstWithAutopath' && ((phase === 'node cache' && libc === 'musl') || phase === 'node cache silent');
  return l.queries[policyOf(pod)] * (twice ? 2 : 1);
}

/** Measured query counts: `${phase}|${policy}|${lookup}|${libc}` → count (and the error, if the lookup failed). */
const measured = new Map<string, string>();

function outcome(r: ClientResult): string {
  // How often musl repeats a SERVFAIL before giving up depends on timing: only the outcome is stable.
  return r.status === 0 || r.eai === 'EAI_NONAME' ? String(r.queries.length) : `fails (${r.eai ?? 'status ' + r.status})`;
}

/** Runs `kdns resolvconf` in this process for a pod of `policy` in ns1 and returns its output. */
async function kdnsResolvconf(dir: string, policy: Policy, hostFile: string): Promise<string> {
  const podFile = join(dir, `${policy}.yaml`);
  writeFileSync(podFile, `apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: ns1}\nspec:\n  dnsPolicy: ${policy}\n  containers: [{name: c, image: busybox}]\n`);
  let out = '';
  let err = '';
  let code = 0;
  const io: CliIO = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    readStdin: async () => '',
    setExitCode: (c) => void (code = c),
  };
  const program = new Command('kdns').exitOverride();
  registerResolvconf(program, io);
  await program.parseAsync(['resolvconf', '-f', podFile, '--cluster-dns', CLUSTER_DNS_IP, '--nodecache-ip', NODECACHE_IP, '--host-resolv-conf', hostFile], { from: 'user' });
  assert.equal(code, 0, `kdns resolvconf failed: ${err}`);
  return out;
}

/** How long each lookup took, for the report at the end. */
const lookupMs: Array<{ phase: Phase; pod: Pod; libc: Libc; ms: number }> = [];

/**
 * The resolv.conf the kubelet writes for the pod a stock API server admitted with the kdns
 * webhook: a Deployment's pod asking for ClusterFirstWithAutopath by annotation, `nodeCacheIP`
 * as the webhook's setting.
 */
async function admittedResolvConf(nodeCacheIP: string): Promise<string> {
  const webhook = await startWebhookRig({ settings: { clusterDomain: 'cluster.local', clusterDNS: [CLUSTER_DNS_IP], nodeCacheIP, nodeSearches: ['corp.test'] }, variant: 'deploy/nodecache' });
  try {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'client', annotations: { 'dns.kdns.io/policy': 'ClusterFirstWithAutopath' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    const r = await webhook.createPod('ns1', pod);
    assert.equal(r.code, 201, JSON.stringify(r.body));
    const spec = r.body['spec'] as PodSpec;
    assert.equal(spec.dnsPolicy, 'None');
    const node = { host: parseHostResolvConf(NODE_RESOLV).config, clusterDNS: [CLUSTER_DNS_IP], clusterDomain: 'cluster.local', nodeIPs: [] };
    return renderResolvConf(computePodDNS({ spec, namespace: 'ns1' }, node).config);
  } finally {
    await webhook.close();
  }
}

function sent(r: ClientResult): string {
  return r.queries.map((q) => `${q.transport} ${q.qname ?? '-'} ${q.qtype ?? '-'}`).join('\n');
}

describe('autopath with real glibc and musl', { skip }, () => {
  let named: NamedServer;
  let cluster: TestServer;
  let nodecache: NodeCache | undefined;
  let nodecachePort: number;
  const resolvConf = new Map<Pod, string>();
  const fromResolvconf = new Map<Policy, string>();

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdns-autopath-e2e-'));
    const hostFile = join(dir, 'node-resolv.conf');
    writeFileSync(hostFile, NODE_RESOLV);
    named = await startNamed(await freePort(), { 'example.test': EXAMPLE, 'corp.test': CORP });
    // The ap.k8s.io scheme alone (no pod watch); the node's resolv.conf gives the host paths.
    cluster = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    errors
    autopath ap.k8s.io ${hostFile}
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        manifests ${FIXTURE}
    }
    forward . 127.0.0.1:${named.port}
    cache 30
}
`,
    );
    nodecachePort = await freePort();
    const settings = {
      ...defaultSettings(`127.0.0.1:${cluster.port}`, ['127.0.0.1']),
      port: nodecachePort,
      upstreams: [`127.0.0.1:${named.port}`],
      nodeResolvConf: hostFile,
      health: `127.0.0.1:${await freePort()}`,
      metrics: `127.0.0.1:${await freePort()}`,
    };
    nodecache = await startNodeCache({ kind: 'rendered', settings }, createLogger(() => undefined));
    for (const p of POLICIES) fromResolvconf.set(p, await kdnsResolvconf(dir, p, hostFile));
    resolvConf.set('ClusterFirst', fromResolvconf.get('ClusterFirst') as string);
    resolvConf.set('ClusterFirstWithAutopath', await admittedResolvConf(NODECACHE_IP));
    // A cache that also holds the cluster DNS address: the webhook's nodeCacheIP is that address.
    resolvConf.set('ClusterFirstWithAutopath, one nameserver', await admittedResolvConf(CLUSTER_DNS_IP));
  });
  after(async () => {
    await nodecache?.stop();
    await cluster?.stop();
    await named?.stop();
  });

  test('the pods get the expected files, the webhook\'s the same as kdns resolvconf\'s', () => {
    assert.equal(resolvConf.get('ClusterFirstWithAutopath'), `search search.ns1.cluster.local.ap.k8s.io\nnameserver ${NODECACHE_IP}\nnameserver ${CLUSTER_DNS_IP}\noptions ndots:5\n`);
    assert.equal(resolvConf.get('ClusterFirstWithAutopath'), fromResolvconf.get('ClusterFirstWithAutopath'));
    assert.equal(resolvConf.get('ClusterFirstWithAutopath, one nameserver'), `search search.ns1.cluster.local.ap.k8s.io\nnameserver ${CLUSTER_DNS_IP}\noptions ndots:5\n`);
    assert.equal(resolvConf.get('ClusterFirst'), `search ns1.svc.cluster.local svc.cluster.local cluster.local corp.test\nnameserver ${CLUSTER_DNS_IP}\noptions ndots:5\n`);
  });

  /**
   * Where each nameserver of a pod's resolv.conf leads. With the node cache, both addresses are
   * the cache's (it intercepts the cluster DNS address too); without it, the cache's address
   * refuses and the cluster DNS address reaches the cluster server (kube-proxy's path).
   */
  function routes(phase: Phase, pod: Pod): { server: string } | { routes: Record<string, string> } {
    if (phase === 'node cache') return { server: `127.0.0.1:${nodecachePort}` };
    if (pod !== 'ClusterFirstWithAutopath') return { server: `127.0.0.1:${cluster.port}` };
    return { routes: { [NODECACHE_IP]: phase === 'node cache gone' ? 'refuse' : 'drop', [CLUSTER_DNS_IP]: `127.0.0.1:${cluster.port}` } };
  }

  for (const phase of PHASES) {
    describe(`pods with the ${phase}`, { concurrency: 4 }, () => {
      if (phase === 'node cache gone') {
        before(async () => {
          await nodecache?.stop();
          nodecache = undefined;
        });
      }
      for (const pod of podsIn(phase)) {
        for (const l of LOOKUPS) {
          for (const libc of LIBCS) {
            test(`${pod}, ${libc}: ${l.what} (${l.name})`, async (t) => {
              const r = await rig().runClient({ resolvConf: resolvConf.get(pod) as string, name: l.name, libc, ...routes(phase, pod) });
              t.diagnostic(`getaddrinfo took ${r.clientMs.toFixed(1)} ms`);
              lookupMs.push({ phase, pod, libc, ms: r.clientMs });
              measured.set(`${phase}|${pod}|${l.name}|${libc}`, outcome(r));
              const context = `queries sent:\n${sent(r)}\nstderr: ${r.stderr}`;
              if (l.addresses.length === 0) {
                assert.equal(r.status, 2, context);
                assert.equal(r.eai, 'EAI_NONAME', context);
              } else {
                assert.equal(r.status, 0, context);
                assert.deepEqual([...new Set(r.addresses)].sort(), [...l.addresses].sort(), context);
              }
              assert.equal(r.queries.length, expectedQueries(l, pod, phase, libc), context);
            });
          }
        }
      }

      // 40 addresses do not fit 512 bytes: glibc asks again over TCP, musl (no TCP fallback)
      // uses what fits. Either way the CNAME must come through and the lookup succeed.
      for (const libc of phase === 'node cache silent' ? [] : LIBCS) {
        test(`ClusterFirstWithAutopath, ${libc}: an answer larger than 512 bytes (big.example.test, 40 addresses)`, async () => {
          const r = await rig().runClient({ resolvConf: resolvConf.get('ClusterFirstWithAutopath') as string, name: 'big.example.test', libc, ...routes(phase, 'ClusterFirstWithAutopath') });
          const context = `queries sent:\n${sent(r)}\nstderr: ${r.stderr}`;
          assert.equal(r.status, 0, context);
          const addresses = new Set(r.addresses);
          assert.ok(r.queries.every((q) => q.qname === 'big.example.test.search.ns1.cluster.local.ap.k8s.io'), context);
          if (libc === 'glibc') {
            assert.equal(addresses.size, 40, context);
            // glibc 2.36 runs the whole lookup twice when an answer needed TCP, with or without
            // autopath (the same 8 queries for a plain 40-address name): not a search walk.
            assert.deepEqual(
              r.queries.map((q) => `${q.transport} ${q.qtype}`),
              ['udp A', 'udp AAAA', 'tcp A', 'tcp AAAA', 'udp A', 'udp AAAA', 'tcp A', 'tcp AAAA'],
              context,
            );
          } else {
            assert.ok(addresses.size >= 20 && addresses.size < 40, `musl got ${addresses.size} addresses\n${context}`);
            // Both nameservers asked at once while the cache holds both addresses.
            assert.deepEqual(
              r.queries.map((q) => `${q.transport} ${q.qtype}`).sort(),
              phase === 'node cache' ? ['udp A', 'udp A', 'udp AAAA', 'udp AAAA'] : ['udp A', 'udp AAAA'],
              context,
            );
          }
        });
      }
    });
  }

  // musl gives up its whole search at a SERVFAIL. A node search domain whose server fails
  // (flaky.test, before corp.test) therefore breaks `printer` for a musl ClusterFirst pod; with
  // autopath the server skips the failing candidate and the pod gets its answer.
  describe('a node search domain whose server answers SERVFAIL', { concurrency: 4 }, () => {
    let flaky: Recorder;
    let server: TestServer;
    const conf = new Map<Policy, string>();
    before(async () => {
      flaky = await rig().startRecorder({ zone: { 'printer.flaky.test': { rcode: 'SERVFAIL' } } });
      const dir = mkdtempSync(join(tmpdir(), 'kdns-autopath-flaky-'));
      const hostFile = join(dir, 'node-resolv.conf');
      writeFileSync(hostFile, 'nameserver 192.0.2.53\nsearch flaky.test corp.test\n');
      server = await startTestServer(
        `.:{PORT} {
    bind 127.0.0.1
    autopath ap.k8s.io ${hostFile}
    kubernetes cluster.local {
        manifests ${FIXTURE}
    }
    forward flaky.test 127.0.0.1:${flaky.port}
    forward . 127.0.0.1:${named.port}
}
`,
      );
      // Short resolver timeouts, so musl's retries of the SERVFAIL end within a second.
      for (const p of POLICIES) conf.set(p, (await kdnsResolvconf(dir, p, hostFile)).replace('options ndots:5', 'options ndots:5 timeout:1 attempts:1'));
    });
    after(async () => {
      await server?.stop();
      await flaky?.close();
    });
    const cases: Array<{ policy: Policy; libc: Libc; status: number; eai: string | null; sent: number }> = [
      { policy: 'ClusterFirstWithAutopath', libc: 'glibc', status: 0, eai: null, sent: 2 },
      // Both of the pod's nameservers lead to this server: musl asks each at once.
      { policy: 'ClusterFirstWithAutopath', libc: 'musl', status: 0, eai: null, sent: 4 },
      // glibc asks the failing domain again, then goes on to corp.test.
      { policy: 'ClusterFirst', libc: 'glibc', status: 0, eai: null, sent: 10 },
      // musl retries the SERVFAIL until its timeout and gives up: the name is never found.
      { policy: 'ClusterFirst', libc: 'musl', status: 2, eai: 'EAI_AGAIN', sent: -1 },
    ];
    for (const c of cases) {
      test(`${c.policy}, ${c.libc}: printer`, async () => {
        const r = await rig().runClient({ resolvConf: conf.get(c.policy) as string, name: 'printer', libc: c.libc, server: `127.0.0.1:${server.port}` });
        measured.set(`flaky|${c.policy}|printer|${c.libc}`, outcome(r));
        const context = `queries sent:\n${sent(r)}\nstderr: ${r.stderr}`;
        assert.equal(r.status, c.status, context);
        assert.equal(r.eai, c.eai, context);
        if (c.status === 0) assert.deepEqual([...new Set(r.addresses)], ['192.0.2.99'], context);
        if (c.sent >= 0) assert.equal(r.queries.length, c.sent, context);
      });
    }
  });

  test('lookup times by phase (reported, not asserted: speed is for benchmarks)', (t) => {
    for (const phase of PHASES) {
      for (const pod of podsIn(phase)) {
        for (const libc of LIBCS) {
          const ms = lookupMs.filter((x) => x.phase === phase && x.pod === pod && x.libc === libc).map((x) => x.ms).sort((a, b) => a - b);
          if (ms.length === 0) continue;
          t.diagnostic(`${phase}, ${pod}, ${libc}: median ${(ms[Math.floor(ms.length / 2)] as number).toFixed(1)} ms, max ${(ms[ms.length - 1] as number).toFixed(1)} ms over ${ms.length} lookups`);
        }
      }
    }
    assert.ok(lookupMs.length > 0);
  });

  test('the README table is the measured one', () => {
    const table = renderTable(measured);
    const text = readFileSync(README, 'utf8');
    const updated = replaceTable(text, table);
    if (process.env.KDNS_UPDATE_README === '1') {
      writeFileSync(README, updated);
      return;
    }
    assert.equal(text, updated, 'src/nodecache/README.md differs from the measured table; rerun with KDNS_UPDATE_README=1');
  });
});

const START = '<!-- e2e-table:start (written by src/nodecache/e2e.realclient.test.ts) -->';
const END = '<!-- e2e-table:end -->';

/** lookup × pod rows; glibc and musl in each phase as columns; then the failing-domain case. */
function renderTable(m: ReadonlyMap<string, string>): string {
  const head = `| lookup | pod | ${PHASES.flatMap((phase) => LIBCS.map((libc) => `${libc}, ${phase}`)).join(' | ')} |\n|---|---|${PHASES.flatMap(() => LIBCS.map(() => '---:')).join('|')}|`;
  const rows: string[] = [];
  for (const l of LOOKUPS) {
    for (const pod of PODS) {
      const cells = PHASES.flatMap((phase) => LIBCS.map((libc) => m.get(`${phase}|${pod}|${l.name}|${libc}`) ?? '–'));
      rows.push(`| ${l.what} (\`${l.name}\`) | ${pod} | ${cells.join(' | ')} |`);
    }
  }
  const flakyHead = '| `printer`, node search `flaky.test corp.test`, flaky.test answers SERVFAIL | glibc | musl |\n|---|---:|---:|';
  const flakyRows = POLICIES.map((policy) => `| ${policy} | ${LIBCS.map((libc) => m.get(`flaky|${policy}|printer|${libc}`) ?? '–').join(' | ')} |`);
  return `${head}\n${rows.join('\n')}\n\n${flakyHead}\n${flakyRows.join('\n')}`;
}

function replaceTable(text: string, table: string): string {
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) return `${text}\n${START}\n${table}\n${END}\n`;
  return `${text.slice(0, a + START.length)}\n${table}\n${text.slice(b)}`;
}
