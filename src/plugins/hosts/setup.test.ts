import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstDirective } from '../../../test/util/corefile.js';
import { addressText } from './table.js';
import { parseHosts } from './setup.js';

/** The parsed config with inline entries as text, for comparing. */
function parsed(corefile: string) {
  const c = parseHosts(firstDirective(corefile), ['example.org.'], '/etc/kdns/Corefile');
  return { ...c, inline: c.inline.map((l) => `${addressText(l.address)} ${l.names.join(' ')}`) };
}

const defaults = {
  path: '/etc/hosts',
  zones: ['example.org.'],
  ttl: 3600,
  autoReverse: true,
  reloadMs: 5000,
  inline: [] as string[],
};

test('hosts: Corefile syntax', () => {
  const cases: Array<{ corefile: string; want?: Partial<typeof defaults> & { fallthrough?: string[] }; error?: string }> = [
    { corefile: 'example.org {\n  hosts\n}', want: {} },
    { corefile: 'example.org {\n  hosts /srv/hosts\n}', want: { path: '/srv/hosts' } },
    { corefile: 'example.org {\n  hosts my.hosts\n}', want: { path: '/etc/kdns/my.hosts' } },
    { corefile: 'example.org {\n  hosts /srv/hosts Sub.Example.org other.test\n}', want: { path: '/srv/hosts', zones: ['sub.example.org.', 'other.test.'] } },
    { corefile: 'example.org {\n  hosts /srv/hosts 10.0.0.0/24\n}', want: { path: '/srv/hosts', zones: ['0.0.10.in-addr.arpa.'] } },
    {
      corefile: 'example.org {\n  hosts {\n    10.0.0.1 web.example.org Www.Example.org\n    2001:db8::1 six.example.org\n    ttl 60\n    no_reverse\n    reload 1m30s\n    fallthrough\n  }\n}',
      want: { inline: ['10.0.0.1 web.example.org. www.example.org.', '2001:db8::1 six.example.org.'], ttl: 60, autoReverse: false, reloadMs: 90_000, fallthrough: [] },
    },
    { corefile: 'example.org {\n  hosts {\n    reload 0\n  }\n}', want: { reloadMs: 0 } },
    { corefile: 'example.org {\n  hosts {\n    fallthrough a.example.org b.example.org\n  }\n}', want: { fallthrough: ['a.example.org.', 'b.example.org.'] } },
    { corefile: 'example.org {\n  hosts {\n    ttl 65535\n  }\n}', want: { ttl: 65535 } },
    { corefile: 'example.org {\n  hosts {\n    tll 60\n  }\n}', error: 'Corefile:3: unknown property "tll" in hosts block' },
    { corefile: 'example.org {\n  hosts {\n    ttl 0\n  }\n}', error: 'Corefile:3: ttl must be between 1 and 65535, got 0' },
    { corefile: 'example.org {\n  hosts {\n    ttl 65536\n  }\n}', error: 'Corefile:3: ttl must be between 1 and 65535, got 65536' },
    { corefile: 'example.org {\n  hosts {\n    ttl soon\n  }\n}', error: 'Corefile:3: invalid ttl: "soon" is not an integer' },
    { corefile: 'example.org {\n  hosts {\n    ttl\n  }\n}', error: 'Corefile:3: wrong argument count for "ttl": expected 1, got 0' },
    { corefile: 'example.org {\n  hosts {\n    ttl 5\n    ttl 6\n  }\n}', error: 'Corefile:4: duplicate property "ttl" in hosts block' },
    { corefile: 'example.org {\n  hosts {\n    no_reverse please\n  }\n}', error: 'Corefile:3: wrong argument count for "no_reverse": expected no arguments, got 1' },
    {
      corefile: 'example.org {\n  hosts {\n    reload often\n  }\n}',
      error: 'Corefile:3: invalid duration for reload: "often" (expected a Go duration such as 500ms, 5s or 1m30s)',
    },
    { corefile: 'example.org {\n  hosts {\n    reload -5s\n  }\n}', error: 'Corefile:3: reload must be at least 0s, got -5s' },
    { corefile: 'example.org {\n  hosts {\n    10.0.0.1\n  }\n}', error: 'Corefile:3: invalid hosts entry: no host name after 10.0.0.1' },
    { corefile: 'example.org {\n  hosts {\n    10.0.0.1 bad..name\n  }\n}', error: 'Corefile:3: invalid hosts entry: "bad..name" is not a valid host name' },
    { corefile: 'example.org {\n  hosts {\n    10.0.0.1 a.example.org {\n    }\n  }\n}', error: 'Corefile:3: "10.0.0.1" does not take a block' },
    { corefile: 'example.org {\n  hosts /srv/hosts bad..zone\n}', error: 'Corefile:2: invalid argument "bad..zone" for "hosts": not a valid zone name' },
    { corefile: 'example.org {\n  hosts /srv/hosts 10.0.0.0/40\n}', error: 'Corefile:2: invalid argument "10.0.0.0/40" for "hosts": not a valid CIDR' },
    { corefile: 'example.org {\n  hosts {\n    fallthrough a..b\n  }\n}', error: 'Corefile:3: invalid argument "a..b" for "fallthrough": not a valid zone name' },
  ];
  for (const c of cases) {
    if (c.error) assert.throws(() => parsed(c.corefile), { message: c.error }, c.corefile);
    else assert.deepEqual(parsed(c.corefile), { ...defaults, ...c.want }, c.corefile);
  }
});
