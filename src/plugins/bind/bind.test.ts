import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { firstDirective } from '../../../test/util/corefile.js';
import { canonicalIp, isLinkLocal, parseBind, type InterfaceTable } from '../pkg/bindaddresses.js';

function iface(address: string): NetworkInterfaceInfo {
  const v6 = address.includes(':');
  return v6
    ? { address, netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac: '00:00:00:00:00:00', internal: false, cidr: `${address}/64`, scopeid: 0 }
    : { address, netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: false, cidr: `${address}/8` };
}

/** A fixed machine, so the table does not depend on where the tests run. */
const interfaces: InterfaceTable = {
  lo: [iface('127.0.0.1'), iface('::1')],
  eth0: [iface('10.1.2.3'), iface('fe80::1234'), iface('2001:db8::5'), iface('169.254.1.1')],
};

test('bind: Corefile syntax', () => {
  const cases: Array<{ corefile: string; want?: string[]; error?: string }> = [
    { corefile: '. {\n  bind 127.0.0.1\n}', want: ['127.0.0.1'] },
    { corefile: '. {\n  bind 127.0.0.1 ::1\n}', want: ['127.0.0.1', '::1'] },
    { corefile: '. {\n  bind 0:0::1 ::1\n}', want: ['::1'] },
    { corefile: '. {\n  bind lo\n}', want: ['127.0.0.1', '::1'] },
    { corefile: '. {\n  bind eth0\n}', want: ['10.1.2.3', '2001:db8::5'] },
    { corefile: '. {\n  bind lo eth0 {\n    except 127.0.0.1 eth0\n  }\n}', want: ['::1'] },
    { corefile: '. {\n  bind lo 10.9.9.9 {\n    except 0::1\n  }\n}', want: ['127.0.0.1', '10.9.9.9'] },
    { corefile: '. {\n  bind\n}', error: 'Corefile:2: wrong argument count for "bind": expected at least 1, got 0' },
    {
      corefile: '. {\n  bind 127.0.0.1 wlan9\n}',
      error: 'Corefile:2: invalid argument "wlan9" for "bind": neither an IP address nor a network interface of this machine',
    },
    { corefile: '. {\n  bind lo {\n    exclude ::1\n  }\n}', error: 'Corefile:3: unknown property "exclude" in bind block' },
    { corefile: '. {\n  bind lo {\n    except\n  }\n}', error: 'Corefile:3: wrong argument count for "except": expected at least 1, got 0' },
    {
      corefile: '. {\n  bind 127.0.0.1 {\n    except lo\n  }\n}',
      error: 'Corefile:2: every address of "bind" is excluded by "except": nothing is left to listen on',
    },
    {
      corefile: '. {\n  bind lo {\n    except 300.1.1.1\n  }\n}',
      error: 'Corefile:3: invalid argument "300.1.1.1" for "except": neither an IP address nor a network interface of this machine',
    },
  ];
  for (const c of cases) {
    const d = firstDirective(c.corefile);
    if (c.error) assert.throws(() => parseBind(d, interfaces), { message: c.error }, c.corefile);
    else assert.deepEqual(parseBind(d, interfaces), c.want, c.corefile);
  }
});

test('bind: address helpers', () => {
  const linkLocal: Array<[string, boolean]> = [
    ['fe80::1', true],
    ['FEBF::1', true],
    ['fec0::1', false],
    ['169.254.10.1', true],
    ['10.0.0.1', false],
    ['::1', false],
  ];
  for (const [a, want] of linkLocal) assert.equal(isLinkLocal(a), want, a);
  const canonical: Array<[string, string]> = [
    ['127.0.0.1', '127.0.0.1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['2001:DB8:0::5', '2001:db8::5'],
  ];
  for (const [a, want] of canonical) assert.equal(canonicalIp(a), want, a);
});
