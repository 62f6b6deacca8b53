// A corpus of malformed messages, each with what decodeMessage and parseQuery make of it:
// rejected with how much of the header/question is known (so the server can FORMERR or drop),
// or accepted.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeMessage, DnsFormatError, isWellFormedMessage, parseQuery } from './codec.js';
import type { Bytes } from '../../../test/util/dnstestkit.js';
import { ascii, header, labels, opt, question, rr, u16, wire, wname } from '../../../test/util/dnstestkit.js';

const ID = 0x4d2;
const FLAGS = 0x0100;

/** Rejected: `id` says whether the header was read, `questionEnd` whether the question was. */
interface Rejected {
  error: RegExp;
  id: boolean;
  questionEnd?: number;
}
type Outcome = Rejected | 'ok';

interface Case {
  title: string;
  bytes: Uint8Array;
  decode: Outcome;
  /** parseQuery's outcome when it differs from decodeMessage's. */
  parse?: Outcome;
}

const hdr = (over: Parameters<typeof header>[0]) => header({ id: ID, flags: FLAGS, ...over });
const q = question('example.', 1); // 9 + 4 octets: the question ends at 25
const QEND = 25;
const a4 = (name: Bytes | string = [0xc0, 12]) => rr(name, 1, 1, 5, [10, 0, 0, 1]);
const label63 = new Array(63).fill(0x61);

const cases: Case[] = [
  { title: 'empty', bytes: wire([]), decode: { error: /shorter than the 12-octet header/, id: false } },
  { title: 'header cut at 11 octets', bytes: wire(hdr({ qd: 1 }).slice(0, 11)), decode: { error: /header/, id: false } },
  { title: 'header only, one question promised', bytes: wire(hdr({ qd: 1 })), decode: { error: /past the end/, id: true } },
  { title: 'question name cut mid-label', bytes: wire(hdr({ qd: 1 }), [7, ...ascii('exam')]), decode: { error: /label runs past/, id: true } },
  { title: 'question without type and class', bytes: wire(hdr({ qd: 1 }), wname('example.'), [0]), decode: { error: /question runs past/, id: true } },
  { title: 'question pointer beyond the message', bytes: wire(hdr({ qd: 1 }), [0xc0, 0xff], u16(1), u16(1)), decode: { error: /beyond the message/, id: true } },
  { title: 'question pointer to itself (forward)', bytes: wire(hdr({ qd: 1 }), [0xc0, 12], u16(1), u16(1)), decode: { error: /does not point backwards/, id: true } },
  {
    title: 'question pointer after a label, to its own start',
    bytes: wire(hdr({ qd: 1 }), [1, ...ascii('a'), 0xc0, 12], u16(1), u16(1)),
    decode: { error: /does not point backwards/, id: true },
  },
  {
    title: 'answer owner points forward into its own record',
    bytes: wire(hdr({ qd: 1, an: 1 }), q, rr([0xc0, QEND + 2], 1, 1, 5, [10, 0, 0, 1])),
    decode: { error: /does not point backwards/, id: true, questionEnd: QEND },
  },
  {
    // The opaque record at 25 holds "c0 27" at 37; the second owner, at 39 (0x27), points to 37,
    // which points back to 39: the chain must stop because 39 is not before 37.
    title: 'pointer loop through two names',
    bytes: wire(hdr({ qd: 1, an: 2 }), q, rr([0xc0, 12], 65280, 1, 5, [0xc0, 39]), rr([0xc0, 37], 1, 1, 5, [10, 0, 0, 1])),
    decode: { error: /does not point backwards/, id: true, questionEnd: QEND },
    parse: 'ok', // parseQuery steps over answer names without following their pointers
  },
  { title: 'label length 64 (0x40)', bytes: wire(hdr({ qd: 1 }), [64, ...label63, 0x61, 0], u16(1), u16(1)), decode: { error: /0x40/, id: true } },
  { title: 'reserved label type 0x80', bytes: wire(hdr({ qd: 1 }), [0x80, 0], u16(1), u16(1)), decode: { error: /0x80/, id: true } },
  {
    title: 'name of 256 octets',
    bytes: wire(hdr({ qd: 1 }), labels(label63, label63, label63, label63.slice(1)), u16(1), u16(1)),
    decode: { error: /longer than 255/, id: true },
  },
  {
    title: 'name of 255 octets is fine',
    bytes: wire(hdr({ qd: 1 }), labels(label63, label63, label63, label63.slice(2)), u16(1), u16(1)),
    decode: 'ok',
  },
  {
    title: 'name over 255 octets only through a pointer',
    bytes: wire(hdr({ qd: 1, an: 1 }), labels(label63, label63, label63), u16(1), u16(1), rr([...labels(label63).slice(0, 64), 0xc0, 12], 1, 1, 5, [1, 2, 3, 4])),
    decode: { error: /longer than 255/, id: true, questionEnd: 12 + 193 + 4 },
    parse: 'ok',
  },
  {
    title: 'A with RDLENGTH 3',
    bytes: wire(hdr({ qd: 1, an: 1 }), q, rr([0xc0, 12], 1, 1, 5, [10, 0, 0])),
    decode: { error: /A RDATA of 3 octets/, id: true, questionEnd: QEND },
    parse: 'ok', // typed RDATA of answers is not checked on the fast path
  },
  {
    title: 'AAAA with RDLENGTH 4',
    bytes: wire(hdr({ qd: 1, an: 1 }), q, rr([0xc0, 12], 28, 1, 5, [10, 0, 0, 1])),
    decode: { error: /AAAA RDATA of 4 octets/, id: true, questionEnd: QEND },
    parse: 'ok',
  },
  {
    title: 'more answers counted than present',
    bytes: wire(hdr({ qd: 1, an: 5 }), q, a4()),
    decode: { error: /past the end/, id: true, questionEnd: QEND },
  },
  {
    title: 'more additional records counted than present',
    bytes: wire(hdr({ qd: 1, ar: 2 }), q, opt(1232, 0)),
    decode: { error: /past the end/, id: true, questionEnd: QEND },
  },
  {
    title: 'RDLENGTH beyond the message',
    bytes: wire(hdr({ qd: 1, an: 1 }), q, rr([0xc0, 12], 1, 1, 5, [10, 0, 0, 1], 40)),
    decode: { error: /RDATA .*runs past the end/, id: true, questionEnd: QEND },
  },
  {
    title: 'CNAME target running past its RDLENGTH',
    bytes: wire(hdr({ qd: 1, an: 2 }), q, rr([0xc0, 12], 5, 1, 5, wname('x.example.'), 3), a4()),
    decode: { error: /RDATA length of a CNAME record/, id: true, questionEnd: QEND },
    parse: { error: /./, id: true, questionEnd: QEND },
  },
  {
    title: 'SOA without the five numbers',
    bytes: wire(hdr({ qd: 1, ns: 1 }), q, rr([0xc0, 12], 6, 1, 5, [0xc0, 12, 0xc0, 12, 0, 0, 0, 1])),
    decode: { error: /SOA/, id: true, questionEnd: QEND },
    parse: 'ok',
  },
  {
    title: 'MX of 2 octets',
    bytes: wire(hdr({ qd: 1, an: 1 }), q, rr([0xc0, 12], 15, 1, 5, [0, 10])),
    decode: { error: /MX RDATA of 2 octets/, id: true, questionEnd: QEND },
    parse: 'ok',
  },
  {
    title: 'TXT string longer than its RDATA',
    bytes: wire(hdr({ qd: 1, an: 1 }), q, rr([0xc0, 12], 16, 1, 5, [9, ...ascii('short')])),
    decode: { error: /character-string runs past/, id: true, questionEnd: QEND },
    parse: 'ok',
  },
  {
    title: 'HINFO with one string',
    bytes: wire(hdr({ qd: 1, an: 1 }), q, rr([0xc0, 12], 13, 1, 5, [3, ...ascii('x86')])),
    decode: { error: /want 2/, id: true, questionEnd: QEND },
    parse: 'ok',
  },
  {
    title: 'two OPT records',
    bytes: wire(hdr({ qd: 1, ar: 2 }), q, opt(1232, 0), opt(1232, 0)),
    decode: { error: /more than one OPT/, id: true, questionEnd: QEND },
  },
  {
    title: 'OPT in the answer section',
    bytes: wire(hdr({ qd: 1, an: 1 }), q, opt(1232, 0)),
    decode: { error: /OPT record (in|outside) the/, id: true, questionEnd: QEND },
  },
  {
    title: 'OPT in the authority section',
    bytes: wire(hdr({ qd: 1, ns: 1 }), q, opt(1232, 0)),
    decode: { error: /OPT record (in|outside) the/, id: true, questionEnd: QEND },
  },
  {
    title: 'OPT with a non-root owner',
    bytes: wire(hdr({ qd: 1, ar: 1 }), q, rr([0xc0, 12], 41, 1232, 0, [])),
    decode: { error: /non-root owner/, id: true, questionEnd: QEND },
  },
  {
    title: 'OPT option running past the RDATA',
    bytes: wire(hdr({ qd: 1, ar: 1 }), q, opt(1232, 0, [...u16(10), ...u16(8), 1, 2, 3])),
    decode: { error: /EDNS option 10 runs past/, id: true, questionEnd: QEND },
  },
  {
    title: 'OPT option header cut',
    bytes: wire(hdr({ qd: 1, ar: 1 }), q, opt(1232, 0, [0, 10, 0])),
    decode: { error: /EDNS option header/, id: true, questionEnd: QEND },
  },
  {
    title: 'two questions promised, one present: the question is not known',
    bytes: wire(hdr({ qd: 2 }), q),
    decode: { error: /past the end/, id: true },
  },
  {
    title: 'no question: fine as a message, not as a query',
    bytes: wire(hdr({ qd: 0 })),
    decode: 'ok',
    parse: { error: /without a question/, id: true, questionEnd: 12 },
  },
  {
    title: 'trailing bytes after the last section are ignored (as miekg/dns does)',
    bytes: wire(hdr({ qd: 1, an: 1 }), q, a4(), [0xff, 0xff, 0xff]),
    decode: 'ok',
  },
];

function check(what: string, run: () => unknown, want: Outcome): void {
  if (want === 'ok') {
    assert.doesNotThrow(run, `${what} should accept`);
    return;
  }
  let caught: unknown;
  try {
    run();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof DnsFormatError, `${what} should throw DnsFormatError, got ${String(caught)}`);
  assert.match(caught.message, want.error, what);
  assert.equal(caught.id, want.id ? ID : undefined, `${what}: id`);
  assert.equal(caught.flags, want.id ? FLAGS : undefined, `${what}: flags`);
  assert.equal(caught.questionEnd, want.questionEnd, `${what}: questionEnd`);
}

describe('malformed messages', () => {
  for (const c of cases) {
    it(c.title, () => {
      check('decodeMessage', () => decodeMessage(c.bytes), c.decode);
      check('parseQuery', () => parseQuery(c.bytes), c.parse ?? c.decode);
      assert.equal(isWellFormedMessage(c.bytes), c.decode === 'ok', 'isWellFormedMessage agrees with decodeMessage');
    });
  }
});
