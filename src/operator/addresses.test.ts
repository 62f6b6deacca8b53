import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { isIPAddress, isIPWithOptionalPort, joinHostPort, parseGoDurationSeconds, splitHostPort } from './addresses.js';

// The address pattern is hand-built from RFC 3986's grammar; Node's own parser is the referee.
const addresses = [
  '0.0.0.0',
  '10.0.0.1',
  '255.255.255.255',
  '256.0.0.1',
  '01.2.3.4',
  '1.2.3',
  '1.2.3.4.5',
  '::',
  '::1',
  '1::',
  'fd00::1',
  '2001:db8:0:0:0:0:0:1',
  '2001:db8::0:1',
  '1:2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:7::',
  '::ffff:10.0.0.1',
  '64:ff9b::192.0.2.33',
  '1:2:3:4:5:6:1.2.3.4',
  '1::2::3',
  ':::1',
  'fffff::1',
  'gg::1',
  '',
];

for (const a of addresses) {
  test(`isIPAddress agrees with node:net on ${JSON.stringify(a)}`, () => {
    assert.equal(isIPAddress(a), isIP(a) !== 0);
  });
}

const withPort: Array<[string, boolean]> = [
  ['10.0.0.1', true],
  ['10.0.0.1:53', true],
  ['10.0.0.1:65535', true],
  ['10.0.0.1:65536', false],
  ['10.0.0.1:0', false],
  ['10.0.0.1:053', false],
  ['fd00::1', true],
  ['[fd00::1]:53', true],
  ['[fd00::1]', false],
  ['[10.0.0.1]:53', false],
  ['fd00::1:53', true], // a valid address (the port is read as the last group), as CoreDNS reads it too
  ['example.com', false],
  ['example.com:53', false],
];

for (const [s, want] of withPort) {
  test(`isIPWithOptionalPort(${JSON.stringify(s)}) = ${want}`, () => {
    assert.equal(isIPWithOptionalPort(s), want);
  });
}

const splits: Array<[string, { host: string; port?: number }]> = [
  ['10.0.0.1', { host: '10.0.0.1' }],
  ['10.0.0.1:5353', { host: '10.0.0.1', port: 5353 }],
  ['fd00::1', { host: 'fd00::1' }],
  ['[fd00::1]:53', { host: 'fd00::1', port: 53 }],
];

for (const [s, want] of splits) {
  test(`splitHostPort(${s}) and back`, () => {
    assert.deepEqual(splitHostPort(s), want);
    assert.equal(joinHostPort(want.host, want.port), s);
  });
}

const durations: Array<[string, number | undefined]> = [
  ['0', 0],
  ['30s', 30],
  ['1h30m', 5400],
  ['0.5s', 0.5],
  ['1500ms', 1.5],
  ['10', undefined],
  ['-1s', undefined],
];

for (const [s, want] of durations) {
  test(`parseGoDurationSeconds(${s}) = ${String(want)}`, () => {
    assert.equal(parseGoDurationSeconds(s), want);
  });
}
