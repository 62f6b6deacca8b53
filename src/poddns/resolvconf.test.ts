import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeOptionStrings, parseHostResolvConf, renderResolvConf } from './resolvconf.js';
import type { ResolvConf } from './resolvconf.js';

interface ParseCase {
  name: string;
  text: string;
  want: ResolvConf;
  errors?: Array<{ line: number; message: string }>;
}

const parseCases: ParseCase[] = [
  {
    name: 'nameservers accumulate, search and options are read',
    text: 'nameserver 1.2.3.4\nnameserver 5.6.7.8\nsearch foo.com bar.com\noptions ndots:1\n',
    want: { nameservers: ['1.2.3.4', '5.6.7.8'], searches: ['foo.com', 'bar.com'], options: ['ndots:1'] },
  },
  {
    name: 'lines starting with # are comments, also after blanks',
    text: '# generated\n   # nameserver 9.9.9.9\nnameserver 1.2.3.4\n',
    want: { nameservers: ['1.2.3.4'], searches: [], options: [] },
  },
  {
    name: 'a ; line is not a comment for the kubelet but no keyword either',
    text: '; nameserver 9.9.9.9\nnameserver 1.2.3.4\n',
    want: { nameservers: ['1.2.3.4'], searches: [], options: [] },
  },
  {
    name: 'the last search line wins',
    text: 'search a.com b.com\nsearch c.com\n',
    want: { nameservers: [], searches: ['c.com'], options: [] },
  },
  {
    name: 'an empty search line clears earlier ones',
    text: 'search a.com\nsearch\n',
    want: { nameservers: [], searches: [], options: [] },
  },
  {
    name: 'search . is dropped',
    text: 'search . foo.com\n',
    want: { nameservers: [], searches: ['foo.com'], options: [] },
  },
  {
    name: 'trailing dots are trimmed from search paths',
    text: 'search foo.com. bar.com\n',
    want: { nameservers: [], searches: ['foo.com', 'bar.com'], options: [] },
  },
  {
    name: 'several options lines merge by name, overridden in place',
    text: 'options ndots:1 timeout:2\noptions rotate ndots:3\n',
    want: { nameservers: [], searches: [], options: ['ndots:3', 'timeout:2', 'rotate'] },
  },
  {
    name: 'a repeated option on one line keeps the last value',
    text: 'options attempts:1 attempts:4\n',
    want: { nameservers: [], searches: [], options: ['attempts:4'] },
  },
  {
    name: 'a bare nameserver line is an error naming its line',
    text: 'nameserver 1.2.3.4\nnameserver\n',
    want: { nameservers: ['1.2.3.4'], searches: [], options: [] },
    errors: [{ line: 2, message: 'nameserver line has no address' }],
  },
  {
    name: 'extra words after a nameserver address are ignored',
    text: 'nameserver 1.2.3.4 # primary\n',
    want: { nameservers: ['1.2.3.4'], searches: [], options: [] },
  },
  {
    name: 'tabs and CRLF line ends',
    text: 'nameserver\t10.0.0.1\r\nsearch\tx.com\ty.com\r\n',
    want: { nameservers: ['10.0.0.1'], searches: ['x.com', 'y.com'], options: [] },
  },
  {
    name: 'domain lines are ignored by the kubelet',
    text: 'domain corp.example\nnameserver 1.2.3.4\n',
    want: { nameservers: ['1.2.3.4'], searches: [], options: [] },
  },
  {
    name: 'keywords are case-sensitive',
    text: 'Nameserver 1.2.3.4\nSEARCH a.com\n',
    want: { nameservers: [], searches: [], options: [] },
  },
  {
    name: 'an empty file is an empty config',
    text: '',
    want: { nameservers: [], searches: [], options: [] },
  },
  {
    name: 'the nameserver address is taken as written (the kubelet does not check it)',
    text: 'nameserver fe80::1%eth0\n',
    want: { nameservers: ['fe80::1%eth0'], searches: [], options: [] },
  },
  {
    name: 'a file over 10 MiB is refused',
    text: `# ${'x'.repeat(10 * 1024 * 1024)}\n`,
    want: { nameservers: [], searches: [], options: [] },
    errors: [{ line: 0, message: 'file is larger than 10485760 bytes' }],
  },
];

for (const c of parseCases) {
  test(`host file: ${c.name}`, () => {
    const got = parseHostResolvConf(c.text);
    assert.deepEqual(got.config, c.want);
    assert.deepEqual(got.errors, c.errors ?? []);
  });
}

const renderCases: Array<{ name: string; config: ResolvConf; want: string }> = [
  {
    name: 'search, then one nameserver line each, then options (as containerd writes it)',
    config: { nameservers: ['10.96.0.10', '10.96.0.11'], searches: ['a.svc', 'b'], options: ['ndots:5', 'edns0'] },
    want: 'search a.svc b\nnameserver 10.96.0.10\nnameserver 10.96.0.11\noptions ndots:5 edns0\n',
  },
  { name: 'empty lines are left out', config: { nameservers: ['1.1.1.1'], searches: [], options: [] }, want: 'nameserver 1.1.1.1\n' },
  { name: 'an empty config is an empty file', config: { nameservers: [], searches: [], options: [] }, want: '' },
];

for (const c of renderCases) {
  test(`render: ${c.name}`, () => assert.equal(renderResolvConf(c.config), c.want));
}

const mergeCases: Array<{ name: string; existing: string[]; added: string[]; want: string[] }> = [
  { name: 'a new name is appended', existing: ['ndots:5'], added: ['edns0'], want: ['ndots:5', 'edns0'] },
  { name: 'the same name replaces in place', existing: ['ndots:5', 'edns0'], added: ['ndots:2'], want: ['ndots:2', 'edns0'] },
  { name: 'a value-less option replaces a valued one', existing: ['ndots:5'], added: ['ndots'], want: ['ndots'] },
];

for (const c of mergeCases) {
  test(`merge options: ${c.name}`, () => assert.deepEqual(mergeOptionStrings(c.existing, c.added), c.want));
}
