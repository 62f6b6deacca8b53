// node-resolver with a cluster DNS address it cannot reach, inside a network namespace of the
// test's own (no route to 192.0.2.1; IPv6 switched off as on an IPv4-only node): each lookup
// fails at once with the kernel's reason, the hosts file keeps its entries, and a running
// resolver keeps running.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kdnsCommand } from '../../test/util/kdns.js';
import { sleep } from '../../test/util/net.js';
import { Netns, netnsUnavailable } from '../../test/util/nsrun.js';
import { BEGIN_MARKER, END_MARKER } from './hostsblock.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsUnavailable();
const skip = reason && !IN_CI ? reason : false;

/** A hosts file with an entry from an earlier pass: a failed lookup must keep it. */
const HOSTS = `127.0.0.1 localhost\n${BEGIN_MARKER}\n10.0.0.5 registry.ns.svc registry.ns.svc.cluster.local\n${END_MARKER}\n`;

describe('node-resolver with a nameserver it cannot reach', { skip }, () => {
  let ns: Netns;
  const dir = mkdtempSync(join(tmpdir(), 'kdns-noderesolver-'));

  before(async () => {
    ns = await Netns.create({ ipv6: false });
  });
  after(() => ns?.dispose());

  const cases: Array<{ what: string; nameserver: string; error: RegExp }> = [
    { what: 'an IPv4 address with no route', nameserver: '192.0.2.1', error: /registry\.ns\.svc\.cluster\.local\. A: 192\.0\.2\.1:53: send ENETUNREACH/ },
    { what: 'an IPv6 address on an IPv4-only node', nameserver: '[2001:db8::1]:53', error: /registry\.ns\.svc\.cluster\.local\. A: 2001:db8::1:53: send EADDRNOTAVAIL/ },
  ];
  for (const c of cases) {
    it(`--once to ${c.what}: exit 1 at once, the reason logged, the entries kept`, () => {
      const hosts = join(dir, `hosts-${c.nameserver.replace(/\W/g, '')}`);
      writeFileSync(hosts, HOSTS);
      const started = Date.now();
      const r = ns.run([process.execPath, ...kdnsCommand(['node-resolver', '--services', 'registry.ns.svc', '--nameserver', c.nameserver, '--hosts-file', hosts, '--once', '--timeout', '5s'])]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, c.error);
      // Failing on the send, not after two 5 s timeouts per lookup.
      assert.ok(Date.now() - started < 8000, `took ${Date.now() - started} ms`);
      assert.equal(readFileSync(hosts, 'utf8'), HOSTS);
    });
  }

  it('a running resolver keeps running through passes that cannot reach the nameserver', async () => {
    const hosts = join(dir, 'hosts-loop');
    writeFileSync(hosts, HOSTS);
    const p = ns.kdns(['node-resolver', '--services', 'registry.ns.svc', '--nameserver', '192.0.2.1', '--hosts-file', hosts, '--interval', '200ms', '--timeout', '1s']);
    try {
      await sleep(1500);
      assert.equal(p.child.exitCode, null, p.output());
      assert.ok((p.output().match(/send ENETUNREACH/g) ?? []).length >= 4, p.output());
      assert.equal(readFileSync(hosts, 'utf8'), HOSTS);
    } finally {
      await p.stop();
    }
    assert.equal(await p.done, 0, p.output());
  });
});
