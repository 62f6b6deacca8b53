// Test helper: spawns `kdns ARGS...` from the same tree the test runs from (see run-kdns.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const fromSources = import.meta.url.endsWith('.ts');
const runner = fileURLToPath(new URL(fromSources ? 'run-kdns.ts' : 'run-kdns.js', import.meta.url));

/** The command line that runs `kdns args...` (tsx's loader when the test runs from src/). */
export function kdnsCommand(args: readonly string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [...(fromSources ? ['--import', 'tsx'] : []), runner, ...args] };
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts kdns; `done` resolves when it exits, with everything it printed. */
export function startKdns(args: readonly string[], prefix: readonly string[] = []): { child: ChildProcess; done: Promise<Finished>; output: () => string } {
  const c = kdnsCommand(args);
  const child = prefix.length > 0 ? spawn(prefix[0] as string, [...prefix.slice(1), c.command, ...c.args]) : spawn(c.command, c.args);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const done = new Promise<Finished>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, output: () => stdout + stderr };
}
