#!/usr/bin/env node
// Runs every compiled test file under dist/ with Node's test runner.
// Node 20's `--test` takes no globs, so the list is gathered here.
// Usage: node scripts/run-tests.mjs [substring-filter...]
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir, out) {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (p.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = collect('dist', []).sort().filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error('no test files found under dist/ (did the build run?)');
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// A test that hangs fails after TEST_TIMEOUT_MS instead of holding CI to its limit.
// (Not --test-force-exit: on Node 20 it ends a file before tests registered late have run —
// seen dropping 38 tests in three files.)
const timeout = process.env.TEST_TIMEOUT_MS ?? '180000';
// The tests' scratch files (fixtures, upstream configs, sockets) go into one folder per run,
// removed at the end: a test that fails, or is killed by the timeout, leaves nothing in /tmp.
// Open to every user as /tmp is, for the processes the tests start under other users.
const scratch = mkdtempSync(join(tmpdir(), 'kdns-npm-test-'));
chmodSync(scratch, 0o1777);
const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeout}`, ...files], {
  stdio: 'inherit',
  env: { ...process.env, TMPDIR: scratch },
});
rmSync(scratch, { recursive: true, force: true });
process.exit(r.status ?? 1);
