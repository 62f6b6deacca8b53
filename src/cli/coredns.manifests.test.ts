// kdns in place of the CoreDNS image, run with the exact `args:` and Corefile of stock
// kube-system/coredns manifests (kubeadm's, the Helm chart's, k3s's), as a pod would run it: its own network
// namespace, the ConfigMap mounted at /etc/coredns, a service account at
// /var/run/secrets/kubernetes.io/serviceaccount with KUBERNETES_SERVICE_HOST/PORT pointing at an
// API server (the fake one, over HTTPS, in a second namespace that also holds the node's
// upstream resolver, a real named). Checked with dig and the probes' and scrape's URLs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseDig } from '../../test/util/dig.js';
import { kdnsCommand } from '../../test/util/kdns.js';
import { waitFor } from '../../test/util/net.js';
import { NetNs, Sandbox, netnsMissing, type Proc } from '../../test/util/netns.js';
import { apiServerIn, configMapDir, httpGetIn, namedIn, scratchDir, serviceAccountDir } from '../../test/util/pod.js';
import { parseExposition, value } from '../../test/util/prom.js';
import { exampleZone } from '../../test/util/upstream.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const IN_CI = process.env.CI === 'true';
const reason = netnsMissing('named', 'dig', 'openssl');
const skip = reason && !IN_CI ? reason : false;

const POD_IP = '10.123.0.1';
const UPSTREAM_IP = '10.123.0.2';
const API_PORT = 6443;

/** kubeadm's CoreDNS ConfigMap (cmd/kubeadm/app/phases/addons/dns/manifests.go) for cluster.local. */
const KUBEADM_COREFILE = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`;

/** The CoreDNS Helm chart's ConfigMap as its default values render it (coredns/helm charts/coredns). */
const HELM_COREFILE = `.:53 {
    errors
    health {
        lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    prometheus 0.0.0.0:9153
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
}
`;

/** k3s's coredns ConfigMap (manifests/coredns.yaml), with its NodeHosts key. */
const K3S_COREFILE = `.:53 {
    errors
    health
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
      pods insecure
      fallthrough in-addr.arpa ip6.arpa
    }
    hosts /etc/coredns/NodeHosts {
      ttl 60
      reload 15s
      fallthrough
    }
    prometheus :9153
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
}
`;

interface ManifestCase {
  name: string;
  /** The container's `args:` (the image's entrypoint being kdns). */
  args: string[];
  configMap: Record<string, string>;
  /** name, type → expected answers (sorted data). */
  answers: Array<[string, string, string[]]>;
}

const CLUSTER_ANSWERS: Array<[string, string, string[]]> = [
  ['cart.shop.svc.cluster.local', 'A', ['10.96.44.12']],
  // Headless: the ready endpoint only (10.244.2.9 is not ready).
  ['orders-db.shop.svc.cluster.local', 'A', ['10.244.1.7']],
  ['kube-dns.kube-system.svc.cluster.local', 'A', ['10.96.0.10']],
  ['12.44.96.10.in-addr.arpa', 'PTR', ['cart.shop.svc.cluster.local.']],
  // Not a cluster name: forwarded to the node's resolver (named, through /etc/resolv.conf).
  ['www.example.test', 'A', ['192.0.2.1']],
];

const CASES: ManifestCase[] = [
  { name: "kubeadm's Deployment", args: ['-conf', '/etc/coredns/Corefile'], configMap: { Corefile: KUBEADM_COREFILE }, answers: CLUSTER_ANSWERS },
  { name: "the CoreDNS Helm chart's Deployment", args: ['-conf', '/etc/coredns/Corefile'], configMap: { Corefile: HELM_COREFILE }, answers: CLUSTER_ANSWERS },
  {
    name: "k3s's Deployment",
    args: ['-conf', '/etc/coredns/Corefile'],
    configMap: { Corefile: K3S_COREFILE, NodeHosts: `${POD_IP} k3s-server\n` },
    answers: [...CLUSTER_ANSWERS, ['k3s-server', 'A', [POD_IP]]],
  },
];

describe('kdns with the args of stock CoreDNS manifests, in a pod-like namespace', { skip }, () => {
  let upstreamNs: NetNs;
  let podNs: NetNs;
  const procs: Proc[] = [];
  let caPem = '';

  before(async () => {
    upstreamNs = NetNs.create('up');
    podNs = NetNs.create('pod');
    podNs.link(upstreamNs, `${POD_IP}/24`, `${UPSTREAM_IP}/24`);
    procs.push(await namedIn(upstreamNs, UPSTREAM_IP, { 'example.test': exampleZone() }));
    const api = await apiServerIn(upstreamNs, UPSTREAM_IP, API_PORT);
    procs.push(api.proc);
    caPem = api.caPem;
  });
  after(async () => {
    for (const p of procs) await p.stop();
    podNs?.delete();
    upstreamNs?.delete();
  });

  for (const c of CASES) {
    test(`${c.name}: args ${JSON.stringify(c.args)} serve the cluster and the world`, async () => {
      const resolv = join(scratchDir('resolv'), 'resolv.conf');
      writeFileSync(resolv, `nameserver ${UPSTREAM_IP}\n`);
      const sandbox = new Sandbox({
        '/etc/coredns': configMapDir(c.configMap),
        '/var/run/secrets/kubernetes.io/serviceaccount': serviceAccountDir(caPem),
        '/etc/resolv.conf': resolv,
      });
      const env = { PATH: process.env.PATH, KUBERNETES_SERVICE_HOST: UPSTREAM_IP, KUBERNETES_SERVICE_PORT: String(API_PORT) };
      const kdns = podNs.spawn([process.execPath, ...kdnsCommand(c.args)], { env, sandbox });
      let stopped: Promise<number | null> | undefined;
      try {
        // The readiness probe (kubeadm: /ready on 8181) passes once the API has been synced.
        await waitFor(() => httpGetIn(podNs, 'http://127.0.0.1:8181/ready').status === 200 || kdns.child.exitCode !== null, 30_000, 200);
        assert.equal(kdns.child.exitCode, null, kdns.output());
        assert.deepEqual(httpGetIn(podNs, 'http://127.0.0.1:8080/health'), { status: 200, body: 'OK' });
        for (const [name, type, want] of c.answers) {
          const r = parseDig(podNs.run(['dig', `@${POD_IP}`, name, type, '+time=3', '+tries=1']).stdout);
          assert.equal(r.status, 'NOERROR', `${name} ${type}: ${r.raw}\n${kdns.output()}`);
          assert.deepEqual(r.answer.map((a) => a.data).sort(), want, `${name} ${type}`);
        }
        const scrape = httpGetIn(podNs, 'http://127.0.0.1:9153/metrics');
        assert.equal(scrape.status, 200);
        const samples = parseExposition(scrape.body);
        assert.equal(value(samples, 'coredns_dns_requests_total', { server: 'dns://:53', zone: '.', type: 'A' }), c.answers.filter(([, t]) => t === 'A').length);
        assert.equal(value(samples, 'coredns_proxy_request_duration_seconds_count', { proxy_name: 'forward', to: `${UPSTREAM_IP}:53`, rcode: 'NOERROR' }), 1);
        stopped = kdns.stop();
        // SIGTERM: lameduck (kubeadm: 5 s), then exit 0.
        assert.equal(await stopped, 0, kdns.output());
      } finally {
        if (!stopped) await kdns.stop();
      }
    });
  }
});
