// The README's local example of the node cache with autopath, run as the README says (ports
// moved to free loopback ones, and the node's resolvers to a port nothing listens on, so no
// query leaves loopback): a ClusterFirstWithAutopath pod's resolv.conf, and its first query
// through `kdns nodecache` in front of `kdns serve`.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { answers, dig } from '../testutil/dig.js';
import { runKdns, startKdns } from '../testutil/kdns.js';
import { freePort, waitFor } from '../testutil/net.js';
import { missing } from '../testutil/upstream.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const example = (name: string): string => `${root}examples/nodecache/${name}`;

/** `text` with `from` replaced by `to`, failing when `from` is not there (the test must follow the file). */
function rewrite(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `${JSON.stringify(from)} not found in:\n${text}`);
  return text.replace(from, to);
}

describe('examples/nodecache', () => {
  test('pod.yaml: one search path under ap.k8s.io, the node cache as nameserver', async () => {
    const r = await runKdns(['resolvconf', '-f', example('pod.yaml'), '--cluster-dns', '10.96.0.10', '--nodecache-ip', '169.254.20.10']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'search search.demo.cluster.local.ap.k8s.io\nnameserver 169.254.20.10\noptions ndots:5\n');
  });

  test('the README\'s commands: a short name answered in one query through the node cache', { skip: missing('dig', 'bind9-dnsutils') }, async () => {
    const [server, cache, health, metrics, dead] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const dir = mkdtempSync(join(tmpdir(), 'kdns-example-nodecache-'));
    const resolv = join(dir, 'resolv.conf');
    writeFileSync(resolv, `nameserver 127.0.0.1\nsearch corp.test\n`);
    let corefile = readFileSync(example('Corefile'), 'utf8');
    corefile = rewrite(corefile, '.:1053 {', `.:${server} {`);
    corefile = rewrite(corefile, 'manifests ../cluster', `manifests ${root}examples/cluster`);
    corefile = rewrite(corefile, 'autopath ap.k8s.io /etc/resolv.conf', `autopath ap.k8s.io ${resolv}`);
    corefile = rewrite(corefile, 'forward . /etc/resolv.conf', `forward . 127.0.0.1:${dead}`);
    writeFileSync(join(dir, 'Corefile'), corefile);
    const serve = startKdns(['serve', '--conf', join(dir, 'Corefile')]);
    // As in the README, but on free ports and with this test's resolv.conf as the node's.
    const nodecache = startKdns(['nodecache', '--local-ip', '127.0.0.1', '--port', String(cache), '--cluster-dns', `127.0.0.1:${server}`, '--health', `127.0.0.1:${health}`, '--metrics', `127.0.0.1:${metrics}`, '--upstream', `127.0.0.1:${dead}`, '--resolv-conf', resolv]);
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${health}/health`).catch(() => undefined))?.status === 200, 20_000);
      await waitFor(async () => (await dig('web.demo.svc.cluster.local', 'A', { port: server }).catch(() => undefined))?.status === 'NOERROR', 20_000);
      assert.deepEqual(answers(await dig('web.search.demo.cluster.local.ap.k8s.io', 'A', { port: cache })), ['A 10.96.100.10', 'CNAME web.demo.svc.cluster.local.']);
      assert.deepEqual(answers(await dig('db.search.demo.cluster.local.ap.k8s.io', 'A', { port: cache })).length, 4);
    } finally {
      await Promise.all([nodecache.stop(), serve.stop()]);
    }
  });
});
