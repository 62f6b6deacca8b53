// Property test: mutated and random packets never make the decoders throw anything but
// DnsFormatError, whatever decodes re-encodes, and isWellFormedMessage says exactly which decode.
// A fixed seed keeps failures reproducible; the failing iteration's bytes are printed in the
// assertion message.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeMessage, DnsFormatError, encodeMessage, findTtlOffsets, isWellFormedMessage, parseQuery } from './codec.js';
import { lowerName } from './name.js';
import * as R from './rr.js';
import { message, mutate, prng } from '../../../test/util/dnstestkit.js';
import type { Message } from './types.js';

const ITERATIONS = 20_000;

/** Valid packets covering every typed RR, compression, escapes and EDNS. */
function seeds(): Buffer[] {
  const edns = { udpSize: 1232, version: 0, do: true, zFlags: 0, options: [{ code: 10, data: new Uint8Array(8).fill(7) }] };
  const zone = 'default.svc.cluster.local.';
  const query = (name: string, type: number): Message =>
    message({ qr: false, questions: [{ name, type, class: 1 }], edns });
  const msgs: Message[] = [
    query(`kubernetes.${zone}`, 1),
    query('Mixed.CASE.example.', 28),
    query('a\\.b\\032c.example.', 16),
    message({ qr: false, questions: [{ name: 'x.', type: 1, class: 1 }, { name: 'y.x.', type: 1, class: 1 }] }),
    message({
      questions: [{ name: `web.${zone}`, type: 1, class: 1 }],
      answers: [R.cname(`web.${zone}`, 5, `real.${zone}`), R.a(`real.${zone}`, 5, '10.0.0.1'), R.a(`real.${zone}`, 5, '10.0.0.2')],
      authority: [R.soa('cluster.local.', 5, { mname: 'ns.dns.cluster.local.', rname: 'hostmaster.cluster.local.', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 })],
      additional: [R.aaaa(`real.${zone}`, 5, 'fd00::1')],
      edns,
    }),
    message({
      questions: [{ name: `_http._tcp.web.${zone}`, type: 33, class: 1 }],
      answers: [R.srv(`_http._tcp.web.${zone}`, 5, 0, 50, 80, `pod-1.web.${zone}`)],
      additional: [R.a(`pod-1.web.${zone}`, 5, '10.1.0.7'), R.txt('t.example.', 5, ['a', '\x00\xff', '']), R.hinfo('h.example.', 5, 'cpu', 'os')],
      rcode: 16,
      edns,
    }),
    message({
      questions: [{ name: '1.0.0.10.in-addr.arpa.', type: 12, class: 1 }],
      answers: [R.ptr('1.0.0.10.in-addr.arpa.', 5, `svc.${zone}`), R.dname('old.example.', 5, 'new.example.'), R.mx('example.', 5, 10, 'mx.example.')],
      authority: [R.ns('example.', 5, 'ns.example.'), R.opaque('example.', 43, 5, Uint8Array.from([1, 2, 3, 4, 5]))],
    }),
  ];
  return msgs.map((m) => encodeMessage(m));
}

const int = (rand: () => number, n: number) => Math.floor(rand() * n);

function onlyFormatErrors<T>(what: string, bytes: Uint8Array, run: () => T): T | undefined {
  try {
    return run();
  } catch (e) {
    if (e instanceof DnsFormatError) return undefined;
    assert.fail(`${what} threw ${String(e)} on ${Buffer.from(bytes).toString('hex')}`);
  }
}

describe('fuzzing the decoders', () => {
  it(`${ITERATIONS} mutated packets: only DnsFormatError, and decoded messages re-encode`, () => {
    const rand = prng(0x6b646e73);
    const corpus = seeds();
    let decoded = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const bytes = mutate(corpus[int(rand, corpus.length)], rand);
      const hexText = () => Buffer.from(bytes).toString('hex');
      const msg = onlyFormatErrors('decodeMessage', bytes, () => decodeMessage(bytes));
      const parsed = onlyFormatErrors('parseQuery', bytes, () => parseQuery(bytes));
      onlyFormatErrors('findTtlOffsets', bytes, () => findTtlOffsets(bytes));
      assert.equal(isWellFormedMessage(bytes), msg !== undefined, `isWellFormedMessage disagrees with decodeMessage on ${hexText()}`);
      if (!msg) continue;
      decoded++;
      let plain: Buffer;
      try {
        encodeMessage(msg);
        assert.ok(encodeMessage(msg, { maxSize: 512 }).length <= 512);
        plain = encodeMessage(msg, { compress: false });
      } catch (e) {
        assert.fail(`re-encoding threw ${String(e)} for ${hexText()}`);
      }
      // Without compression, names come back exactly as they were decoded.
      assert.deepEqual(decodeMessage(plain), msg, `uncompressed round trip of ${hexText()}`);
      if (msg.questions.length > 0) {
        assert.ok(parsed, `parseQuery rejected what decodeMessage accepted: ${hexText()}`);
        const q = msg.questions[0];
        assert.deepEqual(
          [parsed.qname, parsed.name, parsed.qtype, parsed.qclass, parsed.edns],
          [q.name, lowerName(q.name), q.type, q.class, msg.edns],
          hexText(),
        );
      }
    }
    // Guard against a mutator that only ever produces garbage: the property must be exercised.
    assert.ok(decoded > ITERATIONS / 10, `only ${decoded} packets decoded`);
  });
});
