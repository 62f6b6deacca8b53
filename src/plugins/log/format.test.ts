import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Edns } from '../../lib/dns/types.js';
import type { ClientInfo, DnsRequest } from '../../server/request.js';
import { testRequest } from '../../../test/util/request.js';
import { COMBINED_FORMAT, COMMON_FORMAT, compileFormat, flagsOf, formatSeconds, render } from './format.js';

function request(opts: { name?: string; qtype?: number; qclass?: number; id?: number; edns?: Edns; client?: Partial<ClientInfo> } = {}): DnsRequest {
  const client: Partial<ClientInfo> = { remoteAddress: '::1', remotePort: 50759, localAddress: '::1', ...opts.client };
  return testRequest(opts.name ?? 'Example.org.', opts.qtype ?? 1, { id: opts.id ?? 29008, qclass: opts.qclass, edns: opts.edns, client });
}

/** A response header with these flag bytes (the rest is irrelevant to the flags). */
function header(hi: number, lo: number, length = 68): Buffer {
  const b = Buffer.alloc(length);
  b[2] = hi;
  b[3] = lo;
  return b;
}

describe('formatSeconds: Go float seconds with an "s"', () => {
  const cases: Array<[number, string]> = [
    [37_990_251, '0.037990251s'],
    [1_500_000_000, '1.5s'],
    [2_000_000_000, '2s'],
    [120_000, '0.00012s'],
    [1, '0.000000001s'],
    [0, '0s'],
  ];
  for (const [ns, want] of cases) test(`${ns} ns → ${want}`, () => assert.equal(formatSeconds(ns), want));
});

describe('flagsOf: set header flags in CoreDNS order', () => {
  const cases: Array<{ name: string; wire: Buffer; want: string }> = [
    { name: 'typical recursive answer', wire: header(0x81, 0xa0), want: 'qr,rd,ra,ad' },
    { name: 'authoritative', wire: header(0x85, 0x00), want: 'qr,aa,rd' },
    { name: 'truncated, cd, z', wire: header(0x82, 0x50), want: 'qr,tc,z,cd' },
    { name: 'nothing set', wire: header(0x00, 0x00), want: '' },
    { name: 'too short to have flags', wire: Buffer.alloc(3), want: '-' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(flagsOf(c.wire), c.want));
});

describe('render: placeholders filled from the query and the response sent', () => {
  const edns: Edns = { udpSize: 4096, version: 0, do: false, zFlags: 0, options: [] };
  const cases: Array<{ name: string; format: string; req: DnsRequest; rcode?: number; wire?: Buffer; durationNs?: number; want: string }> = [
    {
      name: "common format (the shape of CoreDNS's README example)",
      format: COMMON_FORMAT,
      req: request({ edns }),
      wire: header(0x81, 0xa0, 68),
      durationNs: 37_990_251,
      want: '[::1]:50759 - 29008 "A IN example.org. udp 40 false 4096" NOERROR qr,rd,ra,ad 68 0.037990251s',
    },
    {
      name: 'combined adds the opcode',
      format: COMBINED_FORMAT,
      req: request({ client: { remoteAddress: '10.0.0.7', remotePort: 1234, transport: 'tcp' } }),
      rcode: 3,
      wire: header(0x85, 0x80, 100),
      durationNs: 1_000_000,
      want: '10.0.0.7:1234 - 29008 "A IN example.org. tcp 29 false 65535" NXDOMAIN qr,aa,rd,ra 100 0.001s "0"',
    },
    {
      name: 'no response bytes: rsize and rflags are "-"; rcode without a name is a number',
      format: '{rcode} {rsize} {>rflags}',
      req: request(),
      rcode: 12,
      want: '12 - -',
    },
    { name: 'type without a mnemonic, class CH, DO bit', format: '{type} {class} {>do}', req: request({ qtype: 65280, qclass: 3, edns: { ...edns, do: true } }), want: 'TYPE65280 CH true' },
    { name: 'bufsize: 512 without EDNS over UDP', format: '{>bufsize}', req: request(), want: '512' },
    { name: 'local address in brackets', format: '{local}', req: request({ client: { localAddress: 'fd00::53' } }), want: '[fd00::53]' },
    { name: 'unknown {word} stays as written; nested braces', format: '{foo} { {type} }', req: request(), want: '{foo} { A }' },
    { name: 'text without placeholders', format: 'plain', req: request(), want: 'plain' },
    { name: 'lone closing brace is text', format: 'a } {name}', req: request(), want: 'a } example.org.' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = render(compileFormat(c.format), { req: c.req, rcode: c.rcode ?? 0, wire: c.wire, durationNs: c.durationNs ?? 0 });
      assert.equal(got, c.want);
    });
  }

  test('metadata: {/label} reads request metadata, "-" when unset', () => {
    const req = request();
    req.metadata.set('kubernetes/client-namespace', 'demo');
    const got = render(compileFormat('{/kubernetes/client-namespace} {/nothing}'), { req, rcode: 0, wire: undefined, durationNs: 0 });
    assert.equal(got, 'demo -');
  });
});
