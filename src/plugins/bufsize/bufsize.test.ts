import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage } from '../../lib/dns/codec.js';
import type { Edns } from '../../lib/dns/types.js';
import type { DnsRequest } from '../../server/request.js';
import { firstDirective } from '../../../test/util/corefile.js';
import { edns as opt, testRequest } from '../../../test/util/request.js';
import { BufsizePlugin, optSizeOffset } from './handler.js';
import { parseBufsize } from './setup.js';

function request(edns: Edns | undefined, nsid = false): DnsRequest {
  const additional = nsid ? [{ name: 'extra.example.', type: 16, class: 1, ttl: 0, data: { strings: ['x'] } }] : [];
  return testRequest('example.org.', 1, { id: 3, additional, edns });
}

const edns = (udpSize: number): Edns => opt(udpSize, { do: true, options: [{ code: 3, data: new Uint8Array(0) }] });

test('bufsize: Corefile syntax', () => {
  const cases: Array<{ corefile: string; want?: number; error?: string }> = [
    { corefile: '. {\n  bufsize\n}', want: 1232 },
    { corefile: '. {\n  bufsize 512\n}', want: 512 },
    { corefile: '. {\n  bufsize 4096\n}', want: 4096 },
    { corefile: '. {\n  bufsize 511\n}', error: 'Corefile:2: bufsize must be between 512 and 4096, got 511' },
    { corefile: '. {\n  bufsize 4097\n}', error: 'Corefile:2: bufsize must be between 512 and 4096, got 4097' },
    { corefile: '. {\n  bufsize big\n}', error: 'Corefile:2: invalid bufsize: "big" is not an integer' },
    { corefile: '. {\n  bufsize 512 1024\n}', error: 'Corefile:2: wrong argument count for "bufsize": expected at most 1, got 2' },
    { corefile: '. {\n  bufsize {\n  }\n}', error: 'Corefile:2: "bufsize" does not take a block' },
  ];
  for (const c of cases) {
    const d = firstDirective(c.corefile);
    if (c.error) assert.throws(() => parseBufsize(d), { message: c.error }, c.corefile);
    else assert.equal(parseBufsize(d), c.want, c.corefile);
  }
});

test('bufsize: caps the advertised size and the response limit', async () => {
  const cases: Array<{ name: string; size: number; edns?: Edns; extra?: boolean; want: { udp?: number; maxUdp: number } }> = [
    { name: 'larger size is lowered', size: 1232, edns: edns(4096), want: { udp: 1232, maxUdp: 1232 } },
    { name: 'smaller size is kept', size: 1232, edns: edns(800), want: { udp: 800, maxUdp: 800 } },
    { name: 'equal size is kept', size: 1232, edns: edns(1232), want: { udp: 1232, maxUdp: 1232 } },
    { name: 'lowest setting', size: 512, edns: edns(1232), want: { udp: 512, maxUdp: 512 } },
    { name: 'OPT after another additional record', size: 1000, edns: edns(4096), extra: true, want: { udp: 1000, maxUdp: 1000 } },
    { name: 'no EDNS: untouched', size: 512, edns: undefined, want: { maxUdp: 512 } },
  ];
  for (const c of cases) {
    const req = request(c.edns, c.extra);
    let seen: DnsRequest | undefined;
    await new BufsizePlugin(c.size).serve(req, (r) => {
      seen = r;
      return undefined;
    });
    assert.equal(seen, req, `${c.name}: passed on`);
    assert.equal(req.edns?.udpSize, c.want.udp, `${c.name}: parsed size`);
    assert.equal(decodeMessage(req.raw).edns?.udpSize, c.want.udp, `${c.name}: size in the raw bytes`);
    assert.equal(req.maxUdpSize, c.want.maxUdp, `${c.name}: response limit`);
    assert.equal(decodeMessage(req.raw).edns?.do, c.edns?.do, `${c.name}: DO bit untouched`);
  }
});

test('optSizeOffset: -1 when there is no OPT or the bytes are cut short', () => {
  const withOpt = request(edns(4096));
  const without = request(undefined);
  const cases: Array<[string, Buffer, number, number]> = [
    ['with OPT', withOpt.raw, withOpt.query.questionEnd, withOpt.query.questionEnd + 3],
    ['without OPT', without.raw, without.query.questionEnd, -1],
    ['truncated', withOpt.raw.subarray(0, withOpt.query.questionEnd + 4), withOpt.query.questionEnd, -1],
  ];
  for (const [name, raw, qEnd, want] of cases) assert.equal(optSizeOffset(raw, qEnd), want, name);
});
