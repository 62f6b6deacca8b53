// Test helper: runs `kdns` subcommands in this process, with their output and exit code captured,
// the way the pod DNS commands (resolvconf, validate, explain) take their I/O. A commander usage
// error is exit 2, as main() makes it.
import { Command, CommanderError } from 'commander';
import type { CliIO } from '../../src/cli/resolvconf.js';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

type Register = (program: Command, io: CliIO) => void;

/** `kdns args…` with the subcommands `registers` adds; `stdin` is what `-` reads. */
export async function runCli(registers: readonly Register[], args: readonly string[], stdin = ''): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  let code = 0;
  const io: CliIO = {
    out: (s) => void out.push(s),
    err: (s) => void err.push(s),
    readStdin: async () => stdin,
    setExitCode: (c) => {
      code = c;
    },
  };
  const program = new Command('kdns').exitOverride().configureOutput({ writeOut: (s) => void out.push(s), writeErr: (s) => void err.push(s) });
  for (const register of registers) register(program, io);
  try {
    await program.parseAsync(['node', 'kdns', ...args]);
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    code = e.exitCode === 0 ? 0 : 2;
  }
  return { code, out: out.join(''), err: err.join('') };
}
