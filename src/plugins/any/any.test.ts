import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage, encodeMessage } from '../../lib/dns/codec.js';
import { DnsClass, RCode, RRType } from '../../lib/dns/types.js';
import { Reply, errorReply } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import { firstDirective } from '../../../test/util/corefile.js';
import { testRequest } from '../../../test/util/request.js';
import { AnyPlugin } from './handler.js';
import { parseAny } from './setup.js';

function request(name: string, type: number, qclass: number = DnsClass.IN): DnsRequest {
  return testRequest(name, type, { id: 99, qclass });
}

test('any: Corefile syntax', () => {
  const cases: Array<{ corefile: string; error?: string }> = [
    { corefile: '. {\n  any\n}' },
    { corefile: '. {\n  any please\n}', error: 'Corefile:2: wrong argument count for "any": expected no arguments, got 1' },
    { corefile: '. {\n  any {\n  }\n}', error: 'Corefile:2: "any" does not take a block' },
  ];
  for (const c of cases) {
    const d = firstDirective(c.corefile);
    if (c.error) assert.throws(() => parseAny(d), { message: c.error }, c.corefile);
    else assert.doesNotThrow(() => parseAny(d), c.corefile);
  }
});

test('any: ANY gets one HINFO, everything else goes on', async () => {
  const cases: Array<{ name: string; type: number; qclass?: number; want: string }> = [
    { name: 'Example.ORG.', type: RRType.ANY, want: '0 | Example.ORG. 8482 1 13 {"cpu":"ANY obsoleted","os":"See RFC 8482"}' },
    { name: '.', type: RRType.ANY, want: '0 | . 8482 1 13 {"cpu":"ANY obsoleted","os":"See RFC 8482"}' },
    { name: 'example.org.', type: RRType.A, want: 'next' },
    { name: 'example.org.', type: RRType.TXT, qclass: DnsClass.CH, want: 'next' },
  ];
  const plugin = new AnyPlugin();
  for (const c of cases) {
    const req = request(c.name, c.type, c.qclass);
    const marker = errorReply(req, RCode.REFUSED);
    const reply = (await plugin.serve(req, () => marker)) as Reply;
    if (reply === marker) {
      assert.equal('next', c.want, c.name);
      continue;
    }
    const m = decodeMessage(encodeMessage(reply.view()));
    const got = [String(m.rcode), ...m.answers.map((r) => `${r.name} ${r.ttl} ${r.class} ${r.type} ${JSON.stringify(r.data)}`)].join(' | ');
    assert.equal(got, c.want, `${c.name} ${c.type}`);
    assert.equal(m.id, 99);
  }
});
