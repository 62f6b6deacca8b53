// The hosts plugin inside a running kdns, asked with the real dig.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answers, dig } from '../../../test/util/dig.js';
import { waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

const BIG = 100;
const hostsFile = [
  '# test hosts file',
  '10.0.0.1 web.example.org www.example.org',
  '2001:db8::1 six.example.org',
  '10.0.0.9 other.test',
  ...Array.from({ length: BIG }, (_, i) => `10.2.0.${i + 1} big.example.org`),
].join('\n');

describe('hosts end to end', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    hosts hosts example.org {
        10.0.0.50 inline.example.org
        reload 100ms
        fallthrough sub.example.org
    }
    whoami
}
`,
      { files: { hosts: hostsFile } },
    );
  });
  after(() => s.stop());

  test('answers', async () => {
    const cases: Array<{ q: [string, string]; args?: string[]; status: string; answers: string[]; aa?: boolean; whoami?: boolean }> = [
      { q: ['web.example.org', 'A'], status: 'NOERROR', answers: ['A 10.0.0.1'], aa: true },
      { q: ['WWW.Example.Org', 'A'], status: 'NOERROR', answers: ['A 10.0.0.1'], aa: true },
      { q: ['six.example.org', 'AAAA'], status: 'NOERROR', answers: ['AAAA 2001:db8::1'], aa: true },
      { q: ['inline.example.org', 'A'], status: 'NOERROR', answers: ['A 10.0.0.50'], aa: true },
      { q: ['web.example.org', 'AAAA'], status: 'NOERROR', answers: [], aa: true },
      { q: ['web.example.org', 'MX'], status: 'NOERROR', answers: [], aa: true },
      { q: ['nope.example.org', 'A'], status: 'NXDOMAIN', answers: [], aa: true },
      { q: ['10.0.0.1', 'PTR'], args: ['-x'], status: 'NOERROR', answers: ['PTR web.example.org.', 'PTR www.example.org.'], aa: true },
      { q: ['2001:db8::1', 'PTR'], args: ['-x'], status: 'NOERROR', answers: ['PTR six.example.org.'], aa: true },
      // Falls through to whoami: by the fallthrough zone, by being outside the hosts zones, or
      // as a PTR nobody has (other.test is out of zone, so 10.0.0.9 has no PTR).
      { q: ['x.sub.example.org', 'A'], status: 'NOERROR', answers: [], whoami: true },
      { q: ['other.test', 'A'], status: 'NOERROR', answers: [], whoami: true },
      { q: ['10.0.0.9', 'PTR'], args: ['-x'], status: 'NOERROR', answers: [], whoami: true },
    ];
    for (const c of cases) {
      const [name, type] = c.q;
      const r = c.args?.includes('-x') ? await dig('-x', name, { port: s.port }) : await dig(name, type, { port: s.port });
      const what = `${name} ${type}`;
      assert.equal(r.status, c.status, what);
      assert.deepEqual(answers(r), c.answers, what);
      if (c.aa !== undefined) assert.equal(r.flags.includes('aa'), c.aa, `${what}: aa`);
      assert.equal(r.additional.some((a) => a.type === 'SRV' && a.name.startsWith('_udp.')), c.whoami ?? false, `${what}: answered by whoami`);
      assert.equal(r.edns?.udp, 1232, `${what}: OPT in the reply`);
    }
  });

  test('the question name comes back as the client spelled it', async () => {
    const r = await dig('WeB.ExAmPlE.oRg', 'A', { port: s.port });
    assert.deepEqual(r.answer.map((a) => a.name), ['WeB.ExAmPlE.oRg.']);
    assert.equal(r.answer[0]?.ttl, 3600);
  });

  test('a large answer is truncated over UDP and whole over TCP', async () => {
    const udp = await dig('big.example.org', 'A', { port: s.port, args: ['+bufsize=512', '+ignore'] });
    assert.ok(udp.flags.includes('tc'), `TC set: ${udp.flags.join(' ')}`);
    assert.ok(udp.size <= 512, `UDP reply fits 512 bytes: ${udp.size}`);
    const tcp = await dig('big.example.org', 'A', { port: s.port, args: ['+tcp'] });
    assert.equal(tcp.transport, 'TCP');
    assert.equal(tcp.flags.includes('tc'), false);
    assert.deepEqual(answers(tcp), Array.from({ length: BIG }, (_, i) => `A 10.2.0.${i + 1}`).sort());
  });

  test('the file is read again after it changes', async () => {
    writeFileSync(join(s.dir, 'hosts'), `${hostsFile}\n10.0.0.77 fresh.example.org\n10.0.0.2 web.example.org\n`);
    const fresh = await waitFor(async () => {
      const r = await dig('fresh.example.org', 'A', { port: s.port });
      return r.status === 'NOERROR' ? r : undefined;
    }, 5000, 50);
    assert.deepEqual(answers(fresh), ['A 10.0.0.77']);
    const web = await dig('web.example.org', 'A', { port: s.port });
    assert.deepEqual(answers(web), ['A 10.0.0.1', 'A 10.0.0.2']);
    assert.deepEqual(answers(await dig('inline.example.org', 'A', { port: s.port })), ['A 10.0.0.50'], 'inline entries kept');
  });
});
