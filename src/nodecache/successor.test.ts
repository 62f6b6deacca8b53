import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canonicalAddress, groupShare, othersBound, parseProcNet, procAddress } from './successor.js';
import type { GroupShare } from '../server/steer.js';

const UDP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  1: 0A14FEA9:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1001 2 0000000000000000 0
  2: 0A14FEA9:0035 0100007F:0035 01 00000000:00000000 00:00000000 00000000     0        0 1002 2 0000000000000000 0
  3: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1003 2 0000000000000000 0
  garbage line
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000A14FEA9:0035 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1 0000000000000000 100 0 0 10 0
   1: B80D01FD000000000000000010000000:0035 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2002 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000A14FEA9:0035 0000000000000000FFFF00000100000A:A000 01 00000000:00000000 00:00000000 00000000     0        0 2003 1 0000000000000000 100 0 0 10 0
`;

const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0A14FEA9:0035 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3001 1 0000000000000000 100 0 0 10 0
   1: 0A14FEA9:0035 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3002 1 0000000000000000 100 0 0 10 0
   2: 0A14FEA9:0035 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3003 1 0000000000000000 100 0 0 10 0
   3: 0A14FEA9:0035 0100000A:A000 03 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0
   4: 0A14FEA9:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 3004 1 0000000000000000 100 0 0 10 0
   5: 0A14FEA9:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3005 1 0000000000000000 100 0 0 10 0
`;

describe('successor: /proc/net tables', () => {
  const addresses: Array<[string, string | undefined]> = [
    ['0A14FEA9', '169.254.20.10'],
    ['0100007F', '127.0.0.1'],
    ['0000000000000000FFFF00000A14FEA9', '::ffff:169.254.20.10'],
    ['B80D01FD000000000000000010000000', 'fd01:db8:0:0:0:0:0:10'],
    ['XYZ', undefined],
  ];
  for (const [hex, want] of addresses) test(`procAddress ${hex} (little-endian host)`, () => assert.equal(procAddress(hex, true), want));

  test('UDP: unconnected sockets only (a connected one is a predecessor draining), bad lines skipped', () => {
    assert.deepEqual(parseProcNet(UDP, 'udp', true), [
      { address: '169.254.20.10', port: 53, inode: 1001 },
      { address: '127.0.0.1', port: 53, inode: 1003 },
    ]);
  });
  test('TCP: listening sockets only', () => {
    assert.deepEqual(parseProcNet(TCP6, 'tcp', true), [
      { address: '::ffff:169.254.20.10', port: 53, inode: 2001 },
      { address: 'fd01:db8:0:0:0:0:0:10', port: 53, inode: 2002 },
    ]);
  });

  const canon: Array<[string, string | undefined]> = [
    ['169.254.20.10', '169.254.20.10'],
    ['fd01:db8::10', 'fd01:db8:0:0:0:0:0:10'],
    ['::ffff:169.254.20.10', '::ffff:169.254.20.10'],
    ['not-an-ip', undefined],
  ];
  for (const [ip, want] of canon) test(`canonicalAddress ${ip}`, () => assert.equal(canonicalAddress(ip), want));

  const sockets = [...parseProcNet(UDP, 'udp', true), ...parseProcNet(TCP6, 'tcp', true)];
  const cases: Array<[string, number[], string[], number, boolean]> = [
    ['only our own sockets on the address', [1001, 2001], ['169.254.20.10'], 53, false],
    ['another process\'s UDP socket on it', [2001], ['169.254.20.10'], 53, true],
    ['another process\'s dual-stack TCP socket on it (v4-mapped)', [1001], ['169.254.20.10'], 53, true],
    ['another address\'s socket does not count', [1001, 2001], ['169.254.20.10', '10.0.0.10'], 53, false],
    ['another port does not count', [], ['169.254.20.10'], 5353, false],
    ['an IPv6 local address', [], ['fd01:db8::10'], 53, true],
  ];
  for (const [name, ours, ips, port, want] of cases) test(`othersBound: ${name}`, () => assert.equal(othersBound(sockets, new Set(ours), ips, port), want));

  // The SO_REUSEPORT group of one TCP listener: the listening sockets (0A) of exactly its address, family and port.
  const tcpSockets = [...parseProcNet(TCP, 'tcp', true), ...parseProcNet(TCP6, 'tcp', true)];
  const shares: Array<[string, number[], string, number, GroupShare]> = [
    ['two of ours and one successor socket; a handshake under way (03) and a bound socket that does not listen (07) are not in it', [3001, 3002], '169.254.20.10', 53, { own: 2, others: 1 }],
    ['the dual-stack socket bound to the v4-mapped address is another family: not in the IPv4 group', [], '169.254.20.10', 53, { own: 0, others: 3 }],
    ['the v4-mapped address\'s own group', [2001], '::ffff:169.254.20.10', 53, { own: 1, others: 0 }],
    ['another port', [3005], '169.254.20.10', 8080, { own: 1, others: 0 }],
    ['an address nobody listens on', [], '10.0.0.10', 53, { own: 0, others: 0 }],
  ];
  for (const [name, ours, ip, port, want] of shares) test(`groupShare: ${name}`, () => assert.deepEqual(groupShare(tcpSockets, new Set(ours), ip, port), want));
});
