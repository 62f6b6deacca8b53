// The file plugin inside a running kdns, asked with the real dig, side by side with BIND's
// named serving the same zone: same RCODE, AA, answers, and for negative answers and
// referrals the same authority (and glue).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dig, type DigRecord, type DigResult } from '../../../test/util/dig.js';
import { runKdns } from '../../../test/util/kdns.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { missing, namedUpstream, type NamedUpstream } from '../../../test/util/upstream.js';

const HEAD = `$TTL 300
$ORIGIN example.org.
@   IN SOA ns1 hostmaster (
        2024010101 ; serial
        3600 600 86400
        60 )       ; negative TTL
    IN NS ns1
    IN NS ns2.example.net.
    IN MX 10 mail
ns1 IN A 192.0.2.53
`;
const BODY = `mail            A     192.0.2.25
                AAAA  2001:db8::25
www             A     192.0.2.80
alias           CNAME www
chain           CNAME alias
external        CNAME www.example.net.
*.wild          A     192.0.2.99
*.wild          TXT   "wildcard"
*.cname-wild    CNAME www
deep.ent.a      TXT   "below an empty non-terminal"
_http._tcp      SRV   0 5 80 www
txt             TXT   "v=spf1 -all" "second string"
sub             NS    ns.sub
                NS    ns.example.net.
                DS    60485 5 1 2BB183AF5F22588179A53B0A98631FAD1A292118
ns.sub          A     192.0.2.54
to-sub          CNAME host.sub
old             DNAME new
host.new        A     192.0.2.7
`;

/** A record as compared: owner, TTL, type, data. */
const line = (r: DigRecord): string => `${r.name.toLowerCase()} ${r.ttl} ${r.type} ${r.data}`;
const section = (rs: DigRecord[]): string[] => rs.map(line).sort();

/** What must be equal between kdns and BIND for a query. */
function shape(r: DigResult, withAuthority: boolean): Record<string, unknown> {
  const referral = !r.flags.includes('aa') && r.answer.length === 0;
  return {
    status: r.status,
    aa: r.flags.includes('aa'),
    answer: section(r.answer),
    ...(withAuthority || referral || r.answer.length === 0 ? { authority: section(r.authority) } : {}),
    ...(referral ? { additional: section(r.additional) } : {}),
  };
}

describe('file end to end', { skip: missing('named', 'bind9') }, () => {
  let kdns: TestServer;
  let named: NamedUpstream;
  before(async () => {
    kdns = await startTestServer(
      `.:{PORT} {
    bind 127.0.0.1
    file db.example.org example.org {
        reload 100ms
        fallthrough fall.example.org
    }
    whoami
}
`,
      { files: { 'db.example.org': `${HEAD}$INCLUDE body.inc\n`, 'body.inc': BODY } },
    );
    named = namedUpstream({ zones: { 'example.org': HEAD + BODY }, port: await freePort(), minimalResponses: 'yes' });
    await named.start();
  });
  after(async () => {
    await kdns?.stop();
    await named?.stop();
  });

  test('answers as BIND answers', async () => {
    const cases: Array<{ q: [string, string]; status: string; what: string; authority?: boolean }> = [
      { q: ['www.example.org', 'A'], status: 'NOERROR', what: 'an address' },
      { q: ['WWW.Example.ORG', 'A'], status: 'NOERROR', what: 'case-insensitive' },
      { q: ['example.org', 'SOA'], status: 'NOERROR', what: 'the SOA' },
      { q: ['example.org', 'NS'], status: 'NOERROR', what: 'apex NS' },
      { q: ['example.org', 'MX'], status: 'NOERROR', what: 'MX' },
      { q: ['mail.example.org', 'AAAA'], status: 'NOERROR', what: 'AAAA' },
      { q: ['txt.example.org', 'TXT'], status: 'NOERROR', what: 'TXT with two strings' },
      { q: ['_http._tcp.example.org', 'SRV'], status: 'NOERROR', what: 'SRV' },
      { q: ['chain.example.org', 'A'], status: 'NOERROR', what: 'a CNAME chain inside the zone' },
      { q: ['alias.example.org', 'CNAME'], status: 'NOERROR', what: 'the CNAME itself' },
      { q: ['external.example.org', 'A'], status: 'NOERROR', what: 'a CNAME out of the zone, left for the client' },
      { q: ['www.example.org', 'TXT'], status: 'NOERROR', what: 'NODATA', authority: true },
      { q: ['nope.example.org', 'A'], status: 'NXDOMAIN', what: 'NXDOMAIN', authority: true },
      { q: ['chain.example.org', 'TXT'], status: 'NOERROR', what: 'NODATA at the end of a chain', authority: true },
      { q: ['a.example.org', 'TXT'], status: 'NOERROR', what: 'an empty non-terminal' },
      { q: ['ent.a.example.org', 'TXT'], status: 'NOERROR', what: 'an empty non-terminal, one deeper' },
      { q: ['x.ent.a.example.org', 'TXT'], status: 'NXDOMAIN', what: 'below an empty non-terminal' },
      { q: ['anything.wild.example.org', 'A'], status: 'NOERROR', what: 'wildcard synthesis' },
      { q: ['two.labels.wild.example.org', 'TXT'], status: 'NOERROR', what: 'wildcard for a deeper name' },
      { q: ['anything.wild.example.org', 'MX'], status: 'NOERROR', what: 'wildcard NODATA' },
      { q: ['x.cname-wild.example.org', 'A'], status: 'NOERROR', what: 'wildcard CNAME' },
      { q: ['host.sub.example.org', 'A'], status: 'NOERROR', what: 'referral below a delegation, with glue' },
      { q: ['sub.example.org', 'NS'], status: 'NOERROR', what: 'referral at the delegation' },
      { q: ['sub.example.org', 'DS'], status: 'NOERROR', what: 'DS at the delegation point' },
      { q: ['to-sub.example.org', 'A'], status: 'NOERROR', what: 'a CNAME into a delegation: the alias, then the referral' },
      { q: ['host.old.example.org', 'A'], status: 'NOERROR', what: 'DNAME substitution' },
      { q: ['gone.old.example.org', 'A'], status: 'NXDOMAIN', what: 'DNAME substitution to a name that does not exist', authority: true },
      { q: ['old.example.org', 'DNAME'], status: 'NOERROR', what: 'the DNAME itself' },
    ];
    for (const c of cases) {
      const [name, type] = c.q;
      const args = ['+norec'];
      const [ours, bind] = await Promise.all([dig(name, type, { port: kdns.port, args }), dig(name, type, { port: named.port, args })]);
      assert.equal(ours.status, c.status, `${c.what}: status\n${ours.raw}`);
      assert.deepEqual(shape(ours, c.authority ?? false), shape(bind, c.authority ?? false), `${c.what} (${name} ${type})\n--- kdns\n${ours.raw}\n--- named\n${bind.raw}`);
    }
  });

  test('fallthrough passes names the zone lacks to the next plugin', async () => {
    const r = await dig('x.fall.example.org', 'A', { port: kdns.port });
    assert.equal(r.status, 'NOERROR');
    assert.ok(r.additional.some((a) => a.type === 'SRV' && a.name.startsWith('_udp.')), `answered by whoami:\n${r.raw}`);
  });

  test('reload: a new serial is served, a broken file keeps the old zone', async () => {
    const dir = kdns.dir;
    writeFileSync(join(dir, 'body.inc'), `${BODY}fresh A 192.0.2.1\n`);
    writeFileSync(join(dir, 'db.example.org'), `${HEAD.replace('2024010101', '2024010102')}$INCLUDE body.inc\n`);
    const fresh = await waitFor(async () => {
      const r = await dig('fresh.example.org', 'A', { port: kdns.port });
      return r.status === 'NOERROR' ? r : undefined;
    }, 5000, 50);
    assert.deepEqual(section(fresh.answer), ['fresh.example.org. 300 A 192.0.2.1']);

    writeFileSync(join(dir, 'body.inc'), `${BODY}fresh A 192.0.2.1\nbroken A 192.0.2.300\n`);
    const brokenLine = BODY.split('\n').length + 1;
    writeFileSync(join(dir, 'db.example.org'), `${HEAD.replace('2024010101', '2024010103')}$INCLUDE body.inc\n`);
    const logged = await waitFor(() => kdns.logs.find((l) => l.includes(`body.inc:${brokenLine}: invalid IPv4 address "192.0.2.300"`)), 5000, 50);
    assert.match(logged, /^\[ERROR\] plugin\/file: zone example.org.: .*keeping the zone loaded before$/);
    const still = await dig('fresh.example.org', 'A', { port: kdns.port });
    assert.deepEqual(section(still.answer), ['fresh.example.org. 300 A 192.0.2.1']);
  });
});

test('kdns serve refuses to start on a zone file that does not parse, naming both lines', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdns-file-'));
  try {
    writeFileSync(join(dir, 'db.example.org'), `${HEAD}www AA 192.0.2.1\n`);
    writeFileSync(join(dir, 'Corefile'), `example.org:${await freePort()} {\n    bind 127.0.0.1\n    file db.example.org\n}\n`);
    const r = await runKdns(['serve', '--conf', join(dir, 'Corefile')]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`Corefile:3: file: ${join(dir, 'db.example.org')}:11: unknown record type "AA"`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
