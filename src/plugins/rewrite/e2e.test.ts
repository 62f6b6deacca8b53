// rewrite inside a running kdns, asked with the real dig: local data from hosts, and a real
// named upstream behind forward. dig itself refuses a reply whose question differs from what it
// asked, so every answered case also proves the question was restored.
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { dig, type DigResult } from '../../../test/util/dig.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { missing, startExampleUpstream, type NamedUpstream } from '../../../test/util/upstream.js';

function question(r: DigResult): string {
  return /;; QUESTION SECTION:\n;(\S+\s+\S+\s+\S+)/.exec(r.raw)?.[1]?.split(/\s+/).join(' ') ?? '';
}

const noNamed = missing('named', 'bind9');

describe('rewrite end to end', { skip: noNamed }, () => {
  let s: TestServer;
  let named: NamedUpstream;
  before(async () => {
    named = await startExampleUpstream();
    s = await startTestServer(
      [
        'example.org:{PORT} {',
        '    bind 127.0.0.1',
        '    rewrite name exact from.example.org to.example.org',
        '    rewrite ttl exact ttl.example.org 77',
        '    rewrite rcode exact gone.example.org NXDOMAIN NOERROR',
        '    rewrite type TXT A',
        '    hosts {',
        '        10.0.0.1 to.example.org',
        '        10.0.0.3 ttl.example.org',
        '        10.0.0.4 txt.example.org',
        '    }',
        '}',
        'example.test:{PORT} {',
        '    bind 127.0.0.1',
        '    rewrite continue cname exact www.example.test. multi.example.test.',
        `    forward . 127.0.0.1:${named.port}`,
        '}',
        'corp.test:{PORT} {',
        '    bind 127.0.0.1',
        '    rewrite stop {',
        '        name suffix .corp.test .example.test answer auto',
        '    }',
        `    forward . 127.0.0.1:${named.port}`,
        '}',
        '',
      ].join('\n'),
    );
  });
  after(async () => {
    await s?.stop();
    await named?.stop();
  });

  const cases: Array<{ name: string; type: string; args?: string[]; status: string; question: string; answer: string[] }> = [
    { name: 'from.example.org', type: 'A', status: 'NOERROR', question: 'from.example.org. IN A', answer: ['from.example.org. 3600 A 10.0.0.1'] },
    // The answer owner equals the question but for case, so it is written as a pointer to it.
    { name: 'From.Example.org', type: 'A', args: ['+tcp'], status: 'NOERROR', question: 'From.Example.org. IN A', answer: ['From.Example.org. 3600 A 10.0.0.1'] },
    { name: 'ttl.example.org', type: 'A', status: 'NOERROR', question: 'ttl.example.org. IN A', answer: ['ttl.example.org. 77 A 10.0.0.3'] },
    { name: 'gone.example.org', type: 'A', status: 'NOERROR', question: 'gone.example.org. IN A', answer: [] },
    { name: 'other.example.org', type: 'A', status: 'NXDOMAIN', question: 'other.example.org. IN A', answer: [] },
    { name: 'txt.example.org', type: 'TXT', status: 'NOERROR', question: 'txt.example.org. IN TXT', answer: ['txt.example.org. 3600 A 10.0.0.4'] },
    { name: 'www.corp.test', type: 'A', status: 'NOERROR', question: 'www.corp.test. IN A', answer: ['www.corp.test. 300 A 192.0.2.1'] },
    {
      name: 'alias.corp.test',
      type: 'A',
      status: 'NOERROR',
      question: 'alias.corp.test. IN A',
      answer: ['alias.corp.test. 300 CNAME www.corp.test.', 'www.corp.test. 300 A 192.0.2.1'],
    },
    { name: 'mx.corp.test', type: 'MX', status: 'NOERROR', question: 'mx.corp.test. IN MX', answer: ['mx.corp.test. 300 MX 10 mail1.corp.test.', 'mx.corp.test. 300 MX 20 mail2.corp.test.'] },
    { name: 'nope.corp.test', type: 'A', status: 'NXDOMAIN', question: 'nope.corp.test. IN A', answer: [] },
    {
      name: 'alias.example.test',
      type: 'A',
      status: 'NOERROR',
      question: 'alias.example.test. IN A',
      answer: ['alias.example.test. 300 CNAME multi.example.test.', 'multi.example.test. 300 A 192.0.2.11', 'multi.example.test. 300 A 192.0.2.12', 'multi.example.test. 300 A 192.0.2.13', 'multi.example.test. 300 A 192.0.2.14'],
    },
    { name: 'www.example.test', type: 'A', status: 'NOERROR', question: 'www.example.test. IN A', answer: ['www.example.test. 300 A 192.0.2.1'] },
  ];
  for (const c of cases) {
    test(`${c.name} ${c.type} ${c.args?.join(' ') ?? ''}`, async () => {
      const r = await dig(c.name, c.type, { port: s.port, args: c.args });
      assert.equal(r.status, c.status, r.raw);
      assert.equal(question(r), c.question);
      assert.deepEqual(r.answer.map((x) => `${x.name} ${x.ttl} ${x.type} ${x.data}`).sort(), [...c.answer].sort(), r.raw);
    });
  }

  // As in CoreDNS: the suffix is ".example.test.", so the zone's own name is not under it; the
  // SOA's MNAME is, and is mapped back.
  test('an NXDOMAIN from upstream: SOA owner kept, MNAME mapped back', async () => {
    const r = await dig('nope.corp.test', 'A', { port: s.port });
    assert.deepEqual(
      r.authority.map((x) => [x.name, x.type, x.data.split(' ')[0]]),
      [['example.test.', 'SOA', 'ns.corp.test.']],
    );
  });
});

// The rewrites clusters run in front of the kubernetes plugin: an outside name for a Service,
// and a second cluster domain mapped onto cluster.local.
describe('rewrite end to end, in front of kubernetes', () => {
  const cluster = fileURLToPath(new URL('../kubernetes/testdata/cluster', import.meta.url));
  let s: TestServer;
  before(async () => {
    s = await startTestServer(
      [
        '.:{PORT} {',
        '    bind 127.0.0.1',
        '    rewrite name api.example.com kubernetes.default.svc.cluster.local',
        '    rewrite name suffix .svc.cluster.remote .svc.cluster.local answer auto',
        `    kubernetes cluster.local {`,
        `        manifests ${cluster}`,
        '    }',
        '}',
        '',
      ].join('\n'),
    );
  });
  after(() => s?.stop());

  const cases: Array<{ name: string; type: string; status: string; answer: string[] }> = [
    { name: 'api.example.com', type: 'A', status: 'NOERROR', answer: ['api.example.com. 5 A 10.96.0.1'] },
    { name: 'kube-dns.kube-system.svc.cluster.remote', type: 'A', status: 'NOERROR', answer: ['kube-dns.kube-system.svc.cluster.remote. 5 A 10.96.0.10'] },
    {
      name: '_dns._udp.kube-dns.kube-system.svc.cluster.remote',
      type: 'SRV',
      status: 'NOERROR',
      answer: ['_dns._udp.kube-dns.kube-system.svc.cluster.remote. 5 SRV 0 100 53 kube-dns.kube-system.svc.cluster.remote.'],
    },
    { name: 'nope.kube-system.svc.cluster.remote', type: 'A', status: 'NXDOMAIN', answer: [] },
    { name: 'kubernetes.default.svc.cluster.local', type: 'A', status: 'NOERROR', answer: ['kubernetes.default.svc.cluster.local. 5 A 10.96.0.1'] },
  ];
  for (const c of cases) {
    test(`${c.name} ${c.type}`, async () => {
      const r = await dig(c.name, c.type, { port: s.port });
      assert.equal(r.status, c.status, r.raw);
      assert.equal(question(r), `${c.name}. IN ${c.type}`);
      assert.deepEqual(r.answer.map((x) => `${x.name} ${x.ttl} ${x.type} ${x.data}`), c.answer, r.raw);
    });
  }
});
