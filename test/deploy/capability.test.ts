// How the kdns image serves :53 as a non-root user (deploy/Dockerfile): its node binary carries
// cap_net_bind_service, and the pod keeps NET_BIND_SERVICE in the bounding set. Reproduced
// here with the real kernel: a copy of this node with the same file capability, run as the
// image's user (65532) with only that capability bounded, in a network namespace of its own.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { repoRoot } from '../util/deploy.js';
import { missing } from '../util/upstream.js';

const root = repoRoot;
const asRoot = process.getuid?.() === 0 ? undefined : 'needs root (file capabilities, network namespaces)';
const skip = asRoot ?? missing('setcap', 'libcap2-bin') ?? missing('setpriv', 'util-linux') ?? missing('dig', 'bind9-dnsutils');

/** The image's user, and the setpriv arguments that make a container's credentials with this bounding set. */
const asImageUser = (bounding: string): string => `setpriv --reuid 65532 --regid 65532 --clear-groups --inh-caps=-all --bounding-set=${bounding}`;

/** Runs `script` with sh in a new network namespace whose loopback is up; stdout and stderr together. */
function inNetns(script: string): { status: number | null; output: string } {
  const r = spawnSync('unshare', ['--net', 'sh', '-c', `ip link set lo up\n${script}`], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('port 53 as the image user', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-cap-'));
  chmodSync(dir, 0o755);
  const plainNode = process.execPath;
  const cappedNode = join(dir, 'node');
  const corefile = join(dir, 'Corefile');
  const kdns = (node: string): string => `${node} ${root}bin/kdns serve --conf ${corefile}`;

  test('setup: a node with cap_net_bind_service, as deploy/Dockerfile makes it', () => {
    copyFileSync(plainNode, cappedNode);
    chmodSync(cappedNode, 0o755);
    writeFileSync(corefile, '.:53 {\n    bind 127.0.0.1\n    whoami\n}\n');
    chmodSync(corefile, 0o644);
    const r = spawnSync('setcap', ['cap_net_bind_service=+ep', cappedNode], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });

  const cases: Array<{ name: string; node: () => string; bounding: string; expect: RegExp; status: number }> = [
    {
      name: 'the capped node, NET_BIND_SERVICE bounded (kubeadm\'s drop ALL + add NET_BIND_SERVICE): serves :53',
      node: () => cappedNode,
      bounding: '-all,+net_bind_service',
      expect: /status: NOERROR/,
      status: 0,
    },
    {
      name: 'the capped node, every capability dropped: the kernel refuses to start it',
      node: () => cappedNode,
      bounding: '-all',
      expect: /Operation not permitted/,
      status: 126,
    },
    {
      name: 'a node without the file capability: bind refused, kdns says so and exits 1',
      node: () => plainNode,
      bounding: '-all,+net_bind_service',
      expect: /^kdns serve: listen udp 127\.0\.0\.1:53: bind: Permission denied$/m,
      status: 1,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // Started in the background; asked once it listens; the script exits with kdns's status.
      const r = inNetns(`${asImageUser(c.bounding)} ${kdns(c.node())} &
pid=$!
for i in $(seq 1 100); do
  if ! kill -0 $pid 2>/dev/null; then wait $pid; exit $?; fi
  if dig @127.0.0.1 -p 53 whoami.example +time=1 +tries=1 >/tmp/dig.$$ 2>&1; then cat /tmp/dig.$$; rm -f /tmp/dig.$$; kill $pid; wait $pid; exit 0; fi
  sleep 0.1
done
kill $pid; exit 99`);
      assert.match(r.output, c.expect);
      assert.equal(r.status, c.status, r.output);
    });
  }
});
