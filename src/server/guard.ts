// The last line of defence of a long-running kdns process: an error nothing caught (a throw in
// a socket callback, a rejected promise nobody awaited) is logged and counted, as CoreDNS
// recovers a panic in a handler, instead of ending the process and with it DNS for the node.
// Only the commands install it (kdns serve, nodecache, operator, node-resolver): in-process
// tests run without it, so Node's test runner still fails a test on such an error, and tests
// that start kdns as a child look for PANIC_MARKER in its output (test/util/kdns.ts).

/** Begins the line the guard logs; tests search child output for it. */
export const PANIC_MARKER = 'Recovered from panic in process';

export interface PanicCounter {
  inc(): void;
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/**
 * Logs and counts uncaught exceptions and unhandled rejections instead of exiting. Returns a
 * function that removes the guard.
 */
export function guardProcess(report: (line: string) => void, panics?: PanicCounter): () => void {
  const onError = (err: unknown, origin: string): void => {
    panics?.inc();
    // Reporting must not throw again: a second uncaught error here would end the process.
    try {
      report(`${PANIC_MARKER} (${origin}): ${describe(err)}`);
    } catch {
      // nothing left to tell it to
    }
  };
  const onException = (err: Error): void => onError(err, 'uncaught exception');
  const onRejection = (reason: unknown): void => onError(reason, 'unhandled rejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
