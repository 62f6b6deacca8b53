// minimal in a running kdns in front of a file zone, asked with dig: positive answers lose their
// authority and additional sections; negative answers keep the SOA (CoreDNS minimal_test.go's cases).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

const ZONE = `$ORIGIN example.org.
@ 3600 IN SOA ns1.example.org. admin.example.org. 1 7200 3600 1209600 3600
@ 3600 IN NS ns1.example.org.
ns1 3600 IN A 192.0.2.53
www 3600 IN A 192.0.2.80
`;

function sections(r: Awaited<ReturnType<typeof dig>>): string {
  const names = (rs: typeof r.answer): string => rs.map((x) => `${x.type}`).join(',');
  return `${r.status} an=${names(r.answer)} ns=${names(r.authority)} ar=${names(r.additional)}`;
}

describe('minimal', () => {
  const servers: Record<string, TestServer> = {};
  before(async () => {
    for (const [name, extra] of [['with', '    minimal\n'], ['without', '']] as const) {
      servers[name] = await startTestServer(`example.org:{PORT} {\n    bind 127.0.0.1\n${extra}    file db.example.org\n}\n`, { files: { 'db.example.org': ZONE } });
    }
  });
  after(async () => {
    for (const s of Object.values(servers)) await s.stop();
  });

  const cases: Array<{ what: string; name: string; type: string; with: string; without: string }> = [
    { what: 'positive answer: answer section only', name: 'www.example.org', type: 'A', with: 'NOERROR an=A ns= ar=', without: 'NOERROR an=A ns=NS ar=' },
    { what: 'NXDOMAIN keeps its SOA', name: 'nope.example.org', type: 'A', with: 'NXDOMAIN an= ns=SOA ar=', without: 'NXDOMAIN an= ns=SOA ar=' },
    { what: 'NODATA keeps its SOA', name: 'www.example.org', type: 'AAAA', with: 'NOERROR an= ns=SOA ar=', without: 'NOERROR an= ns=SOA ar=' },
  ];
  for (const c of cases) {
    test(c.what, async () => {
      const got = {
        with: sections(await dig(c.name, c.type, { port: (servers.with as TestServer).port })),
        without: sections(await dig(c.name, c.type, { port: (servers.without as TestServer).port })),
      };
      assert.deepEqual(got, { with: c.with, without: c.without });
    });
  }
});
