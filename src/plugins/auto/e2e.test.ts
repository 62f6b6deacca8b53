// The auto plugin inside a running kdns, asked with the real dig: zones appear, change and
// go away as files do.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answers, dig } from '../../../test/util/dig.js';
import { waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

const zone = (origin: string, serial: number, www: string) => `$ORIGIN ${origin}.
$TTL 60
@ SOA ns hostmaster ${serial} 3600 600 86400 30
@ NS ns
ns A 192.0.2.53
www A ${www}
*.apps CNAME www
`;

describe('auto end to end', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    auto example.org example.com {
        directory zones ^(.*)\\.zone$ {1}
        reload 100ms
    }
}
`,
    );
  });
  after(() => s?.stop());

  const ask = async (name: string, type = 'A') => dig(name, type, { port: s.port });

  test('zones come and go with their files', async () => {
    // The folder is created after start: a missing folder is only a warning.
    mkdirSync(join(s.dir, 'zones'));
    writeFileSync(join(s.dir, 'zones', 'example.org.zone'), zone('example.org', 1, '192.0.2.1'));
    writeFileSync(join(s.dir, 'zones', 'example.org.zone.bak'), zone('example.org', 0, '192.0.2.66'));
    const first = await waitFor(async () => {
      const r = await ask('www.example.org');
      return r.status === 'NOERROR' && r.answer.length > 0 ? r : undefined;
    }, 5000, 50);
    assert.deepEqual(answers(first), ['A 192.0.2.1']);
    assert.ok(first.flags.includes('aa'));

    const cases: Array<{ q: [string, string]; status: string; answers: string[]; authority: string[] }> = [
      { q: ['x.apps.example.org', 'A'], status: 'NOERROR', answers: ['A 192.0.2.1', 'CNAME www.example.org.'], authority: ['NS ns.example.org.'] },
      { q: ['nope.example.org', 'A'], status: 'NXDOMAIN', answers: [], authority: ['SOA ns.example.org. hostmaster.example.org. 1 3600 600 86400 30'] },
      { q: ['www.example.org', 'TXT'], status: 'NOERROR', answers: [], authority: ['SOA ns.example.org. hostmaster.example.org. 1 3600 600 86400 30'] },
    ];
    for (const c of cases) {
      const r = await ask(...c.q);
      assert.equal(r.status, c.status, c.q.join(' '));
      assert.deepEqual(answers(r), c.answers, c.q.join(' '));
      assert.deepEqual(r.authority.map((a) => `${a.type} ${a.data}`), c.authority, c.q.join(' '));
    }

    // A second zone appears; the first changes serial; then the first goes away.
    writeFileSync(join(s.dir, 'zones', 'example.com.zone'), zone('example.com', 1, '192.0.2.2'));
    writeFileSync(join(s.dir, 'zones', 'example.org.zone'), zone('example.org', 2, '192.0.2.11'));
    await waitFor(async () => (await ask('www.example.com')).answer.length > 0, 5000, 50);
    await waitFor(async () => answers(await ask('www.example.org'))[0] === 'A 192.0.2.11', 5000, 50);
    unlinkSync(join(s.dir, 'zones', 'example.org.zone'));
    // Without a zone and nothing after auto, kdns has no answer to give.
    await waitFor(async () => (await ask('www.example.org')).flags.includes('aa') === false, 5000, 50);
    assert.deepEqual(answers(await ask('www.example.com')), ['A 192.0.2.2']);
  });
});
