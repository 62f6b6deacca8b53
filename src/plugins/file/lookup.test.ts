// Lookups transcribed from CoreDNS's plugin/file tests (lookup, delegation, wildcard, ent, glue,
// fallthrough), plus the RFC 2308 / 4592 / 6604 behaviours they do not cover.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeMessage, encodeMessage } from '../../lib/dns/codec.js';
import { rcodeName, rrToString, typeFromName } from '../../lib/dns/rr.js';
import { prng } from '../../../test/util/dnstestkit.js';
import { RCode, type Message } from '../../lib/dns/types.js';
import { parseZoneFile } from '../../lib/dns/zonefile.js';
import { Reply, responseFor } from '../../server/reply.js';
import type { DnsRequest } from '../../server/request.js';
import type { Next } from '../../server/plugin.js';
import { testRequest } from '../../../test/util/request.js';
import { Zone } from '../pkg/zone.js';
import { answerFromZone } from '../pkg/zoneanswer.js';

function zoneOf(origin: string, text: string): Zone {
  return Zone.build(origin, parseZoneFile(text, { origin, file: 'stdin' }), 'stdin');
}

const lines = (rrs: Message['answers']): string[] => rrs.map((r) => rrToString(r).replace(/\s+/g, ' ')).sort();

/** "RCODE flags", then each section's records: what a test compares. */
interface Shape {
  rcode: string;
  aa: boolean;
  answer: string[];
  ns: string[];
  extra: string[];
}

function shapeOf(m: Message): Shape {
  return { rcode: rcodeName(m.rcode), aa: m.aa, answer: lines(m.answers), ns: lines(m.authority), extra: lines(m.additional) };
}

const NEXT = 'next';

async function ask(zone: Zone, name: string, type: string, opts: { fallthrough?: string[]; next?: Next } = {}): Promise<Shape | typeof NEXT> {
  const req = testRequest(name, typeFromName(type) as number);
  const marker = Reply.of(responseFor(req, RCode.REFUSED));
  const next: Next = opts.next ?? (() => marker);
  const reply = await answerFromZone(zone, req, next, opts.fallthrough);
  if (reply === marker) return NEXT;
  assert.ok(reply);
  return shapeOf(reply.view());
}

/** A shape with defaults: NOERROR, authoritative, empty sections. */
function want(over: Partial<Shape>): Shape {
  return { rcode: 'NOERROR', aa: true, answer: [], ns: [], extra: [], ...over };
}

// ---- miek.nl (CoreDNS lookup_test.go) ------------------------------------------------------

/** The apex both miek.nl test zones share (CoreDNS's dbMiekNL and dbMiekNLDelegation). */
const miekApex = `
$TTL    30M
$ORIGIN miek.nl.
@       IN      SOA     linode.atoom.net. miek.miek.nl. (
                             1282630057 ; Serial
                             4H         ; Refresh
                             1H         ; Retry
                             7D         ; Expire
                             4H )       ; Negative Cache TTL
                IN      NS      linode.atoom.net.
                IN      NS      ns-ext.nlnetlabs.nl.
                IN      NS      omval.tednet.nl.
                IN      NS      ext.ns.whyscream.net.

                IN      MX      1  aspmx.l.google.com.
                IN      MX      5  alt1.aspmx.l.google.com.
                IN      MX      5  alt2.aspmx.l.google.com.
                IN      MX      10 aspmx2.googlemail.com.
                IN      MX      10 aspmx3.googlemail.com.
`;

const dbMiekNL = `${miekApex}
		IN      A       139.162.196.78
		IN      AAAA    2a01:7e00::f03c:91ff:fef1:6735

a               IN      A       139.162.196.78
                IN      AAAA    2a01:7e00::f03c:91ff:fef1:6735
www             IN      CNAME   a
archive         IN      CNAME   a
*.x             IN      CNAME   www
b.x             IN      CNAME   a
*.y             IN      A       139.162.196.78
dname           IN      DNAME   x

srv		IN	SRV     10 10 8080 a.miek.nl.
mx		IN	MX      10 a.miek.nl.

txt     IN	TXT     "v=spf1 a mx ~all"
caa     IN  CAA    0 issue letsencrypt.org
*.nodata    IN   A      139.162.196.79
ext-cname   IN   CNAME  example.com.`;

const miekAuth = [
  'miek.nl. 1800 IN NS ext.ns.whyscream.net.',
  'miek.nl. 1800 IN NS linode.atoom.net.',
  'miek.nl. 1800 IN NS ns-ext.nlnetlabs.nl.',
  'miek.nl. 1800 IN NS omval.tednet.nl.',
];
const miekSoa = 'miek.nl. 1800 IN SOA linode.atoom.net. miek.miek.nl. 1282630057 14400 3600 604800 14400';
const aGlue = ['a.miek.nl. 1800 IN A 139.162.196.78', 'a.miek.nl. 1800 IN AAAA 2a01:7e00::f03c:91ff:fef1:6735'];

test('file: lookups in miek.nl (CoreDNS lookup_test)', async () => {
  const zone = zoneOf('miek.nl.', dbMiekNL);
  const cases: Array<[string, string, Shape]> = [
    ['www.miek.nl.', 'A', want({ answer: ['a.miek.nl. 1800 IN A 139.162.196.78', 'www.miek.nl. 1800 IN CNAME a.miek.nl.'], ns: miekAuth })],
    ['www.miek.nl.', 'AAAA', want({ answer: ['a.miek.nl. 1800 IN AAAA 2a01:7e00::f03c:91ff:fef1:6735', 'www.miek.nl. 1800 IN CNAME a.miek.nl.'], ns: miekAuth })],
    ['miek.nl.', 'SOA', want({ answer: [miekSoa], ns: miekAuth })],
    ['miek.nl.', 'AAAA', want({ answer: ['miek.nl. 1800 IN AAAA 2a01:7e00::f03c:91ff:fef1:6735'], ns: miekAuth })],
    ['mIeK.NL.', 'AAAA', want({ answer: ['miek.nl. 1800 IN AAAA 2a01:7e00::f03c:91ff:fef1:6735'], ns: miekAuth })],
    [
      'miek.nl.',
      'MX',
      want({
        answer: [
          'miek.nl. 1800 IN MX 1 aspmx.l.google.com.',
          'miek.nl. 1800 IN MX 10 aspmx2.googlemail.com.',
          'miek.nl. 1800 IN MX 10 aspmx3.googlemail.com.',
          'miek.nl. 1800 IN MX 5 alt1.aspmx.l.google.com.',
          'miek.nl. 1800 IN MX 5 alt2.aspmx.l.google.com.',
        ],
        ns: miekAuth,
      }),
    ],
    ['a.miek.nl.', 'SRV', want({ ns: [miekSoa] })],
    ['b.miek.nl.', 'A', want({ rcode: 'NXDOMAIN', ns: [miekSoa] })],
    ['srv.miek.nl.', 'SRV', want({ answer: ['srv.miek.nl. 1800 IN SRV 10 10 8080 a.miek.nl.'], ns: miekAuth, extra: aGlue })],
    ['mx.miek.nl.', 'MX', want({ answer: ['mx.miek.nl. 1800 IN MX 10 a.miek.nl.'], ns: miekAuth, extra: aGlue })],
    ['asterisk.x.miek.nl.', 'CNAME', want({ answer: ['asterisk.x.miek.nl. 1800 IN CNAME www.miek.nl.'], ns: miekAuth })],
    ['a.b.x.miek.nl.', 'CNAME', want({ rcode: 'NXDOMAIN', ns: [miekSoa] })],
    ['asterisk.y.miek.nl.', 'A', want({ answer: ['asterisk.y.miek.nl. 1800 IN A 139.162.196.78'], ns: miekAuth })],
    ['foo.dname.miek.nl.', 'CNAME', want({ answer: ['dname.miek.nl. 1800 IN DNAME x.miek.nl.', 'foo.dname.miek.nl. 1800 IN CNAME foo.x.miek.nl.'], ns: miekAuth })],
    ['txt.miek.nl.', 'TXT', want({ answer: ['txt.miek.nl. 1800 IN TXT "v=spf1 a mx ~all"'], ns: miekAuth })],
    ['caa.miek.nl.', 'CAA', want({ answer: ['caa.miek.nl. 1800 IN CAA \\# 22 0005697373756' + '56C657473656E63727970742E6F7267'], ns: miekAuth })],
    // CoreDNS TestLookUpNoDataResult.
    ['a.miek.nl.', 'MX', want({ ns: [miekSoa] })],
    ['wildcard.nodata.miek.nl.', 'MX', want({ ns: [miekSoa] })],
    // Wildcard CNAME, then the chain inside the zone: *.x → www → a.
    [
      'anything.x.miek.nl.',
      'A',
      want({ answer: ['a.miek.nl. 1800 IN A 139.162.196.78', 'anything.x.miek.nl. 1800 IN CNAME www.miek.nl.', 'www.miek.nl. 1800 IN CNAME a.miek.nl.'], ns: miekAuth }),
    ],
    // DNAME substitution followed by a wildcard under the target: foo.dname → foo.x → *.x CNAME www → a.
    [
      'foo.dname.miek.nl.',
      'A',
      want({
        answer: [
          'a.miek.nl. 1800 IN A 139.162.196.78',
          'dname.miek.nl. 1800 IN DNAME x.miek.nl.',
          'foo.dname.miek.nl. 1800 IN CNAME foo.x.miek.nl.',
          'foo.x.miek.nl. 1800 IN CNAME www.miek.nl.',
          'www.miek.nl. 1800 IN CNAME a.miek.nl.',
        ],
        ns: miekAuth,
      }),
    ],
    // An empty non-terminal (b.x exists, so x exists): NODATA, not NXDOMAIN.
    ['x.miek.nl.', 'A', want({ ns: [miekSoa] })],
    ['miek.nl.', 'AXFR', want({ rcode: 'REFUSED', aa: false })],
  ];
  for (const [name, type, shape] of cases) assert.deepEqual(await ask(zone, name, type), shape, `${name} ${type}`);
});

test('file: a CNAME out of the zone is resolved by the rest of the chain', async () => {
  const zone = zoneOf('miek.nl.', dbMiekNL);
  const cname = 'ext-cname.miek.nl. 1800 IN CNAME example.com.';
  const upstream = (rcode: number, answers: string[] = []): Next => (req: DnsRequest) => {
    assert.equal(req.qname, 'example.com.');
    const m = responseFor(req, rcode);
    if (answers.length > 0) m.answers = [{ name: 'example.com.', type: 1, class: 1, ttl: 60, data: { address: answers[0] as string } }];
    if (rcode === RCode.NXDOMAIN) m.authority = [{ name: 'com.', type: 6, class: 1, ttl: 900, data: { mname: 'a.gtld.', rname: 'n.gtld.', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 900 } }];
    return Reply.of(m);
  };
  const cases: Array<[string, Next | undefined, Shape]> = [
    // CoreDNS lookup_test: the upstream fails, the CNAME still goes out with SERVFAIL.
    ['upstream SERVFAIL', upstream(RCode.SERVFAIL), want({ rcode: 'SERVFAIL', answer: [cname], ns: miekAuth })],
    ['upstream answers', upstream(RCode.NOERROR, ['93.184.216.34']), want({ answer: ['example.com. 60 IN A 93.184.216.34', cname], ns: miekAuth })],
    ['upstream NXDOMAIN (RFC 6604)', upstream(RCode.NXDOMAIN), want({ rcode: 'NXDOMAIN', answer: [cname], ns: ['com. 900 IN SOA a.gtld. n.gtld. 1 2 3 4 900'] })],
    ['nothing after file: the CNAME is left for the client', () => undefined, want({ answer: [cname], ns: miekAuth })],
  ];
  for (const [what, next, shape] of cases) assert.deepEqual(await ask(zone, 'ext-cname.miek.nl.', 'A', { next }), shape, what);
});

test('file: fallthrough (CoreDNS TestLookupFallthrough)', async () => {
  const zone = zoneOf('miek.nl.', dbMiekNL);
  const cases: Array<{ fall: string[]; name: string; want: 'next' | string }> = [
    { fall: [], name: 'doesnotexist.miek.nl.', want: NEXT },
    // x.miek.nl. is an empty non-terminal: CoreDNS falls through there too.
    { fall: [], name: 'x.miek.nl.', want: NEXT },
    { fall: ['a.miek.nl.'], name: 'a.miek.nl.', want: 'NOERROR' },
    { fall: ['a.miek.nl.'], name: 'doesnotexist.miek.nl.', want: 'NXDOMAIN' },
    { fall: ['a.miek.nl.'], name: 'passthrough.a.miek.nl.', want: NEXT },
    { fall: ['x.miek.nl.'], name: 'x.miek.nl.', want: NEXT },
    { fall: ['x.miek.nl.'], name: 'wildcard.x.miek.nl.', want: 'NOERROR' },
  ];
  for (const c of cases) {
    const got = await ask(zone, c.name, 'A', { fallthrough: c.fall });
    assert.equal(got === NEXT ? NEXT : got.rcode, c.want, `fallthrough ${c.fall.join(' ') || '(all)'}: ${c.name}`);
  }
});

// ---- delegation (CoreDNS delegation_test.go) -------------------------------------------------

const dbMiekNLDelegation = `${miekApex}
delegated	IN	NS      a.delegated
		IN	NS      ns-ext.nlnetlabs.nl.
		IN	DS	10056 5 1 EE72CABD1927759CDDA92A10DBF431504B9E1F13

a.delegated     IN      TXT     "obscured"
                IN      A       139.162.196.78
                IN      AAAA    2a01:7e00::f03c:91ff:fef1:6735

a               IN      A       139.162.196.78
                IN      AAAA    2a01:7e00::f03c:91ff:fef1:6735
www             IN      CNAME   a
archive         IN      CNAME   a
to-delegated    IN      CNAME   foo.delegated`;

test('file: referrals below a delegation (CoreDNS delegation_test)', async () => {
  const zone = zoneOf('miek.nl.', dbMiekNLDelegation);
  const referral = want({
    aa: false,
    ns: ['delegated.miek.nl. 1800 IN NS a.delegated.miek.nl.', 'delegated.miek.nl. 1800 IN NS ns-ext.nlnetlabs.nl.'],
    extra: ['a.delegated.miek.nl. 1800 IN A 139.162.196.78', 'a.delegated.miek.nl. 1800 IN AAAA 2a01:7e00::f03c:91ff:fef1:6735'],
  });
  const cases: Array<[string, string, Shape]> = [
    ['a.delegated.miek.nl.', 'TXT', referral],
    ['delegated.miek.nl.', 'NS', referral],
    ['foo.delegated.miek.nl.', 'A', referral],
    ['foo.delegated.miek.nl.', 'TXT', referral],
    ['foo.delegated.miek.nl.', 'SOA', referral],
    // Below the cut even DS is the child's: a referral.
    ['foo.delegated.miek.nl.', 'DS', referral],
    // DS at the cut is the parent's data: answered with AA (CoreDNS ds_test).
    ['delegated.miek.nl.', 'DS', want({ answer: ['delegated.miek.nl. 1800 IN DS \\# 24 27480501EE72CABD1927759CDDA92A10DBF431504B9E1F13'], ns: miekAuth })],
    ['miek.nl.', 'SOA', want({ answer: [miekSoa], ns: miekAuth })],
    ['miek.nl.', 'AAAA', want({ ns: [miekSoa] })],
    // A CNAME into the delegation: the alias with AA, then the referral (CoreDNS alias_delegation_test).
    ['to-delegated.miek.nl.', 'A', { ...referral, aa: true, answer: ['to-delegated.miek.nl. 1800 IN CNAME foo.delegated.miek.nl.'] }],
  ];
  for (const [name, type, shape] of cases) assert.deepEqual(await ask(zone, name, type), shape, `${name} ${type}`);
});

// ---- wildcards (CoreDNS wildcard_test.go) -----------------------------------------------------

const exampleOrg = `; example.org test file
$TTL 3600
example.org.		IN	SOA	sns.dns.icann.org. noc.dns.icann.org. 2015082541 7200 3600 1209600 3600
example.org.		IN	NS	b.iana-servers.net.
example.org.		IN	NS	a.iana-servers.net.
example.org.		IN	A	127.0.0.1
example.org.		IN	A	127.0.0.2
*.w.example.org.        IN      TXT     "Wildcard"
a.b.c.w.example.org.    IN      TXT     "Not a wildcard"
*.c.example.org.        IN      TXT     "c Wildcard"
*.d.example.org.        IN      CNAME   alias.example.org.
alias.example.org.      IN      TXT     "Wildcard CNAME expansion"
`;

const apexWildcard = `; example.org test file with wildcard at apex
$TTL 3600
example.org.		IN	SOA	sns.dns.icann.org. noc.dns.icann.org. 2015082541 7200 3600 1209600 3600
example.org.		IN	NS	b.iana-servers.net.
*.example.org.          IN      A       127.0.0.53
foo.example.org.        IN      A       127.0.0.54
`;

test('file: wildcards (CoreDNS wildcard_test, RFC 4592)', async () => {
  const zone = zoneOf('example.org.', exampleOrg);
  const exampleAuth = ['example.org. 3600 IN NS a.iana-servers.net.', 'example.org. 3600 IN NS b.iana-servers.net.'];
  const soa = 'example.org. 3600 IN SOA sns.dns.icann.org. noc.dns.icann.org. 2015082541 7200 3600 1209600 3600';
  const cases: Array<[string, string, Shape]> = [
    ['wild.w.example.org.', 'TXT', want({ answer: ['wild.w.example.org. 3600 IN TXT "Wildcard"'], ns: exampleAuth })],
    ['wild.c.example.org.', 'TXT', want({ answer: ['wild.c.example.org. 3600 IN TXT "c Wildcard"'], ns: exampleAuth })],
    ['wild.d.example.org.', 'TXT', want({ answer: ['alias.example.org. 3600 IN TXT "Wildcard CNAME expansion"', 'wild.d.example.org. 3600 IN CNAME alias.example.org.'], ns: exampleAuth })],
    ['alias.example.org.', 'TXT', want({ answer: ['alias.example.org. 3600 IN TXT "Wildcard CNAME expansion"'], ns: exampleAuth })],
    // The wildcard's own name answers for itself.
    ['*.w.example.org.', 'TXT', want({ answer: ['*.w.example.org. 3600 IN TXT "Wildcard"'], ns: exampleAuth })],
    // Wildcard owner exists, other type: NODATA.
    ['wild.w.example.org.', 'A', want({ ns: [soa] })],
    // RFC 4592 §2.2.1: b.c.w exists as an empty non-terminal, so it is the closest encloser of
    // x.b.c.w and *.w does not apply; and b.c.w itself is NODATA.
    ['x.b.c.w.example.org.', 'TXT', want({ rcode: 'NXDOMAIN', ns: [soa] })],
    ['b.c.w.example.org.', 'TXT', want({ ns: [soa] })],
    // Deeper names under *.w's parent still match it.
    ['a.b.w.example.org.', 'TXT', want({ answer: ['a.b.w.example.org. 3600 IN TXT "Wildcard"'], ns: exampleAuth })],
    ['nothing.example.org.', 'TXT', want({ rcode: 'NXDOMAIN', ns: [soa] })],
  ];
  for (const [name, type, shape] of cases) assert.deepEqual(await ask(zone, name, type), shape, `${name} ${type}`);

  const apex = zoneOf('example.org.', apexWildcard);
  const apexAuth = ['example.org. 3600 IN NS b.iana-servers.net.'];
  assert.deepEqual(await ask(apex, 'foo.example.org.', 'A'), want({ answer: ['foo.example.org. 3600 IN A 127.0.0.54'], ns: apexAuth }));
  assert.deepEqual(await ask(apex, 'bar.example.org.', 'A'), want({ answer: ['bar.example.org. 3600 IN A 127.0.0.53'], ns: apexAuth }));
});

// ---- empty non-terminals (CoreDNS ent_test.go) and glue (glue_test.go) -----------------------

test('file: empty non-terminals, apex NS glue, negative TTLs', async () => {
  const ent = zoneOf(
    'miek.nl.',
    `miek.nl. 1800 IN SOA linode.atoom.net. miek.miek.nl. 1282630057 14400 3600 604800 14400
miek.nl. 1800 IN NS linode.atoom.net.
a.miek.nl. 1800 IN A 139.162.196.78
a.b.c.miek.nl. 1800 IN A 139.162.196.78`,
  );
  assert.deepEqual(await ask(ent, 'b.c.miek.nl.', 'A'), want({ ns: [miekSoa] }));
  assert.deepEqual(await ask(ent, 'c.miek.nl.', 'A'), want({ ns: [miekSoa] }));
  assert.deepEqual(await ask(ent, 'x.c.miek.nl.', 'A'), want({ rcode: 'NXDOMAIN', ns: [miekSoa] }));

  const atoom = zoneOf(
    'atoom.net.',
    `atoom.net. 1800 IN SOA linode.atoom.net. miek.miek.nl. 1481602381 14400 3600 604800 14400
  1800 NS omval.tednet.nl.
  1800 NS linode.atoom.net.
  1800 NS ns-ext.nlnetlabs.nl.
linode.atoom.net. 1800 IN A 176.58.119.54
linode.atoom.net. 1800 IN AAAA 2a01:7e00::f03c:91ff:fe79:234c`,
  );
  assert.deepEqual(
    await ask(atoom, 'atoom.net.', 'NS'),
    want({
      answer: ['atoom.net. 1800 IN NS linode.atoom.net.', 'atoom.net. 1800 IN NS ns-ext.nlnetlabs.nl.', 'atoom.net. 1800 IN NS omval.tednet.nl.'],
      extra: ['linode.atoom.net. 1800 IN A 176.58.119.54', 'linode.atoom.net. 1800 IN AAAA 2a01:7e00::f03c:91ff:fe79:234c'],
    }),
  );

  // RFC 2308 §3: the SOA in a negative answer has the lower of its TTL and MINIMUM.
  const low = zoneOf('example.org.', `@ 3600 IN SOA ns admin 1 2 3 4 300\n@ 3600 NS ns\nns 3600 A 10.0.0.1`);
  const lowSoa = 'example.org. 300 IN SOA ns.example.org. admin.example.org. 1 2 3 4 300';
  assert.deepEqual(await ask(low, 'nope.example.org.', 'A'), want({ rcode: 'NXDOMAIN', ns: [lowSoa] }));
  assert.deepEqual(await ask(low, 'ns.example.org.', 'TXT'), want({ ns: [lowSoa] }));
  assert.deepEqual(await ask(low, 'example.org.', 'SOA'), want({ answer: ['example.org. 3600 IN SOA ns.example.org. admin.example.org. 1 2 3 4 300'], ns: ['example.org. 3600 IN NS ns.example.org.'] }));
});

test('file: CNAME chains inside the zone', async () => {
  const zone = zoneOf(
    'example.org.',
    `$TTL 60
@ SOA ns admin 1 2 3 4 60
@ NS ns
ns A 10.0.0.1
one CNAME two
two CNAME three
three A 10.0.0.3
dangling CNAME missing
loop1 CNAME loop2
loop2 CNAME loop1
mx MX 10 ns`,
  );
  const auth = ['example.org. 60 IN NS ns.example.org.'];
  const soa = 'example.org. 60 IN SOA ns.example.org. admin.example.org. 1 2 3 4 60';
  const cases: Array<[string, string, Shape]> = [
    ['one.example.org.', 'A', want({ answer: ['one.example.org. 60 IN CNAME two.example.org.', 'three.example.org. 60 IN A 10.0.0.3', 'two.example.org. 60 IN CNAME three.example.org.'], ns: auth })],
    ['one.example.org.', 'CNAME', want({ answer: ['one.example.org. 60 IN CNAME two.example.org.'], ns: auth })],
    // NODATA at the end of the chain: the CNAMEs and the SOA.
    ['one.example.org.', 'TXT', want({ answer: ['one.example.org. 60 IN CNAME two.example.org.', 'two.example.org. 60 IN CNAME three.example.org.'], ns: [soa] })],
    // RFC 6604: the RCODE is the last name's.
    ['dangling.example.org.', 'A', want({ rcode: 'NXDOMAIN', answer: ['dangling.example.org. 60 IN CNAME missing.example.org.'], ns: [soa] })],
    // A loop ends after each name was seen once.
    ['loop1.example.org.', 'A', want({ answer: ['loop1.example.org. 60 IN CNAME loop2.example.org.', 'loop2.example.org. 60 IN CNAME loop1.example.org.'], ns: auth })],
    ['mx.example.org.', 'MX', want({ answer: ['mx.example.org. 60 IN MX 10 ns.example.org.'], ns: auth, extra: ['ns.example.org. 60 IN A 10.0.0.1'] })],
  ];
  for (const [name, type, shape] of cases) assert.deepEqual(await ask(zone, name, type), shape, `${name} ${type}`);
});

test('file: zone data that cannot be served is refused at load, naming the line', () => {
  const cases: Array<[string, string]> = [
    ['a 60 A 10.0.0.1', 'stdin: no SOA record for the zone example.org.'],
    ['@ 60 SOA ns admin 1 2 3 4 5\n@ 60 SOA ns admin 2 2 3 4 5', 'stdin:2: second SOA record for example.org.'],
    ['@ 60 SOA ns admin 1 2 3 4 5\nsub 60 SOA ns admin 1 2 3 4 5', 'stdin:2: SOA record for sub.example.org., not at the zone apex example.org. (is the file for zone sub.example.org.? name it after the file: file FILE sub.example.org.)'],
  ];
  for (const [text, error] of cases) assert.throws(() => zoneOf('example.org.', text), { message: error }, text);
});

test('file: zone data CoreDNS loads and BIND refuses is loaded with a warning naming the line', async () => {
  const text = `$TTL 60
@ SOA ns admin 1 2 3 4 60
@ NS ns
www A 10.0.0.1
www CNAME other
www CNAME third
other A 10.0.0.2
www.example.com. A 10.0.0.3
dup A 10.0.0.4
dup A 10.0.0.4`;
  const warnings: string[] = [];
  const zone = Zone.build('example.org.', parseZoneFile(text, { origin: 'example.org.', file: 'stdin' }), 'stdin', warnings);
  assert.deepEqual(warnings, [
    'stdin:5: www.example.org. has a CNAME and other data (RFC 1034 §3.6.2): only the CNAME is served',
    'stdin:6: www.example.org. has more than one CNAME: only the first is served',
    'stdin:8: www.example.com. is outside the zone example.org.: ignored',
  ]);
  const auth = ['example.org. 60 IN NS ns.example.org.'];
  assert.deepEqual(await ask(zone, 'www.example.org.', 'A'), want({ answer: ['other.example.org. 60 IN A 10.0.0.2', 'www.example.org. 60 IN CNAME other.example.org.'], ns: auth }));
  assert.deepEqual(await ask(zone, 'dup.example.org.', 'A'), want({ answer: ['dup.example.org. 60 IN A 10.0.0.4'], ns: auth }));
});

test('file: DNAME substitution too long for a name is YXDOMAIN (RFC 6672)', async () => {
  const long = Array.from({ length: 3 }, () => 'x'.repeat(63)).join('.');
  const zone = zoneOf('example.org.', `$TTL 60\n@ SOA ns admin 1 2 3 4 60\nd DNAME ${long}.example.net.\n`);
  const label = 'y'.repeat(60);
  assert.deepEqual(await ask(zone, `${label}.d.example.org.`, 'A'), want({ rcode: 'YXDOMAIN', answer: [`d.example.org. 60 IN DNAME ${long}.example.net.`] }));
});

test('file: any question gets a reply that encodes', async () => {
  const zone = zoneOf('miek.nl.', dbMiekNL);
  const random = prng(7);
  const labels = ['a', 'www', '*', 'x', 'y', 'b', 'dname', 'srv', 'mx', 'A\\.b', 'sp\\032ace', 'ext-cname', 'nodata', 'delegated', '\\255'];
  const types = ['A', 'AAAA', 'CNAME', 'MX', 'SRV', 'TXT', 'NS', 'SOA', 'DS', 'DNAME', 'ANY', 'CAA', 'TYPE65280'];
  for (let i = 0; i < 1000; i++) {
    const depth = Math.floor(random() * 4);
    const name = [...Array.from({ length: depth }, () => labels[Math.floor(random() * labels.length)]), 'miek', 'nl', ''].join('.').toLowerCase();
    const type = types[Math.floor(random() * types.length)] as string;
    const req = testRequest(name, typeFromName(type) as number);
    const reply = await answerFromZone(zone, req, () => undefined, undefined);
    assert.ok(reply, `${name} ${type}`);
    const wire = encodeMessage(reply.view());
    assert.equal(decodeMessage(wire).rcode, reply.rcode, `${name} ${type}`);
  }
});

test('file: DNAME (CoreDNS dname_test, RFC 6672)', async () => {
  const zone = zoneOf(
    'miek.nl.',
    `${miekApex}
test            IN      MX      1  aspmx.l.google.com.
a.test          IN      A       139.162.196.78
                IN      AAAA    2a01:7e00::f03c:91ff:fef1:6735
www.test        IN      CNAME   a.test

dname           IN      DNAME   test
dname           IN      A       127.0.0.1
a.dname         IN      A       127.0.0.1
`,
  );
  const dname = 'dname.miek.nl. 1800 IN DNAME test.miek.nl.';
  const cases: Array<[string, string, Shape]> = [
    ['dname.miek.nl.', 'DNAME', want({ answer: [dname], ns: miekAuth })],
    // Data at the DNAME's owner is served as usual; only names below it are substituted.
    ['dname.miek.nl.', 'A', want({ answer: ['dname.miek.nl. 1800 IN A 127.0.0.1'], ns: miekAuth })],
    ['dname.miek.nl.', 'MX', want({ ns: [miekSoa] })],
    // a.dname exists in the file, but the DNAME above it decides.
    ['a.dname.miek.nl.', 'A', want({ answer: ['a.dname.miek.nl. 1800 IN CNAME a.test.miek.nl.', 'a.test.miek.nl. 1800 IN A 139.162.196.78', dname], ns: miekAuth })],
    [
      'www.dname.miek.nl.',
      'A',
      want({
        answer: ['a.test.miek.nl. 1800 IN A 139.162.196.78', dname, 'www.dname.miek.nl. 1800 IN CNAME www.test.miek.nl.', 'www.test.miek.nl. 1800 IN CNAME a.test.miek.nl.'],
        ns: miekAuth,
      }),
    ],
    ['nope.dname.miek.nl.', 'A', want({ rcode: 'NXDOMAIN', answer: [dname, 'nope.dname.miek.nl. 1800 IN CNAME nope.test.miek.nl.'], ns: [miekSoa] })],
  ];
  for (const [name, type, shape] of cases) assert.deepEqual(await ask(zone, name, type), shape, `${name} ${type}`);
});

test('file: escaped owner names and an apex-only zone (CoreDNS escape_test, apex_test)', async () => {
  const campus = zoneOf(
    'campus.edu.',
    `campus.edu.              500 IN SOA ns1.outside.edu. root.campus.edu. 8 6048 4000 2419200 6048
campus.edu.              500 IN NS  ns1.outside.edu.
has\\046dot.campus.edu.   500 IN A   192.0.2.2
a\\009b.campus.edu.       500 IN A   192.0.2.3
`,
  );
  const auth = ['campus.edu. 500 IN NS ns1.outside.edu.'];
  assert.deepEqual(await ask(campus, 'has\\.dot.campus.edu.', 'A'), want({ answer: ['has\\.dot.campus.edu. 500 IN A 192.0.2.2'], ns: auth }));
  assert.deepEqual(await ask(campus, 'a\\009b.campus.edu.', 'A'), want({ answer: ['a\\009b.campus.edu. 500 IN A 192.0.2.3'], ns: auth }));
  // "has.dot" is two labels: not the escaped name.
  assert.equal((await ask(campus, 'has.dot.campus.edu.', 'A') as Shape).rcode, 'NXDOMAIN');

  const apexOnly = zoneOf(
    'example.com.',
    `$ORIGIN example.com.
@   IN      SOA     ns1.example.com. admin.example.com.  (
                               2005011437 ; Serial
                               1200       ; Refresh
                               144        ; Retry
                               1814400    ; Expire
                               2h )       ; Minimum
@           IN  NS      ns1.example.com.
`,
  );
  // CoreDNS answers NXDOMAIN here and says it should be NODATA: the apex exists. Without any
  // TTL in the file the SOA takes its MINIMUM as TTL, as BIND does.
  assert.deepEqual(await ask(apexOnly, 'example.com.', 'A'), want({ ns: ['example.com. 7200 IN SOA ns1.example.com. admin.example.com. 2005011437 1200 144 1814400 7200'] }));
});
