import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatIPv6, parseIP, parseIPv4, parseIPv6 } from './ip.js';

describe('parseIPv4', () => {
  const cases: Array<[string, number[] | undefined]> = [
    ['10.0.0.1', [10, 0, 0, 1]],
    ['255.255.255.255', [255, 255, 255, 255]],
    ['0.0.0.0', [0, 0, 0, 0]],
    ['256.0.0.1', undefined],
    ['10.0.0', undefined],
    ['10.0.0.1.2', undefined],
    ['010.0.0.1', undefined], // leading zeros are ambiguous (octal?) and rejected, like Go
    ['10..0.1', undefined],
    [' 10.0.0.1', undefined],
    ['1000.0.0.1', undefined],
  ];
  for (const [s, want] of cases) {
    it(JSON.stringify(s), () => {
      const got = parseIPv4(s);
      assert.deepEqual(got ? Array.from(got) : undefined, want);
    });
  }
});

describe('parseIPv6 / formatIPv6', () => {
  // [input, canonical RFC 5952 text or undefined when invalid]
  const cases: Array<[string, string | undefined]> = [
    ['2001:db8::1', '2001:db8::1'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'], // the longest zero run wins
    ['1:0:0:2:0:0:3:4', '1::2:0:0:3:4'], // first of equal runs
    ['1:0:2:3:4:5:6:7', '1:0:2:3:4:5:6:7'], // a single zero group is not shortened
    ['::ffff:10.0.0.1', '::ffff:10.0.0.1'],
    ['::ffff:a00:1', '::ffff:10.0.0.1'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['1:2:3:4:5:6:7:8:9', undefined],
    ['1::2::3', undefined],
    [':::', undefined],
    ['1:', undefined],
    [':1', undefined],
    ['12345::', undefined],
    ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
    ['fe80::1%eth0', undefined],
    ['::1.2.3', undefined],
    ['g::', undefined],
  ];
  for (const [s, want] of cases) {
    it(JSON.stringify(s), () => {
      const b = parseIPv6(s);
      assert.equal(b ? formatIPv6(b) : undefined, want);
    });
  }
});

describe('parseIP', () => {
  it('chooses the family by the colon', () => {
    assert.equal(parseIP('10.1.2.3')?.length, 4);
    assert.equal(parseIP('::1')?.length, 16);
    assert.equal(parseIP('nonsense'), undefined);
  });
});
