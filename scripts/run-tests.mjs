#!/usr/bin/env node
// Runs every test file (src/**/*.test.ts beside the code, test/**/*.test.ts, bench/**/*.test.ts) with Node's test
// runner, straight from TypeScript through tsx: tests are never compiled into dist/, which holds
// the production build alone (`npm run build`), the one the tests start `kdns` from.
// Node 20's `--test` takes no globs, so the list is gathered here.
// Usage: node scripts/run-tests.mjs [substring-filter...]
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

function collect(dir, out) {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (p.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = [...collect('src', []), ...collect('test', []), ...collect('bench', [])].sort().filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error('no test files found under src/, test/ or bench/');
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
// TAP is read on its way through: every skipped test or suite is listed, with its reason, just
// before the runner's own summary (whose `# skipped` counts tests only: a suite skipped whole
// shows as 0 there), and under CI=true a skip fails the run, since CI must run everything.
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', `--test-concurrency=${concurrency}`, `--test-timeout=${timeout}`, ...files], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, TMPDIR: scratch },
});
const skipped = [];
const summary = [];
// Every failing test is listed again at the very end, with where it is and its error, so the
// last lines of a long CI log say what failed (a suite failing only through its subtests is not
// repeated: its failing subtests are).
const failures = [];
let failure = null;
const lines = createInterface({ input: child.stdout });
const linesDone = new Promise((resolve) => lines.once('close', resolve));
lines.on('line', (line) => {
  if (failure) {
    if (/^\s*\.\.\.$/.test(line)) {
      if (!failure.yaml.some((l) => /failureType: 'subtestsFailed'/.test(l))) failures.push(failure);
      failure = null;
    } else failure.yaml.push(line.trim());
  }
  const notOk = /^\s*not ok \d+ - (.*)$/.exec(line);
  if (notOk) failure = { name: notOk[1], yaml: [] };
  const skip = /^\s*ok \d+ - (.*) # SKIP\s*(.*)$/.exec(line);
  if (skip) skipped.push(`${skip[1]}${skip[2] ? ` (${skip[2]})` : ''}`);
  // The runner's closing block (`# tests N` … `# duration_ms`) is held back and printed last.
  if (/^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /.test(line)) summary.push(line);
  else process.stdout.write(`${line}\n`);
});
const status = await new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
await linesDone;
rmSync(scratch, { recursive: true, force: true });
console.log(`# not run: ${skipped.length} skipped test${skipped.length === 1 ? '' : 's'} or suite${skipped.length === 1 ? '' : 's'}`);
for (const s of skipped) console.log(`#   skipped: ${s}`);
if (skipped.length > 0 && process.env.CI === 'true') console.log('# CI=true runs every test: the skips above fail this run');
for (const f of failures) {
  console.log(`# failed: ${f.name}`);
  const location = f.yaml.find((l) => l.startsWith('location:'));
  if (location) console.log(`#   ${location}`);
  const errorAt = f.yaml.findIndex((l) => l.startsWith('error:'));
  const stackAt = f.yaml.findIndex((l) => l.startsWith('stack:'));
  const errorLines = errorAt < 0 ? [] : f.yaml.slice(errorAt, stackAt > errorAt ? Math.min(stackAt, errorAt + 12) : errorAt + 12);
  for (const l of errorLines) console.log(`#   ${l}`);
}
for (const line of summary) console.log(line);
process.exit(skipped.length > 0 && process.env.CI === 'true' ? 1 : status);
