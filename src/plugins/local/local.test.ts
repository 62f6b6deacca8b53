// local in a running kdns, asked with dig; cases transcribed from CoreDNS's plugin/local/local_test.go.
// Names local does not own go on to the next plugin (here whoami).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dig } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';

function summary(r: Awaited<ReturnType<typeof dig>>): string {
  const rr = (x: (typeof r.answer)[number]): string => `${x.name} ${x.ttl} ${x.type} ${x.data}`;
  return [r.status, ...r.answer.map((x) => `an: ${rr(x)}`), ...r.authority.map((x) => `ns: ${rr(x)}`)].join(' | ');
}

const SOA = (owner: string): string => `ns: ${owner} 604800 SOA localhost. root.localhost. 1 0 0 0 604800`;

describe('local', () => {
  let on: TestServer;
  let off: TestServer;
  before(async () => {
    on = await startTestServer('.:{PORT} {\n    bind 127.0.0.1\n    local\n    whoami\n}\n');
    off = await startTestServer('.:{PORT} {\n    bind 127.0.0.1\n    local {\n        localhost_prefix off\n    }\n    whoami\n}\n');
  });
  after(async () => {
    await on.stop();
    await off.stop();
  });

  const cases: Array<{ name: string; type: string; want: string; prefixOff?: boolean }> = [
    { name: 'localhost.', type: 'A', want: 'NOERROR | an: localhost. 604800 A 127.0.0.1' },
    { name: 'localHOst.', type: 'A', want: 'NOERROR | an: localHOst. 604800 A 127.0.0.1' },
    { name: 'localhost.', type: 'AAAA', want: 'NOERROR | an: localhost. 604800 AAAA ::1' },
    { name: 'localhost.', type: 'NS', want: 'NOERROR | an: localhost. 604800 NS localhost.' },
    { name: 'localhost.', type: 'SOA', want: 'NOERROR | an: localhost. 604800 SOA localhost. root.localhost. 1 0 0 0 604800' },
    { name: '127.in-addr.arpa.', type: 'A', want: `NOERROR | ${SOA('127.in-addr.arpa.')}` },
    { name: 'localhost.', type: 'MX', want: `NOERROR | ${SOA('localhost.')}` },
    { name: 'a.localhost.', type: 'A', want: 'NOERROR | an: a.localhost. 604800 A 127.0.0.1' },
    { name: 'a.localhost.', type: 'AAAA', want: 'NOERROR | an: a.localhost. 604800 AAAA ::1' },
    { name: 'a.localhost.', type: 'MX', want: `NOERROR | ${SOA('a.localhost.')}` },
    { name: '1.0.0.127.in-addr.arpa.', type: 'PTR', want: 'NOERROR | an: 1.0.0.127.in-addr.arpa. 604800 PTR localhost.' },
    { name: '1.0.0.127.in-addr.arpa.', type: 'MX', want: `NOERROR | ${SOA('127.in-addr.arpa.')}` },
    { name: '2.0.0.127.in-addr.arpa.', type: 'PTR', want: `NXDOMAIN | ${SOA('127.in-addr.arpa.')}` },
    { name: 'localhost.example.net.', type: 'A', want: 'NOERROR | an: localhost.example.net. 604800 A 127.0.0.1' },
    { name: 'localhost.example.net.', type: 'A', prefixOff: true, want: 'NOERROR' },
    { name: 'example.net.', type: 'A', want: 'NOERROR' },
  ];
  for (const c of cases) {
    test(`${c.name} ${c.type}${c.prefixOff ? ' (localhost_prefix off)' : ''}`, async () => {
      const r = await dig(c.name, c.type, { port: (c.prefixOff ? off : on).port });
      assert.equal(summary(r), c.want);
    });
  }
});
