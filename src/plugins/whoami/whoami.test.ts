import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage, encodeMessage } from '../../lib/dns/codec.js';
import { DnsClass, RRType } from '../../lib/dns/types.js';
import type { ClientInfo, DnsRequest } from '../../server/request.js';
import { firstDirective } from '../../../test/util/corefile.js';
import { testRequest } from '../../../test/util/request.js';
import { WhoamiPlugin } from './handler.js';
import { parseWhoami } from './setup.js';

function request(name: string, client: Partial<ClientInfo>, qclass: number = DnsClass.IN): DnsRequest {
  return testRequest(name, RRType.A, { id: 7, qclass, client });
}

test('whoami: Corefile syntax', () => {
  const cases: Array<{ corefile: string; error?: string }> = [
    { corefile: 'example.org {\n  whoami\n}' },
    { corefile: 'example.org {\n  whoami x y\n}', error: 'Corefile:2: wrong argument count for "whoami": expected no arguments, got 2' },
    { corefile: 'example.org {\n\n  whoami {\n  }\n}', error: 'Corefile:3: "whoami" does not take a block' },
  ];
  for (const c of cases) {
    const d = firstDirective(c.corefile);
    if (c.error) assert.throws(() => parseWhoami(d), { message: c.error }, c.corefile);
    else assert.doesNotThrow(() => parseWhoami(d), c.corefile);
  }
});

test('whoami: address and port in the additional section', () => {
  const cases: Array<{ name: string; qname: string; client: Partial<ClientInfo>; qclass?: number; want: string[] }> = [
    {
      name: 'IPv4 over UDP',
      qname: 'Example.org.',
      client: { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 40000 },
      want: ['Example.org. 0 1 A 127.0.0.1', '_udp.Example.org. 0 1 SRV 0 0 40000 .'],
    },
    {
      name: 'IPv6 over TCP',
      qname: 'example.org.',
      client: { transport: 'tcp', remoteAddress: '::1', remotePort: 53124 },
      want: ['example.org. 0 1 AAAA ::1', '_tcp.example.org. 0 1 SRV 0 0 53124 .'],
    },
    {
      name: 'IPv4 client seen on a dual-stack socket gets A',
      qname: 'example.org.',
      client: { transport: 'udp', remoteAddress: '::ffff:127.0.0.1', remotePort: 1234 },
      want: ['example.org. 0 1 A 127.0.0.1', '_udp.example.org. 0 1 SRV 0 0 1234 .'],
    },
    {
      name: 'root question: _udp. without a double dot',
      qname: '.',
      client: { transport: 'udp', remoteAddress: '127.0.0.2', remotePort: 5 },
      want: ['. 0 1 A 127.0.0.2', '_udp. 0 1 SRV 0 0 5 .'],
    },
    {
      name: 'class of the question is kept',
      qname: 'example.org.',
      qclass: DnsClass.CH,
      client: { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: 9 },
      want: ['example.org. 0 3 A 127.0.0.1', '_udp.example.org. 0 3 SRV 0 0 9 .'],
    },
  ];
  const plugin = new WhoamiPlugin();
  for (const c of cases) {
    const reply = plugin.serve(request(c.qname, c.client, c.qclass));
    const m = decodeMessage(encodeMessage(reply.view()));
    assert.equal(m.answers.length, 0, c.name);
    assert.equal(m.aa, true, c.name);
    const show = m.additional.map((r) => {
      const d = r.data as { address?: string; priority?: number; weight?: number; port?: number; target?: string };
      const rdata = r.type === RRType.SRV ? `SRV ${d.priority} ${d.weight} ${d.port} ${d.target}` : `${r.type === RRType.A ? 'A' : 'AAAA'} ${d.address}`;
      return `${r.name} ${r.ttl} ${r.class} ${rdata}`;
    });
    assert.deepEqual(show, c.want, c.name);
  }
});
