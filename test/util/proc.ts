// Test helper: a child process whose stdout and stderr are collected together, with a stop()
// that asks (SIGTERM) and then insists (SIGKILL). Shared by startKdns and the namespace helpers.
import { spawn, type ChildProcess } from 'node:child_process';

export interface CollectedProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code once the process has ended (null when killed by a signal). */
  done: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `killAfterMs`; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export function spawnCollected(cmd: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; killAfterMs: number }): CollectedProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const done = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    done,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs);
      const code = await done;
      clearTimeout(timer);
      return code;
    },
  };
}
