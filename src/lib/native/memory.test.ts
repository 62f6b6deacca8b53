// The memory addon in real processes: the node binary's pages leave RSS and the process goes on
// running (its relocated data untouched), malloc's free pages go back to the kernel; and the
// schedule it runs on, with mocked timers. CI builds the addon (KDNS_NATIVE=required), so these
// are never skipped there.
import { describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { nativeMemory, releaseMemoryPeriodically, type NativeMemory } from './memory.js';

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
  test('drops after start-up, then every dropEveryMs; trims every trimEveryMs', () => {
    mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
    try {
      const calls: string[] = [];
      let now = 0;
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
      const stop = releaseMemoryPeriodically({ dropAtMs: [15, 60], dropEveryMs: 100, trimEveryMs: 45 }, addon);
      for (; now < 250; ) {
        now += 5;
        mock.timers.tick(5);
      }
      stop();
      mock.timers.tick(1000);
      assert.deepEqual(calls, ['drop@15', 'trim@45', 'drop@60', 'trim@90', 'trim@135', 'drop@160', 'trim@180', 'trim@225']);
    } finally {
      mock.timers.reset();
    }
  });
});
