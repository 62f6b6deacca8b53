// The dnstap plugin's parts: Corefile syntax (cases from CoreDNS's setup_test), the protobuf
// bytes (read back field by field), the Frame Streams control frames, and `extra`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstDirective } from '../../../test/util/corefile.js';
import { Control, controlFrame, dataFrame, readControlFrames } from './fstrm.js';
import { expandExtra } from './handler.js';
import { encodeDnstap } from './proto.js';
import { parseDnstap } from './setup.js';

test('dnstap: Corefile syntax', () => {
  const cases: Array<{ line: string; want?: Record<string, unknown>; error?: string }> = [
    { line: 'dnstap /tmp/dnstap.sock', want: { endpoint: { kind: 'unix', path: '/tmp/dnstap.sock' }, full: false, queueLimit: 10_000 } },
    { line: 'dnstap unix:///tmp/dnstap.sock full', want: { endpoint: { kind: 'unix', path: '/tmp/dnstap.sock' }, full: true, queueLimit: 10_000 } },
    { line: 'dnstap tap.sock', want: { endpoint: { kind: 'unix', path: '/etc/kdns/tap.sock' }, full: false, queueLimit: 10_000 } },
    { line: 'dnstap tcp://127.0.0.1:6000 full', want: { endpoint: { kind: 'tcp', host: '127.0.0.1', port: 6000 }, full: true, queueLimit: 10_000 } },
    { line: 'dnstap tcp://[::1]:6000', want: { endpoint: { kind: 'tcp', host: '::1', port: 6000 }, full: false, queueLimit: 10_000 } },
    { line: 'dnstap /tmp/dnstap.sock full 1024 2048', want: { endpoint: { kind: 'unix', path: '/tmp/dnstap.sock' }, full: true, queueLimit: 20_480_000 } },
    { line: 'dnstap /tmp/dnstap.sock 4 2', want: { endpoint: { kind: 'unix', path: '/tmp/dnstap.sock' }, full: false, queueLimit: 20_000 } },
    { line: 'dnstap /tmp/dnstap.sock {\n    identity dns1\n    version X-1\n    extra "up: {/forward/upstream}"\n  }', want: { endpoint: { kind: 'unix', path: '/tmp/dnstap.sock' }, full: false, queueLimit: 10_000, identity: 'dns1', version: 'X-1', extra: 'up: {/forward/upstream}' } },
    { line: 'dnstap', error: 'Corefile:2: wrong argument count for "dnstap": expected at least 1, got 0' },
    { line: 'dnstap tcp://127.0.0.1', error: 'Corefile:2: invalid argument "tcp://127.0.0.1" for "dnstap": a TCP endpoint needs a port' },
    { line: 'dnstap tls://127.0.0.1:6000', error: 'Corefile:2: invalid argument "tls://127.0.0.1:6000" for "dnstap": dnstap over TLS is not available in kdns: send to a unix:// or tcp:// collector' },
    { line: 'dnstap listen /tmp/dnstap.sock', error: 'Corefile:2: dnstap listen is not available in kdns: have kdns connect to the collector (dnstap unix:///PATH or tcp://HOST:PORT)' },
    { line: 'dnstap /tmp/dnstap.sock half', error: 'Corefile:2: invalid argument "half" for "dnstap": expected "full" or a number' },
    { line: 'dnstap /tmp/dnstap.sock full 2000', error: 'Corefile:2: writebuffer must be between 1 and 1024, got 2000' },
    { line: 'dnstap /tmp/dnstap.sock full 1 0', error: 'Corefile:2: queue must be between 1 and 4096, got 0' },
    { line: 'dnstap /tmp/dnstap.sock {\n    identity\n  }', error: 'Corefile:3: wrong argument count for "identity": expected 1, got 0' },
    { line: 'dnstap /tmp/dnstap.sock {\n    colour blue\n  }', error: 'Corefile:3: unknown property "colour" in dnstap block' },
  ];
  for (const c of cases) {
    const parse = () => parseDnstap(firstDirective(`. {\n  ${c.line}\n}`), '/etc/kdns/Corefile');
    if (c.error) {
      assert.throws(parse, { message: c.error }, c.line);
      continue;
    }
    const got = parse();
    const { identity, version, ...rest } = got;
    assert.deepEqual({ ...rest, ...(c.want?.identity ? { identity } : {}), ...(c.want?.version ? { version } : {}) }, c.want, c.line);
  }
});

/** Reads protobuf fields back: field number → values (varints as numbers, length-delimited as Buffers). */
function fields(buf: Buffer): Map<number, Array<number | Buffer>> {
  const out = new Map<number, Array<number | Buffer>>();
  let at = 0;
  const varint = (): number => {
    let n = 0;
    let mul = 1;
    for (;;) {
      const b = buf[at++] as number;
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 128;
    }
  };
  while (at < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    let value: number | Buffer;
    switch (key % 8) {
      case 0:
        value = varint();
        break;
      case 2: {
        const len = varint();
        value = buf.subarray(at, at + len);
        at += len;
        break;
      }
      case 5:
        value = buf.readUInt32LE(at);
        at += 4;
        break;
      default:
        throw new Error(`wire type ${key % 8}`);
    }
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

test('dnstap: the protobuf bytes carry every field at its dnstap.proto number', () => {
  const wire = encodeDnstap({
    identity: Buffer.from('id'),
    version: Buffer.from('v'),
    extra: Buffer.from('x'),
    message: { type: 6, socketFamily: 2, socketProtocol: 2, queryAddress: new Uint8Array(16).fill(1), queryPort: 53000, queryTimeSec: 1_800_000_000, queryTimeNsec: 999_999_999, responseTimeSec: 1_800_000_001, responseTimeNsec: 5, queryMessage: Buffer.from([1, 2]), responseMessage: Buffer.from([3]) },
  });
  const top = fields(wire);
  assert.deepEqual(
    { identity: String(top.get(1)?.[0]), version: String(top.get(2)?.[0]), extra: String(top.get(3)?.[0]), type: top.get(15)?.[0] },
    { identity: 'id', version: 'v', extra: 'x', type: 1 },
  );
  const m = fields(top.get(14)?.[0] as Buffer);
  assert.deepEqual(
    [...m.entries()].map(([k, v]) => [k, Buffer.isBuffer(v[0]) ? [...v[0]] : v[0]]),
    [
      [1, 6],
      [2, 2],
      [3, 2],
      [4, Array(16).fill(1)],
      [6, 53000],
      [8, 1_800_000_000],
      [9, 999_999_999],
      [10, [1, 2]],
      [12, 1_800_000_001],
      [13, 5],
      [14, [3]],
    ],
  );
});

test('dnstap: Frame Streams control and data frames', () => {
  const ready = controlFrame(Control.READY, 'protobuf:dnstap.Dnstap');
  assert.equal(ready.toString('hex'), `00000000${(4 + 8 + 22).toString(16).padStart(8, '0')}00000004` + `00000001${(22).toString(16).padStart(8, '0')}${Buffer.from('protobuf:dnstap.Dnstap').toString('hex')}`);
  assert.equal(controlFrame(Control.STOP).toString('hex'), '000000000000000400000003');
  assert.equal(dataFrame(Buffer.from([7, 8, 9])).toString('hex'), '00000003070809');
  const accept = controlFrame(Control.ACCEPT, 'protobuf:dnstap.Dnstap');
  const finish = controlFrame(Control.FINISH);
  const both = Buffer.concat([accept, finish.subarray(0, 5)]);
  const read = readControlFrames(both);
  assert.deepEqual(read.frames, [{ type: Control.ACCEPT, contentTypes: ['protobuf:dnstap.Dnstap'] }]);
  assert.equal(read.rest.length, 5);
  assert.deepEqual(readControlFrames(finish).frames, [{ type: Control.FINISH, contentTypes: [] }]);
});

test('dnstap: extra takes request metadata', () => {
  const md = new Map([['forward/upstream', '10.0.0.1:53']]);
  const cases = [
    { format: 'upstream: {/forward/upstream}', want: 'upstream: 10.0.0.1:53' },
    { format: '{/unknown}', want: '-' },
    { format: 'plain', want: 'plain' },
  ];
  for (const c of cases) assert.equal(expandExtra(c.format, md), c.want, c.format);
});
