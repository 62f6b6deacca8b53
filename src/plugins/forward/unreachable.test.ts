// forward to upstreams that cannot be reached, for real: kdns runs inside network namespaces of
// the test's own where 192.0.2.1 and 2001:db8::1 have no route, 198.51.100.0/24 is an
// "unreachable" route, and (in the second namespace) IPv6 is switched off as on an IPv4-only
// node. Each such upstream must be a failed exchange — counted, health-checked, skipped — and
// never the end of the process.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dig, type DigResult } from '../../../test/util/dig.js';
import { waitFor } from '../../../test/util/net.js';
import { Netns, netnsUnavailable, type NsProcess } from '../../../test/util/nsrun.js';
import { exampleZone, missing, namedUpstream, rootZone, type NamedUpstream } from '../../../test/util/upstream.js';

const IN_CI = process.env.CI === 'true';
const reason = netnsUnavailable() || missing('named', 'bind9') || missing('dig', 'bind9-dnsutils') || false;
const skip = reason && !IN_CI ? reason : false;

/** Sum of the samples of `name` in Prometheus text whose labels include `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Lines of kdns's output that say something went wrong with the process itself. */
function crashLines(output: string): string[] {
  return output.split('\n').filter((l) => /panic|ERR_SOCKET|RangeError|TypeError|Uncaught|node:internal/i.test(l));
}

type Space = 'dual' | 'v4only';

interface Case {
  what: string;
  space: Space;
  /** The forward line's arguments; NAMED is the working upstream in the namespace. */
  forward: string;
  /** Extra plugin lines before forward. */
  extra?: string;
  want: 'SERVFAIL' | 'NOERROR';
  /** Text of a resolv.conf that RESOLV_CONF in `forward` stands for. */
  resolvConf?: string;
  /** The upstream that cannot be reached, as the `to` label names it. */
  unreachable: string;
}

const cases: Case[] = [
  { what: 'an IPv4 upstream with no route (ENETUNREACH)', space: 'dual', forward: '192.0.2.1', want: 'SERVFAIL', unreachable: '192.0.2.1:53' },
  { what: 'an IPv6 upstream with no route (ENETUNREACH)', space: 'dual', forward: '2001:db8::1', want: 'SERVFAIL', unreachable: '[2001:db8::1]:53' },
  { what: 'an upstream behind an unreachable route (EHOSTUNREACH)', space: 'dual', forward: '198.51.100.1', want: 'SERVFAIL', unreachable: '198.51.100.1:53' },
  { what: 'an IPv6 upstream on an IPv4-only node (EADDRNOTAVAIL)', space: 'v4only', forward: '2001:db8::1', want: 'SERVFAIL', unreachable: '[2001:db8::1]:53' },
  { what: 'an IPv4 upstream with no route over TCP (force_tcp)', space: 'dual', forward: '192.0.2.1 {\n    force_tcp\n  }', want: 'SERVFAIL', unreachable: '192.0.2.1:53' },
  { what: 'the loop start-up probe to an upstream with no route', space: 'dual', extra: '  loop', forward: '192.0.2.1', want: 'SERVFAIL', unreachable: '192.0.2.1:53' },
  {
    what: 'an IPv6 upstream on an IPv4-only node before one that answers (policy sequential)',
    space: 'v4only',
    forward: '2001:db8::1 NAMED {\n    policy sequential\n  }',
    want: 'NOERROR',
    unreachable: '[2001:db8::1]:53',
  },
  {
    // The node's resolv.conf, as on many IPv4-only nodes: an IPv6 nameserver listed first.
    what: 'a resolv.conf whose first nameserver is IPv6, on an IPv4-only node',
    space: 'v4only',
    forward: 'RESOLV_CONF {\n    policy sequential\n  }',
    resolvConf: 'nameserver 2001:db8::53\nnameserver 127.0.0.1\n',
    want: 'NOERROR',
    unreachable: '[2001:db8::53]:53',
  },
  {
    what: 'upstreams with no route before one that answers, over TCP',
    space: 'dual',
    forward: '192.0.2.1 2001:db8::1 NAMED {\n    policy sequential\n    force_tcp\n  }',
    want: 'NOERROR',
    unreachable: '192.0.2.1:53',
  },
];

describe('forward to upstreams that cannot be reached', { skip }, () => {
  const spaces = new Map<Space, Netns>();
  const nameds: NamedUpstream[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'kdns-unreachable-'));
  // The namespaces are the test's own: the working upstream can take the standard port.
  const NAMED_PORT = 53;

  before(async () => {
    const dual = await Netns.create();
    dual.must(['ip', 'route', 'add', 'unreachable', '198.51.100.0/24']);
    const v4only = await Netns.create({ ipv6: false });
    spaces.set('dual', dual);
    spaces.set('v4only', v4only);
    for (const ns of spaces.values()) {
      const named = namedUpstream({ zones: { 'example.test': exampleZone(), '': rootZone() }, port: NAMED_PORT, netns: ns.path });
      nameds.push(named);
      await named.start();
    }
  });
  after(async () => {
    await Promise.all(nameds.map((n) => n.dispose()));
    for (const ns of spaces.values()) ns.dispose();
  });

  let nextPort = 1053;
  for (const c of cases) {
    it(`${c.what}: ${c.want}, counted and health-checked, and kdns keeps running`, async () => {
      const ns = spaces.get(c.space) as Netns;
      const port = nextPort++;
      const corefile = join(dir, `Corefile.${port}`);
      const resolvConf = join(dir, `resolv.conf.${port}`);
      if (c.resolvConf) writeFileSync(resolvConf, c.resolvConf);
      const forward = c.forward.replace('NAMED', `127.0.0.1:${NAMED_PORT}`).replace('RESOLV_CONF', resolvConf);
      writeFileSync(corefile, `.:${port} {\n  bind 127.0.0.1\n  prometheus 127.0.0.1:${port + 8000}\n${c.extra ? `${c.extra}\n` : ''}  forward . ${forward}\n}\n`);
      const kdns: NsProcess = ns.kdns(['serve', '--conf', corefile]);
      try {
        await waitFor(() => kdns.output().includes('kdns listening on') || kdns.child.exitCode !== null, 20_000, 50);
        const ask = (i: number): Promise<DigResult> => dig(`www.example.test`, 'A', { port, netns: ns.path, args: [`+qid=${i}`], timeout: 5 });
        const first = await ask(1);
        assert.equal(first.status, c.want, first.raw);
        if (c.want === 'NOERROR') assert.deepEqual(first.answer.map((a) => a.data), ['192.0.2.1']);
        // Health checks run every 0.5 s after a failure: the default max_fails of 2 marks it down.
        const metrics = `http://127.0.0.1:${port + 8000}/metrics`;
        await waitFor(() => sample(ns.httpGet(metrics), 'coredns_forward_healthcheck_failures_total', { to: c.unreachable }) >= 2 || kdns.child.exitCode !== null, 10_000, 100);
        assert.equal(kdns.child.exitCode, null, `kdns exited:\n${kdns.output()}`);
        const sentBefore = sample(ns.httpGet(metrics), 'coredns_forward_requests_total', { to: c.unreachable });
        for (let i = 2; i < 6; i++) assert.equal((await ask(i)).status, c.want);
        if (c.want === 'NOERROR') {
          // Down means skipped: no more queries go its way while another upstream answers.
          assert.equal(sample(ns.httpGet(metrics), 'coredns_forward_requests_total', { to: c.unreachable }), sentBefore);
        }
        assert.equal(kdns.child.exitCode, null, `kdns exited:\n${kdns.output()}`);
        assert.deepEqual(crashLines(kdns.output()), []);
      } finally {
        await kdns.stop();
      }
    });
  }
});
