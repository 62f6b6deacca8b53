// Test helper: runs the real `kdns` command as a child process: the production build in dist/
// (`npm run build`; `npm test` builds it first), as users and the images run it. Test helper
// scripts of this folder run from TypeScript through tsx.

import { spawnCollected } from './proc.js';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { fileURLToPath } from 'node:url';
import { PANIC_MARKER } from '../../src/server/guard.js';

const mainURL = new URL('../../dist/cli/main.js', import.meta.url);

/** node arguments that start `kdns` with `args`. */
export function kdnsCommand(args: readonly string[]): string[] {
  const code = `import(${JSON.stringify(pathToFileURL(fileURLToPath(mainURL)).href)}).then((m) => m.main(['node', 'kdns', ...process.argv.slice(1)]))`;
  // '--': what follows is kdns's, even when it looks like a node option (-conf).
  return ['-e', code, '--', ...args];
}

export interface KdnsResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `kdns args…` to completion. */
export function runKdns(args: readonly string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<KdnsResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, kdnsCommand(args), { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kdns ${args.join(' ')} did not finish within ${opts.timeoutMs ?? 20_000} ms\n${stderr}`));
    }, opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
/**
 * `node argv…` under `sh -c 'ulimit -n N; exec …'`: a test that opens thousands of sockets
 * raises its children's descriptor limit (up to the hard limit; the shell fails loudly above it).
 */
export function withFileLimit(fdLimit: number, argv: readonly string[]): [string, string[]] {
  return ['sh', ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, ...argv]];
}

/**
 * Throws when a kdns child's output shows its process guard caught an error: the guard keeps
 * kdns alive in production, but in a test that error is a bug to see.
 */
export function assertNoPanic(output: string): void {
  if (output.includes(PANIC_MARKER)) throw new Error(`kdns recovered from an error nothing caught (a bug):\n${output}`);
}

export interface StartKdnsOptions {
  /** Arguments for node before kdns's own (e.g. --import of a fault to inject). */
  nodeArgs?: readonly string[];
  /** The test provokes a panic on purpose: stop() does not fail on one. */
  allowPanics?: boolean;
  /** Raise the child's open-file limit (tests that open thousands of sockets). */
  fdLimit?: number;
}

/**
 * Starts a long-running `kdns args…`; its output is collected in `output()`. `stop()` fails when
 * the process guard caught an error (see assertNoPanic).
 */
export function startKdns(args: readonly string[], opts: StartKdnsOptions = {}): { child: ChildProcess; output: () => string; stop: () => Promise<void> } {
  const nodeArgv = [...(opts.nodeArgs ?? []), ...kdnsCommand(args)];
  const [cmd, argv] = opts.fdLimit === undefined ? [process.execPath, nodeArgv] : withFileLimit(opts.fdLimit, nodeArgv);
  const p = spawnCollected(cmd, argv, { killAfterMs: 5000 });
  return {
    child: p.child,
    output: p.output,
    stop: async () => {
      await p.stop();
      if (!opts.allowPanics) assertNoPanic(p.output());
    },
  };
}

/** node arguments that run the test helper script `name` (a file of test/util/, e.g. 'apiserver-main'). */
export function helperScript(name: string): string[] {
  return ['--import', 'tsx', fileURLToPath(new URL(`./${name}.ts`, import.meta.url))];
}

/** The Node.js flags kdns is started with (deploy/Dockerfile, `npm start`, README). */
export const SHIPPED_NODE_FLAGS = ['--max-semi-space-size=1', '--v8-pool-size=1'] as const;

/**
 * Runs a script of test/util (name without extension) in a node started with SHIPPED_NODE_FLAGS,
 * for measurements that must see the process as users run it; resolves to its stdout.
 */
export function runShippedNode(script: string, timeoutMs = 60_000): Promise<string> {
  const file = fileURLToPath(new URL(`./${script}.ts`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SHIPPED_NODE_FLAGS, '--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${script} exited with ${code}\n${stderr}`));
    });
  });
}
