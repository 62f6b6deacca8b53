// `kdns operator run` against an API server it cannot reach, inside a network namespace of the
// test's own (no route to 192.0.2.1; IPv6 switched off as on an IPv4-only node): every pass
// fails and is retried, and the operator keeps running until it is told to stop.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sleep } from '../testutil/net.js';
import { Netns, netnsUnavailable } from '../testutil/netns.js';

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

  const cases = [
    { what: 'an IPv4 address with no route', server: 'https://192.0.2.1:6443' },
    { what: 'an IPv6 address on an IPv4-only node', server: 'https://[2001:db8::1]:6443' },
  ];
  for (const c of cases) {
    it(`${c.what}: passes fail and are retried, the operator keeps running`, async () => {
      const file = join(dir, `kubeconfig-${c.server.replace(/\W/g, '')}`);
      writeFileSync(file, kubeconfig(c.server));
      const p = ns.kdns(['operator', 'run', '--kubeconfig', file, '--resync', '1s']);
      try {
        await sleep(3500);
        assert.equal(p.child.exitCode, null, p.output());
        assert.match(p.output(), /reconcile failed, retrying/);
      } finally {
        await p.stop();
      }
      assert.equal(await p.done, 0, p.output());
    });
  }
});
