import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HealthCheck } from './health.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('forward health check', () => {
  const cases: Array<{ what: string; probes: boolean[]; maxFails: number; wantFails: number; wantDown: boolean; wantProbes: number; events: string[] }> = [
    { what: 'a reply at once stops the loop', probes: [true], maxFails: 2, wantFails: 0, wantDown: false, wantProbes: 1, events: [] },
    { what: 'one failure: not yet down', probes: [false, true], maxFails: 2, wantFails: 0, wantDown: false, wantProbes: 2, events: ['failed 1', 'recovered 1'] },
    { what: 'max_fails failures: down, then up again', probes: [false, false, false, true], maxFails: 2, wantFails: 0, wantDown: false, wantProbes: 4, events: ['failed 1', 'failed 2', 'failed 3', 'recovered 3'] },
    { what: 'still failing: down', probes: [false, false, false], maxFails: 2, wantFails: 3, wantDown: true, wantProbes: 3, events: ['failed 1', 'failed 2', 'failed 3'] },
    { what: 'max_fails 0: never down', probes: [false, false, false], maxFails: 0, wantFails: 3, wantDown: false, wantProbes: 3, events: ['failed 1', 'failed 2', 'failed 3'] },
  ];
  for (const c of cases) {
    it(c.what, async () => {
      let calls = 0;
      const events: string[] = [];
      // The scripted probes, then one that never settles: the loop is parked there, so the
      // count does not depend on timing.
      const probe = (): Promise<boolean> => {
        calls++;
        return calls <= c.probes.length ? Promise.resolve(c.probes[calls - 1] as boolean) : new Promise<boolean>(() => undefined);
      };
      const hc = new HealthCheck(probe, 1, { failed: (n) => events.push(`failed ${n}`), recovered: (n) => events.push(`recovered ${n}`) });
      hc.trigger();
      hc.trigger(); // a second trigger while checking starts nothing new
      const deadline = Date.now() + 2000;
      while (hc.checking && calls <= c.probes.length && Date.now() < deadline) await sleep(2);
      hc.stop();
      assert.equal(Math.min(calls, c.probes.length), c.wantProbes);
      assert.equal(hc.fails, c.wantFails);
      assert.equal(hc.isDown(c.maxFails), c.wantDown);
      assert.deepEqual(events, c.events);
    });
  }

  it('probes at the interval while the upstream stays down', async () => {
    const at: number[] = [];
    const hc = new HealthCheck(async () => {
      at.push(Date.now());
      return false;
    }, 50);
    hc.trigger();
    await sleep(230);
    hc.stop();
    assert.ok(at.length >= 3 && at.length <= 5, `${at.length} probes in 230 ms`); // 0, 50, 100, 150, 200 ms
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    // Never sooner than the interval; later only by as much as a busy machine delays a timer.
    for (const g of gaps) assert.ok(g >= 45 && g <= 150, `gap ${g} ms`);
  });
});
