// Pooled TCP connections retired by lifetime (`max_age`) and query cap (`maxtcpqueries`): a real
// TCP DNS responder on loopback that records which connection carried each query and can hold
// its replies back; the clock and the jitter's draw are fixed by the test, so nothing here
// depends on how fast the machine is.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { nameToWire } from '../dns/name.js';
import { buildQuery, questionEnd, readU16 } from '../dns/wire.js';
import { waitFor } from '../../../test/util/net.js';
import { bareReply } from '../../../test/util/upstream.js';
import { jitteredAgeMs, jitteredQueryCap, StreamTransport, type ConnLifetime } from './stream.js';

/** A TCP responder: answers each query with an empty NOERROR, or holds the replies while `holding`. */
class CountingResponder {
  private readonly server = net.createServer((s) => this.accept(s));
  /** Per connection accepted, in order: the query names it carried. */
  readonly conns: string[][] = [];
  /** Per connection accepted: whether the client has closed it. */
  readonly closed: boolean[] = [];
  holding = false;
  private held: Array<() => void> = [];
  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private accept(sock: net.Socket): void {
    const index = this.conns.length;
    this.conns.push([]);
    this.closed.push(false);
    let buf = Buffer.alloc(0);
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= readU16(buf, 0) + 2) {
        const query = Buffer.from(buf.subarray(2, readU16(buf, 0) + 2));
        buf = buf.subarray(query.length + 2);
        (this.conns[index] as string[]).push(firstLabel(query));
        const reply = bareReply(query, 0);
        const framed = Buffer.concat([Buffer.from([reply.length >> 8, reply.length & 0xff]), reply]);
        const send = (): void => void sock.write(framed);
        if (this.holding) this.held.push(send);
        else send();
      }
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      this.closed[index] = true;
    });
  }

  release(): void {
    this.holding = false;
    for (const send of this.held.splice(0)) send();
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

function firstLabel(query: Buffer): string {
  const len = query[12] as number;
  return query.subarray(13, 13 + len).toString('latin1');
}

let nextId = 1;
function ask(t: StreamTransport, label: string): Promise<Buffer> {
  const q = buildQuery(nameToWire(`${label}.example.test.`), 1, 1, { id: nextId++ });
  return t.exchange(q, questionEnd(q), 5000);
}

/** A transport whose clock reads `clock.now` and whose jitter draw is always `r`. */
function transport(port: number, lifetime: Omit<ConnLifetime, 'now' | 'random'>, r: number, clock: { now: number }): StreamTransport {
  return new StreamTransport('127.0.0.1', port, `127.0.0.1:${port}`, undefined, 60_000, undefined, {
    ...lifetime,
    now: () => clock.now,
    random: () => r,
  });
}

describe('connection lifetime: jitter', () => {
  const caps: Array<{ max: number; r: number; want: number }> = [
    { max: 100, r: 0, want: 100 },
    { max: 100, r: 0.5, want: 90 },
    { max: 100, r: 0.999999, want: 80 },
    { max: 3, r: 0.5, want: 2 },
    { max: 1, r: 0.999999, want: 1 },
  ];
  for (const c of caps) {
    it(`a cap of ${c.max} with draw ${c.r} is ${c.want} queries`, () => {
      assert.equal(jitteredQueryCap(c.max, c.r), c.want);
    });
  }
  const ages: Array<{ maxMs: number; r: number; want: number }> = [
    { maxMs: 30_000, r: 0, want: 30_000 },
    { maxMs: 30_000, r: 0.5, want: 27_000 },
    { maxMs: 30_000, r: 0.75, want: 25_500 },
  ];
  for (const c of ages) {
    it(`a max_age of ${c.maxMs} ms with draw ${c.r} is ${c.want} ms`, () => {
      assert.equal(jitteredAgeMs(c.maxMs, c.r), c.want);
    });
  }
});

describe('connection lifetime: pooled TCP connections', () => {
  const responder = new CountingResponder();
  before(() => responder.start());
  after(() => responder.stop());

  /** Runs `steps` (sequential queries, each at its clock time) and returns the labels per connection. */
  async function run(lifetime: Omit<ConnLifetime, 'now' | 'random'>, r: number, steps: Array<{ at: number; label: string }>): Promise<string[][]> {
    const first = responder.conns.length;
    const clock = { now: 0 };
    const t = transport(responder.port, lifetime, r, clock);
    for (const s of steps) {
      clock.now = s.at;
      await ask(t, s.label);
    }
    t.close();
    return responder.conns.slice(first);
  }

  const seq = (n: number, at = 0): Array<{ at: number; label: string }> => Array.from({ length: n }, (_, i) => ({ at, label: `q${i + 1}` }));

  const cases: Array<{ name: string; lifetime: Omit<ConnLifetime, 'now' | 'random'>; r: number; steps: Array<{ at: number; label: string }>; want: string[][] }> = [
    {
      name: 'no limits: one connection carries everything',
      lifetime: { maxAgeMs: 0, maxQueries: 0 },
      r: 0,
      steps: seq(7),
      want: [['q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7']],
    },
    {
      name: 'a cap of 3, no jitter drawn: a new connection every 3 queries',
      lifetime: { maxAgeMs: 0, maxQueries: 3 },
      r: 0,
      steps: seq(7),
      want: [
        ['q1', 'q2', 'q3'],
        ['q4', 'q5', 'q6'],
        ['q7'],
      ],
    },
    {
      name: 'a cap of 3 jittered down to 2',
      lifetime: { maxAgeMs: 0, maxQueries: 3 },
      r: 0.5,
      steps: seq(5),
      want: [['q1', 'q2'], ['q3', 'q4'], ['q5']],
    },
    {
      name: 'max_age 30s: the query at 30 s opens a new connection',
      lifetime: { maxAgeMs: 30_000, maxQueries: 0 },
      r: 0,
      steps: [
        { at: 0, label: 'q1' },
        { at: 29_999, label: 'q2' },
        { at: 30_000, label: 'q3' },
        { at: 59_999, label: 'q4' },
        { at: 60_000, label: 'q5' },
      ],
      want: [['q1', 'q2'], ['q3', 'q4'], ['q5']],
    },
    {
      name: 'max_age 30s jittered down to 27 s',
      lifetime: { maxAgeMs: 30_000, maxQueries: 0 },
      r: 0.5,
      steps: [
        { at: 0, label: 'q1' },
        { at: 26_999, label: 'q2' },
        { at: 27_000, label: 'q3' },
      ],
      want: [['q1', 'q2'], ['q3']],
    },
    {
      name: 'age and cap together: whichever comes first',
      lifetime: { maxAgeMs: 30_000, maxQueries: 2 },
      r: 0,
      steps: [
        { at: 0, label: 'q1' },
        { at: 1, label: 'q2' },
        { at: 2, label: 'q3' },
        { at: 30_002, label: 'q4' },
      ],
      want: [['q1', 'q2'], ['q3'], ['q4']],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      assert.deepEqual(await run(c.lifetime, c.r, c.steps), c.want);
    });
  }

  const inflight: Array<{ name: string; lifetime: Omit<ConnLifetime, 'now' | 'random'>; advanceTo: number }> = [
    { name: 'retired by its cap', lifetime: { maxAgeMs: 0, maxQueries: 2 }, advanceTo: 0 },
    { name: 'retired by its age', lifetime: { maxAgeMs: 30_000, maxQueries: 0 }, advanceTo: 30_000 },
  ];
  for (const c of inflight) {
    it(`queries in flight on a connection ${c.name} are answered, then it closes`, async () => {
      const first = responder.conns.length;
      const clock = { now: 0 };
      const t = transport(responder.port, c.lifetime, 0, clock);
      responder.holding = true;
      const early = [ask(t, 'a1'), ask(t, 'a2')];
      await waitFor(() => (responder.conns[first]?.length ?? 0) === 2);
      clock.now = c.advanceTo;
      const late = ask(t, 'b1');
      await waitFor(() => (responder.conns[first + 1]?.length ?? 0) === 1);
      // The old connection is still open: it waits for its two replies.
      assert.deepEqual(responder.closed.slice(first), [false, false]);
      responder.release();
      const replies = await Promise.all([...early, late]);
      assert.deepEqual(
        replies.map((r) => firstLabel(r)),
        ['a1', 'a2', 'b1'],
      );
      assert.deepEqual(responder.conns.slice(first), [['a1', 'a2'], ['b1']]);
      await waitFor(() => responder.closed[first] === true);
      assert.deepEqual(responder.closed.slice(first), [true, false]);
      t.close();
    });
  }
});
