// The node cache image's iptables wrapper (deploy/nodecache-image/iptables): rules go to the
// backend the kubelet marked with KUBE-IPTABLES-HINT, nft when nothing says legacy. Run with
// Debian's real iptables-nft and iptables-legacy in a network namespace of each case's own.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { repoRoot } from '../util/deploy.js';
import { missing } from '../util/upstream.js';

const skip = (process.getuid?.() === 0 ? undefined : 'needs root (network namespaces)') ?? missing('iptables-legacy', 'iptables');

/** The names the image installs the wrapper under (deploy/nodecache.Dockerfile). */
const NAMES = ['iptables', 'iptables-save', 'iptables-restore', 'ip6tables', 'ip6tables-save', 'ip6tables-restore'];

describe('deploy/nodecache-image/iptables', { skip }, () => {
  const bin = mkdtempSync(join(tmpdir(), 'kdns-iptables-'));
  chmodSync(bin, 0o755);

  test('setup: installed under every name, as the image does', () => {
    copyFileSync(`${repoRoot}deploy/nodecache-image/iptables`, join(bin, 'iptables'));
    chmodSync(join(bin, 'iptables'), 0o755);
    for (const n of NAMES.slice(1)) symlinkSync('iptables', join(bin, n));
  });

  const RULE = '-A OUTPUT -d 169.254.20.10/32 -p udp -m udp --dport 53 -j NOTRACK';
  const RULE6 = '-A OUTPUT -d fd00::10/128 -p udp -m udp --dport 53 -j NOTRACK';
  const cases: Array<{ name: string; hint: string; backend: 'nft' | 'legacy' }> = [
    { name: 'no hint: nft', hint: '', backend: 'nft' },
    { name: 'the kubelet\'s hint in nft: nft', hint: 'iptables-nft -t mangle -N KUBE-IPTABLES-HINT', backend: 'nft' },
    { name: 'the kubelet\'s hint in legacy: legacy', hint: 'iptables-legacy -t mangle -N KUBE-IPTABLES-HINT', backend: 'legacy' },
    { name: 'a hint in both: nft', hint: 'iptables-nft -t mangle -N KUBE-IPTABLES-HINT; iptables-legacy -t mangle -N KUBE-IPTABLES-HINT', backend: 'nft' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const other = c.backend === 'nft' ? 'legacy' : 'nft';
      const script = `set -e
${c.hint}
export PATH=${bin}:$PATH
iptables -w -t raw ${RULE.replace('/32', '').replace(' -m udp', '')}
ip6tables -w -t raw ${RULE6.replace('/128', '').replace(' -m udp', '')}
echo "== ${c.backend}"; iptables-${c.backend}-save -t raw; ip6tables-${c.backend}-save -t raw
echo "== ${other}"; iptables-${other}-save -t raw 2>/dev/null || true; ip6tables-${other}-save -t raw 2>/dev/null || true
echo "== wrapper"; iptables-save -t raw; ip6tables-save -t raw`;
      const r = spawnSync('unshare', ['--net', 'sh', '-c', script], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 0, r.stderr);
      const [, chosen = '', notChosen = '', viaWrapper = ''] = r.stdout.split(/^== \w+$/m);
      const rules = (text: string): string[] => text.split('\n').filter((l) => l.includes('NOTRACK'));
      assert.deepEqual(rules(chosen), [RULE, RULE6]);
      assert.deepEqual(rules(notChosen), []);
      // -save through the wrapper reads the same backend.
      assert.deepEqual(rules(viaWrapper), [RULE, RULE6]);
    });
  }
});
