// `kdns operator run` against an API server it cannot reach, inside a network namespace of the
// test's own (no route to 192.0.2.1; IPv6 switched off as on an IPv4-only node): every pass
// fails and is retried, and the operator keeps running until it is told to stop.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../test/util/net.js';
import { Netns, netnsUnavailable } from '../../test/util/nsrun.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsUnavailable();
const skip = reason && !IN_CI ? reason : false;

function kubeconfig(server: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ${server}
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: t
contexts:
- name: x
  context:
    cluster: c
    user: u
current-context: x
`;
}

describe('operator run with an API server it cannot reach', { skip }, () => {
  let ns: Netns;
  const dir = mkdtempSync(join(tmpdir(), 'kdns-operator-unreachable-'));

  before(async () => {
    ns = await Netns.create({ ipv6: false });
  });
  after(() => ns?.dispose());

  // At start the operator first creates the default DNS resource, then reconciles: each stage
  // must retry an unreachable API server rather than end.
  const cases = [
    { what: 'an IPv4 address with no route', server: 'https://192.0.2.1:6443', args: [], logs: /cannot create DNS "default" yet \(HTTP 0: fetch failed: connect ENETUNREACH 192\.0\.2\.1:6443.*\); retrying/ },
    { what: 'an IPv6 address on an IPv4-only node', server: 'https://[2001:db8::1]:6443', args: [], logs: /cannot create DNS "default" yet .*retrying/ },
    { what: 'an IPv4 address with no route, reconciling', server: 'https://192.0.2.1:6443', args: ['--no-create-default'], logs: /reconcile failed, retrying/ },
    { what: 'an IPv6 address on an IPv4-only node, reconciling', server: 'https://[2001:db8::1]:6443', args: ['--no-create-default'], logs: /reconcile failed, retrying/ },
  ];
  for (const c of cases) {
    it(`${c.what}: attempts fail and are retried, the operator keeps running`, async () => {
      const file = join(dir, `kubeconfig-${c.server.replace(/\W/g, '')}`);
      writeFileSync(file, kubeconfig(c.server));
      const p = ns.kdns(['operator', 'run', '--kubeconfig', file, '--resync', '1s', ...c.args]);
      try {
        // The first failed attempt's log line, however long a loaded machine takes to start the
        // operator; then the second, which shows the retry happened and the operator still runs.
        await waitFor(() => (p.output().match(new RegExp(c.logs.source, 'g'))?.length ?? 0) >= 2 || p.child.exitCode !== null, 30_000, 50);
        assert.equal(p.child.exitCode, null, p.output());
        assert.match(p.output(), c.logs);
      } finally {
        await p.stop();
      }
      assert.equal(await p.done, 0, p.output());
    });
  }
});
