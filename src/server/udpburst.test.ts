// A burst of queries that arrives while kdns cannot read (stopped with SIGSTOP: what a garbage
// collection, the first second of compiled code or another process on its CPU does to it) waits
// in the listening socket's receive buffer and is answered in full. With the kernel's default
// buffer (208 KiB: about 250 small queries) the rest of such a burst was dropped unanswered.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { nativeUdp } from '../lib/native/udp.js';
import { sendBurst, startKdnsProcess } from '../../test/util/udpburst.js';

/** What the kernel charges a small query in a receive buffer (Linux 6: 832 bytes for 60). */
const QUERY_TRUESIZE = 832;

/**
 * How many queries the test sends: 2,000, or fewer where net.core.rmem_max caps the listener's
 * buffer lower (the kernel allows twice rmem_max) — always far more than the default holds.
 */
function burstSize(): number {
  const rmemMax = Number(readFileSync('/proc/sys/net/core/rmem_max', 'utf8'));
  return Math.min(2000, Math.floor((0.8 * 2 * Math.min(rmemMax, 4 << 20)) / QUERY_TRUESIZE));
}

const transports = [
  { via: 'native', env: {}, skip: !nativeUdp() && process.env.CI !== 'true' ? 'native UDP socket not built (npm run build:native)' : false },
  { via: 'dgram', env: { KDNS_UDP: 'dgram' }, skip: false },
] as const;

describe('UDP listener under a burst it cannot read at once', () => {
  for (const t of transports) {
    it(`answers every query of a burst that arrived while kdns was stopped (${t.via})`, { skip: t.skip }, async () => {
      const n = burstSize();
      assert.ok(n > 300, `the burst (${n}) is larger than the kernel's default buffer holds (about 250)`);
      const kdns = await startKdnsProcess('.:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        10.0.0.1 a.example.org\n    }\n}\n', t.env);
      try {
        kdns.pause();
        const burst = await sendBurst(kdns.port, Array.from({ length: n }, () => 'a.example.org'));
        await burst.sent;
        kdns.resume();
        const got = await burst.answers(15_000);
        assert.deepEqual(got, { rcodes: { NOERROR: n }, unanswered: 0 }, kdns.output());
      } finally {
        await kdns.stop();
      }
    });
  }
});
