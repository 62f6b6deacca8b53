// What the runner needs to know of a server under test. Each server's file (beside this one)
// writes its configuration into the run's folder and says which processes to start; the
// runner pins them, probes them, loads them, measures and stops them.
import type { Options } from '../options.js';

/**
 * What a server is asked to do: answer cluster.local itself (the auth workload), or forward
 * everything to the upstream with a cache (fwd and miss: the same configuration, different
 * queries).
 */
export type Role = 'auth' | 'forward';

export interface StartContext {
  role: Role;
  /** 127.0.0.1 port to answer on. */
  port: number;
  /** 127.0.0.1 port of the upstream to forward to (it serves example.test). */
  upstreamPort: number;
  /** The fixture folder: cluster/, cluster.local.zone, … */
  fixture: string;
  /** A fresh folder for this run's configuration, logs and state. */
  runDir: string;
  opts: Options;
}

export interface ProcessSpec {
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
}

export interface ServerSpec {
  /** Key in the results: unique per row of the table. */
  id: string;
  /** Row name in the table. */
  label: string;
  kind: 'kdns' | 'peer';
  /** The program that must be installed, and the Debian package that has it. */
  needs: Array<{ command: string; debian: string }>;
  /** Threads or processes it serves with (shown when more than one). */
  threads: number;
  /** False for a server whose answers are not the fixture's (the minimal responder). */
  answersChecks: boolean;
  /** Signal that stops it at once (kdns: SIGQUIT skips the lameduck wait). */
  stopSignal: NodeJS.Signals;
  supports(role: Role): boolean;
  /** Writes the configuration into ctx.runDir; the processes to start, each in the foreground. */
  prepare(ctx: StartContext): ProcessSpec[];
  /** A note for the table from the server's log (kdns: how it serves UDP). */
  noteFromLog?(log: string): string | undefined;
}
