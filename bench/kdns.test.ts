// The Corefiles and row names the bench gives kdns, with and without KDNS_WORKERS.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOptions, type KdnsCorefileName } from './options.js';
import { kdns, kdnsCorefile, kdnsLabel } from './servers/kdns.js';
import type { Role, StartContext } from './servers/server.js';

function context(role: Role): StartContext {
  return { role, port: 5300, upstreamPort: 5399, fixture: '/f', runDir: '/r', opts: parseOptions({}) };
}

const STOCK_TAIL = `    errors
    health 127.0.0.1:18080 {
        lameduck 5s
    }
    ready 127.0.0.1:18181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        manifests /f/cluster
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    prometheus 127.0.0.1:19153
    forward . 127.0.0.1:5399 {
        max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
`;

describe('bench kdns Corefile', () => {
  const cases: Array<{ name: string; which: KdnsCorefileName; role: Role; workers: number; want: string }> = [
    {
      name: 'plain auth, one process: no multisocket',
      which: 'plain',
      role: 'auth',
      workers: 1,
      want: 'cluster.local:5300 {\n    bind 127.0.0.1\n    kubernetes cluster.local {\n        manifests /f/cluster\n    }\n}\n',
    },
    {
      name: 'plain auth, two workers',
      which: 'plain',
      role: 'auth',
      workers: 2,
      want: 'cluster.local:5300 {\n    bind 127.0.0.1\n    multisocket 2\n    kubernetes cluster.local {\n        manifests /f/cluster\n    }\n}\n',
    },
    {
      name: 'plain forward, one process: no multisocket',
      which: 'plain',
      role: 'forward',
      workers: 1,
      want: '.:5300 {\n    bind 127.0.0.1\n    forward . 127.0.0.1:5399\n    cache 30\n}\n',
    },
    {
      name: 'plain forward, four workers',
      which: 'plain',
      role: 'forward',
      workers: 4,
      want: '.:5300 {\n    bind 127.0.0.1\n    multisocket 4\n    forward . 127.0.0.1:5399\n    cache 30\n}\n',
    },
    { name: 'stock, one process: no multisocket', which: 'stock', role: 'auth', workers: 1, want: `.:5300 {\n    bind 127.0.0.1\n${STOCK_TAIL}` },
    { name: 'stock, two workers (the same for forward)', which: 'stock', role: 'forward', workers: 2, want: `.:5300 {\n    bind 127.0.0.1\n    multisocket 2\n${STOCK_TAIL}` },
  ];
  for (const c of cases) {
    it(`writes ${c.name}`, () => {
      assert.equal(kdnsCorefile(c.which, context(c.role), c.workers), c.want);
    });
  }
});

describe('bench kdns row', () => {
  const cases: Array<{ which: KdnsCorefileName; workers: number; node: string | undefined; label: string; id: string }> = [
    { which: 'plain', workers: 1, node: undefined, label: 'kdns', id: 'kdns-plain' },
    { which: 'plain', workers: 2, node: undefined, label: 'kdns ×2', id: 'kdns-plain-x2' },
    { which: 'stock', workers: 1, node: undefined, label: 'kdns, stock Corefile', id: 'kdns-stock' },
    { which: 'stock', workers: 2, node: 'v26.12.1', label: 'kdns ×2, stock Corefile on node v26.12.1', id: 'kdns-stock-x2@v26.12.1' },
  ];
  for (const c of cases) {
    it(`names ${c.which} with ${c.workers} worker(s)${c.node ? ` on ${c.node}` : ''} "${c.label}"`, () => {
      const spec = kdns(c.which, { tree: '/t', revision: 'r' }, { path: '/n', version: c.node ?? 'v0', labelled: c.node !== undefined }, [], c.workers);
      assert.deepEqual([spec.label, spec.id, spec.threads, kdnsLabel(c.which, c.workers, c.node)], [c.label, c.id, c.workers, c.label]);
    });
  }
});
