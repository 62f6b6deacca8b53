// The rig itself, with the real clients: what glibc 2.36 and musl 1.2.3 (Debian 12's libc6
// 2.36-9+deb12u14 and musl 1.2.3-1) send for one getaddrinfo(), as this machine showed it, written
// out; how `refuse` and `drop` nameservers and truncated answers change that; the client's source
// address, environment and /etc/hosts; and that a run, even a killed one, leaves nothing behind.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { loadRealClient, type ClientResult, type Libc, type RealClientHarness, type RunClientOptions, type Zone } from '../realclient.js';

const loaded = await loadRealClient();

function rig(): RealClientHarness {
  assert.ok(loaded.harness, `realclient unavailable: ${loaded.reason}`);
  return loaded.harness;
}

const ZONE: Zone = {
  'api.example.com': { A: ['192.0.2.10'], AAAA: ['2001:db8::10'] },
  'alias.example.com': { CNAME: 'api.example.com' },
  // 40 × A: 656 bytes, over a plain UDP answer's 512.
  'big.example.com': { A: Array.from({ length: 40 }, (_, i) => `192.0.2.${i + 1}`) },
};
const API = ['192.0.2.10', '2001:db8::10'];
const SEARCH5 = 'search ns1.svc.cluster.local svc.cluster.local cluster.local foo.com bar.com';

/** `transport nameserver qname qtype rcode`, plus ` TC` for a truncated answer. */
function line(q: ClientResult['queries'][number]): string {
  return `${q.transport} ${q.server} ${q.qname ?? '-'} ${q.qtype ?? '-'} ${q.rcode ?? 'none'}${q.truncated ? ' TC' : ''}`;
}

/** The 12 queries of api.example.com under ndots:5 and SEARCH5: each suffix, then as is. */
const WALK_12 = [
  'udp 10.96.0.10 api.example.com.ns1.svc.cluster.local A NXDOMAIN',
  'udp 10.96.0.10 api.example.com.ns1.svc.cluster.local AAAA NXDOMAIN',
  'udp 10.96.0.10 api.example.com.svc.cluster.local A NXDOMAIN',
  'udp 10.96.0.10 api.example.com.svc.cluster.local AAAA NXDOMAIN',
  'udp 10.96.0.10 api.example.com.cluster.local A NXDOMAIN',
  'udp 10.96.0.10 api.example.com.cluster.local AAAA NXDOMAIN',
  'udp 10.96.0.10 api.example.com.foo.com A NXDOMAIN',
  'udp 10.96.0.10 api.example.com.foo.com AAAA NXDOMAIN',
  'udp 10.96.0.10 api.example.com.bar.com A NXDOMAIN',
  'udp 10.96.0.10 api.example.com.bar.com AAAA NXDOMAIN',
  'udp 10.96.0.10 api.example.com A NOERROR',
  'udp 10.96.0.10 api.example.com AAAA NOERROR',
];

interface Case {
  name: string;
  libc: Libc;
  /** runClient's options; a route "recorder" stands for this case's recorder. */
  run: Omit<RunClientOptions, 'libc' | 'server' | 'routes'> & { routes?: Record<string, 'recorder' | 'refuse' | 'drop'> };
  addresses: string[];
  /** Every query, in order (`unordered`: as a sorted list, where two nameservers race). */
  queries: string[];
  unordered?: true;
  /** Bounds on getaddrinfo's own duration. */
  clientMs?: { min?: number; max?: number };
  /** ms from the first query to 169.254.20.10 to the first to 10.96.0.10 (two nameservers). */
  secondAfterFirstMs?: { min?: number; max?: number };
  /** Where the recorder saw the queries come from. */
  from?: string;
}

const TWO = 'nameserver 169.254.20.10\nnameserver 10.96.0.10\n';

const cases: Case[] = [
  ...(['glibc', 'musl'] as const).flatMap((libc): Case[] => [
    { name: 'ndots:5, 5 search domains, an external name: 12 queries', libc, run: { resolvConf: `nameserver 10.96.0.10\n${SEARCH5}\noptions ndots:5\n`, name: 'api.example.com' }, addresses: API, queries: WALK_12 },
    {
      name: 'ndots:1: the name as is first, 2 queries',
      libc,
      run: { resolvConf: `nameserver 10.96.0.10\n${SEARCH5}\noptions ndots:1\n`, name: 'api.example.com' },
      addresses: API,
      queries: ['udp 10.96.0.10 api.example.com A NOERROR', 'udp 10.96.0.10 api.example.com AAAA NOERROR'],
    },
    {
      name: 'AF_INET, ndots:5: A only, 6 queries',
      libc,
      run: { resolvConf: `nameserver 10.96.0.10\n${SEARCH5}\noptions ndots:5\n`, name: 'api.example.com', family: 'inet' },
      addresses: ['192.0.2.10'],
      queries: WALK_12.filter((q) => q.includes(' A ')),
    },
    {
      name: 'a CNAME in the zone is followed',
      libc,
      run: { resolvConf: 'nameserver 10.96.0.10\n', name: 'alias.example.com' },
      addresses: API,
      queries: ['udp 10.96.0.10 alias.example.com A NOERROR', 'udp 10.96.0.10 alias.example.com AAAA NOERROR'],
    },
    {
      name: 'an IPv6 nameserver is put on lo and relayed to IPv4 loopback',
      libc,
      run: { resolvConf: 'nameserver fd00::53\n', name: 'api.example.com' },
      addresses: API,
      queries: ['udp fd00::53 api.example.com A NOERROR', 'udp fd00::53 api.example.com AAAA NOERROR'],
    },
    {
      name: 'a name in the given /etc/hosts: no query',
      libc,
      run: { resolvConf: 'nameserver 10.96.0.10\n', name: 'db.internal', hosts: '127.0.0.1 localhost\n192.0.2.77 db.internal\n' },
      addresses: ['192.0.2.77'],
      queries: [],
    },
    {
      name: 'the relay sends from the chosen loopback address',
      libc,
      run: { resolvConf: 'nameserver 10.96.0.10\noptions ndots:1\n', name: 'api.example.com', source: '127.0.0.11' },
      addresses: API,
      queries: ['udp 10.96.0.10 api.example.com A NOERROR', 'udp 10.96.0.10 api.example.com AAAA NOERROR'],
      from: '127.0.0.11',
    },
  ]),
  // Two nameservers that both answer: glibc asks the first only, musl both at once.
  { name: 'two nameservers, both answer: the first only', libc: 'glibc', run: { resolvConf: TWO, name: 'api.example.com' }, addresses: API, queries: ['udp 169.254.20.10 api.example.com A NOERROR', 'udp 169.254.20.10 api.example.com AAAA NOERROR'] },
  {
    name: 'two nameservers, both answer: both at once',
    libc: 'musl',
    run: { resolvConf: TWO, name: 'api.example.com' },
    addresses: API,
    queries: ['udp 10.96.0.10 api.example.com A NOERROR', 'udp 10.96.0.10 api.example.com AAAA NOERROR', 'udp 169.254.20.10 api.example.com A NOERROR', 'udp 169.254.20.10 api.example.com AAAA NOERROR'],
    unordered: true,
  },
  // The first refuses (ICMP port unreachable): neither waits for its timeout (5 s by default).
  // The refused copies reach no listener, so only the second nameserver's are seen.
  ...(['glibc', 'musl'] as const).map(
    (libc): Case => ({
      name: 'the first nameserver refuses: the second answers at once',
      libc,
      run: { resolvConf: TWO, name: 'api.example.com', routes: { '169.254.20.10': 'refuse', '10.96.0.10': 'recorder' } },
      addresses: API,
      queries: ['udp 10.96.0.10 api.example.com A NOERROR', 'udp 10.96.0.10 api.example.com AAAA NOERROR'],
      clientMs: { max: 2500 },
    }),
  ),
  // The first drops: glibc waits its timeout (1 s) before the second; musl asked both at once.
  {
    name: 'the first nameserver drops (timeout:1 attempts:1): the second after 1 s',
    libc: 'glibc',
    run: { resolvConf: `${TWO}options timeout:1 attempts:1\n`, name: 'api.example.com', routes: { '169.254.20.10': 'drop', '10.96.0.10': 'recorder' } },
    addresses: API,
    queries: ['udp 169.254.20.10 api.example.com A none', 'udp 169.254.20.10 api.example.com AAAA none', 'udp 10.96.0.10 api.example.com A NOERROR', 'udp 10.96.0.10 api.example.com AAAA NOERROR'],
    clientMs: { min: 1000 },
    // glibc waits its 1 s timeout; the relay stamps each query when it reads it, a few ms after
    // glibc sent it, so the gap it sees may fall a little short of the full second.
    secondAfterFirstMs: { min: 950 },
  },
  {
    name: 'the first nameserver drops (timeout:1 attempts:1): the second answers at once',
    libc: 'musl',
    run: { resolvConf: `${TWO}options timeout:1 attempts:1\n`, name: 'api.example.com', routes: { '169.254.20.10': 'drop', '10.96.0.10': 'recorder' } },
    addresses: API,
    queries: ['udp 10.96.0.10 api.example.com A NOERROR', 'udp 10.96.0.10 api.example.com AAAA NOERROR', 'udp 169.254.20.10 api.example.com A none', 'udp 169.254.20.10 api.example.com AAAA none'],
    unordered: true,
    secondAfterFirstMs: { max: 500 },
  },
  // 40 addresses do not fit 512 bytes: glibc asks again over TCP and gets all; musl 1.2.3 has
  // no TCP fallback and keeps the 29 that fit.
  {
    name: 'a truncated UDP answer is asked again over TCP',
    libc: 'glibc',
    run: { resolvConf: 'nameserver 10.96.0.10\n', name: 'big.example.com', family: 'inet' },
    addresses: ZONE['big.example.com']!.A as string[],
    queries: ['udp 10.96.0.10 big.example.com A NOERROR TC', 'tcp 10.96.0.10 big.example.com A NOERROR'],
  },
  {
    name: 'a truncated UDP answer is used as it is',
    libc: 'musl',
    run: { resolvConf: 'nameserver 10.96.0.10\n', name: 'big.example.com', family: 'inet' },
    addresses: (ZONE['big.example.com']!.A as string[]).slice(0, 29),
    queries: ['udp 10.96.0.10 big.example.com A NOERROR TC'],
  },
  // use-vc: glibc asks over TCP from the chosen address too; musl ignores the option.
  {
    name: 'options use-vc: TCP, from the chosen loopback address',
    libc: 'glibc',
    run: { resolvConf: 'nameserver 10.96.0.10\noptions use-vc\n', name: 'api.example.com', source: '127.0.0.12' },
    addresses: API,
    queries: ['tcp 10.96.0.10 api.example.com A NOERROR', 'tcp 10.96.0.10 api.example.com AAAA NOERROR'],
    from: '127.0.0.12',
  },
  {
    name: 'options use-vc is ignored: UDP',
    libc: 'musl',
    run: { resolvConf: 'nameserver 10.96.0.10\noptions use-vc\n', name: 'api.example.com', source: '127.0.0.12' },
    addresses: API,
    queries: ['udp 10.96.0.10 api.example.com A NOERROR', 'udp 10.96.0.10 api.example.com AAAA NOERROR'],
    from: '127.0.0.12',
  },
  // The client's environment is empty but for PATH and what the caller adds: glibc reads
  // RES_OPTIONS, musl does not.
  {
    name: 'RES_OPTIONS=ndots:1 in the environment is honoured',
    libc: 'glibc',
    run: { resolvConf: `nameserver 10.96.0.10\n${SEARCH5}\noptions ndots:5\n`, name: 'api.example.com', env: { RES_OPTIONS: 'ndots:1' } },
    addresses: API,
    queries: ['udp 10.96.0.10 api.example.com A NOERROR', 'udp 10.96.0.10 api.example.com AAAA NOERROR'],
  },
  { name: 'RES_OPTIONS=ndots:1 in the environment is ignored', libc: 'musl', run: { resolvConf: `nameserver 10.96.0.10\n${SEARCH5}\noptions ndots:5\n`, name: 'api.example.com', env: { RES_OPTIONS: 'ndots:1' } }, addresses: API, queries: WALK_12 },
];

describe('real glibc and musl through the rig', { skip: loaded.skip, concurrency: 4 }, () => {
  for (const c of cases) {
    test(`${c.libc}: ${c.name}`, async (t) => {
      const recorder = await rig().startRecorder({ zone: ZONE });
      let r: ClientResult;
      try {
        const { routes, ...rest } = c.run;
        const actual = routes ? { routes: Object.fromEntries(Object.entries(routes).map(([ns, to]) => [ns, to === 'recorder' ? recorder.server : to])) } : { server: recorder.server };
        r = await rig().runClient({ ...rest, ...actual, libc: c.libc });
      } finally {
        await recorder.close();
      }
      t.diagnostic(`getaddrinfo took ${r.clientMs.toFixed(1)} ms, the run ${r.runMs.toFixed(0)} ms`);
      const sent = r.queries.map(line);
      const context = `sent:\n${sent.join('\n')}\nstderr: ${r.stderr}`;
      assert.equal(r.status, 0, context);
      assert.deepEqual([...r.addresses].sort(), [...c.addresses].sort(), context);
      if (c.unordered) assert.deepEqual([...sent].sort(), c.queries, context);
      else assert.deepEqual(sent, c.queries, context);
      if (c.clientMs?.min !== undefined) assert.ok(r.clientMs >= c.clientMs.min, `getaddrinfo took ${r.clientMs} ms, expected at least ${c.clientMs.min}`);
      if (c.clientMs?.max !== undefined) assert.ok(r.clientMs < c.clientMs.max, `getaddrinfo took ${r.clientMs} ms, expected under ${c.clientMs.max}`);
      if (c.secondAfterFirstMs) {
        const at = (server: string): number => r.queries.find((q) => q.server === server)?.atMs ?? NaN;
        const gap = at('10.96.0.10') - at('169.254.20.10');
        assert.ok(gap >= (c.secondAfterFirstMs.min ?? -Infinity) && gap <= (c.secondAfterFirstMs.max ?? Infinity), `second nameserver asked ${gap} ms after the first\n${context}`);
      }
      // Each answered query was answered after it was sent, within the call.
      for (const q of r.queries.filter((x) => x.answeredAtMs !== null)) {
        assert.ok(q.atMs >= 0 && (q.answeredAtMs as number) >= q.atMs, `${line(q)}: sent at ${q.atMs}, answered at ${q.answeredAtMs}`);
      }
      if (c.from) assert.deepEqual([...new Set(recorder.queries.map((q) => q.from))], [c.from]);
    });
  }

  test('a failed lookup: the EAI name, exit status 2', async () => {
    const recorder = await rig().startRecorder({ zone: ZONE });
    try {
      const [glibc, musl] = await Promise.all((['glibc', 'musl'] as const).map((libc) => rig().runClient({ resolvConf: 'nameserver 10.96.0.10\n', name: 'nothing.example.com', libc, server: recorder.server })));
      for (const r of [glibc, musl]) {
        assert.deepEqual({ status: r?.status, eai: r?.eai, addresses: r?.addresses, sent: r?.queries.map(line) }, {
          status: 2,
          eai: 'EAI_NONAME',
          addresses: [],
          sent: ['udp 10.96.0.10 nothing.example.com A NXDOMAIN', 'udp 10.96.0.10 nothing.example.com AAAA NXDOMAIN'],
        });
      }
    } finally {
      await recorder.close();
    }
  });

  test('eight runs at once each get their own namespace and answer', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `host${i}.example.com`);
    const recorder = await rig().startRecorder({ zone: Object.fromEntries(names.map((n, i) => [n, { A: [`192.0.2.${100 + i}`] }])) });
    try {
      const results = await Promise.all(names.map((name, i) => rig().runClient({ resolvConf: 'nameserver 10.96.0.10\n', name, libc: i % 2 === 0 ? 'glibc' : 'musl', family: 'inet', server: recorder.server })));
      assert.deepEqual(
        results.map((r) => `${r.name} ${r.addresses.join(',')} ${r.queries.map((q) => q.qname).join(',')}`),
        names.map((n, i) => `${n} 192.0.2.${100 + i} ${n}`),
      );
    } finally {
      await recorder.close();
    }
  });

});

// One at a time: the snapshot counts this process's children.
describe('what a run leaves behind', { skip: loaded.skip }, () => {
  test('a run leaves no process, mount or changed file behind', async () => {
    const before = snapshot();
    const recorder = await rig().startRecorder({ zone: ZONE });
    try {
      for (const libc of ['glibc', 'musl'] as const) {
        const r = await rig().runClient({ resolvConf: `${TWO}options timeout:1 attempts:1\n`, name: 'api.example.com', libc, routes: { '169.254.20.10': 'drop', '10.96.0.10': recorder.server } });
        assert.equal(r.status, 0);
      }
    } finally {
      await recorder.close();
    }
    assert.deepEqual(snapshot(), before);
  });

  test('a test process killed during a lookup takes the namespace agent and the client with it', async () => {
    const runModule = pathToFileURL(new URL('./run.ts', import.meta.url).pathname).href;
    // A lookup that would take 10 s (a dropping nameserver, timeout 5, 2 attempts).
    const code = `import(${JSON.stringify(runModule)}).then((m) => m.runClient({
      resolvConf: 'nameserver 10.96.0.10\\n', name: 'api.example.com', libc: 'glibc', routes: { '10.96.0.10': 'drop' },
      onStarted: (pids) => console.log(JSON.stringify(pids)),
    }))`;
    const child = spawn(process.execPath, ['--import', 'tsx/esm', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pids = await new Promise<{ agent: number; client: number }>((resolve, reject) => {
      child.stdout.once('data', (b: Buffer) => resolve(JSON.parse(b.toString()) as { agent: number; client: number }));
      child.once('exit', (c) => reject(new Error(`the test process ended (${c}) before the client started`)));
    });
    assert.ok(alive(pids.agent) && alive(pids.client), 'agent and client run');
    child.kill('SIGKILL');
    const deadline = Date.now() + 3000;
    while ((alive(pids.agent) || alive(pids.client)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual({ agent: alive(pids.agent), client: alive(pids.client) }, { agent: false, client: false });
  });
});

/** A process that exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * What a run must not change: this process's children, the mounts it could leave (of the rig's
 * build folder or over /etc's resolver files), /etc's files. Only those mounts: other suites
 * running beside this one (podman's image layers, a node-cache swap's named namespaces) come and
 * go meanwhile, and the rig names no namespace (its agent's end with it, as `children` checks).
 */
function snapshot(): { children: string[]; mounts: string[]; etc: string[] } {
  const children = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1] === String(process.pid);
      } catch {
        return false;
      }
    });
  const etc = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf'].map((f) => readFileSync(f, 'utf8'));
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => /realclient|\/etc\/(resolv\.conf|hosts|nsswitch\.conf)/.test(line));
  return { children, mounts, etc };
}
