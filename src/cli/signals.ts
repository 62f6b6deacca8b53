// What the long-running kdns commands do on each signal: what CoreDNS does, and no signal ends
// the process unless it asks for an end.
//
//   SIGTERM         graceful: lameduck (health's), close, exit 0
//   SIGINT          the same; a second SIGINT quits at once (exit 2)
//   SIGQUIT         quit at once, without lameduck (exit 0)
//   SIGUSR1         reload the configuration
//   SIGUSR2         CoreDNS replaces its binary in place; kdns cannot, and reloads instead
//   SIGHUP and the signals whose default is to end a process (SIGALRM, SIGVTALRM, SIGPWR,
//   SIGIO, SIGXCPU, SIGXFSZ): logged and ignored
// Even on an immediate quit, `cleanup` runs (nodecache takes down the interface it made).

/** Signals that would end the process by default and mean nothing to kdns. */
export const IGNORED_SIGNALS = ['SIGHUP', 'SIGALRM', 'SIGVTALRM', 'SIGPWR', 'SIGIO', 'SIGXCPU', 'SIGXFSZ'] as const;

/** Exit code of a quit forced by a second SIGINT (as CoreDNS). */
export const EXIT_FORCED = 2;
/** Exit code when the graceful shutdown failed. */
export const EXIT_SHUTDOWN_FAILED = 3;

export interface SignalActions {
  log(line: string): void;
  /** Graceful stop: lameduck, close listeners, stop plugins. */
  shutdown(): Promise<void>;
  /** What must happen even on an immediate quit. */
  cleanup?(): Promise<void>;
  /** Re-reads the configuration; absent when the command has nothing to reload. */
  reload?(): Promise<unknown>;
}

/** Installs the handlers; returns a function that removes them (for tests). */
export function trapSignals(a: SignalActions, exit: (code: number) => void = (code) => process.exit(code)): () => void {
  let stopping = false;
  const cleanupThenExit = (code: number): void => {
    const cleanup = a.cleanup?.() ?? Promise.resolve();
    cleanup.then(
      () => exit(code),
      (e: unknown) => {
        a.log(`cleanup failed: ${e instanceof Error ? e.message : String(e)}`);
        exit(code === 0 ? EXIT_SHUTDOWN_FAILED : code);
      },
    );
  };
  const graceful = (signal: string): void => {
    if (stopping) {
      if (signal === 'SIGINT') {
        a.log('SIGINT received again, quitting at once');
        cleanupThenExit(EXIT_FORCED);
      }
      return;
    }
    stopping = true;
    a.log(signal === 'SIGINT' ? 'SIGINT received, shutting down (a second SIGINT quits at once)' : `${signal} received, shutting down`);
    a.shutdown().then(
      () => cleanupThenExit(0),
      (e: unknown) => {
        a.log(`shutdown failed: ${e instanceof Error ? e.message : String(e)}`);
        cleanupThenExit(EXIT_SHUTDOWN_FAILED);
      },
    );
  };
  const reload = (signal: string, note: string): void => {
    if (stopping) return;
    if (!a.reload) {
      a.log(`${signal} received: this command has nothing to reload; ignored`);
      return;
    }
    a.log(`${signal} received, ${note}`);
    a.reload().catch((e: unknown) => a.log(`reload failed: ${e instanceof Error ? e.message : String(e)}`));
  };
  const handlers: Array<[NodeJS.Signals, () => void]> = [
    ['SIGTERM', () => graceful('SIGTERM')],
    ['SIGINT', () => graceful('SIGINT')],
    [
      'SIGQUIT',
      () => {
        a.log('SIGQUIT received, quitting at once');
        stopping = true;
        cleanupThenExit(0);
      },
    ],
    ['SIGUSR1', () => reload('SIGUSR1', 'reloading')],
    ['SIGUSR2', () => reload('SIGUSR2', 'reloading (kdns does not replace its binary in place)')],
    ...IGNORED_SIGNALS.map((s): [NodeJS.Signals, () => void] => [s, () => a.log(`${s} received, ignored`)]),
  ];
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
}

/**
 * Runs a loop that ends when `signal` aborts (operator run, node-resolver) under the signals
 * above: SIGTERM/SIGINT abort it and exit once it has ended. These commands follow their inputs
 * by themselves, so no signal asks them for a reload.
 */
export async function runUntilSignalled(log: (line: string) => void, loop: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  trapSignals({
    log,
    shutdown: async () => {
      stop.abort();
      await running;
    },
  });
  running = loop(stop.signal);
  await running;
}
