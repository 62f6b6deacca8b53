// loop end to end: Corefiles that forward to the server itself, directly and through a real
// forwarding resolver (named with `forward only` pointing back at kdns, as systemd-resolved on
// a node does), next to one that does not loop.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CorefileError } from '../../lib/corefile/ast.js';
import { createLogger, type Level } from '../../server/log.js';
import { startServer, type KdnsServer } from '../../server/server.js';
import type { SetupContext } from '../../server/plugin.js';
import { firstDirective } from '../../../test/util/corefile.js';
import { dig } from '../../../test/util/dig.js';
import { freePort, sleep, waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { exampleZone, missing, namedUpstream, type NamedUpstream } from '../../../test/util/upstream.js';
import { setup } from './setup.js';

const skip = missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils');

function loopStatus(server: KdnsServer): true | string | undefined {
  return server.readiness().find((r) => r.plugin === 'loop')?.status;
}

/** Queries the forward plugin has sent to upstream `to`. */
async function forwardRequests(server: KdnsServer, to: string): Promise<number> {
  const m = server.shared.metrics.getSingleMetric('coredns_forward_requests_total');
  if (!m) return 0;
  const { values } = await m.get();
  return values.filter((v) => v.labels['to'] === to).reduce((sum, v) => sum + v.value, 0);
}

const HOSTS = `  hosts {
    10.96.0.10 kubernetes.default.svc.cluster.local
    fallthrough
  }`;

describe('loop end to end', { skip }, () => {
  let named: NamedUpstream;
  const running: TestServer[] = [];

  before(async () => {
    named = namedUpstream({ zones: { 'example.test': exampleZone() }, port: await freePort() });
    await named.start();
  });
  after(async () => {
    await Promise.all(running.map((s) => s.stop()));
    await named.dispose();
  });

  /** kdns forwarding to `to`, where SELF stands for its own address. */
  async function kdns(to: string): Promise<TestServer> {
    const s = await startTestServer(`.:{PORT} {\n  bind 127.0.0.1\n  loop\n${HOSTS}\n  forward . ${to.replaceAll('SELF', '127.0.0.1:{PORT}')}\n}\n`);
    running.push(s);
    return s;
  }

  const cases: Array<{
    what: string;
    to: string;
    loops: (s: TestServer) => string[];
    external: string;
  }> = [
    { what: 'forwarding only to itself', to: 'SELF', loops: (s) => [`127.0.0.1:${s.port}`], external: 'SERVFAIL' },
    { what: 'forwarding to itself and to a real upstream', to: 'SELF 127.0.0.1:NAMED', loops: (s) => [`127.0.0.1:${s.port}`], external: 'NOERROR' },
    { what: 'forwarding to a real upstream only', to: '127.0.0.1:NAMED', loops: () => [], external: 'NOERROR' },
  ];
  for (const c of cases) {
    it(`${c.what}: no crash, the looping upstream named and dropped, cluster names still answered`, async () => {
      const s = await kdns(c.to.replace('NAMED', String(named.port)));
      const expectLoops = c.loops(s);
      const status = await waitFor(() => {
        const st = loopStatus(s.server);
        return st === 'loop detection has not finished its first round' ? undefined : st;
      }, 5000);
      if (expectLoops.length === 0) {
        assert.equal(status, true);
        assert.deepEqual(s.logs.filter((l) => l.startsWith('[ERROR]')), []);
      } else {
        assert.equal(status, `loop detected: upstream ${expectLoops[0]} sends zone "." back to this server`);
        const errors = s.logs.filter((l) => l.startsWith('[ERROR] plugin/loop: '));
        assert.equal(errors.length, 1, s.logs.join('\n'));
        assert.match(errors[0] as string, new RegExp(`^\\[ERROR\\] plugin/loop: forwarding loop for zone "\\.": the probe "HINFO \\d+\\.\\d+\\." sent to upstream ${expectLoops[0]} came back to this server .*no longer forwarding to ${expectLoops[0]}.*coredns\\.io/plugins/loop#troubleshooting$`));
      }
      // The server keeps serving: local (cluster) data, and external names through what is left.
      const cluster = await dig('kubernetes.default.svc.cluster.local', 'A', { port: s.port });
      assert.deepEqual([cluster.status, cluster.answer.map((r) => r.data)], ['NOERROR', ['10.96.0.10']]);
      // Dropped means nothing more is sent there: each answer comes at once from what is left (or
      // is kdns's own SERVFAIL when nothing is), never after waiting on the loop. Counted at the
      // source, not timed: a dig takes a second to start on a busy machine.
      const sentToLoops = async (): Promise<number[]> => Promise.all(expectLoops.map((to) => forwardRequests(s.server, to)));
      const sentBefore = await sentToLoops();
      for (let i = 0; i < 5; i++) {
        const external = await dig('www.example.test', 'A', { port: s.port });
        assert.equal(external.status, c.external);
      }
      assert.deepEqual(await sentToLoops(), sentBefore, 'queries forwarded to the looping upstream after it was dropped');
    });
  }

  it('finds a loop through another resolver (named forwarding back to kdns)', async () => {
    const kdnsPort = await freePort();
    const resolverPort = await freePort();
    const resolver = namedUpstream({
      zones: {},
      port: resolverPort,
      forwardTo: kdnsPort,
    });
    await resolver.start();
    const logs: string[] = [];
    const server = await startServer({
      corefilePath: join(resolver.dir, 'Corefile'),
      corefileText: `.:${kdnsPort} {\n  bind 127.0.0.1\n  loop\n${HOSTS}\n  forward . 127.0.0.1:${resolverPort} 127.0.0.1:${named.port}\n}\n`,
      log: createLogger((level: Level, line: string) => logs.push(`[${level}] ${line}`)),
    });
    try {
      const status = await waitFor(() => (typeof loopStatus(server) === 'string' && loopStatus(server) !== 'loop detection has not finished its first round' ? loopStatus(server) : undefined), 5000);
      assert.equal(status, `loop detected: upstream 127.0.0.1:${resolverPort} sends zone "." back to this server`);
      // The probe really went through the resolver: named logged it.
      assert.ok(resolver.queries.some((q) => q.type === 'HINFO'), 'the resolver saw the probe');
      const external = await dig('www.example.test', 'A', { port: kdnsPort });
      assert.equal(external.status, 'NOERROR');
    } finally {
      await server.stop();
      await resolver.dispose();
    }
  });

  it('does not wait on an upstream that is down at start, and finds no loop there', async () => {
    const dead = await freePort();
    const s = await kdns(`127.0.0.1:${dead}`);
    const status = await waitFor(() => (loopStatus(s.server) === true ? true : undefined), 3000);
    assert.equal(status, true);
    await sleep(50);
    assert.deepEqual(s.logs.filter((l) => l.includes('plugin/loop')), []);
  });
});

describe('loop setup', () => {
  const bad: Array<{ corefile: string; error: string }> = [
    { corefile: '. {\n  loop now\n}', error: 'Corefile:2: wrong argument count for "loop": expected no arguments, got 1' },
    { corefile: '. {\n  loop {\n  }\n}', error: 'Corefile:2: "loop" does not take a block' },
  ];
  for (const c of bad) {
    it(`rejects ${JSON.stringify(c.corefile.replace(/\n/g, ' '))}`, async () => {
      const d = firstDirective(c.corefile);
      const ctx = { directive: d, instance: new Map(), block: { file: 'Corefile', line: 1 } } as unknown as SetupContext;
      await assert.rejects(
        async () => setup(ctx),
        (e: unknown) => e instanceof CorefileError && e.message === c.error,
      );
    });
  }
});
