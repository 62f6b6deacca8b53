import { test } from 'node:test';
import assert from 'node:assert/strict';
import { corefileHash, tenthAddress } from './objects.js';

const cidrs: Array<[string, string]> = [
  ['10.96.0.0/12', '10.96.0.10'],
  ['172.30.0.0/16', '172.30.0.10'],
  ['10.100.5.7/16', '10.100.0.10'],
  ['192.168.1.0/28', '192.168.1.10'],
  ['fd00:10:96::/112', 'fd00:10:96::a'],
  ['2001:db8:1:2:3:4:5:0/120', '2001:db8:1:2:3:4:5:a'],
];

for (const [cidr, want] of cidrs) {
  test(`tenthAddress(${cidr}) = ${want}`, () => {
    assert.equal(tenthAddress(cidr), want);
  });
}

const badCidrs: Array<[string, RegExp]> = [
  ['10.96.0.0', /expected ADDRESS\/PREFIX/],
  ['10.96.0.0/33', /not an IPv4 or IPv6 network/],
  ['10.96.0.300/12', /not an IPv4 or IPv6 network/],
  ['10.96.0.0/29', /too small/],
  ['fd00::1::/64', /not an IPv4 or IPv6 network/],
];

for (const [cidr, want] of badCidrs) {
  test(`tenthAddress(${cidr}) is refused`, () => {
    assert.throws(() => tenthAddress(cidr), want);
  });
}

test('corefileHash: stable, and different for different text', () => {
  assert.equal(corefileHash('a'), corefileHash('a'));
  assert.notEqual(corefileHash('a'), corefileHash('b'));
});
