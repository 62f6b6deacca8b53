import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { decodeMessage } from '../../lib/dns/codec.js';
import { DnsClass, RCode, RRType, type Edns, type Message } from '../../lib/dns/types.js';
import { finalizeReply } from '../../server/finalize.js';
import { createLogger } from '../../server/log.js';
import { Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { gauge } from '../../server/metrics.js';
import { responseMessage, testRequest } from '../../../test/util/request.js';
import { HostsPlugin, type HostsConfig } from './handler.js';
import { parseHostsText } from './hostsfile.js';

function request(name: string, type: number, qclass: number = DnsClass.IN, edns?: Edns): DnsRequest {
  return testRequest(name, type, { id: 4242, qclass, cd: true, edns });
}

const NEXT_MARK = Reply.of(responseMessage({ id: 0, rd: false, rcode: RCode.REFUSED }));

/** The reply as "rcode flags | answers", or "next" when the plugin passed the query on. */
async function ask(plugin: HostsPlugin, name: string, type: number, qclass?: number): Promise<string> {
  const reply = await plugin.serve(request(name, type, qclass), () => NEXT_MARK);
  if (reply === NEXT_MARK) return 'next';
  assert.ok(reply?.wire, 'hosts answers with wire bytes');
  const m: Message = decodeMessage(reply.wire);
  assert.equal(reply.rcode, m.rcode, 'Reply.rcode matches the bytes');
  const flags = [m.qr && 'qr', m.aa && 'aa', m.rd && 'rd', m.cd && 'cd', m.ra && 'ra', m.tc && 'tc'].filter(Boolean).join(' ');
  const rrs = m.answers.map((r) => `${r.name} ${r.ttl} ${r.type} ${JSON.stringify(r.data)}`);
  assert.equal(m.id, 4242);
  assert.deepEqual(m.questions, [{ name, type, class: qclass ?? DnsClass.IN }]);
  return [`${m.rcode} ${flags}`, ...rrs].join(' | ');
}

const quietLog = createLogger(() => undefined);

function plugin(overrides: Partial<HostsConfig> & { inlineText?: string } = {}): HostsPlugin {
  const { inlineText, ...rest } = overrides;
  return new HostsPlugin(
    {
      path: '/nonexistent/hosts',
      zones: ['example.org.'],
      ttl: 3600,
      autoReverse: true,
      reloadMs: 0,
      inline: parseHostsText(inlineText ?? '10.0.0.1 web.example.org www.example.org\n10.0.0.2 web.example.org\n2001:db8::1 six.example.org\n10.9.9.9 outside.test').lines,
      ...rest,
    },
    { log: quietLog },
  );
}

test('hosts answers', async () => {
  const cases: Array<{ name: string; config?: Parameters<typeof plugin>[0]; q: [string, number, number?]; want: string }> = [
    {
      name: 'A of a known name: every address, question spelling kept, authoritative',
      q: ['WEB.Example.org.', RRType.A],
      want: '0 qr aa rd cd | WEB.Example.org. 3600 1 {"address":"10.0.0.1"} | WEB.Example.org. 3600 1 {"address":"10.0.0.2"}',
    },
    { name: 'AAAA of an IPv6 name', q: ['six.example.org.', RRType.AAAA], want: '0 qr aa rd cd | six.example.org. 3600 28 {"address":"2001:db8::1"}' },
    { name: 'AAAA of an IPv4-only name is NODATA', q: ['web.example.org.', RRType.AAAA], want: '0 qr aa rd cd' },
    { name: 'MX of a known name is NODATA', q: ['web.example.org.', RRType.MX], want: '0 qr aa rd cd' },
    { name: 'unknown name in the zone is NXDOMAIN', q: ['nope.example.org.', RRType.A], want: '3 qr aa rd cd' },
    { name: 'name outside the zones goes on', q: ['outside.test.', RRType.A], want: 'next' },
    { name: 'fallthrough: unknown name goes on', config: { fallthrough: [] }, q: ['nope.example.org.', RRType.A], want: 'next' },
    {
      name: 'fallthrough limited to other zones: still NXDOMAIN',
      config: { fallthrough: ['sub.example.org.'] },
      q: ['nope.example.org.', RRType.A],
      want: '3 qr aa rd cd',
    },
    { name: 'fallthrough zone matches', config: { fallthrough: ['sub.example.org.'] }, q: ['x.sub.example.org.', RRType.A], want: 'next' },
    { name: 'fallthrough does not hide known names', config: { fallthrough: [] }, q: ['web.example.org.', RRType.AAAA], want: '0 qr aa rd cd' },
    {
      name: 'PTR of a known address lists every name',
      q: ['1.0.0.10.in-addr.arpa.', RRType.PTR],
      want: '0 qr aa rd cd | 1.0.0.10.in-addr.arpa. 3600 12 {"target":"web.example.org."} | 1.0.0.10.in-addr.arpa. 3600 12 {"target":"www.example.org."}',
    },
    {
      name: 'PTR of an IPv6 address',
      q: ['1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.', RRType.PTR],
      want: '0 qr aa rd cd | 1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. 3600 12 {"target":"six.example.org."}',
    },
    { name: 'PTR of an address only an out-of-zone name has goes on', q: ['9.9.9.10.in-addr.arpa.', RRType.PTR], want: 'next' },
    { name: 'PTR of an unknown address goes on', q: ['7.7.7.7.in-addr.arpa.', RRType.PTR], want: 'next' },
    { name: 'no_reverse: PTR goes on', config: { autoReverse: false }, q: ['1.0.0.10.in-addr.arpa.', RRType.PTR], want: 'next' },
    // As CoreDNS: the class is not looked at (the server refuses other classes unless chaos or forward is loaded).
    {
      name: 'CH class is answered from the same data',
      q: ['web.example.org.', RRType.A, DnsClass.CH],
      want: '0 qr aa rd cd | web.example.org. 3600 1 {"address":"10.0.0.1"} | web.example.org. 3600 1 {"address":"10.0.0.2"}',
    },
    { name: 'ANY class, unknown name in the zone is NXDOMAIN', q: ['nope.example.org.', RRType.A, 255], want: '3 qr aa rd cd' },
    { name: 'ttl option', config: { ttl: 60 }, q: ['six.example.org.', RRType.AAAA], want: '0 qr aa rd cd | six.example.org. 60 28 {"address":"2001:db8::1"}' },
  ];
  for (const c of cases) {
    assert.equal(await ask(plugin(c.config), ...c.q), c.want, c.name);
  }
});

test('hosts: many addresses for one name stay whole in the wire answer', async () => {
  const text = Array.from({ length: 300 }, (_, i) => `10.1.${i >> 8}.${i & 255} big.example.org`).join('\n');
  const p = plugin({ inlineText: text });
  const reply = await p.serve(request('big.example.org.', RRType.A), () => undefined);
  const m = decodeMessage(reply?.wire as Buffer);
  assert.equal(m.answers.length, 300);
  assert.equal((reply?.wire as Buffer).length, 12 + 21 + 300 * 16);
});

test('hosts: EDNS clients get an OPT record built in, which the finalizer keeps', async () => {
  const cases: Array<{ name: string; edns?: Edns; want?: { udpSize: number; do: boolean } }> = [
    { name: 'no EDNS: no OPT', edns: undefined, want: undefined },
    { name: 'EDNS: our size', edns: { udpSize: 4096, version: 0, do: false, zFlags: 0, options: [] }, want: { udpSize: 1232, do: false } },
    { name: 'DO is echoed', edns: { udpSize: 512, version: 0, do: true, zFlags: 0, options: [{ code: 10, data: new Uint8Array(8) }] }, want: { udpSize: 1232, do: true } },
  ];
  const p = plugin();
  for (const c of cases) {
    for (const q of [['web.example.org.', RRType.A], ['nope.example.org.', RRType.A]] as const) {
      const req = request(q[0], q[1], DnsClass.IN, c.edns);
      const reply = (await p.serve(req, () => undefined)) as Reply;
      const m = decodeMessage(reply.wire as Buffer);
      const got = m.edns && { udpSize: m.edns.udpSize, do: m.edns.do };
      assert.deepEqual(got, c.want, `${c.name}: ${q[0]}`);
      assert.deepEqual(m.edns?.options ?? [], [], `${c.name}: the client's options are not echoed`);
      const sent = finalizeReply(req, reply);
      assert.equal(sent, reply.wire, `${c.name}: finalizer sends the bytes as made, no copy`);
      assert.deepEqual(decodeMessage(sent).edns && { udpSize: decodeMessage(sent).edns?.udpSize, do: decodeMessage(sent).edns?.do }, c.want);
    }
  }
});

function tempHosts(text: string): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-hosts-'));
  const path = join(dir, 'hosts');
  writeFileSync(path, text);
  return { dir, path };
}

test('hosts file: read at start, re-read when it changes, inline kept when it goes away', async () => {
  const { dir, path } = tempHosts('10.0.0.5 file.example.org\n');
  const registry = new Registry();
  const metrics = {
    entries: gauge(registry, 'coredns_hosts_entries', 'x'),
    reloadTimestamp: gauge(registry, 'coredns_hosts_reload_timestamp_seconds', 'x'),
  };
  const p = new HostsPlugin(
    { path, zones: ['example.org.'], ttl: 3600, autoReverse: true, reloadMs: 0, inline: parseHostsText('10.0.0.6 inline.example.org').lines },
    { log: quietLog, metrics, now: () => 1_700_000_000_000 },
  );
  const entries = async () => (await registry.getSingleMetric('coredns_hosts_entries')?.get())?.values[0]?.value;
  try {
    assert.equal(await ask(p, 'file.example.org.', RRType.A), '3 qr aa rd cd', 'nothing read before start');
    await p.start();
    const steps: Array<{ name: string; act: () => void; changed: boolean; file: string; inline: string; entries: number }> = [
      { name: 'at start', act: () => undefined, changed: false, file: '0 qr aa rd cd | file.example.org. 3600 1 {"address":"10.0.0.5"}', inline: '0 qr aa rd cd | inline.example.org. 3600 1 {"address":"10.0.0.6"}', entries: 2 },
      {
        name: 'file changed',
        act: () => writeFileSync(path, '10.0.0.7 file.example.org\n10.0.0.8 file.example.org\n'),
        changed: true,
        file: '0 qr aa rd cd | file.example.org. 3600 1 {"address":"10.0.0.7"} | file.example.org. 3600 1 {"address":"10.0.0.8"}',
        inline: '0 qr aa rd cd | inline.example.org. 3600 1 {"address":"10.0.0.6"}',
        entries: 3,
      },
      { name: 'unchanged file is not re-read', act: () => undefined, changed: false, file: '0 qr aa rd cd | file.example.org. 3600 1 {"address":"10.0.0.7"} | file.example.org. 3600 1 {"address":"10.0.0.8"}', inline: '0 qr aa rd cd | inline.example.org. 3600 1 {"address":"10.0.0.6"}', entries: 3 },
      { name: 'file removed', act: () => rmSync(path), changed: true, file: '3 qr aa rd cd', inline: '0 qr aa rd cd | inline.example.org. 3600 1 {"address":"10.0.0.6"}', entries: 1 },
      { name: 'file back', act: () => writeFileSync(path, '10.0.0.9 file.example.org\n'), changed: true, file: '0 qr aa rd cd | file.example.org. 3600 1 {"address":"10.0.0.9"}', inline: '0 qr aa rd cd | inline.example.org. 3600 1 {"address":"10.0.0.6"}', entries: 2 },
    ];
    for (const s of steps) {
      s.act();
      assert.equal(await p.refresh(), s.changed, `${s.name}: changed`);
      assert.equal(await ask(p, 'file.example.org.', RRType.A), s.file, `${s.name}: file name`);
      assert.equal(await ask(p, 'inline.example.org.', RRType.A), s.inline, `${s.name}: inline name`);
      assert.equal(await entries(), s.entries, `${s.name}: entries gauge`);
    }
    assert.equal((await registry.getSingleMetric('coredns_hosts_reload_timestamp_seconds')?.get())?.values[0]?.value, 1_700_000_000);
  } finally {
    p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('hosts file: the reload timer picks up a change by itself', async () => {
  const { dir, path } = tempHosts('10.0.0.5 timed.example.org\n');
  const p = new HostsPlugin({ path, zones: ['.'], ttl: 3600, autoReverse: true, reloadMs: 30, inline: [] }, { log: quietLog });
  try {
    await p.start();
    assert.equal(p.entries, 1);
    writeFileSync(path, '10.0.0.5 timed.example.org\n10.0.0.6 timed.example.org\n');
    const deadline = Date.now() + 3000;
    const count = (): number => p.entries; // read afresh: the timer changes it behind our back
    while (count() !== 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(count(), 2);
  } finally {
    p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('hosts file: unusable lines are skipped and reported once per read', async () => {
  const { dir, path } = tempHosts('10.0.0.5 ok.example.org\nbogus line\n10.0.0.x bad.example.org\n');
  const lines: string[] = [];
  const p = new HostsPlugin(
    { path, zones: ['.'], ttl: 3600, autoReverse: true, reloadMs: 0, inline: [] },
    { log: createLogger((level, line) => lines.push(`${level} ${line}`)).plugin('hosts') },
  );
  try {
    await p.start();
    assert.equal(p.entries, 1);
    assert.deepEqual(lines, [`WARNING plugin/hosts: ${path}: ignored 2 unusable line(s), first line 2: "bogus" is not an IP address`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('hosts file: a missing file is reported once, not on every check', async () => {
  const lines: string[] = [];
  const p = new HostsPlugin(
    { path: '/nonexistent/kdns/hosts', zones: ['.'], ttl: 3600, autoReverse: true, reloadMs: 0, inline: parseHostsText('10.0.0.1 a.example').lines },
    { log: createLogger((level, line) => lines.push(`${level} ${line}`)) },
  );
  await p.start();
  await p.refresh();
  await p.refresh();
  assert.deepEqual(lines, ['WARNING hosts file /nonexistent/kdns/hosts does not exist; serving the inline entries only']);
  assert.equal(p.entries, 1);
});
