// Test helper: runs the real `kdns` command as a child process, from src/ under tsx (when the
// tests run from .ts) or from dist/ (when `npm test` runs the compiled tests).

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { fileURLToPath } from 'node:url';

const fromSource = import.meta.url.endsWith('.ts');
const mainURL = new URL(fromSource ? '../cli/main.ts' : '../cli/main.js', import.meta.url);

/** node arguments that start `kdns` with `args`. */
export function kdnsCommand(args: readonly string[]): string[] {
  const code = `import(${JSON.stringify(pathToFileURL(fileURLToPath(mainURL)).href)}).then((m) => m.main(['node', 'kdns', ...process.argv.slice(1)]))`;
  // '--': what follows is kdns's, even when it looks like a node option (-conf).
  return [...(fromSource ? ['--import', 'tsx'] : []), '-e', code, '--', ...args];
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
 * `node argv…` under `sh -c 'ulimit -n N; exec …'`: a test that opens thousands of sockets
 * raises its children's descriptor limit (up to the hard limit; the shell fails loudly above it).
 */
export function withFileLimit(fdLimit: number, argv: readonly string[]): [string, string[]] {
  return ['sh', ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, ...argv]];
}

/** Starts a long-running `kdns args…`; its output is collected in `output()`. */
export function startKdns(args: readonly string[], opts: { fdLimit?: number } = {}): { child: ChildProcess; output: () => string; stop: () => Promise<void> } {
  const [cmd, argv] = opts.fdLimit === undefined ? [process.execPath, kdnsCommand(args)] : withFileLimit(opts.fdLimit, kdnsCommand(args));
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** node arguments that run the test helper script `name` (a file of src/testutil/, e.g. 'apiserver-main'). */
export function helperScript(name: string): string[] {
  const url = new URL(`./${name}${fromSource ? '.ts' : '.js'}`, import.meta.url);
  return [...(fromSource ? ['--import', 'tsx'] : []), fileURLToPath(url)];
}
