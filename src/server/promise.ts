// Telling a value from a promise of one, for code that stays synchronous when every step is:
// handlers return `MaybePromise<Reply | undefined>` and only await when the next plugin really
// went asynchronous (an await on a plain value would still cost a microtask per query).
// Used by the log, errors, prometheus, cache and loadbalance handlers and by the server's
// dispatcher, its UDP listeners and its TCP connections.

import type { MaybePromise } from './plugin.js';

/** True when `v` is a promise (any thenable), so the caller must wait for it. */
export function isPromise<T>(v: MaybePromise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | undefined)?.then === 'function';
}
