// The memory addon in real processes: the node binary's pages leave RSS and the process goes on
// running (its relocated data untouched), malloc's free pages go back to the kernel; and the
// schedule it runs on, with mocked timers. CI builds the addon (KDNS_NATIVE=required), so these
// are never skipped there.
import { describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileResidentBytes, nativeMemory, releaseMemoryPeriodically, type NativeMemory } from './memory.js';

const built = nativeMemory() !== null;
const skip = !built && process.env['CI'] !== 'true' ? 'the memory addon is not built (npm run build:native)' : false;
const MEMORY_TS = new URL('./memory.ts', import.meta.url).href;

/** Runs `body` (ES module code, with `addon` and `status(field)` in kB) in a fresh node; its last line of output, parsed. */
function inChild(body: string, nodeArgs: string[] = []): Record<string, unknown> {
  const script = `
    import { readFileSync } from 'node:fs';
    const { nativeMemory } = await import(${JSON.stringify(MEMORY_TS)});
    const addon = nativeMemory();
    const status = (field) => Number(new RegExp(field + ':\\\\s+(\\\\d+)').exec(readFileSync('/proc/self/status', 'utf8'))[1]);
    ${body}
  `;
  const out = execFileSync(process.execPath, [...nodeArgs, '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop() as string) as Record<string, unknown>;
}

describe('the memory addon in a real process', { skip }, () => {
  test("dropBinaryPages: the binary's pages leave RSS, and what runs next maps back only what it uses", () => {
    const r = inChild(`
      const before = status('RssFile');
      const dropped = addon.dropBinaryPages();
      const right = status('RssFile');
      // Work that needs the binary's code and data again: compiling, JSON, crypto, a timer.
      const { createHash } = await import('node:crypto');
      const digest = createHash('sha256').update(JSON.stringify({ a: [1, 2, 3] })).digest('hex').slice(0, 8);
      await new Promise((r) => setTimeout(r, 50));
      const after = status('RssFile');
      console.log(JSON.stringify({ droppedMiB: dropped / 1048576 > 10, halved: right < before / 2, regrownBelowStart: after < before, digest }));
    `);
    assert.deepEqual(r, { droppedMiB: true, halved: true, regrownBelowStart: true, digest: '730bc329' });
  });

  test('trimMalloc: free pages under a live block go back to the kernel', () => {
    // 40 MiB of 4 KiB blocks from malloc (ArrayBuffer stores), then all but the last freed: the
    // last keeps the heap's top in use, so only malloc_trim can return what lies below it.
    const r = inChild(
      `
      let blocks = Array.from({ length: 10_000 }, () => new Uint8Array(4096).fill(1));
      const last = new Uint8Array(4096).fill(2);
      blocks = null;
      globalThis.gc(); globalThis.gc();
      const before = status('RssAnon');
      const released = addon.trimMalloc();
      const after = status('RssAnon');
      console.log(JSON.stringify({ released, tenMiBBack: before - after > 10 * 1024, last: last[0] }));
    `,
      ['--expose-gc'],
    );
    assert.deepEqual(r, { released: true, tenMiBBack: true, last: 2 });
  });
});

describe('the schedule it runs on', () => {
  test('drops at the fixed times and when the binary regrew by regrowthBytes over the check after a drop; trims at every check', () => {
    mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
    try {
      const calls: string[] = [];
      let now = 0;
      // The binary's resident size each check reads: start-up's pages, then what comes back.
      const resident: Record<number, number> = { 10: 50, 20: 20, 30: 22, 40: 25, 50: 21, 60: 19, 70: 22, 80: 23, 90: 30, 100: 31 };
      const addon: NativeMemory = {
        dropBinaryPages: () => {
          calls.push(`drop@${now}`);
          return 0;
        },
        trimMalloc: () => {
          calls.push(`trim@${now}`);
          return true;
        },
      };
      const stop = releaseMemoryPeriodically({ dropAtMs: [15, 55], checkEveryMs: 10, regrowthBytes: 4, cpuShare: { busy: 0.1, quiet: 0.02 } }, addon, () => resident[now] ?? 0, () => 0);
      while (now < 100) {
        now += 5;
        mock.timers.tick(5);
      }
      stop();
      mock.timers.tick(1000);
      assert.deepEqual(calls, [
        'trim@10', // baseline 50
        'drop@15', // fixed
        'trim@20', // baseline 20
        'trim@30', // 22: +2
        'trim@40', // 25: +5
        'drop@40',
        'trim@50', // baseline 21
        'drop@55', // fixed
        'trim@60', // baseline 19
        'trim@70', // 22: +3
        'trim@80', // 23: +4
        'drop@80',
        'trim@90', // baseline 30, however large: what a steady load keeps using
        'trim@100', // 31: +1
      ]);
    } finally {
      mock.timers.reset();
    }
  });
});

describe('a busy spell that ends drops the binary pages it brought in', () => {
  // Checks every 10 ms; the CPU share of each interval (of one core) is what the process used in it.
  const cases: Array<{ what: string; shares: number[]; drops: number[] }> = [
    { what: 'always idle: nothing dropped', shares: [0, 0.005, 0.01, 0, 0, 0], drops: [] },
    { what: 'a burst, then quiet: dropped at the first quiet check', shares: [0, 0.5, 0.9, 0.01, 0, 0], drops: [40] },
    { what: 'a burst that tails off through the middle band: dropped once quiet', shares: [0.5, 0.05, 0.05, 0.01, 0, 0], drops: [40] },
    { what: 'two bursts: dropped after each', shares: [0.3, 0, 0, 0.2, 0.01, 0], drops: [20, 50] },
    { what: 'a steady load: never dropped while it lasts', shares: [0.4, 0.4, 0.4, 0.4, 0.4, 0.4], drops: [] },
    { what: 'a light background (5 %): never busy, never dropped', shares: [0.05, 0.05, 0.01, 0.05, 0.01, 0.05], drops: [] },
  ];
  for (const c of cases) {
    test(c.what, () => {
      mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
      try {
        const drops: number[] = [];
        let now = 0;
        let cpu = 0;
        const addon: NativeMemory = { dropBinaryPages: () => (drops.push(now), 0), trimMalloc: () => true };
        // The binary's resident size stays flat: only the end of a burst can cause a drop.
        const stop = releaseMemoryPeriodically({ dropAtMs: [], checkEveryMs: 10, regrowthBytes: 4, cpuShare: { busy: 0.1, quiet: 0.02 } }, addon, () => 20, () => cpu);
        for (const share of c.shares) {
          cpu += share * 10;
          now += 10;
          mock.timers.tick(10);
        }
        stop();
        assert.deepEqual(drops, c.drops);
      } finally {
        mock.timers.reset();
      }
    });
  }
});

describe('fileResidentBytes: RssFile of /proc/self/status', () => {
  const cases: Array<[string, string, number]> = [
    ['the kB figure in bytes', 'VmRSS:\t  60512 kB\nRssAnon:\t   39216 kB\nRssFile:\t   21296 kB\nRssShmem:\t       0 kB\n', 21_807_104],
    ['no such line (not Linux): 0', 'Name:\tnode\n', 0],
  ];
  for (const [name, status, want] of cases) test(name, () => assert.equal(fileResidentBytes(status), want));
});
