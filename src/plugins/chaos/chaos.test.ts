import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DnsClass, RCode, RRType, type TXTData } from '../../lib/dns/types.js';
import { errorReply, type Reply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { firstDirective } from '../../../test/util/corefile.js';
import { testRequest } from '../../../test/util/request.js';
import { ChaosPlugin, trimToCharacterString } from './handler.js';
import { defaultVersion, parseChaos } from './setup.js';

function request(name: string, type: number, qclass: number): DnsRequest {
  return testRequest(name, type, { qclass, rd: false });
}

test('chaos: Corefile syntax', () => {
  const cases: Array<{ corefile: string; want?: { version: string; authors: string[] }; error?: string }> = [
    { corefile: '. {\n  chaos\n}', want: { version: 'kdns-test', authors: ['The kdns authors'] } },
    { corefile: '. {\n  chaos MyDNS-1.0\n}', want: { version: 'MyDNS-1.0', authors: ['The kdns authors'] } },
    { corefile: '. {\n  chaos "DNS" "Grace Hopper" "Ada Lovelace" "Grace Hopper"\n}', want: { version: 'DNS', authors: ['Ada Lovelace', 'Grace Hopper'] } },
    { corefile: '. {\n  chaos v1 {\n  }\n}', error: 'Corefile:2: "chaos" does not take a block' },
  ];
  for (const c of cases) {
    const d = firstDirective(c.corefile);
    if (c.error) assert.throws(() => parseChaos(d, 'kdns-test'), { message: c.error }, c.corefile);
    else assert.deepEqual(parseChaos(d, 'kdns-test'), c.want, c.corefile);
  }
});

test('chaos: the default version names kdns and its package version', () => {
  assert.match(defaultVersion(), /^kdns-\d+\.\d+\.\d+/);
});

test('chaos: CH TXT names', async () => {
  const plugin = new ChaosPlugin({ version: 'kdns-9.9.9', authors: ['a', 'b', 'c'] }, () => 'node-1');
  const cases: Array<{ name: string; type?: number; qclass?: number; want: string[] | 'next' }> = [
    { name: 'version.bind.', want: ['version.bind. 0 CH kdns-9.9.9'] },
    { name: 'VERSION.Bind.', want: ['VERSION.Bind. 0 CH kdns-9.9.9'] },
    { name: 'version.server.', want: ['version.server. 0 CH kdns-9.9.9'] },
    { name: 'hostname.bind.', want: ['hostname.bind. 0 CH node-1'] },
    { name: 'id.server.', want: ['id.server. 0 CH node-1'] },
    { name: 'authors.bind.', want: ['authors.bind. 0 CH a', 'authors.bind. 0 CH b', 'authors.bind. 0 CH c'] },
    { name: 'other.bind.', want: 'next' },
    { name: 'version.bind.', qclass: DnsClass.IN, want: 'next' },
    { name: 'version.bind.', type: RRType.A, want: 'next' },
  ];
  for (const c of cases) {
    const req = request(c.name, c.type ?? RRType.TXT, c.qclass ?? DnsClass.CH);
    const marker = errorReply(req, RCode.REFUSED);
    const reply = (await plugin.serve(req, () => marker)) as Reply;
    if (c.want === 'next') {
      assert.equal(reply, marker, c.name);
      continue;
    }
    const show = reply
      .view()
      .answers.map((r) => `${r.name} ${r.ttl} ${r.class === DnsClass.CH ? 'CH' : r.class} ${(r.data as TXTData).strings.join(',')}`)
      .sort();
    assert.deepEqual(show, c.want, c.name);
  }
});

test('chaos: TXT strings are cut to 255 bytes', () => {
  const cases: Array<[string, number]> = [
    ['short', 5],
    ['x'.repeat(255), 255],
    ['y'.repeat(300), 255],
    ['é'.repeat(200), 255],
  ];
  for (const [text, bytes] of cases) assert.equal(trimToCharacterString(text).length, bytes, text.slice(0, 10));
});
