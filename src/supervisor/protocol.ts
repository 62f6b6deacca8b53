// What a parent and its worker tell each other (the IPC channel and the environment).

/** Set to "1" in a worker's environment. */
export const WORKER_ENV = 'KDNS_WORKER';
/** The worker's command line, as JSON (main()'s argv). */
export const WORKER_ARGV_ENV = 'KDNS_WORKER_ARGV';

/**
 * Sent by a worker once it serves: from then on its end is a crash to recover from. `unused`
 * names the handed sockets its configuration did not take, which the parent then closes.
 */
export interface WorkerMessage {
  type: 'serving';
  unused: Array<{ kind: 'udp' | 'tcp'; address: string; port: number }>;
}
