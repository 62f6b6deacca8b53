// Files a plugin serves from and checks again on an interval: the `reload DURATION` property
// (0 turns the checks off) and the timer that runs them. Used by file, auto (zone files) and
// hosts (the hosts file; it reads `reload` here and runs its own timer).

import { argPosition, expectArgs, parseDuration } from '../../lib/corefile/args.js';
import type { Directive } from '../../lib/corefile/ast.js';

/** `reload DURATION`, in milliseconds. */
export function parseReload(d: Directive): number {
  const [text] = expectArgs(d, 1, 1) as [string];
  return parseDuration(text, argPosition(d, 0), 'reload');
}

/**
 * Calls `refresh` every `ms` (none when 0) and returns what stops it. The timer does not keep
 * the process alive: the listeners do, and a stopping process must not wait for a reload.
 */
export function everyInterval(ms: number, refresh: () => Promise<unknown>): () => void {
  if (ms <= 0) return () => undefined;
  const timer = setInterval(() => void refresh(), ms);
  timer.unref();
  return () => clearInterval(timer);
}
