// The transfer plugin inside a running kdns: zone transfers asked with the real dig, and BIND's
// named as a secondary that transfers a file zone and a kubernetes zone from kdns, serves them,
// and hears of a change by NOTIFY.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import dgram from 'node:dgram';
import { promisify } from 'node:util';
import { decodeMessage, encodeQuery } from '../../lib/dns/codec.js';
import { RRType, type Message } from '../../lib/dns/types.js';
import { dig } from '../../../test/util/dig.js';
import { freePort, waitFor } from '../../../test/util/net.js';
import { startTestServer, type TestServer } from '../../../test/util/server.js';
import { missing, namedUpstream, type NamedUpstream } from '../../../test/util/upstream.js';

const run = promisify(execFile);

const zone = (serial: number, extra = ''): string => `$TTL 300
$ORIGIN example.org.
@    IN SOA ns1 hostmaster ${serial} 3600 600 86400 60
     IN NS  ns1
ns1  IN A   192.0.2.53
www  IN A   192.0.2.80
     IN AAAA 2001:db8::80
mail IN MX  10 www
${extra}`;

/** Enough TXT records that the transfer takes several messages (each holds about 63,000 bytes). */
const bigZone = (): string => {
  const lines = ['$TTL 300', '$ORIGIN big.test.', '@ IN SOA ns hostmaster 7 3600 600 86400 60', '  IN NS ns', 'ns IN A 192.0.2.1'];
  for (let i = 0; i < 3000; i++) lines.push(`t${i} IN TXT "${'x'.repeat(60)}"`);
  return `${lines.join('\n')}\n`;
};

const MANIFESTS = `apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  type: ClusterIP
  clusterIP: 10.96.0.10
  ports:
  - {name: http, port: 80, protocol: TCP}
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: demo}
spec:
  clusterIP: None
  ports:
  - {name: pg, port: 5432, protocol: TCP}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: db-1
  namespace: demo
  labels: {kubernetes.io/service-name: db}
addressType: IPv4
endpoints:
- addresses: [10.244.0.7]
  hostname: db-0
  conditions: {ready: true}
- addresses: [10.244.0.8]
  conditions: {ready: false}
ports:
- {name: pg, port: 5432, protocol: TCP}
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: demo}
spec:
  type: ExternalName
  externalName: www.example.org
`;

/** `dig AXFR`/`IXFR=n` over TCP: the records as "name type data" lines in the order sent, and dig's summary. */
async function transfer(port: number, name: string, type: string): Promise<{ records: string[]; summary: string; out: string }> {
  const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), name, type, '+time=5', '+tries=1', '+nocookie', '+nocmd', '+nostats'], { timeout: 20_000 }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  const records: string[] = [];
  let summary = '';
  for (const line of stdout.split('\n')) {
    if (line.startsWith(';')) {
      if (line.includes('XFR size') || line.includes('Transfer failed')) summary = line;
      continue;
    }
    const parts = line.trim().split(/\s+/);
    if (parts.length < 5) continue;
    records.push(`${parts[0]} ${parts[3]} ${parts.slice(4).join(' ')}`);
  }
  return { records, summary, out: stdout };
}

/**
 * A transfer read message by message over one TCP connection: every message until one ends in
 * the zone's SOA a second time, or an error RCODE, or the server closes.
 */
async function rawTransfer(port: number, name: string): Promise<Message[]> {
  const { wire } = encodeQuery(0x4242, 0, name, RRType.AXFR, 1, undefined);
  const socket = net.connect(port, '127.0.0.1');
  const messages: Message[] = [];
  let soas = 0;
  let pending = Buffer.alloc(0);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no end of transfer after ${messages.length} messages`)), 10_000);
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from([wire.length >> 8, wire.length & 0xff]), wire])));
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const m = decodeMessage(pending.subarray(2, 2 + pending.readUInt16BE(0)));
        pending = pending.subarray(2 + pending.readUInt16BE(0));
        messages.push(m);
        soas += m.answers.filter((r) => r.type === RRType.SOA).length;
        if (m.rcode !== 0 || soas >= 2) return done();
      }
    });
    socket.on('close', done);
    socket.on('error', reject);
  });
  return messages;
}

/** One AXFR query over UDP: the reply's RCODE. */
async function udpAxfrRcode(port: number, name: string): Promise<number> {
  const { wire } = encodeQuery(0x4343, 0, name, RRType.AXFR, 1, undefined);
  const socket = dgram.createSocket('udp4');
  try {
    return await new Promise<number>((resolve, reject) => {
      setTimeout(() => reject(new Error('no UDP reply')), 5000).unref();
      socket.on('message', (m) => resolve(decodeMessage(m).rcode));
      socket.send(wire, port, '127.0.0.1');
    });
  } finally {
    socket.close();
  }
}

describe('transfer end to end', { skip: missing('named', 'bind9') ?? missing('dig', 'bind9-dnsutils') }, () => {
  let kdns: TestServer;
  let named: NamedUpstream | undefined;
  let namedPort: number;
  before(async () => {
    namedPort = await freePort();
    const manifests = mkdtempSync(join(tmpdir(), 'kdns-xfr-cluster-'));
    mkdirSync(join(manifests, 'm'));
    writeFileSync(join(manifests, 'm', 'all.yaml'), MANIFESTS);
    kdns = await startTestServer(
      `example.org:{PORT} {
    bind 127.0.0.1
    file db.example.org {
        reload 100ms
    }
    transfer {
        to 127.0.0.1:${namedPort}
    }
}
big.test:{PORT} {
    bind 127.0.0.1
    file db.big.test
    transfer {
        to *
    }
}
refused.test:{PORT} {
    bind 127.0.0.1
    file db.refused.test
    transfer {
        to 192.0.2.1
    }
}
closed.test:{PORT} {
    bind 127.0.0.1
    file db.closed.test
}
cluster.local:{PORT} {
    bind 127.0.0.1
    kubernetes {
        manifests ${join(manifests, 'm')}
    }
    transfer {
        to 127.0.0.1
    }
}
`,
      {
        files: {
          'db.example.org': zone(2024010101),
          'db.big.test': bigZone(),
          'db.refused.test': zone(1).replaceAll('example.org', 'refused.test'),
          'db.closed.test': zone(1).replaceAll('example.org', 'closed.test'),
        },
      },
    );
  });
  after(async () => {
    await named?.dispose();
    await kdns?.stop();
  });

  test('AXFR of a file zone: SOA first and last, every record between', async () => {
    const t = await transfer(kdns.port, 'example.org', 'AXFR');
    assert.deepEqual(t.records, [
      'example.org. SOA ns1.example.org. hostmaster.example.org. 2024010101 3600 600 86400 60',
      'example.org. NS ns1.example.org.',
      'ns1.example.org. A 192.0.2.53',
      'www.example.org. A 192.0.2.80',
      'www.example.org. AAAA 2001:db8::80',
      'mail.example.org. MX 10 www.example.org.',
      'example.org. SOA ns1.example.org. hostmaster.example.org. 2024010101 3600 600 86400 60',
    ]);
  });

  test('a zone larger than one message goes in several, SOA first and last', async () => {
    const t = await transfer(kdns.port, 'big.test', 'AXFR');
    assert.equal(t.records.length, 3004);
    assert.equal(t.records[0], 'big.test. SOA ns.big.test. hostmaster.big.test. 7 3600 600 86400 60');
    assert.equal(t.records.at(-1), 'big.test. SOA ns.big.test. hostmaster.big.test. 7 3600 600 86400 60');
    const messages = await rawTransfer(kdns.port, 'big.test');
    // 3,004 records that kdns counts at 87 bytes each (its upper bound, before compression):
    // five messages of at most 63,000 bytes of records.
    assert.deepEqual(
      messages.map((m) => ({ id: m.id, aa: m.aa, rcode: m.rcode })),
      messages.map(() => ({ id: 0x4242, aa: true, rcode: 0 })),
    );
    assert.equal(messages.length, 5);
    assert.equal(messages.reduce((n, m) => n + m.answers.length, 0), 3004);
  });

  test('AXFR over UDP is refused', async () => {
    assert.equal(await udpAxfrRcode(kdns.port, 'example.org'), 5);
  });

  const ixfrCases = [
    { what: 'IXFR from the current serial: the SOA alone (up to date)', serial: 2024010101, records: 1 },
    { what: 'IXFR from a newer serial: the SOA alone', serial: 2024010200, records: 1 },
    { what: 'IXFR from an older serial: the whole zone', serial: 2023000000, records: 7 },
  ];
  for (const c of ixfrCases) {
    test(c.what, async () => {
      const t = await transfer(kdns.port, 'example.org', `IXFR=${c.serial}`);
      assert.equal(t.records.length, c.records, t.out);
      assert.equal(t.records[0], 'example.org. SOA ns1.example.org. hostmaster.example.org. 2024010101 3600 600 86400 60');
    });
  }

  const refusedCases = [
    { what: 'a client not in "to" is refused', name: 'refused.test' },
    { what: 'a zone without transfer is refused by file, as before', name: 'closed.test' },
  ];
  for (const c of refusedCases) {
    test(c.what, async () => {
      const t = await transfer(kdns.port, c.name, 'AXFR');
      assert.deepEqual(t.records, []);
      assert.match(t.summary, /Transfer failed/);
      const messages = await rawTransfer(kdns.port, c.name);
      assert.deepEqual(
        messages.map((m) => ({ rcode: m.rcode, answers: m.answers.length })),
        [{ rcode: 5, answers: 0 }],
      );
    });
  }

  test('AXFR of a kubernetes zone: the SOA, NS, services, headless endpoints and ExternalName', async () => {
    const t = await transfer(kdns.port, 'cluster.local', 'AXFR');
    const soa = t.records[0] as string;
    assert.match(soa, /^cluster\.local\. SOA ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ 7200 1800 86400 5$/);
    assert.equal(t.records.at(-1), soa);
    const body = t.records.slice(1, -1).filter((r) => !r.startsWith('cluster.local. NS') && !r.startsWith('ns.dns.cluster.local.'));
    assert.deepEqual(body, [
      'db.demo.svc.cluster.local. A 10.244.0.7',
      'db-0.db.demo.svc.cluster.local. A 10.244.0.7',
      '_tcp._pg.db.demo.svc.cluster.local. SRV 0 100 5432 db-0.db.demo.svc.cluster.local.',
      'ext.demo.svc.cluster.local. CNAME www.example.org.',
      'web.demo.svc.cluster.local. A 10.96.0.10',
      'web.demo.svc.cluster.local. SRV 0 100 80 web.demo.svc.cluster.local.',
      '_tcp._http.web.demo.svc.cluster.local. SRV 0 100 80 web.demo.svc.cluster.local.',
    ]);
    assert.ok(t.records.some((r) => r.startsWith('cluster.local. NS ')), t.out);
  });

  test('named as a secondary transfers both zones, serves them, and reloads on NOTIFY', async () => {
    named = namedUpstream({ zones: {}, port: namedPort, secondaries: { zones: ['example.org', 'cluster.local'], primaryPort: kdns.port } });
    await named.start();
    const www = await waitFor(async () => {
      const r = await dig('www.example.org', 'A', { port: namedPort }).catch(() => undefined);
      if (!r) return undefined;
      return r.status === 'NOERROR' && r.answer.length > 0 ? r : undefined;
    }, 10_000, 100);
    assert.ok(www.flags.includes('aa'));
    assert.deepEqual(www.answer.map((a) => a.data), ['192.0.2.80']);
    const web = await waitFor(async () => {
      const r = await dig('_tcp._http.web.demo.svc.cluster.local', 'SRV', { port: namedPort }).catch(() => undefined);
      return r && r.answer.length > 0 ? r : undefined;
    }, 10_000, 100);
    assert.deepEqual(web.answer.map((a) => a.data), ['0 100 80 web.demo.svc.cluster.local.']);

    // A new serial: kdns reloads the file, sends NOTIFY, and named transfers the zone again at once
    // (its own refresh would wait an hour).
    writeFileSync(join(kdns.dir, 'db.example.org'), zone(2024010102, 'new  IN A 192.0.2.99\n'));
    const fresh = await waitFor(async () => {
      const r = await dig('new.example.org', 'A', { port: namedPort }).catch(() => undefined);
      return r && r.answer.length > 0 ? r : undefined;
    }, 10_000, 100);
    assert.deepEqual(fresh.answer.map((a) => a.data), ['192.0.2.99']);
  });
});
